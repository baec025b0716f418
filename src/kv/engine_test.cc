#include "seedance/kv/engine.h"

#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "seedance/base/testing/data.h"
#include "seedance/base/testing/wait.h"
#include "seedance/kv/eval.h"

namespace seedance::kv {
namespace {

using base::testing::WaitUntil;

struct Tiny {
  LlamaModel model;
  Tokenizer tokenizer;
};

std::optional<Tiny> LoadTiny() {
  const std::string dir = (base::testing::DataDir() / "tiny-llama").string();
  auto model = LlamaModel::Load(*base::Env::Default(), dir + "/aidreams260K.bin");
  if (!model.ok()) return std::nullopt;
  auto tok =
      Tokenizer::Load(*base::Env::Default(), dir + "/tok512.bin", model->config().vocab_size);
  if (!tok.ok()) return std::nullopt;
  return Tiny{std::move(*model), std::move(*tok)};
}

// NOLINTBEGIN(bugprone-macro-parentheses): `t` names a variable
#define REQUIRE_TINY(t)                                                      \
  SEEDANCE_REQUIRE_DATA((base::testing::DataDir() / "tiny-llama").string()); \
  auto t##_loaded = LoadTiny();                                              \
  ASSERT_TRUE(t##_loaded.has_value());                                       \
  Tiny& t = *t##_loaded
// NOLINTEND(bugprone-macro-parentheses)

// Reads a generation to its end.
GenerationUpdate Drain(Generation& g, std::string* text) {
  GenerationUpdate u;
  do {
    u = g.Next(std::chrono::milliseconds(2000));
    *text += u.text;
  } while (!u.finished);
  return u;
}

std::string Complete(ServingEngine& e, const std::vector<int>& prompt, int max_tokens,
                     GenerationUpdate* last = nullptr) {
  GenerationRequest r;
  r.prompt = prompt;
  r.max_tokens = max_tokens;
  auto g = e.Submit(r);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  if (!g.ok()) return "";
  std::string text;
  const GenerationUpdate u = Drain(**g, &text);
  if (last) *last = u;
  return text;
}

TEST(ServingEngine, GreedyTextEqualsKvEvalsForTheSamePrompt) {
  REQUIRE_TINY(t);
  const std::vector<int> prompt = t.tokenizer.Encode("Echoes of vectors");
  for (BatchPolicy policy : {BatchPolicy::kContinuous, BatchPolicy::kDynamic}) {
    EngineOptions o;
    o.policy = policy;
    auto e = ServingEngine::Start(t.model, t.tokenizer, o);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    EvalOptions eo;
    eo.tokens = 60;
    eo.prompt = prompt;
    eo.quant = QuantConfig::Of(KvWidth::kInt8, 32, 15);
    auto eval = EvaluateKvCache(t.model, &t.tokenizer, eo);
    ASSERT_TRUE(eval.ok());
    std::string prompt_text;
    int previous = 1;
    for (int token : prompt) {
      prompt_text += t.tokenizer.Decode(previous, token);
      previous = token;
    }
    GenerationUpdate u;
    const std::string completion =
        Complete(**e, prompt, eo.tokens - 1 - static_cast<int>(prompt.size()), &u);
    EXPECT_EQ(prompt_text + completion, (*eval)["text"].get<std::string>());
    EXPECT_EQ(u.reason, FinishReason::kLength);
    EXPECT_EQ(u.prompt_tokens, static_cast<int>(prompt.size()) + 1);
    EXPECT_EQ(u.completion_tokens, eo.tokens - 1 - static_cast<int>(prompt.size()));
  }
}

TEST(ServingEngine, BatchingDoesNotChangeAnyRequestsText) {
  REQUIRE_TINY(t);
  EngineOptions o;
  o.max_batch = 4;
  auto e = ServingEngine::Start(t.model, t.tokenizer, o);
  ASSERT_TRUE(e.ok());
  const std::vector<std::string> prompts = {"I dream", "a gentle hum", "nodes", "", "the sky"};
  std::vector<std::string> alone;
  alone.reserve(prompts.size());
  for (const auto& p : prompts) alone.push_back(Complete(**e, t.tokenizer.Encode(p), 20));
  // All at once, from threads, with different lengths: the same texts.
  std::vector<std::string> together(prompts.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < prompts.size(); ++i) {
    threads.emplace_back(
        [&, i] { together[i] = Complete(**e, t.tokenizer.Encode(prompts[i]), 20); });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(together, alone);
  // A reader can see its text finished before the worker retires the sequence: wait for that.
  ASSERT_TRUE(WaitUntil([&] { return (*e)->Idle(); }));
  const EngineStats s = (*e)->stats();
  EXPECT_EQ(s.finished_length + s.finished_stop, 2 * prompts.size());
  EXPECT_EQ(s.kv_reserved_bytes, 0);
  EXPECT_EQ(s.running, 0);
}

// A long request runs; a short one arrives after the long one's first token. Continuous batching
// lets it join and finish first; the dynamic batcher makes it wait for the long batch to end. The
// tiny model generates the long request in a few milliseconds, so a test thread descheduled for
// that long finds it done before the short one arrives: such a try shows nothing about admission,
// and the continuous case starts fresh engines until the short request finds the long one running.
struct JoinTry {
  bool long_done_when_short_done = false;
  uint64_t shared_steps = 0;  // steps that ran more than one sequence
};

JoinTry LongThenShort(const Tiny& t, BatchPolicy policy) {
  EngineOptions o;
  o.policy = policy;
  o.max_queue_delay = std::chrono::microseconds(0);
  auto e = ServingEngine::Start(t.model, t.tokenizer, o);
  EXPECT_TRUE(e.ok());
  if (!e.ok()) return {};
  GenerationRequest longer;
  longer.max_tokens = std::min(200, (*e)->context_tokens() - 2);
  auto a = (*e)->Submit(longer);
  EXPECT_TRUE(a.ok());
  if (!a.ok()) return {};
  std::string a_text;
  GenerationUpdate first;
  do first = (*a)->Next(std::chrono::milliseconds(2000));
  while (first.completion_tokens == 0 && !first.finished);
  a_text += first.text;
  GenerationRequest shorter;
  shorter.max_tokens = 3;
  auto b = (*e)->Submit(shorter);
  EXPECT_TRUE(b.ok());
  if (!b.ok()) return {};
  std::string b_text;
  Drain(**b, &b_text);
  JoinTry out;
  out.long_done_when_short_done = (*a)->finished();
  Drain(**a, &a_text);
  EXPECT_TRUE(WaitUntil([&] { return (*e)->Idle(); }));
  const EngineStats s = (*e)->stats();
  out.shared_steps = s.batch_size.cumulative.back() - s.batch_size.cumulative[0];
  return out;
}

TEST(ServingEngine, ContinuousBatchingAdmitsAtTokenBoundariesTheDynamicBatcherDoesNot) {
  REQUIRE_TINY(t);
  // The dynamic batcher never adds to a running batch, however the threads interleave.
  for (int i = 0; i < 3; ++i) {
    const JoinTry d = LongThenShort(t, BatchPolicy::kDynamic);
    EXPECT_TRUE(d.long_done_when_short_done) << "the dynamic batcher runs a batch to its end";
    EXPECT_EQ(d.shared_steps, 0u);
  }
  for (int attempt = 0;; ++attempt) {
    ASSERT_LT(attempt, 50) << "in 50 engines the short request never finished while the long "
                              "one ran: it did not join the running batch";
    const JoinTry c = LongThenShort(t, BatchPolicy::kContinuous);
    if (c.long_done_when_short_done) continue;  // the long one ended before the short arrived
    EXPECT_GT(c.shared_steps, 0u) << "finishing first means sharing the long request's steps";
    break;
  }
}

// The budget holds one request: a second waits (the queue holds one) and a third is refused. The
// tiny model generates 60 tokens in about a millisecond, so the first may be done before the
// others arrive; the test starts fresh engines until the second and third find the first still
// running, and checks the rest on that engine.
TEST(ServingEngine, TheKvBudgetQueuesOrRefusesAndTheQueueIsBounded) {
  REQUIRE_TINY(t);
  EngineOptions o;
  o.max_batch = 8;
  o.max_queue = 1;
  o.kv_budget_bytes = KvReservationBytes(t.model.cache_shape(), o, 1 + 60);  // one request
  for (int attempt = 0;; ++attempt) {
    ASSERT_LT(attempt, 50) << "in 50 engines the first request never outlived two Submit calls";
    auto e = ServingEngine::Start(t.model, t.tokenizer, o);
    ASSERT_TRUE(e.ok());
    GenerationRequest big;
    big.max_tokens = 61;  // one token more than the budget holds
    auto refused = (*e)->Submit(big);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), base::StatusCode::kInvalidArgument);  // never servable
    EXPECT_NE(refused.status().message().find("bytes of KV cache"), std::string::npos);
    GenerationRequest fits;
    fits.max_tokens = 60;
    auto a = (*e)->Submit(fits);
    ASSERT_TRUE(a.ok());
    // Wait for A to be admitted, so B is the one that waits.
    ASSERT_TRUE(WaitUntil([&] { return (*e)->stats().running > 0 || (*a)->finished(); }));
    auto b = (*e)->Submit(fits);
    ASSERT_TRUE(b.ok());
    auto c = (*e)->Submit(fits);  // the queue (1) is full, unless A already returned its share
    std::string text;
    if (c.ok()) {
      for (auto* g : {&*a, &*b, &*c}) Drain(**g, &text);
      continue;
    }
    EXPECT_EQ(c.status().code(), base::StatusCode::kResourceExhausted);
    EXPECT_NE(c.status().message().find("waiting"), std::string::npos);
    GenerationUpdate b_first;
    do b_first = (*b)->Next(std::chrono::milliseconds(2000));
    while (b_first.completion_tokens == 0 && !b_first.finished);
    EXPECT_TRUE((*a)->finished()) << "B must wait until A returns its reservation";
    Drain(**b, &text);
    const EngineStats s = (*e)->stats();
    EXPECT_EQ(s.rejected_budget, 1u);
    EXPECT_EQ(s.rejected_queue, 1u);
    EXPECT_LE(s.batch_size.cumulative[0], s.steps);
    EXPECT_EQ(s.batch_size.cumulative[0], s.steps) << "never two sequences at once";
    break;
  }
}

// The tiny model generates 120 tokens in a few milliseconds, so a request cancelled right after
// its Submit may already have finished on a loaded machine: such a try shows nothing about
// cancelling, and the test starts a fresh engine until the cancel finds the request running.
TEST(ServingEngine, CancelDrainAndContextLimits) {
  REQUIRE_TINY(t);
  EngineOptions o;
  o.kv_width = KvWidth::kInt4;
  GenerationRequest run;
  run.max_tokens = 120;
  base::StatusOr<std::unique_ptr<ServingEngine>> e = base::InternalError("not started");
  std::string text;
  for (int attempt = 0;; ++attempt) {
    ASSERT_LT(attempt, 50) << "in 50 engines every request finished before its Cancel()";
    e = ServingEngine::Start(t.model, t.tokenizer, o);
    ASSERT_TRUE(e.ok());
    auto a = (*e)->Submit(run);
    ASSERT_TRUE(a.ok());
    (*a)->Cancel();
    text.clear();
    const FinishReason reason = Drain(**a, &text).reason;
    if (reason == FinishReason::kLength) continue;  // it ended before the cancel arrived
    EXPECT_EQ(reason, FinishReason::kCancelled);
    break;
  }
  GenerationRequest too_long;
  too_long.max_tokens = 128;  // + BOS > the context of 128
  auto r = (*e)->Submit(too_long);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), base::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("context is 128 tokens"), std::string::npos);
  auto b = (*e)->Submit(run);
  ASSERT_TRUE(b.ok());
  (*e)->BeginDrain();
  auto refused = (*e)->Submit(run);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), base::StatusCode::kUnavailable);
  text.clear();
  EXPECT_EQ(Drain(**b, &text).reason, FinishReason::kLength) << "a drain finishes what runs";
  ASSERT_TRUE(WaitUntil([&] { return (*e)->Idle(); }));
  const EngineStats s = (*e)->stats();
  EXPECT_EQ(s.cancelled, 1u);
  EXPECT_EQ(s.finished_length, 1u);
  EXPECT_EQ(s.rejected_draining, 1u);
  EXPECT_EQ(s.kv_reserved_bytes, 0);
}

