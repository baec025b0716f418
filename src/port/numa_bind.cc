#include "seedance/port/numa_bind.h"

#include <numa.h>
#include <sched.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "seedance/base/enum_names.h"

namespace seedance::port {

namespace {

inline constexpr base::EnumTable<MemoryPolicy, 3> kMemoryPolicyNames = {{
    {MemoryPolicy::kNone, "none"},
    {MemoryPolicy::kPreferred, "preferred"},
    {MemoryPolicy::kBind, "bind"},
}};

}  // namespace

std::string_view MemoryPolicyName(MemoryPolicy policy) {
  return base::EnumName(kMemoryPolicyNames, policy);
}

base::StatusOr<MemoryPolicy> ParseMemoryPolicy(std::string_view name, std::string_view where) {
  return base::ParseEnum(kMemoryPolicyNames, name, where);
}

int NumaMaxNode() { return numa_available() < 0 ? -1 : numa_max_node(); }

base::Status BindCallingThread(const std::vector<int>& cpus, int memory_node, MemoryPolicy policy) {
  if (cpus.empty()) return base::InvalidArgumentError("no CPUs to bind to");
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) {
    if (c < 0 || c >= CPU_SETSIZE) {
      return base::InvalidArgumentError("CPU " + std::to_string(c) + " is out of range");
    }
    CPU_SET(c, &set);
  }
  if (policy != MemoryPolicy::kNone) {
    const int max_node = NumaMaxNode();
    if (max_node < 0) {
      return base::FailedPreconditionError(
          "the kernel has no NUMA support: cannot set a memory policy");
    }
    if (memory_node < 0 || memory_node > max_node) {
      return base::InvalidArgumentError("NUMA node " + std::to_string(memory_node) +
                                        " does not exist (highest is " + std::to_string(max_node) +
                                        ")");
    }
  }
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    return base::InvalidArgumentError(std::string("sched_setaffinity failed: ") +
                                      std::strerror(errno) + " (CPUs outside the cgroup?)");
  }
  if (policy == MemoryPolicy::kPreferred) {
    numa_set_preferred(memory_node);
  } else if (policy == MemoryPolicy::kBind) {
    bitmask* mask = numa_allocate_nodemask();
    numa_bitmask_setbit(mask, static_cast<unsigned>(memory_node));
    numa_set_membind(mask);
    numa_bitmask_free(mask);
  }
  return base::OkStatus();
}

std::vector<int> CallingThreadCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

}  // namespace seedance::port
