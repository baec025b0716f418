// What the training-loop controllers read as a CPU run's memory, in use and budget (the batch
// controller's pressure signal; seedance.torch.control's `cpu_memory`). In order:
//   1. a budget given by the user: the process's resident set against it;
//   2. the process's memory cgroup with a limit (v2 memory.current / memory.max, or v1
//      memory.usage_in_bytes / memory.limit_in_bytes; a v1 "no limit" is about 2^63): its usage
//      against its limit — what the kernel enforces;
//   3. the address-space limit (RLIMIT_AS): the virtual size against it;
//   4. the machine's physical memory: the resident set against it.
// Everything is read through base::Env (procfs, cgroupfs and the memory facts), afresh on every
// call: limits may change mid-run. Tested with FakeEnv (cpu_memory_test.cc).
//
// Thread safety: the functions are independent; each reads through the Env it is given.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "seedance/base/env.h"
#include "seedance/base/status.h"

namespace seedance::control {

struct CpuMemory {
  int64_t in_use = 0;
  int64_t budget = 0;
  std::string source;  // "budget", "cgroup v2", "cgroup v1", "rlimit", "ram"
};

// (usage file, limit file) of each memory cgroup of this process that has both files, in
// /proc/self/cgroup's order.
std::vector<std::pair<std::string, std::string>> MemoryCgroupFiles(base::Env& env);

// Errors: /proc/self/statm unreadable or malformed (where: the file). `budget_bytes` 0: none.
base::StatusOr<CpuMemory> ReadCpuMemory(base::Env& env, int64_t budget_bytes = 0);

}  // namespace seedance::control
