// An independent checker of memory plans (feature MEM-2): given buffers and
// their offsets, it verifies that no two buffers that are live at the same
// time overlap in memory, that every offset is non-negative and aligned,
// and computes the peak (max of offset + size). It shares no code with the
// planners: a sweep over time keeps the live buffers ordered by offset and
// compares each new buffer with its neighbours, O(n log n).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "seedance/base/status.h"
#include "seedance/mem/lifetime.h"

namespace seedance::mem {

struct PlanCheck {
  int64_t peak_bytes = 0;
  // Human-readable findings, e.g. "buffers 'a' and 'b' overlap at time 5:
  // [0, 64) and [32, 96)". At most `kMaxViolations` are listed.
  std::vector<std::string> violations;
  int64_t violation_count = 0;
  bool ok() const { return violation_count == 0; }
};

inline constexpr size_t kMaxViolations = 20;

// `offsets[i]` belongs to `buffers[i]`; the sizes must match (else one violation).
PlanCheck CheckPlan(std::span<const Buffer> buffers, std::span<const int64_t> offsets,
                    int64_t alignment = 1);

// The offsets of a plan file for the buffers of the input it was made for, in the input's order:
// every input buffer must appear in the plan once with the same lifetime and size, and the plan
// must have no other buffers. Errors name the plan's file and line (and the input's line of the
// same buffer): "plan.csv:7: buffer 'b3' has upper 9 here but 8 in in.csv:5".
base::StatusOr<std::vector<int64_t>> PlanOffsetsForInput(const LifetimeFile& input,
                                                         const std::string& input_file,
                                                         const LifetimeFile& plan,
                                                         const std::string& plan_file);

}  // namespace seedance::mem