TEST(ServingEngine, SamplingIsSeededAndTinyTopPIsGreedy) {
  REQUIRE_TINY(t);
  auto e = ServingEngine::Start(t.model, t.tokenizer, EngineOptions{});
  ASSERT_TRUE(e.ok());
  auto sample = [&](double temperature, double top_p, uint64_t seed) {
    GenerationRequest r;
    r.max_tokens = 30;
    r.temperature = temperature;
    r.top_p = top_p;
    r.seed = seed;
    auto g = (*e)->Submit(r);
    std::string text;
    Drain(**g, &text);
    return text;
  };
  EXPECT_EQ(sample(1.0, 1.0, 7), sample(1.0, 1.0, 7));
  EXPECT_NE(sample(1.0, 1.0, 7), sample(1.0, 1.0, 8));
  EXPECT_EQ(sample(1.0, 1e-9, 7), sample(0, 1, 0));
}

// The reservation bounds what a cache of that width holds at every step.
TEST(KvReservationBytes, BoundsEveryCachesBytesAtEveryToken) {
  std::mt19937 rng(3);
  std::normal_distribution<float> x(0, 1);
  const CacheShape shape{2, 32, 16, 100};
  for (const auto& [width, bits] : kKvWidthNames) {
    for (int group : {4, 32}) {
      for (int window : {0, 7, 40}) {
        EngineOptions o;
        o.kv_width = width;
        o.group = group;
        o.window = window;
        std::unique_ptr<KvCache> cache;
        if (width == KvWidth::kFp32) {
          cache = NewFullCache(shape);
        } else {
          auto q = NewQuantizedCache(shape, QuantConfig::Of(width, group, window));
          ASSERT_TRUE(q.ok()) << q.status().ToString();
          cache = std::move(*q);
        }
        std::vector<float> k(32), v(32);
        for (int pos = 0; pos < shape.max_tokens; ++pos) {
          for (int l = 0; l < shape.layers; ++l) {
            for (float& f : k) f = x(rng);
            for (float& f : v) f = x(rng);
            ASSERT_TRUE(cache->Append(l, pos, k, v).ok());
          }
          ASSERT_LE(cache->Bytes(), KvReservationBytes(shape, o, pos + 1))
              << bits << " group " << group << " window " << window << " at token " << pos;
        }
        if (bits == "32") {
          EXPECT_EQ(cache->Bytes(), KvReservationBytes(shape, o, 100));
        }
      }
    }
  }
}

