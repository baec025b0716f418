// `seedancectl loadtest --url URL`: the load-test protocol (warm-up, a concurrency ladder or
// Poisson arrival rates, the steady window found from the data, recalibration on P99 drift) against
// a real endpoint (feature COST-8).
#include "seedance/cost/loadtest.h"
#include "tools/seedancectl/cli.h"

namespace seedance::cli {

void RegisterLoadTest(CLI::App& app, Context& context) {
  struct Flags {
    cost::LoadTestOptions o;
    bool completions = false;
    std::string output = "table";
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand(
      "loadtest", "Load-test an HTTP endpoint or an OpenAI-compatible completions API");
  cmd->add_option("--url", f->o.url,
                  "http://HOST:PORT/PATH (GET); with --completions the API base, e.g. …/v1")
      ->required();
  cmd->add_flag("--completions", f->completions,
                "POST streamed completions to URL/completions (time to first token, per token)");
  cmd->add_option("--model", f->o.model, "completions: the model name");
  cmd->add_option("--prompt", f->o.prompt, "completions: the prompt")->capture_default_str();
  cmd->add_option("--max-tokens", f->o.max_tokens, "completions: tokens per request")
      ->check(IntIn(1, 1 << 20))
      ->capture_default_str();
  CLI::Option* concurrency =
      cmd->add_option("--concurrency", f->o.concurrency, "The ladder: clients per level")
          ->check(IntIn(1, 4096))
          ->delimiter(',')
          ->capture_default_str();
  cmd->add_option("--rate", f->o.rates,
                  "Open loop instead: Poisson arrivals, requests per second per level (10,20,40)")
      ->check(RealIn(1e-6, 1e6))
      ->delimiter(',')
      ->excludes(concurrency);
  cmd->add_option("--max-connections", f->o.max_connections,
                  "Open loop: connections, hence requests in flight, at most")
      ->check(IntIn(1, 4096))
      ->capture_default_str();
  cmd->add_option("--warmup-s", f->o.warmup_s, "Warm-up seconds (not kept)")
      ->check(RealIn(0, 86400))
      ->capture_default_str();
  cmd->add_option("--level-s", f->o.level_s, "Seconds per level")
      ->check(RealIn(0.001, 86400))
      ->capture_default_str();
  cmd->add_option("--drift", f->o.drift, "P99 drift between the steady halves that reruns a level")
      ->check(RealIn(1e-6, 10))
      ->capture_default_str();
  cmd->add_option("--max-recalibrations", f->o.max_recalibrations, "Reruns per level at most")
      ->check(IntIn(0, 100))
      ->capture_default_str();
  cmd->add_option("--timeout-s", f->o.timeout_s, "One request's timeout")
      ->check(RealIn(0.001, 3600))
      ->capture_default_str();
  cmd->add_option("--usd-per-hour", f->o.usd_per_hour,
                  "The endpoint's cost per hour, for the cost per 1,000 requests")
      ->check(RealIn(0, 1e6));
  AddOutputFlag(cmd, &f->output);
  cmd->callback([f, &context] {
    f->o.kind = f->completions ? cost::LoadKind::kCompletions : cost::LoadKind::kHttpGet;
    f->o.progress = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
    auto r = cost::RunLoadTest(f->o);
    if (Failed(WithFlag(r.status(), {{"url", "--url"},
                                     {"concurrency", "--concurrency"},
                                     {"rates", "--rate"},
                                     {"max_connections", "--max-connections"},
                                     {"level_s", "--level-s"},
                                     {"model", "--model"}}),
               context)) {
      return;
    }
    context.exit_code =
        PrintReport(f->output == "table" ? cost::LoadTestTableView(*r) : *r, f->output);
  });
}

}  // namespace seedance::cli
