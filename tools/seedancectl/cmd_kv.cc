// `seedancectl kv eval`: a quantized KV cache against the FP32 one on a real
// model (SPEC KV-1, KV-3, KV-6).
#include <optional>

#include "seedance/base/env.h"
#include "seedance/kv/eval.h"
#include "seedance/kv/llama.h"
#include "tools/seedancectl/cli.h"

namespace seedance::cli {
namespace {

void RegisterEval(CLI::App* noun, Context& context) {
  struct Flags {
    std::string model, tokenizer, bits = "8", prompt, output, decision_log;
    int group = 32, window = 128, tokens = 128;
    kv::AdaptiveRule rule;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = noun->add_subcommand(
      "eval", "Compare a quantized KV cache with the FP32 one on a llama2.c model");
  cmd->add_option("--model", f->model, "llama2.c checkpoint")->required();
  cmd->add_option("--tokenizer", f->tokenizer, "llama2.c tokenizer (for --prompt and the text)");
  cmd->add_option("--bits", f->bits, "8, 6, 5, 4, 2, fp8 or adaptive")
      ->check(CLI::IsMember({"8", "6", "5", "4", "2", "fp8", "adaptive"}))
      ->capture_default_str();
  cmd->add_option("--decision-log", f->decision_log,
                  "adaptive: write the per-block decisions as JSON lines to this file");
  cmd->add_option("--long-context", f->rule.long_context,
                  "adaptive: kv_len above which high entropy lowers the width")
      ->capture_default_str();
  cmd->add_option("--entropy-threshold", f->rule.entropy_threshold,
                  "adaptive: normalised key-norm entropy above which the width drops")
      ->capture_default_str();
  cmd->add_option("--long-bits", f->rule.long_bits, "adaptive: width for long, high-entropy blocks")
      ->check(CLI::IsMember({2, 4, 5, 6, 8}))
      ->capture_default_str();
  cmd->add_option("--default-bits", f->rule.default_bits, "adaptive: width otherwise")
      ->check(CLI::IsMember({2, 4, 5, 6, 8}))
      ->capture_default_str();
  cmd->add_option("--group", f->group, "Values per quantization group")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--window", f->window, "Most recent tokens kept in FP32")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--tokens", f->tokens, "Sequence length, prompt included")->capture_default_str();
  cmd->add_option("--prompt", f->prompt, "Text the sequence starts with (needs --tokenizer)");
  AddOutputFlag(cmd, &f->output);
  cmd->callback([f, &context] {
    base::Env& env = *base::Env::Default();
    auto model = kv::LlamaModel::Load(env, f->model);
    if (Failed(model.status().Annotate("cannot load the model"), context)) return;
    std::optional<kv::Tokenizer> tok;
    if (!f->tokenizer.empty()) {
      auto t = kv::Tokenizer::Load(env, f->tokenizer, model->config().vocab_size);
      if (Failed(t.status().Annotate("cannot load the tokenizer"), context)) return;
      tok = std::move(*t);
    }
    kv::EvalOptions o;
    o.quant = kv::QuantConfig::Of(f->bits, f->group, f->window);
    o.quant.rule = f->rule;
    std::vector<kv::BitDecision> decisions;
    o.decisions = &decisions;
    o.tokens = f->tokens;
    if (!f->prompt.empty()) {
      if (!tok) {
        Failed(base::InvalidArgumentError("--prompt needs --tokenizer", "--prompt"), context);
        return;
      }
      o.prompt = tok->Encode(f->prompt);
    }
    auto r = kv::EvaluateKvCache(*model, tok ? &*tok : nullptr, o);
    if (Failed(r.status(), context)) return;
    if (!f->decision_log.empty()) {
      std::string lines;
      for (const auto& d : decisions) lines += kv::DecisionToReport(d).dump() + "\n";
      if (Failed(env.WriteFileAtomic(f->decision_log, lines).Annotate("cannot write the log"),
                 context)) {
        return;
      }
    }
    context.exit_code = PrintReport(*r, f->output);
  });
}

}  // namespace

void RegisterKv(CLI::App& app, Context& context) {
  CLI::App* noun = app.add_subcommand("kv", "KV cache: quantization quality on a real model");
  noun->require_subcommand(1);
  RegisterEval(noun, context);
}

}  // namespace seedance::cli
