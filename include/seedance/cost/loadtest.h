// `seedancectl loadtest --url URL` (feature COST-8): the load-test protocol of the design notes
// (004 §2.3) against a real HTTP endpoint — plain GETs, or OpenAI-compatible completions streamed
// as server-sent events.
//
// Protocol:
//  1. warm-up: `warmup_s` at the first level's concurrency; nothing from it is kept;
//  2. a ladder of levels, `level_s` each: closed loop (C clients, each sending its next request
//     when the previous one ends, on its own keep-alive connection), or open loop (requests
//     arriving as a Poisson process of R per second, seeded, served by up to `max_connections`
//     keep-alive connections; a request that finds none free waits, and its latency counts from
//     its arrival, so a saturated endpoint shows its queue instead of hiding it — no coordinated
//     omission);
//  3. the steady window of a level is found from the data: MSER-5 (White 1997) on the latencies
//     in completion order — batches of 5, and the truncation that minimizes the standard error of
//     the remaining batch means, searched over the first half;
//  4. recalibration: when the P99 of the steady window's second half differs from its first half's
//     by more than `drift` (5 %), the level is run again, up to `max_recalibrations` times; the
//     last run is reported with its drift and the number of reruns.
// Per level: requests, errors and error rate, throughput (steady requests over the steady span)
// with a bootstrap CI over per-second counts (cost/stats.h), latency p50/p90/p99 with
// distribution-free CIs from order statistics (binomial ranks), and for completions the time to
// first token, time per output token and tokens/s; cost per 1,000 requests at `usd_per_hour`.
//
// Thread safety: RunLoadTest uses its own threads; the pure helpers are pure.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/cost/stats.h"

namespace seedance::cost {

enum class LoadKind { kHttpGet, kCompletions };

struct LoadTestOptions {
  std::string url;  // http://HOST:PORT/PATH; completions: the API base (…/v1)
  LoadKind kind = LoadKind::kHttpGet;
  // Completions: the request each client sends (streamed, temperature 0).
  std::string model, prompt = "Once upon a time";
  int max_tokens = 16;
  std::vector<int> concurrency = {1, 2, 4, 8};
  std::vector<double> rates;  // requests per second; not empty: open loop, one level per rate
  int max_connections = 256;  // open loop: connections (and requests in flight) at most
  double warmup_s = 30;       // the notes' defaults: 30 s warm-up, >= 60 s per level
  double level_s = 60;
  double drift = 0.05;
  int max_recalibrations = 2;
  double timeout_s = 30;                             // one request
  double usd_per_hour = 0;                           // the endpoint's cost; 0: no cost figures
  uint64_t seed = 1;                                 // bootstrap resampling, arrivals
  std::function<void(const std::string&)> progress;  // one line per level run, may be empty
};

// One request as the client saw it (monotonic nanoseconds since the level began; open loop:
// start_ns is the arrival time, which may precede the send).
struct RequestSample {
  int64_t start_ns = 0, end_ns = 0;
  int64_t first_token_ns = -1;  // completions: the first event with text; -1 if none
  int tokens = 0;               // completions: usage.completion_tokens (or text events)
  bool ok = false;
  // Completions answered 200 whose stream is not what the API promises: an event that is not a
  // JSON object of the completion's shape (fields of the wrong type included), or no completion
  // chunk at all before [DONE]. Counted as errors, and apart in the report ("malformed_streams").
  // A stream of valid chunks without text (an empty completion) is not malformed.
  bool malformed = false;
};

// MSER-5: the number of leading values to drop from `series` (a multiple of `batch`, at most half).
size_t MserTruncation(std::span<const double> series, int batch = 5);

// The q-quantile (0 < q < 1) by linear interpolation between order statistics (as NumPy's
// default), with a distribution-free interval: the order statistics whose ranks are the
// binomial(n, q) quantiles at (1 -/+ confidence) / 2. Needs >= 1 value.
ConfidenceInterval QuantileWithCi(std::vector<double> values, double q, double confidence = 0.95);

// The arrival times (nanoseconds from 0) of a Poisson process of `rate` per second over
// `seconds`: exponential gaps from a generator seeded with `seed`.
std::vector<int64_t> PoissonArrivals(double rate, double seconds, uint64_t seed);

// Summarizes one level run (samples in any order) as the report's level object.
base::Report SummarizeLevel(std::vector<RequestSample> samples, int concurrency,
                            const LoadTestOptions& options);

base::StatusOr<base::Report> RunLoadTest(const LoadTestOptions& options);

// The first screen of `loadtest` (loadtest_view.cc): at most ten sentences — the highest steady
// throughput with its interval and the latency there, where P99 latency first more than doubles
// against the first level (the knee), errors, and the cost per 1,000 requests when priced.
base::Report LoadTestVerdict(const base::Report& report);
// The verdict, then the levels with their headline figures (intervals beside them), in 100
// columns; `-o wide` and JSON give the whole report.
base::Report LoadTestTableView(const base::Report& report);

}  // namespace seedance::cost
