// The serving engine behind `seedancectl kv serve` (feature KV-5): a llama2.c model, a KV cache per
// sequence (FP32 or quantized), one worker thread that runs the model, and two ways of forming its
// batches:
//
//   dynamic     (Triton's dynamic batcher): while nothing runs, requests wait until BatchSizeNow
//               (batcher.h) lets a batch leave — max_batch waiting, a preferred size, or the oldest
//               past max_queue_delay; the batch then runs until its last sequence finishes and new
//               requests wait for the next batch.
//   continuous  (as vLLM does): before every step, waiting requests join the running batch while
//               it has room (max_batch) and the KV budget allows; finished sequences leave after
//               their last token. Sequences in a batch are at different positions.
//
// One step feeds each running sequence one token (its next prompt token while prefilling, else its
// last generated one) through LlamaModel::ForwardBatch, so prefill and decode share steps.
//
// KV budget. A request reserves KvReservationBytes(prompt + max_tokens) when it is admitted and
// returns it when it finishes; the cache it gets holds no more than that (the bound is checked
// against the caches' own Bytes() in engine_test.cc). Invariants, after every step:
//   reserved_bytes == sum over running sequences of their reservation <= kv_budget_bytes
//   running <= max_batch
// Submit refuses (ResourceExhausted, HTTP 429) a request whose reservation alone exceeds the
// budget, and one that would make more than max_queue requests wait for room (those the next
// admission takes do not count); otherwise it queues in FIFO order (a request that does not fit
// now waits for others to finish; later requests do not overtake it).
//
// Thread safety: Submit, BeginDrain, CancelAll, stats and Stop may be called from any thread.
// A Generation is shared by the engine (which appends) and one reader (Next, Cancel).
#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/env.h"
#include "seedance/base/status.h"
#include "seedance/kv/batcher.h"
#include "seedance/kv/cache.h"
#include "seedance/kv/llama.h"
#include "seedance/kv/text_tokenizer.h"

namespace seedance::kv {

enum class BatchPolicy { kDynamic, kContinuous };
std::string_view BatchPolicyName(BatchPolicy policy);  // "dynamic", "continuous"
base::StatusOr<BatchPolicy> ParseBatchPolicy(std::string_view name, std::string_view where);

struct EngineOptions {
  BatchPolicy policy = BatchPolicy::kContinuous;
  KvWidth kv_width = KvWidth::kFp32;  // kFp32: the FP32 cache; otherwise a QuantConfig's
  int group = 32;
  int window = 32;  // most recent tokens kept in FP32 by a quantized cache
  int max_batch = 8;
  std::vector<int> preferred_batch_sizes;           // dynamic only, each in 1..max_batch
  std::chrono::microseconds max_queue_delay{5000};  // dynamic only
  // 0: room for max_batch sequences of the whole context at this width.
  int64_t kv_budget_bytes = 0;
  int max_queue = 256;

  base::Status Validate() const;
};

// The most bytes a sequence of `tokens` tokens holds in a cache of this width at any point:
// FP32: tokens * layers * kv_dim * 2 * 4. Quantized: at most window + group tokens stay FP32
// (the window, plus keys of a group not yet complete) and at most `tokens` are packed at
// PackedBitsPerValue of the widest code the width may use (8 bits for fp8 and adaptive).
int64_t KvReservationBytes(const CacheShape& shape, const EngineOptions& options, int tokens);

struct GenerationRequest {
  std::vector<int> prompt;  // token ids after BOS (may be empty when the tokenizer has a BOS)
  int max_tokens = 16;      // >= 1; prompt.size() + 1 + max_tokens - 1 <= seq_len
  double temperature = 0;   // 0: greedy (argmax); else softmax(logits / temperature)
  double top_p = 1;         // nucleus sampling: the smallest set of tokens whose mass >= top_p
  uint64_t seed = 0;        // the sampler's seed (temperature > 0)
  std::vector<std::string> stop;  // text that ends the completion (not included in it)
};

enum class FinishReason { kNone, kLength, kStop, kCancelled };
std::string_view FinishReasonName(FinishReason reason);  // "", "length", "stop", "cancelled"

// What a reader gets from Generation::Next.
struct GenerationUpdate {
  std::string text;  // text produced since the previous update (whole UTF-8 characters)
  bool finished = false;
  FinishReason reason = FinishReason::kNone;
  std::string message;        // why, when cancelled
  int prompt_tokens = 0;      // BOS included, when there is one
  int completion_tokens = 0;  // generated so far (tokens cut by a stop string included)
};

// How many bytes at the end of `text` must be held back while streaming: the longest suffix that
// is a proper prefix of a stop string, extended to the start of an incomplete UTF-8 character.
size_t HeldBackBytes(std::string_view text, const std::vector<std::string>& stop);

class Generation {
 public:
  Generation(int prompt_tokens, std::vector<std::string> stop)
      : prompt_tokens_(prompt_tokens), stop_(std::move(stop)) {}

