// Binding the calling thread to CPUs and its memory to a NUMA node, through
// sched_setaffinity and libnuma's memory policies. The only file that calls
// libnuma (docs/architecture.md: port/ holds every platform dependency).
//
// Thread safety: each call changes the calling thread only (threads it creates
// afterwards inherit both settings).
#pragma once

#include <string_view>
#include <vector>

#include "seedance/base/status.h"

namespace seedance::port {

enum class MemoryPolicy {
  kNone,       // leave the memory policy as it is
  kPreferred,  // allocate on the node, fall back to others when it is full
  kBind,       // allocate only on the node (out of memory rather than remote)
};

std::string_view MemoryPolicyName(MemoryPolicy policy);  // "none", "preferred", "bind"
base::StatusOr<MemoryPolicy> ParseMemoryPolicy(std::string_view name, std::string_view where);

// The highest NUMA node id the kernel reports, or -1 without NUMA support.
int NumaMaxNode();

// Restricts the calling thread to `cpus` (must be non-empty) and, unless
// policy is kNone, sets its memory policy to `memory_node`. InvalidArgument
// for an empty CPU list or a node the kernel does not have; FailedPrecondition
// when a memory policy is asked for on a kernel without NUMA support.
base::Status BindCallingThread(const std::vector<int>& cpus, int memory_node, MemoryPolicy policy);

// The CPUs the calling thread may run on.
std::vector<int> CallingThreadCpus();

}  // namespace seedance::port