// Streaming with stop strings against a brute-force reference: the text handed out is always a
// prefix of the final text, never shows part of a stop string, and ends where the first stop
// string starts.
TEST(Generation, StopStringsAgainstBruteForce) {
  std::mt19937 rng(11);
  const std::string alphabet = "ab \xC3\xA9";  // includes a two-byte character
  for (int trial = 0; trial < 3000; ++trial) {
    std::string full;
    std::vector<std::string> pieces;
    const int n = 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) {
      std::string p;
      const int len = static_cast<int>(rng() % 4);
      for (int j = 0; j < len; ++j) p += alphabet[rng() % alphabet.size()];
      pieces.push_back(p);
      full += p;
    }
    std::vector<std::string> stop;
    for (int i = 0, m = static_cast<int>(rng() % 3); i < m; ++i) {
      std::string s;
      for (int j = 0, len = 1 + static_cast<int>(rng() % 3); j < len; ++j) s += "ab "[rng() % 3];
      stop.push_back(s);
    }
    // The reference: after each token (piece), does any stop string occur in the text so far? At
    // the first token where one does, the text ends at the earliest start of any occurrence.
    size_t cut = std::string::npos;
    std::string so_far;
    for (const auto& p : pieces) {
      so_far += p;
      for (const auto& s : stop) cut = std::min(cut, so_far.find(s));
      if (cut != std::string::npos) break;
    }
    const std::string expected = cut == std::string::npos ? full : full.substr(0, cut);
    Generation g(1, stop);
    std::string seen;
    for (const auto& p : pieces) {
      g.Append(p);
      seen += g.Next(std::chrono::milliseconds(0)).text;
      ASSERT_EQ(expected.compare(0, seen.size(), seen), 0)
          << "not a prefix: '" << seen << "' of '" << expected << "' (full '" << full << "', stop '"
          << (stop.empty() ? "" : stop[0]) << "')";
      for (const auto& s : stop) ASSERT_EQ(seen.find(s), std::string::npos);
    }
    g.Finish(FinishReason::kLength);
    const GenerationUpdate last = g.Next(std::chrono::milliseconds(0));
    seen += last.text;
    ASSERT_EQ(seen, expected) << "trial " << trial;
    EXPECT_EQ(last.reason, cut == std::string::npos ? FinishReason::kLength : FinishReason::kStop);
  }
}

