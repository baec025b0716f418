// `seedancectl kv eval`: how much a quantized KV cache changes a real model's
// predictions. The model first generates a sequence greedily with the FP32
// cache (after the prompt, if any); then the same tokens are fed through both
// caches and, at every position, the next-token distributions are compared:
// KL(p_fp32 || p_quantized), and whether the argmax agrees.
#pragma once

#include <string>

#include "seedance/base/env.h"
#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/kv/cache.h"
#include "seedance/kv/llama.h"

namespace seedance::kv {

struct EvalOptions {
  QuantConfig quant;
  int tokens = 128;                               // sequence length, prompt included (<= seq_len)
  std::vector<int> prompt;                        // token ids after BOS
  std::vector<BitDecision>* decisions = nullptr;  // adaptive mode: receives the decision log
};

// {bits, group, window, tokens, kl_divergence_mean, kl_divergence_max,
//  top1_agreement, bits_per_value, layer_relative_error (per layer: mean over
//  positions of ||x_q - x_fp32|| / ||x_fp32|| of the layer's output), kv_bytes,
//  kv_bytes_fp32, tokens_per_s, tokens_per_s_fp32, text, warnings}. `warnings` (sentences)
//  says when the FP32 window and the incomplete key groups left nothing, or less than half of
//  the cached values, quantized: the KL then says little or nothing about the quantized cache.
base::StatusOr<base::Report> EvaluateKvCache(const LlamaModel& model, const Tokenizer* tokenizer,
                                             const EvalOptions& options);

inline constexpr int kAutoWindow = -1;
// The default FP32 window: a quarter of the evaluated sequence (32 of 128 tokens), so that
// three quarters of it go through the quantized cache.
inline int DefaultWindow(int tokens) { return tokens / 4; }

// The request's ranges, one table for every caller (the CLI's flags, the Python API): RunKvEval
// refuses a value outside them, naming the setting as the Python API spells it.
inline constexpr int kMaxEvalGroup = 256;            // group: 1 to 256 values
inline constexpr int kMaxEvalTokens = 1 << 24;       // tokens, window: up to 16M
inline constexpr int64_t kMaxLongContext = 1 << 24;  // rule.long_context: 0 to 16M

// What `seedancectl kv eval` is asked: files by path (read through `env`), the quantization as
// its flags name it, and an optional prompt (needs a tokenizer).
struct EvalRequest {
  std::string model_path;
  std::string tokenizer_path;  // "" = none (no text in the report)
  std::string bits = "8";      // 8, 6, 5, 4, 2, fp8 or adaptive
  int group = 32;
  // Most recent tokens kept in FP32; kAutoWindow: DefaultWindow(tokens). The window used to be
  // 128 by default, which on a 128-token model covered the whole sequence and quantized nothing.
  int window = kAutoWindow;
  int tokens = 128;
  std::string prompt;
  AdaptiveRule rule;
};
struct EvalRun {
  base::Report report;                 // EvaluateKvCache's
  std::vector<BitDecision> decisions;  // adaptive mode's per-block log
};
// Whether every setting is in its range (the widths 2, 4, 5, 6 or 8; the entropy threshold a
// number in [0, 1]); an error names the setting.
base::Status CheckEvalRequest(const EvalRequest& request);
// Checks the request, loads the model (and tokenizer) and evaluates; errors name the file or the
// setting.
base::StatusOr<EvalRun> RunKvEval(base::Env& env, const EvalRequest& request);

}  // namespace seedance::kv
