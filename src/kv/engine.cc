#include "seedance/kv/engine.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <numeric>
#include <random>
#include <thread>

#include "seedance/base/enum_names.h"

namespace seedance::kv {
namespace {

inline constexpr base::EnumTable<BatchPolicy, 2> kPolicyNames = {
    {{BatchPolicy::kDynamic, "dynamic"}, {BatchPolicy::kContinuous, "continuous"}}};

// Bytes of an incomplete UTF-8 character at the end of `text` (0 when it ends on a boundary).
size_t IncompleteUtf8Tail(std::string_view text) {
  // Look back over at most 3 continuation bytes for the lead byte.
  for (size_t back = 1; back <= std::min<size_t>(4, text.size()); ++back) {
    const auto c = static_cast<unsigned char>(text[text.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation
    const size_t need = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
    return need > back ? back : 0;
  }
  return 0;
}

void Observe(EngineStats::Histogram& h, std::span<const double> bounds, double value) {
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (value <= bounds[i]) ++h.cumulative[i];
  }
  ++h.cumulative.back();
  h.sum += value;
}

double ToSeconds(int64_t nanos) { return static_cast<double>(nanos) / 1e9; }

}  // namespace

std::string_view BatchPolicyName(BatchPolicy policy) {
  return base::EnumName(kPolicyNames, policy);
}
base::StatusOr<BatchPolicy> ParseBatchPolicy(std::string_view name, std::string_view where) {
  return base::ParseEnum(kPolicyNames, name, where);
}

std::string_view FinishReasonName(FinishReason reason) {
  switch (reason) {
    case FinishReason::kLength:
      return "length";
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kCancelled:
      return "cancelled";
    case FinishReason::kNone:
      break;
  }
  return "";
}

base::Status EngineOptions::Validate() const {
  if (kv_width != KvWidth::kFp32) {
    SEEDANCE_RETURN_IF_ERROR(QuantConfig::Of(kv_width, group, window).Validate());
  }
  if (max_batch < 1 || max_batch > 4096) {
    return base::InvalidArgumentError("expected 1..4096, got " + std::to_string(max_batch),
                                      "max_batch");
  }
  for (int p : preferred_batch_sizes) {
    if (p < 1 || p > max_batch) {
      return base::InvalidArgumentError("each preferred size must be in 1..max batch (" +
                                            std::to_string(max_batch) + "), got " +
                                            std::to_string(p),
                                        "preferred_batch_sizes");
    }
  }
  if (max_queue_delay.count() < 0) {
    return base::InvalidArgumentError("must be >= 0", "max_queue_delay");
  }
  if (kv_budget_bytes < 0) return base::InvalidArgumentError("must be >= 0", "kv_budget_bytes");
  if (max_queue < 0) return base::InvalidArgumentError("must be >= 0", "max_queue");
  return base::OkStatus();
}

int64_t KvReservationBytes(const CacheShape& shape, const EngineOptions& o, int tokens) {
  const int64_t per_token_values = static_cast<int64_t>(shape.layers) * shape.kv_dim * 2;
  if (o.kv_width == KvWidth::kFp32) return per_token_values * tokens * 4;
  const int bits = KvCodeBits(o.kv_width);  // fp8 and adaptive: never wider than 8-bit codes
  const int64_t fp32_tokens = std::min<int64_t>(tokens, static_cast<int64_t>(o.window) + o.group);
  const double packed_bytes =
      static_cast<double>(per_token_values) * tokens * PackedBitsPerValue(bits, o.group) / 8.0;
  return per_token_values * fp32_tokens * 4 + static_cast<int64_t>(std::ceil(packed_bytes));
}

size_t HeldBackBytes(std::string_view text, const std::vector<std::string>& stop) {
  size_t held = 0;
  for (const std::string& s : stop) {
    for (size_t n = std::min(s.size() - 1, text.size()); n > held; --n) {
      if (text.substr(text.size() - n) == std::string_view(s).substr(0, n)) {
        held = n;
        break;
      }
    }
  }
  return std::max(held, IncompleteUtf8Tail(text));
}

// ---- Generation ----

GenerationUpdate Generation::Next(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return visible_ > handed_out_ || (finished_ && !reported_); });
  GenerationUpdate u;
  u.text = text_.substr(handed_out_, visible_ - handed_out_);
  handed_out_ = visible_;
  u.finished = finished_;
  if (finished_) reported_ = true;
  u.reason = reason_;
  u.message = message_;
  u.prompt_tokens = prompt_tokens_;
  u.completion_tokens = completion_tokens_;
  return u;
}

