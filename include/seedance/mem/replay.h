// Replaying a lifetime file through a caching-allocator policy (feature MEM-4):
// every buffer is allocated at `lower` and freed at `upper` (frees first at
// equal times), on the virtual back end, so the replay measures the policy's
// memory behaviour without using any memory.
#pragma once

#include <cstdint>
#include <span>

#include "seedance/base/env.h"
#include "seedance/base/status.h"
#include "seedance/mem/caching_allocator.h"
#include "seedance/mem/lifetime.h"

namespace seedance::mem {

struct ReplayResult {
  int64_t reserved_peak_bytes = 0;
  int64_t allocated_peak_bytes = 0;  // block bytes, after rounding
  int64_t requested_peak_bytes = 0;  // bytes asked for: equals the lower bound
  int64_t lower_bound_bytes = 0;
  double fragmentation = 0;  // 1 - allocated peak / reserved peak
  int64_t ops = 0;           // allocations + frees
  double ns_per_op = 0;
  int64_t segments = 0;
  int64_t stitches = 0;
};

struct ReplayOptions {
  // Run the allocator's validity walker after every operation (slow; tests).
  bool check_every_op = false;
  // Page size of the virtual back end (2 MiB: the CUDA mapping granularity).
  size_t page_size = size_t{2} << 20;
};

base::StatusOr<ReplayResult> Replay(std::span<const Buffer> buffers, AllocatorPolicy policy,
                                    const ReplayOptions& options = {},
                                    base::Env* env = base::Env::Default());

}  // namespace seedance::mem
