// A real threaded serving loop around a llama2.c model with the dynamic
// batcher (feature KV-5): `seedancectl kv serve-bench`. A client thread sends
// requests with Poisson arrivals (exponential gaps, mean 1/rate) for
// `duration`; a server thread takes batches from the batcher and runs them
// to completion with LlamaModel::ForwardBatch (BOS and a short prompt, then
// greedy generation). Latency is from a request's arrival to its last token.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

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

// requests, completed, throughput_rps, tokens_per_s, latency_ms {p50, p99, mean} (base::Quantile),
// batch_size_mean, batches. Errors name the option: rate, duration, gen_tokens, max_batch,
// preferred.
base::StatusOr<base::Report> ServeBench(const LlamaModel& model, const ServeOptions& options);

// Arrivals are drawn up front; a run of more than this many (rate x duration) is refused.
inline constexpr double kMaxServeBenchRequests = 1e6;

// The checks of `options` that need no model (ServeBench makes them too): rate, duration, the
// arrival bound, max_batch, preferred. A caller can refuse bad options before loading a model.
base::Status CheckServeOptions(const ServeOptions& options);

// `seedancectl kv serve-bench`: the same Poisson arrivals served with `options.batcher` and then
// without batching (batches of one). {rate_per_s, duration_s, gen_tokens, batched: ServeBench's
// report with max_batch and max_delay_ms, unbatched: ServeBench's}. on_progress, when set, hears
// "batched" or "unbatched" and the requests completed so far in that run.
base::StatusOr<base::Report> CompareBatching(
    const LlamaModel& model, const ServeOptions& options,
    const std::function<void(std::string_view run, int64_t completed)>& on_progress = {});

}  // namespace seedance::kv