void Generation::Cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = true;
}

bool Generation::cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

FinishReason Generation::reason() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reason_;
}

bool Generation::finished() const {
  std::lock_guard<std::mutex> lock(mu_);
  return finished_;
}

void Generation::Append(std::string_view piece) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_) return;
    ++completion_tokens_;
    const size_t before = text_.size();
    text_ += piece;
    // The earliest stop string that now occurs; it may start in earlier text.
    size_t cut = std::string::npos;
    for (const std::string& s : stop_) {
      const size_t from = before >= s.size() ? before - s.size() + 1 : 0;
      const size_t at = text_.find(s, from);
      if (at != std::string::npos) cut = std::min(cut, at);
    }
    if (cut != std::string::npos) {
      text_.resize(cut);
      visible_ = cut;
      finished_ = true;
      reason_ = FinishReason::kStop;
    } else {
      visible_ = std::max(visible_, text_.size() - HeldBackBytes(text_, stop_));
    }
  }
  cv_.notify_all();
}

void Generation::Finish(FinishReason reason, std::string message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_) return;
    finished_ = true;
    reason_ = reason;
    message_ = std::move(message);
    if (reason != FinishReason::kCancelled) visible_ = text_.size();  // flush what was held
  }
  cv_.notify_all();
}

// ---- the engine ----

class ServingEngine::Impl {
 public:
  Impl(const LlamaModel& model, const TextTokenizer& tokenizer, EngineOptions options,
       base::Env& env)
      : model_(model),
        tokenizer_(tokenizer),
        bos_(tokenizer.Bos()),
        stop_ids_(tokenizer.StopIds()),
        o_(std::move(options)),
        env_(env) {
    if (o_.kv_budget_bytes == 0) {
      o_.kv_budget_bytes = static_cast<int64_t>(o_.max_batch) *
                           KvReservationBytes(model.cache_shape(), o_, model.config().seq_len);
    }
    batcher_.max_batch_size = o_.max_batch;
    batcher_.preferred_batch_sizes = o_.preferred_batch_sizes;
    batcher_.max_queue_delay = o_.max_queue_delay;
    stats_.kv_budget_bytes = o_.kv_budget_bytes;
    for (EngineStats::Histogram* h : {&stats_.time_to_first_token, &stats_.time_per_output_token,
                                      &stats_.request_duration, &stats_.queue_time}) {
      h->cumulative.assign(EngineStats::kSecondsBounds.size() + 1, 0);
    }
    stats_.batch_size.cumulative.assign(EngineStats::kBatchBounds.size() + 1, 0);
    worker_ = std::thread([this] { Loop(); });
  }

  struct Sequence {
    std::shared_ptr<Generation> gen;
    std::vector<int> tokens;  // BOS (when there is one), the prompt, then what was generated
    int prompt_len = 0;       // BOS included
    int max_tokens = 0;
    int pos = 0;  // the next position to feed
    int generated = 0;
    double temperature = 0, top_p = 1;
    std::mt19937_64 rng;
    int64_t reservation = 0;
    int64_t submitted_ns = 0, first_token_ns = 0;
    std::unique_ptr<KvCache> cache;
  };

