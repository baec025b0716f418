#include "seedance/sched/experiment.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <thread>
#include <utility>

#include "seedance/base/parse.h"
#include "seedance/sched/experiment_view.h"
#include "seedance/sched/fgd_protocol.h"
#include "seedance/sched/html_report.h"
#include "seedance/sched/readers.h"
#include "src/sched/experiment_report.h"
#include "src/sched/seed_stats.h"

namespace seedance::sched {
namespace {

// The header line, without a UTF-8 byte-order mark or a CR.
std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.starts_with("\xEF\xBB\xBF")) line.erase(0, 3);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

bool IsPhillyJobs(const std::string& text) {
  return FirstLine(text).rfind("timestamp,duration,num_gpus", 0) == 0;
}

// Alibaba 2023 node list, PAI 2020 machine spec or Philly's VC node counts.
base::StatusOr<std::vector<Node>> ReadNodes(const std::string& text, const std::string& file,
                                            int gpus_per_node) {
  const std::string head = FirstLine(text);
  if (head == "vc,node num") return PhillyNodes(text, file, gpus_per_node);
  if (head.rfind("machine,", 0) == 0) return ReadPaiMachines(text, file);
  return ReadAlibabaNodes(text, file);
}

// "auto" is the paper simulator's rule under the FGD protocol and kube-scheduler's in event mode.
base::StatusOr<TieBreak> TieBreakOf(const std::string& ties, const std::string& protocol) {
  if (ties == "auto") {
    return protocol == "fgd" ? TieBreak::kShuffledNodeNames : TieBreak::kRandom;
  }
  auto parsed = ParseTieBreak(ties, "ties");
  if (!parsed.ok()) {
    return base::InvalidArgumentError(
        "expected auto, " + std::string(TieBreakNames()) + ", got '" + ties + "'", "ties");
  }
  return parsed;
}

// run(seed index) for seeds 0..seeds-1 on `threads` threads; results in seed order.
template <typename Run, typename F>
std::vector<base::StatusOr<Run>> RunSeeds(const std::string& policy, int seeds, int threads,
                                          const ExperimentProgress& progress, F run) {
  std::vector<base::StatusOr<Run>> out(static_cast<size_t>(seeds), base::InternalError("not run"));
  std::atomic<int> next{0};
  std::mutex lock;
  int done = 0;
  auto worker = [&] {
    for (int s = next++; s < seeds; s = next++) {
      out[static_cast<size_t>(s)] = run(s);
      if (progress) {
        std::lock_guard<std::mutex> hold(lock);
        progress(policy, ++done, seeds);
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::min(threads, seeds); ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  return out;
}

// The event mode's jobs, with tiers by group and utilization from the file applied.
base::StatusOr<std::vector<EventJob>> EventJobs(const ExperimentSpec& spec,
                                                const std::string& pod_text, base::Env& env) {
  std::vector<EventJob> jobs;
  if (IsPhillyJobs(pod_text)) {
    SEEDANCE_ASSIGN_OR_RETURN(auto list, ReadPhillyJobs(pod_text, spec.pods_file));
    jobs = JobsFromPhilly(list, spec.gpus_per_node);
  } else {
    SEEDANCE_ASSIGN_OR_RETURN(auto list, ReadAlibabaPods(pod_text, spec.pods_file));
    jobs = JobsFromAlibaba(list);
  }
  if (jobs.empty()) {
    return base::InvalidArgumentError("no jobs: the file has no data lines", spec.pods_file);
  }
  for (auto& j : jobs) {
    if (auto t = spec.tier_of.find(j.group); t != spec.tier_of.end()) j.tier = t->second;
  }
  if (!spec.job_util_file.empty()) {
    auto util_text = env.ReadFile(spec.job_util_file);
    if (!util_text.ok()) return util_text.status().Annotate("cannot read the utilization file");
    SEEDANCE_ASSIGN_OR_RETURN(auto util, ReadJobUtilization(*util_text, spec.job_util_file));
    for (auto& j : jobs) {
      if (auto u = util.find(j.id); u != util.end()) j.gpu_util_pct = u->second;
    }
  }
  return jobs;
}

// Spot capacity: every node whose index crosses a multiple of 1/F.
void MarkSpot(std::vector<Node>& nodes, double fraction) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    nodes[i].spot = std::floor(static_cast<double>(i + 1) * fraction) >
                    std::floor(static_cast<double>(i) * fraction);
  }
}

// The policy the others are compared with: --baseline, else the first listed.
std::string BaselineOf(const ExperimentSpec& spec) {
  return spec.baseline.empty() ? spec.policies.front() : spec.baseline;
}

// The report's first keys; the policies follow.
base::Report ReportHead(const ExperimentSpec& spec) {
  base::Report r;
  r["nodes"] = spec.nodes_file;
  r["pods"] = spec.pods_file;
  if (spec.protocol == "events") r["protocol"] = "events";
  r["seeds"] = spec.seeds;
  r["baseline"] = BaselineOf(spec);
  r["policies"] = base::Report::array();
  return r;
}

base::Report PlacementsHead(const ExperimentSpec& spec, TieBreak ties,
                            const std::vector<Node>& nodes, const std::vector<Pod>& pods) {
  base::Report r;
  r["seed"] = spec.first_seed;
  r["ties"] = TieBreakName(ties);
  r["tune"] = FgdRunOptions{}.tune;
  int64_t capacity = 0;
  r["nodes"] = base::Report::array();
  for (const Node& n : nodes) {
    r["nodes"].push_back(n.name);
    capacity += int64_t{1000} * n.gpu_count;
  }
  r["capacity_gpu_milli"] = capacity;
  r["pods"] = base::Report::array();
  for (const Pod& p : pods) r["pods"].push_back(p.name);
  r["policies"] = base::Report::array();
  return r;
}

base::Report PlacementsOf(const std::string& policy, const FgdRun& run) {
  base::Report p;
  p["policy"] = policy;
  p["alloc_pct_at"] = run.alloc_pct_at;
  base::Report arrivals = base::Report::array();
  for (const FgdArrival& a : run.arrivals) arrivals.push_back({a.pod, a.node, a.gpus});
  p["arrivals"] = std::move(arrivals);
  return p;
}

base::StatusOr<ExperimentResult> RunEventExperiment(const ExperimentSpec& spec,
                                                    const std::vector<Node>& nodes,
                                                    const std::vector<EventJob>& jobs,
                                                    const ExperimentProgress& progress) {
  SEEDANCE_ASSIGN_OR_RETURN(const TieBreak ties, TieBreakOf(spec.ties, spec.protocol));
  ExperimentResult out;
  base::Report& r = out.report;
  r = ReportHead(spec);
  EventReportInput html = EventHtmlInput(spec);
  const std::vector<SeedMetric> metrics = {
      {"jct_s_p50", true}, {"queue_delay_s_p99", true}, {"mean_gpu_used_pct", false}};
  std::vector<std::vector<std::vector<double>>> values;
  for (const std::string& name : spec.policies) {
    auto runs = RunSeeds<EventRun>(name, spec.seeds, spec.threads, progress, [&](int s) {
      EventRunOptions o = spec.events;
      o.policy = name;
      o.seed = spec.first_seed + static_cast<uint64_t>(s);
      o.ties = ties;
      return RunEvents(nodes, jobs, o);
    });
    for (const auto& run : runs) SEEDANCE_RETURN_IF_ERROR(run.status());
    base::Report p;
    p["policy"] = name;  // first, as in the FGD protocol's report: it names the row
    p.update(EventFigures(runs));
    r["policies"].push_back(p);
    html.policies.push_back({name, *runs.front()});
    std::vector<std::vector<double>> per_seed(metrics.size());
    for (const auto& run : runs) {
      per_seed[0].push_back(run->jct_s.p50);
      per_seed[1].push_back(run->queue_delay_s.p99);
      per_seed[2].push_back(run->mean_gpu_used_pct);
    }
    values.push_back(std::move(per_seed));
  }
  r["comparisons"] =
      SeedStatistics(spec.policies, values, metrics, BaselineOf(spec), r["policies"]);
  r = WithExperimentVerdict(r);
  if (spec.html) out.html = RenderEventHtmlReport(html);
  return out;
}

base::StatusOr<ExperimentResult> RunFgdExperiment(const ExperimentSpec& spec,
                                                  const std::vector<Node>& nodes,
                                                  const std::vector<Pod>& pods,
                                                  const ExperimentProgress& progress) {
  SEEDANCE_ASSIGN_OR_RETURN(const TieBreak ties, TieBreakOf(spec.ties, spec.protocol));
  ExperimentResult out;
  base::Report& r = out.report;
  r = ReportHead(spec);
  HtmlReportInput html;
  html.nodes_file = spec.nodes_file;
  html.pods_file = spec.pods_file;
  html.seeds = spec.seeds;
  for (const auto& n : nodes) html.node_models.push_back(n.gpu_model);
  if (spec.placements) out.placements = PlacementsHead(spec, ties, nodes, pods);
  const std::vector<SeedMetric> metrics = {{"unallocated_gpu_pct_at_130", true},
                                           {"alloc_ratio_pct_at_100", false}};
  std::vector<std::vector<std::vector<double>>> values;
  for (const std::string& name : spec.policies) {
    auto runs = RunSeeds<FgdRun>(name, spec.seeds, spec.threads, progress, [&](int s) {
      FgdRunOptions o;
      o.policy = name;
      o.seed = spec.first_seed + static_cast<uint64_t>(s);
      o.record_nodes = spec.html && s == 0;
      o.record_arrivals = spec.placements && s == 0;
      o.ties = ties;
      return RunFgdProtocol(nodes, pods, o);
    });
    for (const auto& run : runs) SEEDANCE_RETURN_IF_ERROR(run.status());
    FgdFigures figures = FgdFiguresOf(runs);
    base::Report p;
    p["policy"] = name;
    p.update(figures.report);
    r["policies"].push_back(p);
    if (spec.placements) out.placements["policies"].push_back(PlacementsOf(name, *runs.front()));
    html.policies.push_back({name,
                             figures.alloc,
                             figures.frag,
                             100 - figures.alloc[8],
                             figures.runtime_ms,
                             runs[0]->node_gpu_used_at,
                             std::nullopt,
                             {}});
    std::vector<std::vector<double>> per_seed(metrics.size());
    for (const auto& run : runs) {
      per_seed[0].push_back(100 - run->alloc_pct_at[8]);  // 130% arrived
      per_seed[1].push_back(run->alloc_pct_at[5]);        // 100% arrived
    }
    const SeedSpread spread = SpreadOf(per_seed[0]);
    if (spread.has_interval) html.policies.back().unallocated_interval = {spread.low, spread.high};
    html.policies.back().unallocated_per_seed = per_seed[0];
    values.push_back(std::move(per_seed));
  }
  r["comparisons"] =
      SeedStatistics(spec.policies, values, metrics, BaselineOf(spec), r["policies"]);
  r = WithExperimentVerdict(r);
  if (spec.html) out.html = RenderHtmlReport(html);
  return out;
}

}  // namespace

base::StatusOr<std::map<std::string, double>> ParseSloList(std::string_view text,
                                                           std::string_view where) {
  SEEDANCE_ASSIGN_OR_RETURN(auto items, base::ParseKeyValueList(text, std::string(where)));
  std::map<std::string, double> out;
  for (const auto& [group, value] : items) {
    const std::optional<double> v = base::ParseFiniteDouble(value);
    if (!v || *v < 0 || *v > 1e8) {
      return base::InvalidArgumentError(
          "expected GROUP=SECONDS with seconds in [0, 1e8], got '" + group + "=" + value + "'",
          std::string(where));
    }
    out[group] = *v;
  }
  return out;
}

base::StatusOr<std::map<std::string, Tier>> ParseTierList(std::string_view text,
                                                          std::string_view where) {
  SEEDANCE_ASSIGN_OR_RETURN(auto items, base::ParseKeyValueList(text, std::string(where)));
  std::map<std::string, Tier> out;
  for (const auto& [group, value] : items) {
    const base::StatusOr<Tier> tier = ParseTier(value, where);
    if (!tier.ok()) {
      return base::InvalidArgumentError(
          "expected GROUP=gold|silver|bronze, got '" + group + "=" + value + "'",
          std::string(where));
    }
    out[group] = *tier;
  }
  return out;
}

base::Status ValidateExperiment(const ExperimentSpec& spec) {
  if (spec.protocol != "fgd" && spec.protocol != "events") {
    return base::InvalidArgumentError("expected fgd or events, got '" + spec.protocol + "'",
                                      "protocol");
  }
  if (spec.seeds < 1 || spec.threads < 1 || spec.policies.empty()) {
    return base::InvalidArgumentError("expected at least one seed, thread and policy");
  }
  SEEDANCE_RETURN_IF_ERROR(TieBreakOf(spec.ties, spec.protocol).status());
  if (!spec.baseline.empty() &&
      std::find(spec.policies.begin(), spec.policies.end(), spec.baseline) == spec.policies.end()) {
    return base::InvalidArgumentError(
        "the baseline must be one of the policies run, got '" + spec.baseline + "'", "baseline");
  }
  const EventRunOptions& e = spec.events;
  if (spec.protocol == "fgd") {
    const EventRunOptions defaults;
    const bool event_settings = e.quotas || e.tiers || e.consolidate || e.overcommit ||
                                e.redistribute || spec.spot_fraction > 0 ||
                                e.spot_interruptions_per_day > 0 || !e.slo_queue_delay_s.empty() ||
                                !spec.tier_of.empty() || !spec.job_util_file.empty() ||
                                e.max_retries != defaults.max_retries;
    if (event_settings) {
      return base::InvalidArgumentError(
          "quotas, tiers, retries, consolidation, over-commit, redistribution, spot, SLOs and "
          "job utilization are event-mode settings: the protocol must be events",
          "protocol");
    }
    return base::OkStatus();
  }
  if (spec.placements) {
    return base::InvalidArgumentError("placements are recorded under the FGD protocol",
                                      "placements");
  }
  if (!spec.tier_of.empty() && !e.tiers) {
    return base::InvalidArgumentError("tier_of needs tiers", "tier_of");
  }
  if (e.redistribute && !e.overcommit) {
    return base::InvalidArgumentError(
        "redistribute moves over-committed shares: it needs overcommit", "redistribute");
  }
  if (e.consolidate && spec.job_util_file.empty()) {
    return base::InvalidArgumentError(
        "consolidate needs job_util (the traces carry no GPU utilization)", "consolidate");
  }
  if (spec.spot_fraction < 0 || spec.spot_fraction > 0.8) {
    return base::InvalidArgumentError("expected a spot share in [0, 0.8]", "spot_fraction");
  }
  return base::OkStatus();
}

base::StatusOr<ExperimentResult> RunExperiment(const ExperimentSpec& spec, base::Env& env,
                                               const ExperimentProgress& progress) {
  SEEDANCE_RETURN_IF_ERROR(ValidateExperiment(spec));
  auto node_text = env.ReadFile(spec.nodes_file);
  if (!node_text.ok()) return node_text.status().Annotate("cannot read the node list");
  SEEDANCE_ASSIGN_OR_RETURN(auto nodes, ReadNodes(*node_text, spec.nodes_file, spec.gpus_per_node));
  int64_t total_gpus = 0;
  for (const Node& n : nodes) total_gpus += n.gpu_count;
  if (total_gpus == 0)
    return base::InvalidArgumentError("the node list has no GPUs", spec.nodes_file);
  auto pod_text = env.ReadFile(spec.pods_file);
  if (!pod_text.ok()) return pod_text.status().Annotate("cannot read the pod list");
  if (spec.protocol == "events") {
    MarkSpot(nodes, spec.spot_fraction);
    SEEDANCE_ASSIGN_OR_RETURN(auto jobs, EventJobs(spec, *pod_text, env));
    return RunEventExperiment(spec, nodes, jobs, progress);
  }
  if (IsPhillyJobs(*pod_text)) {
    return base::InvalidArgumentError(
        "the FGD protocol needs an Alibaba pod list; Philly jobs run under the events protocol",
        "pods");
  }
  SEEDANCE_ASSIGN_OR_RETURN(auto pods, ReadAlibabaPods(*pod_text, spec.pods_file));
  if (pods.empty()) {
    return base::InvalidArgumentError("no pods: the file has no data lines", spec.pods_file);
  }
  return RunFgdExperiment(spec, nodes, pods, progress);
}

}  // namespace seedance::sched
