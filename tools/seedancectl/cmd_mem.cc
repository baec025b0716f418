// `seedancectl mem plan|check`: the offline reuse planner and its checker
// (feature MEM-2, MEM-4).

#include <optional>

#include "seedance/base/env.h"
#include "seedance/mem/lifetime.h"
#include "seedance/mem/plan_checker.h"
#include "seedance/mem/planner.h"
#include "seedance/mem/replay.h"
#include "seedance/mem/reports.h"
#include "tools/seedancectl/cli.h"

namespace seedance::cli {
namespace {

base::StatusOr<mem::LifetimeFile> ReadLifetimes(const std::string& path) {
  auto text = base::Env::Default()->ReadFile(path);
  if (!text.ok()) return text.status().Annotate("cannot read the lifetime file");
  return mem::ParseLifetimeCsv(*text, path);
}

void RegisterPlan(CLI::App* noun, Context& context) {
  struct Flags {
    std::string input, algo = "auto", offsets_out, output;
    double time_limit_s = 1.0;
    int64_t alignment = 1;
    int64_t capacity = 0;
    int threads = 0;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = noun->add_subcommand("plan", "Place buffers in one arena with a minimal peak");
  cmd->add_option("--input", f->input, "Lifetime CSV (id,lower,upper,size)")->required();
  cmd->add_option("--algo", f->algo, "auto, greedy or exact")
      ->check(CLI::IsMember({"auto", "greedy", "exact"}))
      ->capture_default_str();
  cmd->add_option("--time-limit", f->time_limit_s, "Seconds for the exact search")
      ->check(RealIn(0, mem::kMaxPlanTimeLimitS))
      ->capture_default_str();
  cmd->add_option("--alignment", f->alignment, "Every offset is a multiple of this many bytes")
      ->check(IntIn(1, mem::kMaxPlanAlignment))
      ->capture_default_str();
  cmd->add_option("--capacity", f->capacity,
                  "Arena size in bytes: find a plan that fits (exit 1 if none is found)")
      ->check(IntIn(1, mem::kMaxArenaBytes));
  cmd->add_option("--threads", f->threads,
                  "Threads for the exact search (0: one per hardware thread); the plan does "
                  "not depend on it")
      ->check(IntIn(0, 1024))
      ->capture_default_str();
  cmd->add_option("--offsets-out", f->offsets_out,
                  "Write the plan as CSV (the input columns plus offset), atomically")
      ->check(OutputPath());
  AddOutputFlag(cmd, &f->output);
  cmd->callback([f, &context] {
    auto file = ReadLifetimes(f->input);
    if (Failed(file.status(), context)) return;
    mem::PlanOptions options;
    options.algo = *mem::ParsePlanAlgo(f->algo);
    options.time_limit_s = f->time_limit_s;
    options.alignment = f->alignment;
    options.capacity_bytes = f->capacity;
    options.threads = f->threads;
    std::optional<SecondsTicker> ticker;  // the exact search may take its whole time limit
    if (options.algo != mem::PlanAlgo::kGreedy && f->time_limit_s >= 2) {
      ticker.emplace("mem plan: exact search", f->time_limit_s);
    }
    auto plan = mem::PlanOffsets(file->buffers, options);
    ticker.reset();
    if (Failed(plan.status(), context)) return;
    // Nothing is written when it does not fit: a plan that does not fit is no plan.
    if (Failed(mem::PlanFitStatus(*plan, f->input), context)) return;
    if (!f->offsets_out.empty()) {
      base::Status s = base::Env::Default()->WriteFileAtomic(
          f->offsets_out, mem::PlanToCsv(file->buffers, plan->offsets));
      if (!s.ok()) {
        context.exit_code = PrintError(s.Annotate("cannot write the offsets"));
        return;
      }
    }
    const base::Report r = mem::PlanReport(*plan, file->buffers.size(), f->alignment);
    context.exit_code = PrintReport(r, f->output);
  });
}

void RegisterCheck(CLI::App* noun, Context& context) {
  struct Flags {
    std::string input, offsets, output;
    int64_t alignment = 1;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = noun->add_subcommand(
      "check", "Verify a plan: no two live buffers overlap, offsets aligned; exit 1 otherwise");
  cmd->add_option("--input", f->input, "Lifetime CSV the plan was made for")->required();
  cmd->add_option("--offsets", f->offsets, "The plan: CSV with id and offset columns")->required();
  cmd->add_option("--alignment", f->alignment, "Required offset alignment in bytes")
      ->check(IntIn(1, int64_t{1} << 30))
      ->capture_default_str();
  AddOutputFlag(cmd, &f->output);
  cmd->callback([f, &context] {
    auto input = ReadLifetimes(f->input);
    if (Failed(input.status(), context)) return;
    auto plan = ReadLifetimes(f->offsets);
    if (Failed(plan.status(), context)) return;
    auto offsets = mem::PlanOffsetsForInput(*input, f->input, *plan, f->offsets);
    if (Failed(offsets.status(), context)) return;
    const mem::PlanCheck check = mem::CheckPlan(input->buffers, *offsets, f->alignment);
    const base::Report r = mem::CheckReport(input->buffers, check);
    PrintReport(r, f->output);
    if (!check.ok()) {
      context.exit_code = PrintError(base::InvalidArgumentError(
          std::to_string(check.violation_count) + " violation(s) in the plan", f->offsets));
    }
  });
}

void RegisterReplay(CLI::App* noun, Context& context) {
  struct Flags {
    std::string input, policy = "seedance", output;
    bool check = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = noun->add_subcommand(
      "replay", "Replay a lifetime file through a caching-allocator policy (virtual memory)");
  cmd->add_option("--input", f->input, "Lifetime CSV (id,lower,upper,size)")->required();
  cmd->add_option("--policy", f->policy,
                  "seedance, seedance-stitch, best-fit, first-fit, caching-2mib")
      ->check(
          CLI::IsMember({"seedance", "seedance-stitch", "best-fit", "first-fit", "caching-2mib"}))
      ->capture_default_str();
  cmd->add_flag("--check", f->check, "Run the allocator's validity walker after every operation");
  AddOutputFlag(cmd, &f->output);
  cmd->callback([f, &context] {
    auto file = ReadLifetimes(f->input);
    if (Failed(file.status(), context)) return;
    mem::ReplayOptions options;
    options.check_every_op = f->check;
    auto r = mem::Replay(file->buffers, *mem::ParseAllocatorPolicy(f->policy), options);
    if (Failed(r.status(), context)) return;
    const base::Report out = mem::ReplayReport(*r, f->policy);
    context.exit_code = PrintReport(out, f->output);
  });
}

}  // namespace

void RegisterMem(CLI::App& app, Context& context) {
  CLI::App* noun = app.add_subcommand("mem", "Memory reuse: offline planner and allocator replay");
  noun->require_subcommand(1);
  RegisterPlan(noun, context);
  RegisterCheck(noun, context);
  RegisterReplay(noun, context);
}

}  // namespace seedance::cli