  base::StatusOr<std::shared_ptr<Generation>> Submit(GenerationRequest r) {
    const LlamaConfig& c = model_.config();
    const int prompt_len = static_cast<int>(r.prompt.size()) + (bos_ ? 1 : 0);
    if (prompt_len == 0) return base::InvalidArgumentError("the prompt is empty", "prompt");
    if (r.max_tokens < 1) {
      return base::InvalidArgumentError("must be at least 1", "max_tokens");
    }
    if (prompt_len + r.max_tokens > c.seq_len) {
      return base::InvalidArgumentError(
          "the context is " + std::to_string(c.seq_len) + " tokens; the request asks for " +
              std::to_string(prompt_len + r.max_tokens) + " (" + std::to_string(prompt_len) +
              " in the prompt" + (bos_ ? ", BOS included," : "") + " and " +
              std::to_string(r.max_tokens) + " to generate)",
          "max_tokens");
    }
    for (int t : r.prompt) {
      if (t < 0 || t >= c.vocab_size) {
        return base::InvalidArgumentError("token " + std::to_string(t) + " outside the vocabulary",
                                          "prompt");
      }
    }
    auto seq = std::make_unique<Sequence>();
    if (bos_) seq->tokens.push_back(*bos_);
    seq->tokens.insert(seq->tokens.end(), r.prompt.begin(), r.prompt.end());
    seq->prompt_len = prompt_len;
    seq->max_tokens = r.max_tokens;
    seq->temperature = r.temperature;
    seq->top_p = r.top_p;
    seq->rng.seed(r.seed);
    seq->reservation = KvReservationBytes(model_.cache_shape(), o_, prompt_len + r.max_tokens);
    seq->gen = std::make_shared<Generation>(prompt_len, std::move(r.stop));
    std::shared_ptr<Generation> gen = seq->gen;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (draining_ || stopping_) {
        ++stats_.rejected_draining;
        return base::UnavailableError("the server is shutting down and takes no new requests");
      }
      if (seq->reservation > o_.kv_budget_bytes) {
        ++stats_.rejected_budget;
        // Never servable, however long the client waits: not a 429 to retry but a bad request.
        return base::InvalidArgumentError(
            "the request needs " + std::to_string(seq->reservation) + " bytes of KV cache (" +
                std::to_string(prompt_len + r.max_tokens) + " tokens) and the whole budget is " +
                std::to_string(o_.kv_budget_bytes) + " bytes",
            "kv_budget");
      }
      const int would_wait = WouldWait(seq->reservation);
      if (would_wait > o_.max_queue) {
        ++stats_.rejected_queue;
        return base::ResourceExhaustedError(
            std::to_string(would_wait - 1) + " requests are waiting for room and the queue takes " +
                std::to_string(o_.max_queue) + "; " + std::to_string(running_.size()) +
                " running, " + std::to_string(stats_.kv_reserved_bytes) + " of " +
                std::to_string(o_.kv_budget_bytes) + " KV bytes reserved",
            "queue");
      }
      seq->submitted_ns = env_.NowMonotonicNanos();
      stats_.prompt_tokens += static_cast<uint64_t>(prompt_len);
      waiting_.push_back(std::move(seq));
      stats_.waiting = static_cast<int64_t>(waiting_.size());
    }
    cv_.notify_all();
    return gen;
  }

  void BeginDrain() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      draining_ = true;
    }
    cv_.notify_all();
  }
  bool draining() const {
    std::lock_guard<std::mutex> lock(mu_);
    return draining_;
  }
  bool Idle() const {
    std::lock_guard<std::mutex> lock(mu_);
    return waiting_.empty() && running_.empty();
  }

  void CancelAll(const std::string& why) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      cancel_all_ = why;
    }
    cv_.notify_all();
    // The worker finishes them at its next step; wait until it has (it never blocks long: one
    // step of the model).
    std::unique_lock<std::mutex> lock(mu_);
    idle_cv_.wait(lock, [&] { return (waiting_.empty() && running_.empty()) || exited_; });
  }

  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      stopping_ = true;
      cancel_all_ = "the server stopped";
    }
    cv_.notify_all();
    if (worker_.joinable()) worker_.join();
  }

  EngineStats stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }
  const EngineOptions& options() const { return o_; }
  int context_tokens() const { return model_.config().seq_len; }

 private:
  // Under mu_: how many requests would wait, this one (of `reservation` bytes) included, after
  // the next admission took what it can (FIFO: it stops at the first request that does not fit).
  int WouldWait(int64_t reservation) const {
    int slots = o_.policy == BatchPolicy::kContinuous
                    ? o_.max_batch - static_cast<int>(running_.size())
                    : (running_.empty() ? o_.max_batch : 0);
    int64_t bytes = o_.kv_budget_bytes - stats_.kv_reserved_bytes;
    const int queued = static_cast<int>(waiting_.size()) + 1;
    int admitted = 0;
    for (int i = 0; i < queued && slots > 0; ++i, --slots, ++admitted) {
      const int64_t need =
          i < static_cast<int>(waiting_.size()) ? waiting_[i]->reservation : reservation;
      if (need > bytes) break;
      bytes -= need;
    }
    return queued - admitted;
  }

  // Under mu_: drops cancelled waiting requests, then moves requests into the running batch as
  // the policy allows. Returns how long to wait before the dynamic batcher may form a batch
  // (0: no deadline).
  int64_t Admit() {
    const int64_t now = env_.NowMonotonicNanos();
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      if ((*it)->gen->cancelled() || !cancel_all_.empty()) {
        (*it)->gen->Finish(FinishReason::kCancelled,
                           cancel_all_.empty() ? "the client went away" : cancel_all_);
        ++stats_.cancelled;
        it = waiting_.erase(it);
      } else {
        ++it;
      }
    }
    int take = 0;
    if (o_.policy == BatchPolicy::kContinuous) {
      take = o_.max_batch - static_cast<int>(running_.size());
    } else if (running_.empty() && !waiting_.empty()) {
      take = BatchSizeNow(batcher_, static_cast<int>(waiting_.size()),
                          waiting_.front()->submitted_ns, now, draining_ || stopping_);
    }
    int64_t wait_ns = 0;
    if (o_.policy == BatchPolicy::kDynamic && running_.empty() && !waiting_.empty() && take == 0) {
      wait_ns = std::max<int64_t>(
          1, waiting_.front()->submitted_ns +
                 std::chrono::duration_cast<std::chrono::nanoseconds>(o_.max_queue_delay).count() -
                 now);
    }
    while (take > 0 && !waiting_.empty() &&
           stats_.kv_reserved_bytes + waiting_.front()->reservation <= o_.kv_budget_bytes) {
      std::unique_ptr<Sequence> s = std::move(waiting_.front());
      waiting_.pop_front();
      Observe(stats_.queue_time, EngineStats::kSecondsBounds, ToSeconds(now - s->submitted_ns));
      stats_.kv_reserved_bytes += s->reservation;
      running_.push_back(std::move(s));
      --take;
    }
    stats_.waiting = static_cast<int64_t>(waiting_.size());
    stats_.running = static_cast<int64_t>(running_.size());
    return wait_ns;
  }

  base::Status MakeCaches() {
    for (auto& s : running_) {
      if (s->cache) continue;
      CacheShape shape = model_.cache_shape();
      shape.max_tokens = s->prompt_len + s->max_tokens;
      if (o_.kv_width == KvWidth::kFp32) {
        s->cache = NewFullCache(shape);
      } else {
        SEEDANCE_ASSIGN_OR_RETURN(
            s->cache, NewQuantizedCache(shape, QuantConfig::Of(o_.kv_width, o_.group, o_.window)));
      }
    }
    return base::OkStatus();
  }

  int Sample(Sequence& s, const float* logits) const {
    const int V = model_.config().vocab_size;
    if (s.temperature <= 0) return static_cast<int>(std::max_element(logits, logits + V) - logits);
    const float mx = *std::max_element(logits, logits + V);
    std::vector<double> p(static_cast<size_t>(V));
    for (int i = 0; i < V; ++i) p[i] = std::exp((logits[i] - mx) / s.temperature);
    const double total = std::accumulate(p.begin(), p.end(), 0.0);
    // Only tokens at or above (1 - top_p) / (V - 1) of the mass can be in the nucleus: those
    // below it, at most V - 1 of them, add up to less than (1 - top_p), so the tokens above it
    // already hold more than top_p. Sorting those alone (llama2.c's cut) spares sorting the
    // whole vocabulary per token; ties go to the lower id, so a seed picks the same token.
    const double cutoff = V > 1 ? (1 - s.top_p) / (V - 1) * total : 0;
    std::vector<int> order;
    for (int i = 0; i < V; ++i) {
      if (p[i] >= cutoff) order.push_back(i);
    }
    std::sort(order.begin(), order.end(),
              [&](int a, int b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
    double mass = 0;
    size_t keep = 0;
    while (keep < order.size() && (keep == 0 || mass < s.top_p * total)) mass += p[order[keep++]];
    std::uniform_real_distribution<double> u(0, mass);
    double x = u(s.rng);
    for (size_t i = 0; i < keep; ++i) {
      x -= p[order[i]];
      if (x <= 0) return order[i];
    }
    return order[keep - 1];
  }

  // One token for every running sequence; finished sequences are marked (retired under mu_).
  void Step() {
    const int B = static_cast<int>(running_.size());
    const int V = model_.config().vocab_size;
    std::vector<int> tokens(static_cast<size_t>(B)), positions(static_cast<size_t>(B));
    std::vector<KvCache*> caches(static_cast<size_t>(B));
    logits_.resize(static_cast<size_t>(B) * V);
    std::vector<float*> logit_ptrs(static_cast<size_t>(B));
    for (int b = 0; b < B; ++b) {
      Sequence& s = *running_[b];
      tokens[b] = s.tokens[s.pos];
      positions[b] = s.pos;
      caches[b] = s.cache.get();
      logit_ptrs[b] = logits_.data() + static_cast<size_t>(b) * V;
    }
    const base::Status st = model_.ForwardBatch(tokens, positions, caches, logit_ptrs);
    const int64_t now = env_.NowMonotonicNanos();
    int64_t generated = 0;
    for (int b = 0; b < B; ++b) {
      Sequence& s = *running_[b];
      if (!st.ok()) {
        s.gen->Finish(FinishReason::kCancelled, "the model failed: " + st.ToString());
        continue;
      }
      ++s.pos;
      if (s.pos < s.prompt_len) continue;  // still reading the prompt
      const int next = Sample(s, logit_ptrs[b]);
      ++s.generated;
      ++generated;
      if (s.generated == 1) s.first_token_ns = now;
      if (std::find(stop_ids_.begin(), stop_ids_.end(), next) != stop_ids_.end()) {
        s.gen->Finish(FinishReason::kStop);
        continue;
      }
      s.gen->Append(tokenizer_.Decode(s.tokens.back(), next));
      s.tokens.push_back(next);
      if (s.generated >= s.max_tokens) s.gen->Finish(FinishReason::kLength);
    }
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.steps;
    stats_.generation_tokens += static_cast<uint64_t>(generated);
    Observe(stats_.batch_size, EngineStats::kBatchBounds, B);
  }

  // Under mu_: removes finished and cancelled sequences, returning their reservations.
  void Retire() {
    const int64_t now = env_.NowMonotonicNanos();
    int64_t used = 0;
    for (auto it = running_.begin(); it != running_.end();) {
      Sequence& s = **it;
      if (!s.gen->finished() && (s.gen->cancelled() || !cancel_all_.empty())) {
        s.gen->Finish(FinishReason::kCancelled,
                      cancel_all_.empty() ? "the client went away" : cancel_all_);
      }
      if (!s.gen->finished()) {
        used += s.cache ? s.cache->Bytes() : 0;
        ++it;
        continue;
      }
      switch (s.gen->reason()) {
        case FinishReason::kLength:
          ++stats_.finished_length;
          break;
        case FinishReason::kStop:
          ++stats_.finished_stop;
          break;
        default:
          ++stats_.cancelled;
      }
      if (s.first_token_ns > 0) {
        Observe(stats_.time_to_first_token, EngineStats::kSecondsBounds,
                ToSeconds(s.first_token_ns - s.submitted_ns));
        if (s.generated > 1) {
          Observe(stats_.time_per_output_token, EngineStats::kSecondsBounds,
                  ToSeconds(now - s.first_token_ns) / (s.generated - 1));
        }
      }
      Observe(stats_.request_duration, EngineStats::kSecondsBounds,
              ToSeconds(now - s.submitted_ns));
      stats_.kv_reserved_bytes -= s.reservation;
      it = running_.erase(it);
    }
    stats_.kv_used_bytes = used;
    stats_.running = static_cast<int64_t>(running_.size());
  }

  void Loop() {
    while (true) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        Retire();
        const int64_t wait_ns = Admit();
        if (!cancel_all_.empty() && running_.empty() && waiting_.empty()) {
          if (!stopping_) cancel_all_.clear();
          idle_cv_.notify_all();
        }
        if (running_.empty() && waiting_.empty()) idle_cv_.notify_all();
        if (running_.empty()) {
          if (stopping_ && waiting_.empty()) {
            exited_ = true;
            idle_cv_.notify_all();
            return;
          }
          if (wait_ns > 0) {
            cv_.wait_for(lock, std::chrono::nanoseconds(wait_ns));
          } else {
            cv_.wait(lock, [&] { return stopping_ || !cancel_all_.empty() || !waiting_.empty(); });
          }
          continue;
        }
      }
      const base::Status caches = MakeCaches();
      if (!caches.ok()) {
        for (auto& s : running_) {
          if (!s->cache) s->gen->Finish(FinishReason::kCancelled, caches.ToString());
        }
        std::lock_guard<std::mutex> lock(mu_);
        std::erase_if(running_, [&](const std::unique_ptr<Sequence>& s) {
          if (s->cache) return false;
          stats_.kv_reserved_bytes -= s->reservation;
          ++stats_.cancelled;
          return true;
        });
        continue;
      }
      Step();
    }
  }

  const LlamaModel& model_;
  const TextTokenizer& tokenizer_;
  const std::optional<int> bos_;
  const std::vector<int> stop_ids_;
  EngineOptions o_;
  BatcherConfig batcher_;
  base::Env& env_;
  mutable std::mutex mu_;
  std::condition_variable cv_, idle_cv_;
  std::deque<std::unique_ptr<Sequence>> waiting_;
  std::vector<std::unique_ptr<Sequence>> running_;  // changed by the worker only, under mu_
  std::vector<float> logits_;                       // the worker's
  EngineStats stats_;
  bool draining_ = false, stopping_ = false, exited_ = false;
  std::string cancel_all_;  // non-empty: cancel everything with this message
  std::thread worker_;
};

