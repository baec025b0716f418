#include "seedance/kv/batcher.h"

#include <algorithm>

namespace seedance::kv {

int BatchSizeNow(const BatcherConfig& c, int queued, std::chrono::steady_clock::time_point oldest,
                 std::chrono::steady_clock::time_point now, bool stopping) {
  if (queued <= 0) return 0;
  if (queued >= c.max_batch_size) return c.max_batch_size;
  int preferred = 0;
  for (int p : c.preferred_batch_sizes) {
    if (p <= queued) preferred = std::max(preferred, p);
  }
  if (preferred > 0) return preferred;
  if (stopping || now - oldest >= c.max_queue_delay) return queued;
  return 0;
}

}  // namespace seedance::kv
