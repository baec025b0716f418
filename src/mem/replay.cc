#include "seedance/mem/replay.h"

#include <algorithm>
#include <vector>

namespace seedance::mem {

base::StatusOr<ReplayResult> Replay(std::span<const Buffer> buffers, AllocatorPolicy policy,
                                    const ReplayOptions& options, base::Env* env) {
  SEEDANCE_RETURN_IF_ERROR(ValidateBuffers(buffers, "replay input"));
  const std::vector<LifetimeEvent> events = OrderedEvents(buffers);

  CachingAllocator allocator(policy, NewVirtualBackend(options.page_size));
  std::vector<void*> ptrs(buffers.size(), nullptr);
  const int64_t start = env->NowMonotonicNanos();
  for (const LifetimeEvent& e : events) {
    if (e.is_alloc) {
      SEEDANCE_ASSIGN_OR_RETURN(ptrs[e.index],
                                allocator.Allocate(static_cast<size_t>(buffers[e.index].size)));
    } else {
      SEEDANCE_RETURN_IF_ERROR(allocator.Free(ptrs[e.index]));
    }
    if (options.check_every_op) {
      SEEDANCE_RETURN_IF_ERROR(allocator.IsValid().Annotate("after the event of buffer '" +
                                                            buffers[e.index].id + "' at time " +
                                                            std::to_string(e.time)));
    }
  }
  const int64_t elapsed = env->NowMonotonicNanos() - start;
  const AllocatorStats s = allocator.stats();
  ReplayResult r;
  r.reserved_peak_bytes = s.reserved_peak_bytes;
  r.allocated_peak_bytes = s.allocated_peak_bytes;
  r.requested_peak_bytes = s.requested_peak_bytes;
  r.lower_bound_bytes = MaxLiveBytes(buffers);
  r.fragmentation = s.fragmentation();
  r.ops = static_cast<int64_t>(events.size());
  r.ns_per_op = events.empty() ? 0 : static_cast<double>(elapsed) / static_cast<double>(r.ops);
  r.segments = s.segments;
  r.stitches = s.stitches;
  return r;
}

}  // namespace seedance::mem
