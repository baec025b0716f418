// A real threaded serving loop around a llama2.c model with the dynamic
// batcher (feature KV-5): `seedancectl kv serve-bench`. A client thread sends
// requests with Poisson arrivals (exponential gaps, mean 1/rate) for
// `duration`; a server thread takes batches from the batcher and runs them
// to completion with LlamaModel::ForwardBatch (BOS and a short prompt, then
// greedy generation). Latency is from a request's arrival to its last token.
#pragma once

#include <cstdint>
#include <functional>

#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/kv/batcher.h"
#include "seedance/kv/llama.h"

namespace seedance::kv {

struct ServeOptions {
  double rate_per_s = 50;
  double duration_s = 5;
  int prompt_tokens = 4;
  int gen_tokens = 16;
  BatcherConfig batcher;
  uint64_t seed = 1;
  // Called from the server thread after each batch with the requests completed so far (for a
  // progress line; under overload the queue drains long after the arrivals end).
  std::function<void(int64_t completed)> on_completed;
};

// requests, completed, throughput_rps, tokens_per_s, latency_ms {p50, p99, mean},
// batch_size_mean, batches.
base::StatusOr<base::Report> ServeBench(const LlamaModel& model, const ServeOptions& options);

}  // namespace seedance::kv
