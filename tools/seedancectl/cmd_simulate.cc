// `seedancectl simulate`: the flags of a scheduler experiment (sched/experiment.h, which
// builds the report) — the FGD paper's protocol (feature SCHED-7) or the event mode with arrivals
// and departures (SCHED-7), each policy averaged over seeds.
#include <algorithm>
#include <string>
#include <thread>

#include "seedance/base/env.h"
#include "seedance/sched/experiment.h"
#include "seedance/sched/experiment_view.h"
#include "tools/seedancectl/cli.h"

namespace seedance::cli {

void RegisterSimulate(CLI::App& app, Context& context) {
  struct Flags {
    sched::ExperimentSpec spec;
    std::string output, report, slo, tier_of, placements;
  };
  auto f = std::make_shared<Flags>();
  f->spec.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  CLI::App* cmd = app.add_subcommand(
      "simulate", "Schedule a pod trace on a node list with each policy (FGD protocol)");
  cmd->add_option("--nodes", f->spec.nodes_file,
                  "Nodes: Alibaba 2023 node list, PAI 2020 machine spec or Philly VC node counts")
      ->required();
  cmd->add_option("--pods", f->spec.pods_file,
                  "Pods or jobs: Alibaba 2023 pod list or Philly job list")
      ->required();
  cmd->add_option("--gpus-per-node", f->spec.gpus_per_node,
                  "GPUs per node when --nodes gives Philly VC node counts")
      ->check(IntIn(1, 64))
      ->capture_default_str();
  cmd->add_option("--backfill-window", f->spec.events.backfill_window,
                  "Event mode: waiting jobs one scheduling pass looks at")
      ->check(IntIn(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--policy", f->spec.policies,
                  "Policies, comma-separated: random, bestfit, dotprod, gpupacking, "
                  "gpuclustering, fgd, seedance")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--baseline", f->spec.baseline,
                  "The policy the others are compared with, paired by seed (default: the first "
                  "of --policy)");
  cmd->add_option("--protocol", f->spec.protocol,
                  "fgd (the paper's: shuffle, top up to 130%, no departures) or events "
                  "(arrivals and departures at the trace's times)")
      ->check(CLI::IsMember({"fgd", "events"}))
      ->capture_default_str();
  cmd->add_option("--ties", f->spec.ties,
                  "Score ties: name (the node whose name sorts first), shuffled-names (the "
                  "same after renaming the nodes in a random order drawn from the seed, as "
                  "the FGD paper's simulator does), random (as kube-scheduler) or auto "
                  "(shuffled-names for --protocol fgd, random for events)")
      ->check(CLI::IsMember({"auto", "name", "shuffled-names", "random"}))
      ->capture_default_str();
  cmd->add_option("--seeds", f->spec.seeds, "Seeds (42, 43, ...) to average over")
      ->check(IntIn(1, 1000))
      ->capture_default_str();
  cmd->add_option("--report", f->report,
                  "Also write a self-contained HTML report (charts, heat maps, tables)")
      ->check(OutputPath());
  cmd->add_option("--placements", f->placements,
                  "FGD protocol: also write the first seed's arrivals and each policy's "
                  "decisions as JSON (the input of a replay on a real cluster)")
      ->check(OutputPath());
  cmd->add_flag("--quotas", f->spec.events.quotas,
                "Event mode: elastic quotas per node pool (Philly VCs) with preemption of "
                "borrowers");
  cmd->add_flag("--tiers", f->spec.events.tiers,
                "Event mode: QoS tiers — Gold guaranteed, Silver elastic (quota scaled by "
                "max(0.3, 1.2 - 0.5 x load)), Bronze idle capacity only; Alibaba QoS gives the "
                "tier (LS, Guaranteed: gold; Burstable: silver; BE: bronze), other jobs are "
                "silver unless --tier-of says otherwise");
  cmd->add_option("--tier-of", f->tier_of,
                  "Event mode: tiers by group, e.g. 6214e9=gold,11cb48=bronze (with --tiers)");
  cmd->add_option("--max-retries", f->spec.events.max_retries,
                  "Event mode: a job preempted this many times is not preempted again "
                  "(default: no limit)")
      ->check(IntIn(0, 1000000));
  cmd->add_option("--job-util", f->spec.job_util_file,
                  "Event mode: CSV id,gpu_util_pct — each job's mean GPU utilization (the traces "
                  "do not carry it); ids are pod names, or philly-N for the Philly job on data "
                  "line N+1");
  cmd->add_flag("--consolidate", f->spec.events.consolidate,
                "Event mode: move long-tail jobs (utilization below --consolidate-below, after "
                "--consolidate-after seconds of run) onto a GPU share of --consolidate-share "
                "milli-GPU; needs --job-util");
  cmd->add_option("--consolidate-below", f->spec.events.consolidate_below_pct,
                  "Event mode: utilization % under which a job is long-tail")
      ->check(RealIn(0, 100))
      ->capture_default_str();
  cmd->add_option("--consolidate-after", f->spec.events.consolidate_after_s,
                  "Event mode: seconds of run before a long-tail job is moved")
      ->check(RealIn(0, 1e8))
      ->capture_default_str();
  cmd->add_option("--consolidate-share", f->spec.events.consolidate_share_milli,
                  "Event mode: milli-GPU a consolidated job keeps")
      ->check(IntIn(1, 999))
      ->capture_default_str();
  cmd->add_flag("--overcommit", f->spec.events.overcommit,
                "Event mode: a single-GPU share of known utilization (--job-util) books request "
                "/ margin (Gold 1.15, Silver 1.35, Bronze 2); shares on a GPU slow each other "
                "down when their busy time (request x utilization) exceeds it, never beyond a "
                "share's margin");
  cmd->add_flag("--redistribute", f->spec.events.redistribute,
                "Event mode, with --overcommit: move a share off a contended GPU to a node at "
                "least 15% of the hottest node's load cooler, where it runs without contention "
                "(one move per node pair per 45 s)");
  cmd->add_option("--spot-fraction", f->spec.spot_fraction,
                  "Event mode: share of nodes that are spot capacity, spread evenly; at most 0.8 "
                  "(an on-demand floor of 20%)")
      ->check(RealIn(0, 0.8));
  cmd->add_option("--spot-interruptions-per-day", f->spec.events.spot_interruptions_per_day,
                  "Event mode: reclaims per spot node per day (Poisson, seeded)")
      ->check(RealIn(0, 1440));
  cmd->add_option("--spot-recovery", f->spec.events.spot_recovery_s,
                  "Event mode: seconds a reclaimed spot node stays away")
      ->check(RealIn(0, 1e8))
      ->capture_default_str();
  cmd->add_option("--spot-price-ratio", f->spec.events.spot_price_ratio,
                  "Event mode: spot GPU-hour price as a share of on-demand (an input: take it "
                  "from the provider's price list)")
      ->check(RealIn(0, 1))
      ->capture_default_str();
  cmd->add_option("--slo", f->slo,
                  "Event mode: queueing-delay SLOs per group, e.g. LS=60,BE=3600 (seconds); "
                  "reports the share of each group's jobs that met it");
  cmd->add_option("--checkpoint-interval", f->spec.events.checkpoint_interval_s,
                  "Event mode: seconds of run time between checkpoints (work since the last "
                  "one is lost on preemption)")
      ->check(RealIn(0, 1e8))
      ->capture_default_str();
  cmd->add_option("--restore-cost", f->spec.events.restore_cost_s,
                  "Event mode: seconds a preempted job spends restoring when it restarts")
      ->check(RealIn(0, 1e8))
      ->capture_default_str();
  cmd->add_option("--threads", f->spec.threads, "Seeds run in parallel (default: the CPUs)")
      ->check(IntIn(1, 256));
  AddOutputFlag(cmd, &f->output);
  cmd->callback([f, &context] {
    sched::ExperimentSpec& spec = f->spec;
    auto slo = sched::ParseSloList(f->slo);
    if (Failed(slo.status(), context)) return;
    spec.events.slo_queue_delay_s = *slo;
    auto tier_of = sched::ParseTierList(f->tier_of);
    if (Failed(tier_of.status(), context)) return;
    spec.tier_of = *tier_of;
    spec.html = !f->report.empty();
    spec.placements = !f->placements.empty();
    base::Env& env = *base::Env::Default();
    std::unique_ptr<Progress> progress;
    auto result =
        sched::RunExperiment(spec, env, [&](std::string_view policy, int done, int total) {
          if (!progress)
            progress =
                std::make_unique<Progress>("simulate " + std::string(policy) + ", seeds", total);
          progress->Step();
          if (done == total) progress.reset();
        });
    // The library names the spec's fields; the flags that set them.
    if (Failed(WithFlag(result.status(), {{"protocol", "--protocol"},
                                          {"ties", "--ties"},
                                          {"placements", "--placements"},
                                          {"tier_of", "--tier-of"},
                                          {"redistribute", "--redistribute"},
                                          {"consolidate", "--consolidate"},
                                          {"spot_fraction", "--spot-fraction"},
                                          {"pods", "--pods"},
                                          {"policy", "--policy"}}),
               context)) {
      return;
    }
    if (!f->report.empty()) {
      const auto written = env.WriteFileAtomic(f->report, result->html);
      if (Failed(written.Annotate("cannot write the report"), context)) return;
    }
    if (!f->placements.empty()) {
      const auto written = env.WriteFileAtomic(f->placements, result->placements.dump() + "\n");
      if (Failed(written.Annotate("cannot write the placements"), context)) return;
    }
    context.exit_code = PrintReport(
        f->output == "table" ? sched::ExperimentTableView(result->report) : result->report,
        f->output);
  });
}

}  // namespace seedance::cli
