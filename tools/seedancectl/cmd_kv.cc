// `seedancectl kv eval`: a quantized KV cache against the FP32 one on a real
// model (feature KV-1, KV-3, KV-6).
#include <cmath>
#include <optional>

#include "seedance/base/env.h"
#include "seedance/base/report.h"
#include "seedance/kv/estimate.h"
#include "seedance/kv/eval.h"
#include "seedance/kv/llama.h"
#include "seedance/kv/serve.h"
#include "tools/seedancectl/cli.h"

namespace seedance::cli {
namespace {

void RegisterEval(CLI::App* noun, Context& context) {
  struct Flags {
    std::string model, tokenizer, bits = "8", prompt, output, decision_log;
    int group = 32, window = kv::kAutoWindow, tokens = 128;
    kv::AdaptiveRule rule;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = noun->add_subcommand(
      "eval", "Compare a quantized KV cache with the FP32 one on a llama2.c model");
  cmd->add_option("--model", f->model, "llama2.c checkpoint")->required();
  cmd->add_option("--tokenizer", f->tokenizer, "llama2.c tokenizer (for --prompt and the text)");
  cmd->add_option("--bits", f->bits, "8, 6, 5, 4, 2, fp8 or adaptive")
      ->check(CLI::IsMember(kv::KvWidthNames(/*quantized_only=*/true)))
      ->capture_default_str();
  cmd->add_option("--decision-log", f->decision_log,
                  "adaptive: write the per-block decisions as JSON lines to this file")
      ->check(OutputPath());
  cmd->add_option("--long-context", f->rule.long_context,
                  "adaptive: kv_len above which high entropy lowers the width")
      ->check(IntIn(0, kv::kMaxLongContext))
      ->capture_default_str();
  cmd->add_option("--entropy-threshold", f->rule.entropy_threshold,
                  "adaptive: normalised key-norm entropy above which the width drops")
      ->check(RealIn(0, 1))
      ->capture_default_str();
  cmd->add_option("--long-bits", f->rule.long_bits, "adaptive: width for long, high-entropy blocks")
      ->check(IntIn(2, 8))
      ->check(CLI::IsMember({2, 4, 5, 6, 8}))
      ->capture_default_str();
  cmd->add_option("--default-bits", f->rule.default_bits, "adaptive: width otherwise")
      ->check(IntIn(2, 8))
      ->check(CLI::IsMember({2, 4, 5, 6, 8}))
      ->capture_default_str();
  cmd->add_option("--group", f->group, "Values per quantization group")
      ->check(IntIn(1, kv::kMaxEvalGroup))
      ->capture_default_str();
  cmd->add_option("--window", f->window,
                  "Most recent tokens kept in FP32 (default: a quarter of --tokens)")
      ->check(IntIn(0, kv::kMaxEvalTokens));
  cmd->add_option("--tokens", f->tokens, "Sequence length, prompt included")
      ->check(IntIn(1, kv::kMaxEvalTokens))
      ->capture_default_str();
  cmd->add_option("--prompt", f->prompt, "Text the sequence starts with (needs --tokenizer)");
  AddOutputFlag(cmd, &f->output);
  cmd->callback([f, &context] {
    base::Env& env = *base::Env::Default();
    kv::EvalRequest q;
    q.model_path = f->model;
    q.tokenizer_path = f->tokenizer;
    q.bits = f->bits;
    q.group = f->group;
    q.window = f->window;
    q.tokens = f->tokens;
    q.prompt = f->prompt;
    q.rule = f->rule;
    auto run = kv::RunKvEval(env, q);
    if (Failed(WithFlag(run.status(), {{"bits", "--bits"},
                                       {"group", "--group"},
                                       {"window", "--window"},
                                       {"tokens", "--tokens"},
                                       {"prompt", "--prompt"},
                                       {"long_context", "--long-context"},
                                       {"entropy_threshold", "--entropy-threshold"},
                                       {"long_bits", "--long-bits"},
                                       {"default_bits", "--default-bits"}}),
               context)) {
      return;
    }
    if (!f->decision_log.empty()) {
      std::string lines;
      for (const auto& d : run->decisions) lines += base::DumpJson(kv::DecisionToReport(d)) + "\n";
      if (Failed(env.WriteFileAtomic(f->decision_log, lines).Annotate("cannot write the log"),
                 context)) {
        return;
      }
    }
    context.exit_code = PrintReport(run->report, f->output);
  });
}

void RegisterEstimate(CLI::App* noun, Context& context) {
  struct Flags {
    int64_t tokens = 131072, layers = 32, kv_dim = 1024;
    int bits = 4, group = 32, pcie_gen = 5, lanes = 16, stacks = 5;
    double pcie_gbytes_per_s = 0, hbm_ns = 0;
    std::string hbm = "hbm3", output;
    bool measure_cpu = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = noun->add_subcommand(
      "estimate", "Decompression cost of a quantized KV cache (the model of feature KV-4)");
  cmd->add_option("--tokens", f->tokens, "Cached tokens")
      ->check(IntIn(1, int64_t{1} << 26))
      ->capture_default_str();
  cmd->add_option("--layers", f->layers, "Layers")->check(IntIn(1, 1024))->capture_default_str();
  cmd->add_option("--kv-dim", f->kv_dim, "Key (= value) channels per layer")
      ->check(IntIn(1, 1 << 17))
      ->capture_default_str();
  cmd->add_option("--bits", f->bits, "Code width")
      ->check(IntIn(2, 8))
      ->check(CLI::IsMember({2, 4, 5, 6, 8}))
      ->capture_default_str();
  cmd->add_option("--group", f->group, "Values per (min, scale)")
      ->check(IntIn(1, 256))
      ->capture_default_str();
  cmd->add_option("--pcie-gen", f->pcie_gen, "PCIe generation (3-6)")
      ->check(IntIn(3, 6))
      ->capture_default_str();
  cmd->add_option("--pcie-lanes", f->lanes, "PCIe lanes")
      ->check(IntIn(1, 32))
      ->capture_default_str();
  cmd->add_option("--pcie-gbytes-per-s", f->pcie_gbytes_per_s,
                  "Measured PCIe GB/s (overrides the line rate)")
      ->check(RealIn(0, 10000));
  cmd->add_option("--hbm", f->hbm, "hbm2, hbm2e, hbm3 or hbm3e")->capture_default_str();
  cmd->add_option("--hbm-stacks", f->stacks, "HBM stacks")
      ->check(IntIn(1, 16))
      ->capture_default_str();
  cmd->add_option("--hbm-ns", f->hbm_ns, "One HBM access in ns (default 12.8)")
      ->check(RealIn(0, 1e6));
  cmd->add_flag("--measure-cpu", f->measure_cpu, "Also time the dequantization on this CPU");
  AddOutputFlag(cmd, &f->output);
  cmd->callback([f, &context] {
    kv::EstimateRequest q;
    q.tokens = f->tokens;
    q.layers = f->layers;
    q.kv_dim = f->kv_dim;
    q.bits = f->bits;
    q.group = f->group;
    q.pcie_gen = f->pcie_gen;
    q.pcie_lanes = f->lanes;
    q.pcie_gbytes_per_s = f->pcie_gbytes_per_s;
    q.hbm = f->hbm;
    q.hbm_stacks = f->stacks;
    q.hbm_ns = f->hbm_ns;
    q.measure_cpu = f->measure_cpu;
    auto r = kv::EstimateReport(q);
    if (Failed(WithFlag(r.status(), {{"pcie_gen", "--pcie-gen"},
                                     {"pcie_lanes", "--pcie-lanes"},
                                     {"pcie_gbytes_per_s", "--pcie-gbytes-per-s"},
                                     {"hbm", "--hbm"},
                                     {"bits", "--bits"},
                                     {"group", "--group"}}),
               context)) {
      return;
    }
    context.exit_code = PrintReport(*r, f->output);
  });
}

void RegisterServeBench(CLI::App* noun, Context& context) {
  struct Flags {
    std::string model, output;
    double rate = 50, duration = 5, max_delay_ms = 10;
    int max_batch = 8, gen_tokens = 16, prompt_tokens = 4;
    std::vector<int> preferred;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = noun->add_subcommand(
      "serve-bench",
      "Poisson requests into a threaded server, with the dynamic batcher and without");
  cmd->add_option("--model", f->model, "llama2.c checkpoint")->required();
  cmd->add_option("--rate", f->rate, "Requests per second (Poisson)")
      ->check(RealIn(0.001, 100000))
      ->capture_default_str();
  cmd->add_option("--duration", f->duration, "Seconds of arrivals, per run")
      ->check(RealIn(0.001, 3600))
      ->capture_default_str();
  cmd->add_option("--max-batch", f->max_batch, "Largest batch")
      ->check(IntIn(1, 1024))
      ->capture_default_str();
  cmd->add_option("--max-delay-ms", f->max_delay_ms, "Longest wait for a fuller batch")
      ->check(RealIn(0, 60000))
      ->capture_default_str();
  cmd->add_option("--preferred", f->preferred, "Preferred batch sizes")
      ->check(IntIn(1, 1024))
      ->delimiter(',');
  cmd->add_option("--gen-tokens", f->gen_tokens, "Tokens generated per request")
      ->check(IntIn(1, 4096))
      ->capture_default_str();
  cmd->add_option("--prompt-tokens", f->prompt_tokens, "Prompt tokens per request")
      ->check(IntIn(1, 4096))
      ->capture_default_str();
  AddOutputFlag(cmd, &f->output);
  cmd->callback([f, &context] {
    // The library names its options; the flags that set them.
    auto flags = [](const base::Status& s) {
      return WithFlag(s, {{"rate", "--rate"},
                          {"duration", "--duration"},
                          {"gen_tokens", "--gen-tokens"},
                          {"max_batch", "--max-batch"},
                          {"preferred", "--preferred"}});
    };
    kv::ServeOptions o;
    o.rate_per_s = f->rate;
    o.duration_s = f->duration;
    o.gen_tokens = f->gen_tokens;
    o.prompt_tokens = f->prompt_tokens;
    o.batcher.max_batch_size = f->max_batch;
    o.batcher.preferred_batch_sizes = f->preferred;
    o.batcher.max_queue_delay =
        std::chrono::microseconds(static_cast<int64_t>(f->max_delay_ms * 1000));
    if (Failed(flags(kv::CheckServeOptions(o)), context)) return;  // before loading the model
    auto model = kv::LlamaModel::Load(*base::Env::Default(), f->model);
    if (Failed(model.status().Annotate("cannot load the model"), context)) return;
    // Progress against the expected number of requests (Poisson: the count sent may differ).
    const int expected = static_cast<int>(std::lround(f->rate * f->duration));
    std::unique_ptr<Progress> progress;
    std::string shown;
    auto report = kv::CompareBatching(*model, o, [&](std::string_view run, int64_t done) {
      if (run != shown) {
        progress.reset();  // the batched run's line ends before the unbatched one starts
        shown = std::string(run);
        progress = std::make_unique<Progress>("kv serve-bench " + shown + ", requests done (about)",
                                              expected);
      }
      progress->Set(static_cast<int>(done));
    });
    progress.reset();
    if (Failed(flags(report.status()), context)) return;
    context.exit_code = PrintReport(*report, f->output);
  });
}

}  // namespace

void RegisterKv(CLI::App& app, Context& context) {
  CLI::App* noun =
      app.add_subcommand("kv", "KV cache: quantization quality on a real model, and serving it");
  noun->require_subcommand(1);
  RegisterEval(noun, context);
  RegisterEstimate(noun, context);
  RegisterServeBench(noun, context);
  RegisterKvServe(noun, context);
}

}  // namespace seedance::cli
