// Test helper: a FakeEnv holding the sysfs of a small 2-socket server.
//
//   node0: CPUs 0-3, 64 GiB     node1: CPUs 4-7, 64 GiB     distances 10 21 / 21 10
//   pci0000:00 (node 0): root port 00:01.0 -> switch 01:00.0 -> ports 02:00.0, 02:01.0
//                        -> GPU 0000:03:00.0, NIC mlx5_0 at 0000:04:00.0
//                        root port 00:02.0 -> GPU 0000:05:00.0
//   pci0000:80 (node 1): root port 80:01.0 -> GPU 0000:81:00.0
//   eth0: virtio NIC at 0000:00:03.0 (node 0), lo virtual
#pragma once

#include <string>

#include "seedance/base/fake_env.h"

namespace seedance::topo::testing {

inline void AddPciDevice(base::FakeEnv& env, const std::string& chain, const std::string& address,
                         const std::string& cls, const std::string& vendor, int node,
                         const std::string& cpus) {
  const std::string real = "/sys/devices/" + chain;
  env.SetLink("/sys/bus/pci/devices/" + address, "../../.." + std::string("/devices/") + chain);
  const std::string dir = "/sys/bus/pci/devices/" + address;
  env.SetFile(dir + "/class", cls + "\n");
  env.SetFile(dir + "/vendor", vendor + "\n");
  env.SetFile(dir + "/numa_node", std::to_string(node) + "\n");
  env.SetFile(dir + "/local_cpulist", cpus + "\n");
  (void)real;
}

inline void BuildServer(base::FakeEnv& env) {
  env.SetFile("/sys/devices/system/cpu/online", "0-7\n");
  env.SetFile("/sys/devices/system/node/online", "0-1\n");
  env.SetFile("/sys/devices/system/node/node0/cpulist", "0-3\n");
  env.SetFile("/sys/devices/system/node/node1/cpulist", "4-7\n");
  env.SetFile("/sys/devices/system/node/node0/distance", "10 21\n");
  env.SetFile("/sys/devices/system/node/node1/distance", "21 10\n");
  env.SetFile("/sys/devices/system/node/node0/meminfo", "Node 0 MemTotal:       67108864 kB\n");
  env.SetFile("/sys/devices/system/node/node1/meminfo", "Node 1 MemTotal:       67108864 kB\n");
  for (int cpu = 0; cpu < 8; ++cpu) {
    const std::string c = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cache/";
    env.SetFile(c + "index0/level", "1\n");
    env.SetFile(c + "index0/type", "Data\n");
    env.SetFile(c + "index0/size", "32K\n");
    env.SetFile(c + "index0/shared_cpu_list", std::to_string(cpu) + "\n");
    env.SetFile(c + "index1/level", "3\n");
    env.SetFile(c + "index1/type", "Unified\n");
    env.SetFile(c + "index1/size", "32M\n");
    env.SetFile(c + "index1/shared_cpu_list", cpu < 4 ? "0-3\n" : "4-7\n");
  }
  const std::string sw = "pci0000:00/0000:00:01.0/0000:01:00.0/";
  AddPciDevice(env, sw + "0000:02:00.0/0000:03:00.0", "0000:03:00.0", "0x030200", "0x10de", 0,
               "0-3");
  AddPciDevice(env, sw + "0000:02:01.0/0000:04:00.0", "0000:04:00.0", "0x020700", "0x15b3", 0,
               "0-3");
  AddPciDevice(env, "pci0000:00/0000:00:02.0/0000:05:00.0", "0000:05:00.0", "0x030200", "0x10de", 0,
               "0-3");
  AddPciDevice(env, "pci0000:80/0000:80:01.0/0000:81:00.0", "0000:81:00.0", "0x030200", "0x10de", 1,
               "4-7");
  AddPciDevice(env, "pci0000:00/0000:00:03.0", "0000:00:03.0", "0x020000", "0x1af4", 0, "0-3");
  // A BMC's VGA chip: not a GPU.
  AddPciDevice(env, "pci0000:00/0000:00:04.0", "0000:00:04.0", "0x030000", "0x1a03", 0, "0-3");
  env.SetLink("/sys/class/infiniband/mlx5_0",
              "../../devices/" + sw + "0000:02:01.0/0000:04:00.0/infiniband/mlx5_0");
  env.SetFile("/sys/class/infiniband/mlx5_0/ports/1/link_layer", "InfiniBand\n");
  env.SetFile("/sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
  env.SetFile("/sys/class/infiniband/mlx5_0/ports/1/rate", "200 Gb/sec (4X HDR)\n");
  env.SetLink("/sys/class/net/eth0", "../../devices/pci0000:00/0000:00:03.0/virtio2/net/eth0");
  env.SetFile("/sys/class/net/eth0/operstate", "up\n");
  env.SetFile("/sys/class/net/eth0/speed", "25000\n");
  env.SetLink("/sys/class/net/lo", "../../devices/virtual/net/lo");
}

}  // namespace seedance::topo::testing