base::StatusOr<std::unique_ptr<ServingEngine>> ServingEngine::Start(const LlamaModel& model,
                                                                    const TextTokenizer& tokenizer,
                                                                    EngineOptions options,
                                                                    base::Env& env) {
  SEEDANCE_RETURN_IF_ERROR(options.Validate());
  return std::unique_ptr<ServingEngine>(
      new ServingEngine(std::make_unique<Impl>(model, tokenizer, std::move(options), env)));
}

ServingEngine::ServingEngine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ServingEngine::~ServingEngine() { Stop(); }

base::StatusOr<std::shared_ptr<Generation>> ServingEngine::Submit(GenerationRequest request) {
  return impl_->Submit(std::move(request));
}
void ServingEngine::BeginDrain() { impl_->BeginDrain(); }
bool ServingEngine::draining() const { return impl_->draining(); }
bool ServingEngine::Idle() const { return impl_->Idle(); }
void ServingEngine::CancelAll(const std::string& why) { impl_->CancelAll(why); }
void ServingEngine::Stop() { impl_->Stop(); }
EngineStats ServingEngine::stats() const { return impl_->stats(); }
const EngineOptions& ServingEngine::options() const { return impl_->options(); }
int ServingEngine::context_tokens() const { return impl_->context_tokens(); }

}  // namespace seedance::kv