TEST(Generation, HoldsBackAnIncompleteCharacterAndAStopPrefix) {
  EXPECT_EQ(HeldBackBytes("abc\xC3", {}), 1u);
  EXPECT_EQ(HeldBackBytes("abc\xE2\x82", {}), 2u);
  EXPECT_EQ(HeldBackBytes("abc\xE2\x82\xAC", {}), 0u);
  EXPECT_EQ(HeldBackBytes("the end", {"ending"}), 3u);
  EXPECT_EQ(HeldBackBytes("the end", {"xyz"}), 0u);
}

TEST(EngineOptions, ValidateNamesTheFlag) {
  EngineOptions o;
  o.max_batch = 4;
  o.preferred_batch_sizes = {2, 5};
  EXPECT_EQ(o.Validate().where(), "preferred_batch_sizes");
  o.preferred_batch_sizes = {};
  EXPECT_FALSE(ParseKvWidth("3").ok());
  EXPECT_EQ(ParseKvWidth("3").status().where(), "bits");
  o.kv_width = KvWidth::kInt4;
  o.group = 0;
  EXPECT_EQ(o.Validate().where(), "group");
  EXPECT_FALSE(ParseBatchPolicy("vllm", "--policy").ok());
}

}  // namespace
}  // namespace seedance::kv
