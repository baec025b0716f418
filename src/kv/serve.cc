#include "seedance/kv/serve.h"

#include <algorithm>
#include <random>
#include <thread>

#include "seedance/base/quantile.h"

namespace seedance::kv {
namespace {

struct Request {
  int id = 0;
  int64_t arrival_ns = 0;  // monotonic
  std::vector<int> prompt;
};

// base::Quantile of sorted values at p / 100; no request finished: 0 ms.
double Percentile(const std::vector<double>& sorted, double p) {
  return sorted.empty() ? 0.0 : base::QuantileOfSorted(sorted, p / 100.0);
}

}  // namespace

base::Status CheckServeOptions(const ServeOptions& o) {
  if (!(o.rate_per_s > 0)) return base::InvalidArgumentError("must be > 0", "rate");
  if (!(o.duration_s > 0)) return base::InvalidArgumentError("must be > 0", "duration");
  if (o.rate_per_s * o.duration_s > kMaxServeBenchRequests) {
    return base::InvalidArgumentError(
        "rate x duration must be at most 1,000,000 requests (arrivals are drawn up front)", "rate");
  }
  if (o.batcher.max_batch_size < 1) return base::InvalidArgumentError("must be >= 1", "max_batch");
  for (int p : o.batcher.preferred_batch_sizes) {
    if (p < 1 || p > o.batcher.max_batch_size) {
      return base::InvalidArgumentError("preferred sizes must be in 1..max batch", "preferred");
    }
  }
  return base::OkStatus();
}

base::StatusOr<base::Report> ServeBench(const LlamaModel& model, const ServeOptions& o) {
  const LlamaConfig& c = model.config();
  SEEDANCE_RETURN_IF_ERROR(CheckServeOptions(o));
  if (1 + o.prompt_tokens + o.gen_tokens > c.seq_len) {
    return base::InvalidArgumentError("prompt + generated tokens exceed the model's context",
                                      "gen_tokens");
  }
  base::Env& env = *base::Env::Default();
  DynamicBatcher<Request> batcher(o.batcher, env);
  std::vector<double> latencies_ms;
  int64_t tokens = 0, batches = 0, batched_requests = 0;
  base::Status failure;

  // The server: one batch at a time, all its sequences in lockstep.
  std::thread server([&] {
    std::vector<float> logits_store;
    while (true) {
      std::vector<Request> batch = batcher.NextBatch();
      if (batch.empty()) return;
      const int B = static_cast<int>(batch.size());
      std::vector<std::unique_ptr<KvCache>> caches;
      std::vector<KvCache*> cache_ptrs;
      std::vector<float*> logit_ptrs;
      logits_store.assign(static_cast<size_t>(B) * c.vocab_size, 0.0f);
      for (int b = 0; b < B; ++b) {
        caches.push_back(NewFullCache(model.cache_shape()));
        cache_ptrs.push_back(caches.back().get());
        logit_ptrs.push_back(logits_store.data() + static_cast<size_t>(b) * c.vocab_size);
      }
      std::vector<int> current(B, 1);  // BOS
      const int steps = o.prompt_tokens + o.gen_tokens;
      for (int pos = 0; pos < steps && failure.ok(); ++pos) {
        base::Status s = model.ForwardBatch(current, pos, cache_ptrs, logit_ptrs);
        if (!s.ok()) {
          failure = s;
          break;
        }
        for (int b = 0; b < B; ++b) {
          if (pos < o.prompt_tokens) {
            current[b] = batch[b].prompt[pos];
          } else {
            const float* l = logit_ptrs[b];
            current[b] = static_cast<int>(std::max_element(l, l + c.vocab_size) - l);
            ++tokens;
          }
        }
      }
      const int64_t done = env.NowMonotonicNanos();
      for (const Request& r : batch) {
        latencies_ms.push_back(static_cast<double>(done - r.arrival_ns) / 1e6);
      }
      ++batches;
      batched_requests += B;
      if (o.on_completed) o.on_completed(static_cast<int64_t>(latencies_ms.size()));
    }
  });

  // The client: Poisson arrivals for the duration.
  std::mt19937_64 rng(o.seed);
  std::exponential_distribution<double> gap(o.rate_per_s);
  std::uniform_int_distribution<int> token(3, c.vocab_size - 1);
  const int64_t start = env.NowMonotonicNanos();
  double next_s = 0;  // since start
  int sent = 0;
  while (true) {
    next_s += gap(rng);
    if (next_s > o.duration_s) break;
    const int64_t wait = start + static_cast<int64_t>(next_s * 1e9) - env.NowMonotonicNanos();
    if (wait > 0) env.SleepFor(std::chrono::nanoseconds(wait));
    Request r;
    r.id = sent++;
    r.arrival_ns = env.NowMonotonicNanos();
    for (int i = 0; i < o.prompt_tokens; ++i) r.prompt.push_back(token(rng));
    batcher.Enqueue(std::move(r));
  }
  batcher.Stop();
  server.join();
  SEEDANCE_RETURN_IF_ERROR(failure);
  const double wall = static_cast<double>(env.NowMonotonicNanos() - start) / 1e9;
  base::Report r;
  r["requests"] = sent;
  r["completed"] = latencies_ms.size();
  r["wall_s"] = wall;
  r["throughput_rps"] = static_cast<double>(latencies_ms.size()) / wall;
  r["tokens_per_s"] = static_cast<double>(tokens) / wall;
  double mean = 0;
  for (double l : latencies_ms) mean += l;
  std::sort(latencies_ms.begin(), latencies_ms.end());
  r["latency_ms"] = {{"p50", Percentile(latencies_ms, 50)},
                     {"p99", Percentile(latencies_ms, 99)},
                     {"mean", latencies_ms.empty() ? 0.0 : mean / latencies_ms.size()}};
  r["batches"] = batches;
  r["batch_size_mean"] = batches ? static_cast<double>(batched_requests) / batches : 0.0;
  return r;
}

namespace {

std::string Num(double v) { return base::SignificantText(v); }

// The answer of a batched-against-unbatched comparison in three lines.
base::Report ServeVerdict(const base::Report& r) {
  const base::Report& b = r["batched"];
  const base::Report& u = r["unbatched"];
  const double tb = b["tokens_per_s"].get<double>(), tu = u["tokens_per_s"].get<double>();
  const double lb = b["latency_ms"]["p99"].get<double>(), lu = u["latency_ms"]["p99"].get<double>();
  base::Report out = base::Report::array();
  out.push_back("Dynamic batching: " + Num(tb) + " tokens/s against " + Num(tu) + " unbatched (" +
                Num(tu > 0 ? tb / tu : 0) + "x), at " + Num(r["rate_per_s"].get<double>()) +
                " requests/s offered.");
  out.push_back("P99 latency " + Num(lb) + " ms batched against " + Num(lu) +
                " ms unbatched; mean batch " + Num(b["batch_size_mean"].get<double>()) +
                " of at most " + b["max_batch"].dump() + ".");
  out.push_back("Completed " + b["completed"].dump() + " of " + b["requests"].dump() +
                " requests batched, " + u["completed"].dump() + " of " + u["requests"].dump() +
                " unbatched (one run each, this machine).");
  return out;
}

}  // namespace

base::StatusOr<base::Report> CompareBatching(
    const LlamaModel& model, const ServeOptions& options,
    const std::function<void(std::string_view run, int64_t completed)>& on_progress) {
  auto run = [&](ServeOptions o, std::string_view label) {
    if (on_progress) o.on_completed = [&](int64_t done) { on_progress(label, done); };
    return ServeBench(model, o);
  };
  SEEDANCE_ASSIGN_OR_RETURN(base::Report batched, run(options, "batched"));
  ServeOptions single = options;
  single.batcher = BatcherConfig{1, {}, std::chrono::microseconds(0)};
  SEEDANCE_ASSIGN_OR_RETURN(base::Report unbatched, run(single, "unbatched"));
  base::Report r;
  r["rate_per_s"] = options.rate_per_s;
  r["duration_s"] = options.duration_s;
  r["gen_tokens"] = options.gen_tokens;
  r["batched"] = std::move(batched);
  r["batched"]["max_batch"] = options.batcher.max_batch_size;
  r["batched"]["max_delay_ms"] =
      std::chrono::duration<double, std::milli>(options.batcher.max_queue_delay).count();
  r["unbatched"] = std::move(unbatched);
  base::Report out{{"verdict", ServeVerdict(r)}};
  out.update(r);
  return out;
}

}  // namespace seedance::kv
