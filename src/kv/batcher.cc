#include "seedance/kv/batcher.h"

#include <algorithm>

namespace seedance::kv {

int BatchSizeNow(const BatcherConfig& c, int queued, int64_t oldest_ns, int64_t now_ns,
                 bool stopping) {
  if (queued <= 0) return 0;
  if (queued >= c.max_batch_size) return c.max_batch_size;
  int preferred = 0;
  for (int p : c.preferred_batch_sizes) {
    if (p <= queued) preferred = std::max(preferred, p);
  }
  if (preferred > 0) return preferred;
  const int64_t delay_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(c.max_queue_delay).count();
  if (stopping || now_ns - oldest_ns >= delay_ns) return queued;
  return 0;
}

}  // namespace seedance::kv
