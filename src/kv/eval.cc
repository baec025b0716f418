#include "seedance/kv/eval.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "seedance/base/env.h"

namespace seedance::kv {
namespace {

std::vector<double> Softmax(const std::vector<float>& logits) {
  const float mx = *std::max_element(logits.begin(), logits.end());
  std::vector<double> p(logits.size());
  double sum = 0;
  for (size_t i = 0; i < logits.size(); ++i)
    sum += p[i] = std::exp(static_cast<double>(logits[i] - mx));
  for (double& v : p) v /= sum;
  return p;
}

double Seconds(int64_t nanos) { return static_cast<double>(nanos) / 1e9; }

}  // namespace

base::StatusOr<base::Report> EvaluateKvCache(const LlamaModel& model, const Tokenizer* tokenizer,
                                             const EvalOptions& o) {
  const LlamaConfig& c = model.config();
  if (o.tokens < 2 || o.tokens > c.seq_len) {
    return base::InvalidArgumentError("tokens must be in 2.." + std::to_string(c.seq_len),
                                      "tokens");
  }
  if (static_cast<int>(o.prompt.size()) + 1 >= o.tokens) {
    return base::InvalidArgumentError("the prompt fills the whole sequence", "prompt");
  }
  // One pass runs both caches in lockstep over BOS, the prompt, then the
  // FP32 model's greedy continuation: the next token comes from the FP32
  // logits, so both caches see exactly the sequence the FP32 model generates.
  std::vector<int> seq = {1};
  seq.insert(seq.end(), o.prompt.begin(), o.prompt.end());
  std::vector<float> logits(c.vocab_size), qlogits(c.vocab_size);
  auto full = NewFullCache(model.cache_shape());
  SEEDANCE_ASSIGN_OR_RETURN(auto quant, NewQuantizedCache(model.cache_shape(), o.quant));
  double kl_sum = 0, kl_max = 0, t_full = 0, t_quant = 0;
  // KV-6: how the cache's error grows through the layers: the relative
  // difference of each layer's output (residual stream), averaged over positions.
  std::vector<float> trace_full, trace_quant;
  std::vector<double> layer_err(c.n_layers, 0.0);
  int agree = 0, n = 0;
  int64_t bytes_full = 0, bytes_quant = 0;
  base::Env& env = *base::Env::Default();  // the timings' clock
  for (int pos = 0; pos + 1 < o.tokens; ++pos) {
    const int64_t a = env.NowMonotonicNanos();
    SEEDANCE_RETURN_IF_ERROR(model.Forward(seq[pos], pos, *full, logits, &trace_full));
    const int64_t b = env.NowMonotonicNanos();
    SEEDANCE_RETURN_IF_ERROR(model.Forward(seq[pos], pos, *quant, qlogits, &trace_quant));
    const int64_t e = env.NowMonotonicNanos();
    for (int l = 0; l < c.n_layers; ++l) {
      double diff = 0, norm = 0;
      for (int i = 0; i < c.dim; ++i) {
        const double ref = trace_full[static_cast<size_t>(l) * c.dim + i];
        const double got = trace_quant[static_cast<size_t>(l) * c.dim + i];
        diff += (ref - got) * (ref - got);
        norm += ref * ref;
      }
      layer_err[l] += norm > 0 ? std::sqrt(diff / norm) : 0.0;
    }
    t_full += Seconds(b - a);
    t_quant += Seconds(e - b);
    const auto p = Softmax(logits), q = Softmax(qlogits);
    double kl = 0;
    for (size_t i = 0; i < p.size(); ++i) {
      if (p[i] > 0) kl += p[i] * std::log(p[i] / std::max(q[i], 1e-300));
    }
    kl_sum += kl;
    kl_max = std::max(kl_max, kl);
    const int top =
        static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    agree += top == (std::max_element(qlogits.begin(), qlogits.end()) - qlogits.begin());
    ++n;
    if (pos + 1 >= static_cast<int>(seq.size())) seq.push_back(top);
  }
  if (o.decisions) *o.decisions = quant->Decisions();
  std::map<int, int> widths;
  for (const BitDecision& d : quant->Decisions()) ++widths[d.target_bw];
  bytes_full = full->Bytes();
  bytes_quant = quant->Bytes();
  base::Report r;
  r["bits"] = std::string(KvWidthName(o.quant.width));
  r["group"] = o.quant.group;
  r["window"] = o.quant.window;
  r["tokens"] = o.tokens;
  r["prompt_tokens"] = o.prompt.size();
  r["kl_divergence_mean"] = kl_sum / n;
  r["kl_divergence_max"] = kl_max;
  r["top1_agreement"] = static_cast<double>(agree) / n;
  r["bits_per_value"] = quant->PackedValues() > 0
                            ? base::Report(static_cast<double>(quant->PackedBits()) /
                                           static_cast<double>(quant->PackedValues()))
                            : base::Report(nullptr);
  r["packed_share"] = static_cast<double>(quant->PackedValues()) /
                      (static_cast<double>(o.tokens - 1) * c.kv_dim() * 2 * c.n_layers);
  if (o.quant.width == KvWidth::kAdaptive) {
    base::Report w = base::Report::object();
    for (const auto& [bits, count] : widths) w[std::to_string(bits)] = count;
    r["block_widths"] = w;  // key groups (all layers) per chosen width
  }
  r["layer_relative_error"] = base::Report::array();
  for (double e : layer_err) r["layer_relative_error"].push_back(e / n);
  r["kv_bytes"] = bytes_quant;
  r["kv_bytes_fp32"] = bytes_full;
  r["tokens_per_s"] = n / t_quant;
  r["tokens_per_s_fp32"] = n / t_full;
  base::Report warnings = base::Report::array();
  const double packed = r["packed_share"].get<double>();
  if (quant->PackedValues() == 0) {
    warnings.push_back(
        "nothing was quantized: the FP32 window (" + std::to_string(o.quant.window) +
        " tokens) and the incomplete key groups cover the whole " + std::to_string(o.tokens) +
        "-token sequence, so the KL is 0 by construction; set --window below --tokens");
  } else if (packed < 0.5) {
    warnings.push_back("only " + std::to_string(static_cast<int>(std::lround(packed * 100))) +
                       "% of the cached values were quantized (FP32 window of " +
                       std::to_string(o.quant.window) + " of " + std::to_string(o.tokens) +
                       " tokens): the KL understates the quantized cache's error on longer "
                       "sequences");
  }
  r["warnings"] = warnings;
  if (tokenizer) {
    std::string text;
    for (size_t i = 1; i < seq.size(); ++i) text += tokenizer->Decode(seq[i - 1], seq[i]);
    r["text"] = text;
  }
  return r;
}

base::Status CheckEvalRequest(const EvalRequest& q) {
  auto range = [](int64_t v, int64_t lo, int64_t hi, const char* name) {
    if (v >= lo && v <= hi) return base::OkStatus();
    return base::InvalidArgumentError("expected " + std::to_string(lo) + " to " +
                                          std::to_string(hi) + ", got " + std::to_string(v),
                                      name);
  };
  SEEDANCE_RETURN_IF_ERROR(range(q.group, 1, kMaxEvalGroup, "group"));
  SEEDANCE_RETURN_IF_ERROR(range(q.tokens, 1, kMaxEvalTokens, "tokens"));
  if (q.window != kAutoWindow)
    SEEDANCE_RETURN_IF_ERROR(range(q.window, 0, kMaxEvalTokens, "window"));
  SEEDANCE_RETURN_IF_ERROR(range(q.rule.long_context, 0, kMaxLongContext, "long_context"));
  if (!(q.rule.entropy_threshold >= 0 && q.rule.entropy_threshold <= 1)) {
    return base::InvalidArgumentError(
        "expected a number in [0, 1], got " + std::to_string(q.rule.entropy_threshold),
        "entropy_threshold");
  }
  for (const auto& [bits, name] :
       {std::pair{q.rule.long_bits, "long_bits"}, std::pair{q.rule.default_bits, "default_bits"}}) {
    if (bits != 2 && bits != 4 && bits != 5 && bits != 6 && bits != 8) {
      return base::InvalidArgumentError(
          "expected 2, 4, 5, 6 or 8 bits, got " + std::to_string(bits), name);
    }
  }
  return base::OkStatus();
}

base::StatusOr<EvalRun> RunKvEval(base::Env& env, const EvalRequest& q) {
  SEEDANCE_RETURN_IF_ERROR(CheckEvalRequest(q));
  auto model = LlamaModel::Load(env, q.model_path);
  if (!model.ok()) return model.status().Annotate("cannot load the model");
  std::optional<Tokenizer> tok;
  if (!q.tokenizer_path.empty()) {
    auto t = Tokenizer::Load(env, q.tokenizer_path, model->config().vocab_size);
    if (!t.ok()) return t.status().Annotate("cannot load the tokenizer");
    tok = std::move(*t);
  }
  SEEDANCE_ASSIGN_OR_RETURN(const KvWidth width, ParseKvWidth(q.bits, "bits"));
  if (width == KvWidth::kFp32) {
    return base::InvalidArgumentError(
        "the FP32 cache is the reference; quantize with " + QuantizedKvWidthList(), "bits");
  }
  EvalRun run;
  EvalOptions o;
  o.quant =
      QuantConfig::Of(width, q.group, q.window == kAutoWindow ? DefaultWindow(q.tokens) : q.window);
  o.quant.rule = q.rule;
  o.decisions = &run.decisions;
  o.tokens = q.tokens;
  if (!q.prompt.empty()) {
    if (!tok) return base::InvalidArgumentError("a prompt needs a tokenizer", "prompt");
    o.prompt = tok->Encode(q.prompt);
  }
  SEEDANCE_ASSIGN_OR_RETURN(run.report, EvaluateKvCache(*model, tok ? &*tok : nullptr, o));
  return run;
}

}  // namespace seedance::kv
