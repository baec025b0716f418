// The online caching allocator (feature MEM-3). Memory comes from a
// SegmentBackend in segments; freed blocks are cached, split and coalesced,
// never returned to the back end until EmptyCache().
//
// Object hierarchy:
//   stream pool (one per stream, and per small/large class)
//     └ segments (address ranges reserved from the back end)
//         └ blocks tiling each segment: allocated, free, or hole (no memory)
// Invariants (IsValid checks them; debug tests call it after every operation):
//   Σ_{blocks of a segment} size = segment size, in address order, no gaps;
//   no two free blocks are adjacent (freeing coalesces);
//   the pool's free sets hold exactly its free blocks;
//   allocated_bytes = Σ allocated block sizes;  reserved_bytes = Σ sizes of
//   blocks that have memory behind them (allocated + free);
//   fragmentation = 1 − peak allocated / peak reserved.
//
// Policies:
//   caching-2mib  PyTorch's documented caching rules: sizes rounded to 512 B;
//                 requests ≤ 1 MiB from 2 MiB segments (small pool); 1–10 MiB
//                 from 20 MiB segments; larger ones from segments rounded to
//                 2 MiB; best fit; small blocks split when ≥ 512 B remain,
//                 large ones when > 1 MiB remains.
//   best-fit      one pool, segments of the request rounded to 2 MiB, best fit,
//                 split when ≥ 512 B remain.
//   first-fit     the same with the lowest-address fitting block.
//   seedance      PyTorch's small pool; large requests from one expandable
//                 segment per stream that grows page by page at its end; the
//                 block is chosen among the best-fitting candidates by the
//                 fragment it leaves (a remainder under 1 MiB is penalised)
//                 and by contiguity (fuller regions first).
//   seedance-stitch  seedance's block choice and growing segment, with one
//                 pool for all sizes; when nothing fits, whole free pages from
//                 the middle of the segment are remapped to its end before new
//                 memory is mapped, so free memory cannot be stranded.
//
// Thread safety: every public method may be called concurrently (one lock).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "seedance/base/status.h"
#include "seedance/mem/segment_backend.h"

namespace seedance::mem {

enum class AllocatorPolicy { kSeedance, kSeedanceStitch, kBestFit, kFirstFit, kCaching2MiB };

std::string_view AllocatorPolicyName(AllocatorPolicy policy);
base::StatusOr<AllocatorPolicy> ParseAllocatorPolicy(std::string_view name);

struct AllocatorStats {
  int64_t allocated_bytes = 0;  // block bytes in use (after rounding)
  int64_t requested_bytes = 0;  // bytes asked for
  int64_t reserved_bytes = 0;   // bytes with memory behind them
  int64_t allocated_peak_bytes = 0;
  int64_t requested_peak_bytes = 0;
  int64_t reserved_peak_bytes = 0;
  int64_t segments = 0;
  int64_t allocations = 0;
  int64_t stitches = 0;  // times pages were remapped
  int64_t stitched_bytes = 0;
  double fragmentation() const {
    return reserved_peak_bytes ? 1.0 - static_cast<double>(allocated_peak_bytes) /
                                           static_cast<double>(reserved_peak_bytes)
                               : 0.0;
  }
};

class CachingAllocator {
 public:
  CachingAllocator(AllocatorPolicy policy, std::unique_ptr<SegmentBackend> backend);
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // A block of at least `size` bytes for `stream`, 512-byte aligned.
  // ResourceExhausted when the back end has no memory left.
  base::StatusOr<void*> Allocate(size_t size, int64_t stream = 0);
  // `ptr` must come from Allocate and not be freed yet (else InvalidArgument).
  base::Status Free(void* ptr);

  AllocatorStats stats() const;
  // Checks every invariant listed above; an error names the first broken one.
  base::Status IsValid() const;
  // Returns the memory of completely free segments to the back end.
  void EmptyCache();

  AllocatorPolicy policy() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace seedance::mem
