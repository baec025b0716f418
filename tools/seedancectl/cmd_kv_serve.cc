// `seedancectl kv serve`: the OpenAI-compatible endpoint over a llama2.c model and a quantized KV
// cache (feature KV-5). SIGTERM or SIGINT drains: new requests get 503, running ones finish (or
// are cancelled after --drain-timeout-s), then the process exits 0.
#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <string>
#include <vector>

#include "seedance/base/env.h"
#include "seedance/kv/model_files.h"
#include "seedance/kv/server.h"
#include "seedance/kv/width.h"
#include "seedance/probe/exporter.h"
#include "tools/seedancectl/cli.h"

namespace seedance::cli {
namespace {

// One connection is one descriptor: lift the soft limit to the hard one, as servers do, so a
// thousand clients do not exhaust the default 1,024.
void RaiseOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

}  // namespace

void RegisterKvServe(CLI::App* noun, Context& context) {
  struct Flags {
    std::string model, tokenizer, listen = "127.0.0.1:8000", name, policy = "continuous";
    std::string kv_bits = "32";
    kv::EngineOptions engine;
    kv::KvServerOptions server;
    double budget_mib = 0, drain_s = 30, max_delay_us = 5000;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = noun->add_subcommand(
      "serve",
      "Serve a Llama-family model (GGUF or llama2.c) over an OpenAI-compatible HTTP API "
      "(/v1/completions)");
  cmd->add_option("--model", f->model, "A GGUF model (Llama family) or a llama2.c checkpoint")
      ->required();
  cmd->add_option("--tokenizer", f->tokenizer,
                  "The llama2.c checkpoint's tokenizer (a GGUF model brings its own)");
  cmd->add_option("--listen", f->listen, "HOST:PORT (port 0 picks one)")
      ->check(ListenAddress())
      ->capture_default_str();
  cmd->add_option("--served-model-name", f->name,
                  "The name clients put in \"model\" (default: the model file's stem)")
      ->check(PrintableName());
  cmd->add_option("--policy", f->policy,
                  "continuous (requests join and leave the batch at token boundaries) or "
                  "dynamic (Triton's batcher: a batch runs to its end)")
      ->check(CLI::IsMember({"continuous", "dynamic"}))
      ->capture_default_str();
  cmd->add_option("--kv-bits", f->kv_bits, "KV cache: 32 (FP32), 8, fp8, 6, 5, 4, 2, adaptive")
      ->check(CLI::IsMember(kv::KvWidthNames(/*quantized_only=*/false)))
      ->capture_default_str();
  cmd->add_option("--group", f->engine.group, "Values per quantization group")
      ->check(IntIn(1, 256))
      ->capture_default_str();
  cmd->add_option("--window", f->engine.window, "Most recent tokens kept in FP32")
      ->check(IntIn(0, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--max-batch", f->engine.max_batch, "Sequences run together")
      ->check(IntIn(1, 4096))
      ->capture_default_str();
  cmd->add_option("--preferred-batch", f->engine.preferred_batch_sizes,
                  "dynamic: preferred batch sizes (comma-separated)")
      ->check(IntIn(1, 4096))
      ->delimiter(',');
  cmd->add_option("--max-queue-delay-us", f->max_delay_us,
                  "dynamic: longest wait for a fuller batch, microseconds")
      ->check(RealIn(0, 6e7))
      ->capture_default_str();
  cmd->add_option("--kv-budget-mib", f->budget_mib,
                  "KV-cache memory budget (default: max-batch sequences of the whole context)")
      ->check(RealIn(0, 1 << 20));
  cmd->add_option("--max-queue", f->engine.max_queue, "Requests that may wait; more get 429")
      ->check(IntIn(0, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--max-prompt-tokens", f->server.max_prompt_tokens,
                  "Longest prompt (default: the context minus one)")
      ->check(IntIn(1, 1 << 20));
  cmd->add_option("--default-max-tokens", f->server.default_max_tokens,
                  "max_tokens when a request gives none")
      ->check(IntIn(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--max-body-bytes", f->server.http.max_body_bytes,
                  "Largest request body; more is 413")
      ->check(IntIn(64, 1 << 30))
      ->capture_default_str();
  cmd->add_option("--http-threads", f->server.http.workers,
                  "Requests served at once (more connections wait for a thread)")
      ->check(IntIn(1, 4096))
      ->capture_default_str();
  cmd->add_option("--drain-timeout-s", f->drain_s,
                  "On SIGTERM, how long running requests may go on before they are cancelled")
      ->check(RealIn(0, 3600))
      ->capture_default_str();
  cmd->callback([f, &context] {
    base::Env& env = *base::Env::Default();
    auto files = kv::LoadModelFiles(env, f->model, f->tokenizer);
    if (Failed(WithFlag(files.status().Annotate("cannot load the model"),
                        {{"model", "--model"}, {"tokenizer", "--tokenizer"}}),
               context)) {
      return;
    }
    auto address = probe::ParseListenAddress(f->listen);
    if (Failed(address.status(), context)) return;
    auto policy = kv::ParseBatchPolicy(f->policy, "--policy");
    if (Failed(policy.status(), context)) return;
    f->engine.policy = *policy;
    auto width = kv::ParseKvWidth(f->kv_bits, "--kv-bits");
    if (Failed(width.status(), context)) return;
    f->engine.kv_width = *width;
    f->engine.max_queue_delay = std::chrono::microseconds(static_cast<int64_t>(f->max_delay_us));
    f->engine.kv_budget_bytes = static_cast<int64_t>(f->budget_mib * 1024 * 1024);
    if (f->budget_mib > 0 && f->engine.kv_budget_bytes == 0) f->engine.kv_budget_bytes = 1;
    f->server.http.host = address->first;
    f->server.http.port = address->second;
    f->server.model_name =
        f->name.empty() ? std::filesystem::path(f->model).stem().string() : f->name;
    f->server.drain_timeout = std::chrono::milliseconds(static_cast<int64_t>(f->drain_s * 1000));
    f->server.chat_template = files->chat_template;
    f->server.no_chat_template = files->no_chat_template;
    RaiseOpenFileLimit();
    std::signal(SIGPIPE, SIG_IGN);  // a client that hangs up is an error on its write, not a kill
    auto server = kv::KvServer::Start(std::move(files->model), std::move(files->tokenizer),
                                      f->engine, f->server);
    if (Failed(WithFlag(server.status(), {{"bits", "--kv-bits"},
                                          {"group", "--group"},
                                          {"window", "--window"},
                                          {"max_batch", "--max-batch"},
                                          {"preferred_batch_sizes", "--preferred-batch"},
                                          {"max_queue_delay", "--max-queue-delay-us"},
                                          {"kv_budget_bytes", "--kv-budget-mib"},
                                          {"max_queue", "--max-queue"},
                                          {"max_prompt_tokens", "--max-prompt-tokens"},
                                          {"default_max_tokens", "--default-max-tokens"},
                                          {"workers", "--http-threads"},
                                          {"listen", "--listen"}}),
               context)) {
      return;
    }
    InstallStopSignals();
    const kv::EngineStats st = (*server)->engine_stats();
    std::fprintf(stderr,
                 "serving %s on http://%s:%d/v1 (%s batching, max batch %d, KV cache %s bits, "
                 "budget %lld bytes); SIGTERM drains\n",
                 f->server.model_name.c_str(), address->first.c_str(), (*server)->port(),
                 f->policy.c_str(), f->engine.max_batch, f->kv_bits.c_str(),
                 static_cast<long long>(st.kv_budget_bytes));
    while (!StopRequested()) env.SleepFor(std::chrono::milliseconds(50));
    std::fprintf(stderr, "draining (up to %g s)\n", f->drain_s);
    const base::Report drained = (*server)->Drain();
    std::fprintf(stderr, "drained: %s\n", base::DumpJson(drained).c_str());
  });
}

}  // namespace seedance::cli
