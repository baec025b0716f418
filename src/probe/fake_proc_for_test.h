// Test helper: procfs files of a 2-CPU machine at two instants, 1 s apart.
#pragma once

#include "seedance/base/fake_env.h"

namespace seedance::probe::testing {

// Reading 1. Ticks are 1/100 s.
inline void ProcAt0(base::FakeEnv& env) {
  env.SetFile("/proc/stat",
              "cpu  1000 0 500 8000 100 0 0 0 0 0\n"
              "cpu0 500 0 250 4000 50 0 0 0 0 0\n"
              "cpu1 500 0 250 4000 50 0 0 0 0 0\n"
              "intr 12345\nctxt 999\n");
  env.SetFile("/proc/meminfo",
              "MemTotal:       16000000 kB\nMemFree:  1000 kB\nMemAvailable:    4000000 kB\n");
  env.SetFile("/proc/diskstats",
              "   8       0 sda 100 0 2000 50 200 0 4000 80 0 1000 130 0 0 0 0\n"
              "   8       1 sda1 90 0 1800 40 180 0 3600 70 0 900 110 0 0 0 0\n"
              "   7       0 loop0 1 0 8 0 0 0 0 0 0 0 0 0 0 0 0\n");
  env.SetFile("/sys/block/sda/size", "1000000\n");
  env.SetFile("/proc/net/dev",
              "Inter-|   Receive                                                |  Transmit\n"
              " face |bytes    packets errs drop fifo frame compressed multicast|bytes    "
              "packets errs drop fifo colls carrier compressed\n"
              "    lo: 5000 50 0 0 0 0 0 0 5000 50 0 0 0 0 0 0\n"
              "  eth0: 1000000 900 0 0 0 0 0 0 2000000 800 0 0 0 0 0 0\n");
  env.SetFile("/proc/sys/kernel/hostname", "node-7\n");
}

// Reading 2, after env.AdvanceClock(1 s): CPU 200 ticks (2 CPU-seconds) of
// which user 50, system 30, idle 90, iowait 30; sda read 1000 sectors, wrote
// 2000, io 500 ms; eth0 rx +125,000,000 B, tx +250,000,000 B.
inline void ProcAt1(base::FakeEnv& env) {
  env.SetFile("/proc/stat", "cpu  1050 0 530 8090 130 0 0 0 0 0\ncpu0 1 0 0 0\ncpu1 1 0 0 0\n");
  env.SetFile("/proc/meminfo", "MemTotal:       16000000 kB\nMemAvailable:    2000000 kB\n");
  env.SetFile("/proc/diskstats",
              "   8       0 sda 150 0 3000 60 260 0 6000 90 0 1500 150 0 0 0 0\n");
  env.SetFile("/proc/net/dev",
              "h1\nh2\n  eth0: 126000000 900 0 0 0 0 0 0 252000000 800 0 0 0 0 0 0\n");
}

}  // namespace seedance::probe::testing