  // Blocks until there is new text, the generation has finished, or `timeout` passes; returns the
  // new text (possibly none) and the state. Once finished, returns finished with empty text.
  GenerationUpdate Next(std::chrono::milliseconds timeout);
  // The client went away: the engine drops the sequence at its next step.
  void Cancel();
  bool cancelled() const;

  // Engine side. Append adds a generated token's text and finishes with kStop at a stop string.
  void Append(std::string_view piece);
  void Finish(FinishReason reason, std::string message = {});
  bool finished() const;
  FinishReason reason() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  const int prompt_tokens_;
  const std::vector<std::string> stop_;
  std::string text_;       // the completion so far (cut at a stop string)
  size_t visible_ = 0;     // bytes of text_ a reader may have
  size_t handed_out_ = 0;  // bytes of text_ a reader has had
  int completion_tokens_ = 0;
  bool finished_ = false, reported_ = false, cancelled_ = false;
  FinishReason reason_ = FinishReason::kNone;
  std::string message_;
};

// Cumulative counters and gauges for /metrics.
struct EngineStats {
  static constexpr std::array<double, 8> kBatchBounds = {1, 2, 4, 8, 16, 32, 64, 128};
  static constexpr std::array<double, 12> kSecondsBounds = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                            0.5,   1,    2.5,   5,    10,  30};
  struct Histogram {
    std::vector<uint64_t> cumulative;  // one per bound, then the total
    double sum = 0;
  };
  uint64_t finished_length = 0, finished_stop = 0, cancelled = 0;
  uint64_t rejected_budget = 0, rejected_queue = 0, rejected_draining = 0;
  uint64_t prompt_tokens = 0, generation_tokens = 0, steps = 0;
  int64_t running = 0, waiting = 0;
  int64_t kv_reserved_bytes = 0, kv_used_bytes = 0, kv_budget_bytes = 0;
  Histogram batch_size;             // sequences per step
  Histogram time_to_first_token;    // seconds, from Submit
  Histogram time_per_output_token;  // seconds, (finish - first token) / (tokens - 1)
  Histogram request_duration;       // seconds, Submit to finish
  Histogram queue_time;             // seconds, Submit to admission
};

class ServingEngine {
 public:
  // Validates the options, then starts the worker thread. The model and tokenizer must outlive
  // the engine.
  static base::StatusOr<std::unique_ptr<ServingEngine>> Start(
      const LlamaModel& model, const TextTokenizer& tokenizer, EngineOptions options,
      base::Env& env = *base::Env::Default());
  ~ServingEngine();  // Stop()s
  ServingEngine(const ServingEngine&) = delete;
  ServingEngine& operator=(const ServingEngine&) = delete;

  // Queues a request. InvalidArgument: empty max_tokens or beyond the context. ResourceExhausted:
  // its reservation exceeds the whole budget, or max_queue requests wait. Unavailable: draining.
  base::StatusOr<std::shared_ptr<Generation>> Submit(GenerationRequest request);

  // Refuses new requests from now on; queued and running ones go on (dynamic batches leave at
  // once).
  void BeginDrain();
  bool draining() const;
  // True when nothing waits or runs.
  bool Idle() const;
  // Finishes every queued and running request as cancelled with `why`.
  void CancelAll(const std::string& why);
  // CancelAll("the server stopped") and joins the worker. Idempotent.
  void Stop();

  EngineStats stats() const;
  const EngineOptions& options() const;
  int context_tokens() const;  // the model's seq_len

  class Impl;

 private:
  explicit ServingEngine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace seedance::kv
