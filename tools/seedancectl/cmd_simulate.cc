// `seedancectl simulate`: a node list and a pod/job trace, scheduled with one
// or more policies and averaged over seeds — the FGD paper's protocol (SPEC
// SCHED-7a) or the event mode with arrivals and departures (SCHED-7b).
// Input formats are recognised by their header line.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <thread>

#include "seedance/base/env.h"
#include "seedance/base/parse.h"
#include "seedance/sched/event_sim.h"
#include "seedance/sched/fgd_protocol.h"
#include "seedance/sched/html_report.h"
#include "seedance/sched/readers.h"
#include "tools/seedancectl/cli.h"

namespace seedance::cli {
namespace {

// The header line, without a UTF-8 byte-order mark or a CR.
std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.starts_with("\xEF\xBB\xBF")) line.erase(0, 3);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

// Alibaba 2023 node list, PAI 2020 machine spec or Philly's VC node counts.
base::StatusOr<std::vector<sched::Node>> ReadNodes(const std::string& text, const std::string& file,
                                                   int gpus_per_node) {
  const std::string head = FirstLine(text);
  if (head == "vc,node num") return sched::PhillyNodes(text, file, gpus_per_node);
  if (head.rfind("machine,", 0) == 0) return sched::ReadPaiMachines(text, file);
  return sched::ReadAlibabaNodes(text, file);
}

// "LS=60,BE=3600" -> {LS: 60, BE: 3600}: seconds, finite, 0 to 10^8.
base::StatusOr<std::map<std::string, double>> ParseSlo(const std::string& text) {
  SEEDANCE_ASSIGN_OR_RETURN(auto items, base::ParseKeyValueList(text, "--slo"));
  std::map<std::string, double> out;
  for (const auto& [group, value] : items) {
    const std::optional<double> v = base::ParseFiniteDouble(value);
    if (!v || *v < 0 || *v > 1e8) {
      return base::InvalidArgumentError(
          "expected GROUP=SECONDS with seconds in [0, 1e8], got '" + group + "=" + value + "'",
          "--slo");
    }
    out[group] = *v;
  }
  return out;
}

// "GROUP=TIER,..." (--tier-of): the tier of every job of a group.
base::StatusOr<std::map<std::string, sched::Tier>> ParseTierOf(const std::string& text) {
  SEEDANCE_ASSIGN_OR_RETURN(auto items, base::ParseKeyValueList(text, "--tier-of"));
  std::map<std::string, sched::Tier> out;
  for (const auto& [group, value] : items) {
    const std::optional<sched::Tier> tier = sched::ParseTier(value);
    if (!tier) {
      return base::InvalidArgumentError(
          "expected GROUP=gold|silver|bronze, got '" + group + "=" + value + "'", "--tier-of");
    }
    out[group] = *tier;
  }
  return out;
}

// run(seed index) for seeds 0..seeds-1 on `threads` threads (each run owns
// its cluster and policy); results in seed order.
template <typename Run, typename F>
std::vector<base::StatusOr<Run>> RunSeeds(const std::string& policy, int seeds, int threads,
                                          F run) {
  std::vector<base::StatusOr<Run>> out(static_cast<size_t>(seeds), base::InternalError("not run"));
  std::atomic<int> next{0};
  Progress progress("simulate " + policy + ", seeds", seeds);
  auto worker = [&] {
    for (int s = next++; s < seeds; s = next++) {
      out[static_cast<size_t>(s)] = run(s);
      progress.Step();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::min(threads, seeds); ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  return out;
}

// Per-seed event runs of one policy, averaged.
base::Report EventFigures(const std::vector<base::StatusOr<sched::EventRun>>& runs) {
  const double n = static_cast<double>(runs.size());
  auto mean = [&](auto get) {
    double s = 0;
    for (const auto& r : runs) s += get(*r);
    return s / n;
  };
  auto pct = [&](auto get) {
    base::Report p;
    p["p50"] = mean([&](const sched::EventRun& r) { return get(r).p50; });
    p["p90"] = mean([&](const sched::EventRun& r) { return get(r).p90; });
    p["p99"] = mean([&](const sched::EventRun& r) { return get(r).p99; });
    return p;
  };
  const sched::EventRun& first = *runs.front();
  base::Report r;
  r["jobs"] = first.jobs;
  r["completed"] = mean([](const sched::EventRun& x) { return static_cast<double>(x.completed); });
  r["never_fit"] = first.never_fit;
  r["still_queued"] =
      mean([](const sched::EventRun& x) { return static_cast<double>(x.still_queued); });
  r["jct_s"] = pct([](const sched::EventRun& x) { return x.jct_s; });
  r["queue_delay_s"] = pct([](const sched::EventRun& x) { return x.queue_delay_s; });
  r["mean_gpu_used_pct"] = mean([](const sched::EventRun& x) { return x.mean_gpu_used_pct; });
  r["gpu_hours"] = mean([](const sched::EventRun& x) { return x.gpu_hours; });
  r["spot_interruptions"] =
      mean([](const sched::EventRun& x) { return static_cast<double>(x.spot_interruptions); });
  r["spot_gpu_hours"] = mean([](const sched::EventRun& x) { return x.spot_gpu_hours; });
  r["cost_on_demand_gpu_hours"] =
      mean([](const sched::EventRun& x) { return x.cost_on_demand_gpu_hours; });
  r["preemptions"] =
      mean([](const sched::EventRun& x) { return static_cast<double>(x.preemptions); });
  r["lost_gpu_hours"] = mean([](const sched::EventRun& x) { return x.lost_gpu_hours; });
  r["makespan_s"] = mean([](const sched::EventRun& x) { return x.makespan_s; });
  r["redistributions"] =
      mean([](const sched::EventRun& x) { return static_cast<double>(x.redistributions); });
  r["consolidations"] =
      mean([](const sched::EventRun& x) { return static_cast<double>(x.consolidations); });
  r["consolidation_freed_gpu_hours"] =
      mean([](const sched::EventRun& x) { return x.consolidation_freed_gpu_hours; });
  if (first.share_run_s > 0) {
    r["overcommit"] = {
        {"share_run_hours", mean([](const sched::EventRun& x) { return x.share_run_s / 3600; })},
        {"slowed_pct", mean([](const sched::EventRun& x) {
           return x.share_run_s > 0 ? 100 * x.slowed_s / x.share_run_s : 0.0;
         })},
        {"beyond_margin_pct", mean([](const sched::EventRun& x) {
           return x.share_run_s > 0 ? 100 * x.above_margin_s / x.share_run_s : 0.0;
         })},
        {"mean_slowdown", mean([](const sched::EventRun& x) { return x.mean_share_slowdown; })}};
  }
  base::Report groups = base::Report::array();
  for (const auto& g : first.groups) {
    base::Report one = {
        {"group", g.group},
        {"jobs", g.jobs},
        {"queue_delay_s", {{"p50", g.queue_delay_s.p50}, {"p99", g.queue_delay_s.p99}}}};
    if (g.slo_attainment_pct >= 0) one["slo_attainment_pct"] = g.slo_attainment_pct;
    groups.push_back(one);
  }
  r["groups_first_seed"] = groups;
  if (!first.tiers.empty()) {
    base::Report tiers = base::Report::array();
    for (const auto& t : first.tiers) {
      base::Report one = {{"tier", std::string(sched::TierName(t.tier))},
                          {"jobs", t.jobs},
                          {"started", t.started},
                          {"preemptions", t.preemptions},
                          {"queue_delay_s",
                           {{"p50", t.queue_delay_s.p50},
                            {"p90", t.queue_delay_s.p90},
                            {"p99", t.queue_delay_s.p99}}}};
      if (t.slo_attainment_pct >= 0) one["slo_attainment_pct"] = t.slo_attainment_pct;
      if (t.share_run_s > 0)
        one["share_beyond_margin_pct"] = 100 * t.above_margin_s / t.share_run_s;
      tiers.push_back(one);
    }
    r["tiers_first_seed"] = tiers;
    r["retry_limited"] =
        mean([](const sched::EventRun& x) { return static_cast<double>(x.retry_limited); });
  }
  r["gpu_used_pct_over_time_first_seed"] = first.gpu_used_pct_over_time;
  r["events"] = first.events;
  r["runtime_ms"] = mean([](const sched::EventRun& x) { return x.runtime_ms; });
  return r;
}

// --ties: "auto" is the paper simulator's rule under --protocol fgd and
// kube-scheduler's in event mode.
sched::TieBreak TieBreakOf(const std::string& ties, const std::string& protocol) {
  if (ties == "auto")
    return protocol == "fgd" ? sched::TieBreak::kShuffledNodeNames : sched::TieBreak::kRandom;
  if (ties == "name") return sched::TieBreak::kNodeName;
  if (ties == "shuffled-names") return sched::TieBreak::kShuffledNodeNames;
  return sched::TieBreak::kRandom;
}

}  // namespace

void RegisterSimulate(CLI::App& app, Context& context) {
  struct Flags {
    std::string nodes, pods, protocol = "fgd", output, ties = "auto";
    std::vector<std::string> policies = {"fgd"};
    std::string report;
    int seeds = 10;
    int gpus_per_node = 8;
    int backfill_window = 64;
    bool quotas = false;
    bool tiers = false;
    std::string tier_of;
    int max_retries = -1;
    std::string job_util;
    bool consolidate = false;
    double consolidate_below_pct = 5, consolidate_after_s = 600;
    int consolidate_share_milli = 100;
    bool overcommit = false;
    bool redistribute = false;
    double spot_fraction = 0, spot_interruptions_per_day = 0, spot_recovery_s = 600,
           spot_price_ratio = 0.3;
    std::string slo;
    double checkpoint_interval_s = 1800, restore_cost_s = 60;
    int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    uint64_t first_seed = 42;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand(
      "simulate", "Schedule a pod trace on a node list with each policy (FGD protocol)");
  cmd->add_option("--nodes", f->nodes,
                  "Nodes: Alibaba 2023 node list, PAI 2020 machine spec or Philly VC node counts")
      ->required();
  cmd->add_option("--pods", f->pods, "Pods or jobs: Alibaba 2023 pod list or Philly job list")
      ->required();
  cmd->add_option("--gpus-per-node", f->gpus_per_node,
                  "GPUs per node when --nodes gives Philly VC node counts")
      ->check(IntIn(1, 64))
      ->capture_default_str();
  cmd->add_option("--backfill-window", f->backfill_window,
                  "Event mode: waiting jobs one scheduling pass looks at")
      ->check(IntIn(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--policy", f->policies,
                  "Policies, comma-separated: random, bestfit, dotprod, gpupacking, "
                  "gpuclustering, fgd, seedance")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--protocol", f->protocol,
                  "fgd (the paper's: shuffle, top up to 130%, no departures) or events "
                  "(arrivals and departures at the trace's times)")
      ->check(CLI::IsMember({"fgd", "events"}))
      ->capture_default_str();
  cmd->add_option("--ties", f->ties,
                  "Score ties: name (the node whose name sorts first), shuffled-names (the "
                  "same after renaming the nodes in a random order drawn from the seed, as "
                  "the FGD paper's simulator does), random (as kube-scheduler) or auto "
                  "(shuffled-names for --protocol fgd, random for events)")
      ->check(CLI::IsMember({"auto", "name", "shuffled-names", "random"}))
      ->capture_default_str();
  cmd->add_option("--seeds", f->seeds, "Seeds (42, 43, ...) to average over")
      ->check(IntIn(1, 1000))
      ->capture_default_str();
  cmd->add_option("--report", f->report,
                  "Also write a self-contained HTML report (charts, heat maps, tables)")
      ->check(OutputPath());
  cmd->add_flag("--quotas", f->quotas,
                "Event mode: elastic quotas per node pool (Philly VCs) with preemption of "
                "borrowers");
  cmd->add_flag("--tiers", f->tiers,
                "Event mode: QoS tiers — Gold guaranteed, Silver elastic (quota scaled by "
                "max(0.3, 1.2 - 0.5 x load)), Bronze idle capacity only; Alibaba QoS gives the "
                "tier (LS, Guaranteed: gold; Burstable: silver; BE: bronze), other jobs are "
                "silver unless --tier-of says otherwise");
  cmd->add_option("--tier-of", f->tier_of,
                  "Event mode: tiers by group, e.g. 6214e9=gold,11cb48=bronze (with --tiers)");
  cmd->add_option("--max-retries", f->max_retries,
                  "Event mode: a job preempted this many times is not preempted again "
                  "(default: no limit)")
      ->check(IntIn(0, 1000000));
  cmd->add_option("--job-util", f->job_util,
                  "Event mode: CSV id,gpu_util_pct — each job's mean GPU utilization (the traces "
                  "do not carry it); ids are pod names, or philly-N for the Philly job on data "
                  "line N+1");
  cmd->add_flag("--consolidate", f->consolidate,
                "Event mode: move long-tail jobs (utilization below --consolidate-below, after "
                "--consolidate-after seconds of run) onto a GPU share of --consolidate-share "
                "milli-GPU; needs --job-util");
  cmd->add_option("--consolidate-below", f->consolidate_below_pct,
                  "Event mode: utilization % under which a job is long-tail")
      ->check(RealIn(0, 100))
      ->capture_default_str();
  cmd->add_option("--consolidate-after", f->consolidate_after_s,
                  "Event mode: seconds of run before a long-tail job is moved")
      ->check(RealIn(0, 1e8))
      ->capture_default_str();
  cmd->add_option("--consolidate-share", f->consolidate_share_milli,
                  "Event mode: milli-GPU a consolidated job keeps")
      ->check(IntIn(1, 999))
      ->capture_default_str();
  cmd->add_flag("--overcommit", f->overcommit,
                "Event mode: a single-GPU share of known utilization (--job-util) books request "
                "/ margin (Gold 1.15, Silver 1.35, Bronze 2); shares on a GPU slow each other "
                "down when their busy time (request x utilization) exceeds it, never beyond a "
                "share's margin");
  cmd->add_flag("--redistribute", f->redistribute,
                "Event mode, with --overcommit: move a share off a contended GPU to a node at "
                "least 15% of the hottest node's load cooler, where it runs without contention "
                "(one move per node pair per 45 s)");
  cmd->add_option("--spot-fraction", f->spot_fraction,
                  "Event mode: share of nodes that are spot capacity, spread evenly; at most 0.8 "
                  "(an on-demand floor of 20%)")
      ->check(RealIn(0, 0.8));
  cmd->add_option("--spot-interruptions-per-day", f->spot_interruptions_per_day,
                  "Event mode: reclaims per spot node per day (Poisson, seeded)")
      ->check(RealIn(0, 1440));
  cmd->add_option("--spot-recovery", f->spot_recovery_s,
                  "Event mode: seconds a reclaimed spot node stays away")
      ->check(RealIn(0, 1e8))
      ->capture_default_str();
  cmd->add_option("--spot-price-ratio", f->spot_price_ratio,
                  "Event mode: spot GPU-hour price as a share of on-demand (an input: take it "
                  "from the provider's price list)")
      ->check(RealIn(0, 1))
      ->capture_default_str();
  cmd->add_option("--slo", f->slo,
                  "Event mode: queueing-delay SLOs per group, e.g. LS=60,BE=3600 (seconds); "
                  "reports the share of each group's jobs that met it");
  cmd->add_option("--checkpoint-interval", f->checkpoint_interval_s,
                  "Event mode: seconds of run time between checkpoints (work since the last "
                  "one is lost on preemption)")
      ->check(RealIn(0, 1e8))
      ->capture_default_str();
  cmd->add_option("--restore-cost", f->restore_cost_s,
                  "Event mode: seconds a preempted job spends restoring when it restarts")
      ->check(RealIn(0, 1e8))
      ->capture_default_str();
  cmd->add_option("--threads", f->threads, "Seeds run in parallel (default: the CPUs)")
      ->check(IntIn(1, 256));
  AddOutputFlag(cmd, &f->output);
  cmd->callback([f, &context] {
    base::Env& env = *base::Env::Default();
    auto node_text = env.ReadFile(f->nodes);
    if (Failed(node_text.status().Annotate("cannot read the node list"), context)) return;
    auto nodes = ReadNodes(*node_text, f->nodes, f->gpus_per_node);
    if (Failed(nodes.status(), context)) return;
    int64_t total_gpus = 0;
    for (const sched::Node& n : *nodes) total_gpus += n.gpu_count;
    if (total_gpus == 0) {
      Failed(base::InvalidArgumentError("the node list has no GPUs", f->nodes), context);
      return;
    }
    auto pod_text = env.ReadFile(f->pods);
    if (Failed(pod_text.status().Annotate("cannot read the pod list"), context)) return;
    const bool philly = FirstLine(*pod_text).rfind("timestamp,duration,num_gpus", 0) == 0;
    if (f->protocol == "events") {
      // Spot capacity: every node whose index crosses a multiple of 1/F.
      for (size_t i = 0; i < nodes->size(); ++i) {
        (*nodes)[i].spot = std::floor(static_cast<double>(i + 1) * f->spot_fraction) >
                           std::floor(static_cast<double>(i) * f->spot_fraction);
      }
      auto slo = ParseSlo(f->slo);
      if (Failed(slo.status(), context)) return;
      auto tier_of = ParseTierOf(f->tier_of);
      if (Failed(tier_of.status(), context)) return;
      if (!f->tier_of.empty() && !f->tiers) {
        Failed(base::InvalidArgumentError("--tier-of needs --tiers", "--tier-of"), context);
        return;
      }
      std::vector<sched::EventJob> jobs;
      if (philly) {
        auto list = sched::ReadPhillyJobs(*pod_text, f->pods);
        if (Failed(list.status(), context)) return;
        jobs = sched::JobsFromPhilly(*list, f->gpus_per_node);
      } else {
        auto list = sched::ReadAlibabaPods(*pod_text, f->pods);
        if (Failed(list.status(), context)) return;
        jobs = sched::JobsFromAlibaba(*list);
      }
      if (jobs.empty()) {
        Failed(base::InvalidArgumentError("no jobs: the file has no data lines", f->pods), context);
        return;
      }
      for (auto& j : jobs) {
        if (auto t = tier_of->find(j.group); t != tier_of->end()) j.tier = t->second;
      }
      if (f->redistribute && !f->overcommit) {
        Failed(base::InvalidArgumentError("--redistribute moves over-committed shares: it needs "
                                          "--overcommit",
                                          "--redistribute"),
               context);
        return;
      }
      if (f->consolidate && f->job_util.empty()) {
        Failed(base::InvalidArgumentError("--consolidate needs --job-util (the traces carry no "
                                          "GPU utilization)",
                                          "--consolidate"),
               context);
        return;
      }
      if (!f->job_util.empty()) {
        auto util_text = env.ReadFile(f->job_util);
        if (Failed(util_text.status().Annotate("cannot read the utilization file"), context)) {
          return;
        }
        auto util = sched::ReadJobUtilization(*util_text, f->job_util);
        if (Failed(util.status(), context)) return;
        for (auto& j : jobs) {
          if (auto u = util->find(j.id); u != util->end()) j.gpu_util_pct = u->second;
        }
      }
      base::Report r;
      r["nodes"] = f->nodes;
      r["pods"] = f->pods;
      r["protocol"] = "events";
      r["seeds"] = f->seeds;
      r["policies"] = base::Report::array();
      sched::EventReportInput html;
      html.nodes_file = f->nodes;
      html.jobs_file = f->pods;
      html.settings =
          std::to_string(f->seeds) + " seed(s), figures of the first; " +
          (f->quotas ? "elastic quotas on" : "no quotas") + (f->tiers ? ", QoS tiers" : "") +
          (f->consolidate ? ", long-tail consolidation" : "") +
          (f->overcommit ? ", GPU over-commit" : "") +
          (f->redistribute ? ", load redistribution" : "") +
          (f->spot_fraction > 0 ? ", spot share " + std::to_string(f->spot_fraction) : "") +
          (f->slo.empty() ? "" : ", SLOs " + f->slo) + ".";
      for (const std::string& name : f->policies) {
        auto runs = RunSeeds<sched::EventRun>(name, f->seeds, f->threads, [&](int s) {
          sched::EventRunOptions o;
          o.policy = name;
          o.seed = f->first_seed + static_cast<uint64_t>(s);
          o.backfill_window = f->backfill_window;
          o.ties = TieBreakOf(f->ties, f->protocol);
          o.quotas = f->quotas;
          o.tiers = f->tiers;
          o.max_retries = f->max_retries;
          o.consolidate = f->consolidate;
          o.consolidate_below_pct = f->consolidate_below_pct;
          o.consolidate_after_s = f->consolidate_after_s;
          o.consolidate_share_milli = f->consolidate_share_milli;
          o.overcommit = f->overcommit;
          o.redistribute = f->redistribute;
          o.checkpoint_interval_s = f->checkpoint_interval_s;
          o.restore_cost_s = f->restore_cost_s;
          o.slo_queue_delay_s = *slo;
          o.spot_interruptions_per_day = f->spot_interruptions_per_day;
          o.spot_recovery_s = f->spot_recovery_s;
          o.spot_price_ratio = f->spot_price_ratio;
          return sched::RunEvents(*nodes, jobs, o);
        });
        for (const auto& run : runs) {
          if (Failed(run.status(), context)) return;
        }
        base::Report p;
        p["policy"] = name;  // first, as in the FGD protocol's report: it names the row
        p.update(EventFigures(runs));
        r["policies"].push_back(p);
        html.policies.push_back({name, *runs.front()});
      }
      if (!f->report.empty()) {
        const auto written = env.WriteFileAtomic(f->report, sched::RenderEventHtmlReport(html));
        if (Failed(written.Annotate("cannot write the report"), context)) return;
      }
      context.exit_code = PrintReport(r, f->output);
      return;
    }
    if (philly) {
      Failed(
          base::InvalidArgumentError(
              "the FGD protocol needs an Alibaba pod list; use --protocol events for Philly jobs",
              "--pods"),
          context);
      return;
    }
    auto pods = sched::ReadAlibabaPods(*pod_text, f->pods);
    if (Failed(pods.status(), context)) return;
    if (pods->empty()) {
      Failed(base::InvalidArgumentError("no pods: the file has no data lines", f->pods), context);
      return;
    }
    base::Report r;
    r["nodes"] = f->nodes;
    r["pods"] = f->pods;
    r["seeds"] = f->seeds;
    r["policies"] = base::Report::array();
    sched::HtmlReportInput html;
    html.nodes_file = f->nodes;
    html.pods_file = f->pods;
    html.seeds = f->seeds;
    for (const auto& n : *nodes) html.node_models.push_back(n.gpu_model);
    for (const std::string& name : f->policies) {
      auto runs = RunSeeds<sched::FgdRun>(name, f->seeds, f->threads, [&](int s) {
        sched::FgdRunOptions o;
        o.policy = name;
        o.seed = f->first_seed + static_cast<uint64_t>(s);
        o.record_nodes = !f->report.empty() && s == 0;
        o.ties = TieBreakOf(f->ties, f->protocol);
        return sched::RunFgdProtocol(*nodes, *pods, o);
      });
      std::vector<double> alloc(9, 0.0), frag(9, 0.0);
      double runtime = 0, idle_whole = 0, idle_partial = 0;
      for (const auto& run : runs) {
        if (Failed(run.status(), context)) return;
        for (size_t i = 0; i < 9; ++i) {
          alloc[i] += run->alloc_pct_at[i] / f->seeds;
          frag[i] += run->frag_pct_at[i] / f->seeds;
        }
        runtime += run->runtime_ms / f->seeds;
        idle_whole += run->idle_whole_gpu_pct / f->seeds;
        idle_partial += run->idle_partial_gpu_pct / f->seeds;
      }
      base::Report p;
      p["policy"] = name;
      base::Report at = base::Report::object(), fr = base::Report::object();
      for (size_t i = 0; i < 9; ++i) {
        at[std::to_string(50 + 10 * i)] = alloc[i];
        fr[std::to_string(50 + 10 * i)] = frag[i];
      }
      p["alloc_ratio_pct_at"] = at;
      p["unallocated_gpu_pct_at_130"] = 100 - alloc[8];
      // Where it sits: whole idle GPUs, partly used ones, and the commonest
      // remnants (milli-GPU left on a GPU) of the first seed.
      std::vector<std::pair<int64_t, int>> common;
      for (const auto& [milli, gpus] : runs[0]->remnant_gpus) common.emplace_back(gpus, milli);
      std::sort(common.rbegin(), common.rend());
      base::Report remnants = base::Report::array();
      for (size_t i = 0; i < std::min<size_t>(5, common.size()); ++i) {
        remnants.push_back({{"milli_left", common[i].second}, {"gpus", common[i].first}});
      }
      p["unallocated_at_130"] = {{"whole_gpu_pct", idle_whole},
                                 {"partial_gpu_pct", idle_partial},
                                 {"top_remnants_first_seed", remnants}};
      p["frag_gpu_pct_at"] = fr;
      p["runtime_ms"] = runtime;
      r["policies"].push_back(p);
      html.policies.push_back(
          {name, alloc, frag, 100 - alloc[8], runtime, runs[0]->node_gpu_used_at});
    }
    if (!f->report.empty()) {
      const auto written = env.WriteFileAtomic(f->report, sched::RenderHtmlReport(html));
      if (Failed(written.Annotate("cannot write the report"), context)) return;
    }
    context.exit_code = PrintReport(r, f->output);
  });
}

}  // namespace seedance::cli
