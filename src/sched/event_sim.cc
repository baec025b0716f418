#include "seedance/sched/event_sim.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <queue>
#include <random>
#include <set>
#include <sstream>
#include <unordered_set>

#include "seedance/base/parse.h"
#include "seedance/sched/cluster.h"
#include "seedance/sched/framework.h"
#include "seedance/sched/policy.h"
#include "seedance/sched/qos_tiers.h"

namespace seedance::sched {

std::vector<EventJob> JobsFromPhilly(const std::vector<Job>& jobs, int gpus_per_node) {
  std::vector<EventJob> out;
  out.reserve(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    const Job& j = jobs[i];
    EventJob e;
    e.id = "philly-" + std::to_string(i);
    e.group = j.vc;
    e.submit_s = j.submit_s;
    e.duration_s = j.duration_s;
    int left = j.num_gpus;
    while (left > 0) {
      Pod p;
      p.name = e.id + "-" + std::to_string(e.members.size());
      p.num_gpu = std::min(left, gpus_per_node);
      p.gpu_milli = 1000;
      p.gang = (j.num_gpus + gpus_per_node - 1) / gpus_per_node;
      left -= p.num_gpu;
      e.members.push_back(std::move(p));
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<EventJob> JobsFromAlibaba(const std::vector<Pod>& pods) {
  std::vector<EventJob> out;
  out.reserve(pods.size());
  for (const Pod& p : pods) {
    EventJob e;
    e.id = p.name;
    e.group = std::string(QosName(p.qos));
    e.submit_s = p.creation_s.value_or(0);
    e.duration_s = p.deletion_s ? static_cast<double>(*p.deletion_s - e.submit_s) : -1.0;
    e.priority = (p.qos == Qos::kLatencySensitive || p.qos == Qos::kGuaranteed) ? 1 : 0;
    e.tier = TierOfQos(p.qos);
    e.members = {p};
    out.push_back(std::move(e));
  }
  return out;
}

base::StatusOr<std::vector<Node>> PhillyNodes(std::string_view text, const std::string& file,
                                              int gpus_per_node) {
  if (gpus_per_node < 1) return base::InvalidArgumentError("GPUs per node must be >= 1", file);
  std::vector<Node> nodes;
  std::unordered_set<std::string> vcs;
  std::istringstream in{std::string(text)};
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line_no == 1 && line.starts_with("\xEF\xBB\xBF")) line.erase(0, 3);  // a UTF-8 BOM
    if (line_no == 1) {
      if (line != "vc,node num") {
        return base::InvalidArgumentError("expected the header 'vc,node num'", file + ":1");
      }
      continue;
    }
    if (line.empty()) continue;
    const size_t comma = line.find(',');
    const std::string where = file + ":" + std::to_string(line_no);
    if (comma == std::string::npos || comma == 0) {
      return base::InvalidArgumentError("expected 'vc,node num'", where);
    }
    // A Philly VC holds at most a few hundred machines; a count past kMaxPhillyNodes (in one VC
    // or in all) cannot be a real cluster and would only exhaust memory.
    const std::optional<int64_t> count = base::ParseInt64(std::string_view(line).substr(comma + 1));
    if (!count || *count < 1 || *count > kMaxPhillyNodes) {
      return base::InvalidArgumentError(
          "node num: expected a whole number in [1, " + std::to_string(kMaxPhillyNodes) + "]",
          where + ": node num");
    }
    if (static_cast<int64_t>(nodes.size()) + *count > kMaxPhillyNodes) {
      return base::InvalidArgumentError(
          "the VCs hold more than " + std::to_string(kMaxPhillyNodes) + " nodes in all",
          where + ": node num");
    }
    const std::string vc = line.substr(0, comma);
    if (!vcs.insert(vc).second) {
      return base::InvalidArgumentError("VC '" + vc + "' is listed twice", where + ": vc");
    }
    for (int64_t i = 0; i < *count; ++i) {
      Node n;
      n.name = vc + "-" + std::to_string(i);
      n.cpu_milli = 1'000'000;  // Philly jobs carry no CPU or memory request
      n.memory_mib = 1 << 30;
      n.gpu_count = gpus_per_node;
      n.gpu_model = "philly";
      n.pool = vc;
      nodes.push_back(std::move(n));
    }
  }
  if (nodes.empty()) return base::InvalidArgumentError("no VC lines", file);
  return nodes;
}

namespace {

Percentiles Of(std::vector<double> v) {
  Percentiles p;
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  auto at = [&v](double q) {  // nearest rank
    const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
    return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
  };
  p.p50 = at(0.50);
  p.p90 = at(0.90);
  p.p99 = at(0.99);
  return p;
}

struct Event {
  double time;
  // 0 completion (frees resources first), 1 arrival, 2 node reclaimed, 3 node
  // back, 4 a long-tail job becomes due for consolidation (only wakes a pass)
  int kind;
  int64_t seq;
  size_t job;
  int epoch = 0;  // a completion of an earlier run of a preempted job is stale
  bool operator>(const Event& o) const {
    return std::tie(time, kind, seq) > std::tie(o.time, o.kind, o.seq);
  }
};

// Filters out reclaimed spot nodes, and on-demand nodes while a job tries
// spot capacity first.
class NodeFilter final : public FilterPlugin {
 public:
  NodeFilter(const std::vector<char>* down, const bool* spot_only, const std::vector<Node>* nodes)
      : down_(down), spot_only_(spot_only), nodes_(nodes) {}
  std::string_view name() const override { return "spot"; }
  bool Filter(const Cluster&, const Pod&, int node) const override {
    const size_t n = static_cast<size_t>(node);
    if ((*down_)[n]) return false;
    return !*spot_only_ || (*nodes_)[n].spot;
  }

 private:
  const std::vector<char>* down_;
  const bool* spot_only_;
  const std::vector<Node>* nodes_;
};

// A filter given as a function (for checks that need the run's own state).
class FunctionFilter final : public FilterPlugin {
 public:
  using Fn = std::function<bool(const Cluster&, const Pod&, int)>;
  FunctionFilter(std::string_view name, Fn fn) : name_(name), fn_(std::move(fn)) {}
  std::string_view name() const override { return name_; }
  bool Filter(const Cluster& cluster, const Pod& pod, int node) const override {
    return fn_(cluster, pod, node);
  }

 private:
  std::string_view name_;
  Fn fn_;
};

// A job's resource shape: jobs of one shape fit or fail alike.
using Shape = std::vector<std::tuple<int64_t, int64_t, int, int>>;

Shape ShapeOf(const EventJob& j) {
  Shape shape;
  for (const Pod& p : j.members)
    shape.emplace_back(p.cpu_milli, p.memory_mib, p.num_gpu, p.gpu_milli);
  return shape;
}

// Whether every member fits on `trial` (first fit, members bound as they go).
bool FitsGreedily(Cluster trial, const std::vector<Pod>& members) {
  for (const Pod& p : members) {
    bool placed = false;
    for (int n = 0; n < static_cast<int>(trial.nodes().size()) && !placed; ++n) {
      if (auto g = trial.Place(p, n)) {
        trial.Bind(p, n, *g);
        placed = true;
      }
    }
    if (!placed) return false;
  }
  return true;
}

struct Placement {
  std::vector<std::pair<int, std::vector<int>>> members;  // node, GPUs
};

}  // namespace

base::StatusOr<EventRun> RunEvents(const std::vector<Node>& nodes, std::vector<EventJob> jobs,
                                   const EventRunOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  if (jobs.empty()) return base::InvalidArgumentError("no jobs");
  std::vector<Pod> workload;  // built only for a policy that reads it (a copy of every pod)
  if (PolicyUsesWorkload(o.policy)) {
    for (const auto& j : jobs) workload.insert(workload.end(), j.members.begin(), j.members.end());
  }
  SEEDANCE_ASSIGN_OR_RETURN(auto policy, MakePolicy(o.policy, workload));
  Framework framework(std::move(policy));
  framework.SetTieBreak(o.ties);
  framework.EnableScoreCache(true);  // exact; used where the policy and filters allow
  Cluster cluster(nodes);
  if (cluster.total_gpu_milli() == 0) return base::InvalidArgumentError("the cluster has no GPUs");
  PrepareTieOrder(cluster, o.ties, o.seed);
  std::mt19937_64 rng(o.seed);
  // Stable order for equal submit times: by id.
  std::sort(jobs.begin(), jobs.end(), [](const EventJob& a, const EventJob& b) {
    return std::tie(a.submit_s, a.id) < std::tie(b.submit_s, b.id);
  });

  EventRun run;
  run.jobs = static_cast<int64_t>(jobs.size());
  // A job no empty cluster could hold never runs: count it, do not queue it.
  const Cluster empty_cluster(nodes);
  auto fits_empty = [&](const EventJob& j) { return FitsGreedily(empty_cluster, j.members); };
  std::map<Shape, bool> shape_fits;

  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  int64_t seq = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    events.push({static_cast<double>(jobs[i].submit_s), 1, seq++, i});
  }
  const double t0 = static_cast<double>(jobs.front().submit_s);
  // Waiting jobs in the order they are tried: tier when tiers are on, priority descending, then
  // submit time and id — which is the job's index, as `jobs` is sorted by them. An ordered set,
  // so that a pass reads only its head and an arrival costs O(log queue).
  auto rank = [&jobs, &o](size_t id) { return o.tiers ? static_cast<int>(jobs[id].tier) : 0; };
  using QueueKey = std::tuple<int, int, size_t>;
  auto queue_key = [&jobs, &rank](size_t id) { return QueueKey{rank(id), -jobs[id].priority, id}; };
  std::set<QueueKey> queue;
  std::vector<Placement> placed(jobs.size());
  std::vector<double> started_at(jobs.size(), -1);
  std::vector<double> jct, delay;
  std::map<std::string, std::vector<double>> group_delay;
  std::map<Tier, std::vector<double>> tier_delay;
  std::map<Tier, int64_t> tier_preempted;
  std::vector<int> preempted_times(jobs.size(), 0);
  std::map<std::string, int64_t> group_jobs;
  // Time-weighted GPU use.
  std::vector<std::pair<double, double>> use;  // (time, used fraction from then on)
  double used_area = 0, last_t = t0;

  // A gang: every member through the framework, or none (earlier members
  // are unscheduled when one fails).
  size_t placing = 0;  // the job being placed, for the over-commit filter
  auto try_place_on = [&](const EventJob& j, Placement& out) {
    placing = static_cast<size_t>(&j - jobs.data());
    out.members.clear();
    std::vector<Candidate> done;
    for (const Pod& p : j.members) {
      auto at = framework.Schedule(cluster, p, rng);
      if (!at) {
        for (size_t m = done.size(); m-- > 0;) framework.Unschedule(cluster, j.members[m], done[m]);
        out.members.clear();
        return false;
      }
      out.members.push_back({at->node, at->gpus});
      done.push_back(std::move(*at));
    }
    return true;
  };
  bool* spot_only_flag = nullptr;
  bool has_spot = false;
  // Cheapest first: spot nodes, then any node.
  auto try_place_spot_first = [&](const EventJob& j, Placement& out) {
    if (has_spot) {
      *spot_only_flag = true;
      const bool ok = try_place_on(j, out);
      *spot_only_flag = false;
      if (ok) return true;
    }
    return try_place_on(j, out);
  };
  // With over-commit a share first looks for a GPU where it runs without
  // contention, and only when there is none for one within the margins.
  // `contention_allowed` keeps the phase that placed the last job.
  bool contention_allowed = false;
  auto try_place = [&](const EventJob& j, Placement& out) {
    contention_allowed = false;
    if (try_place_spot_first(j, out)) return true;
    if (!o.overcommit) return false;
    contention_allowed = true;
    return try_place_spot_first(j, out);
  };

  // Quotas: the GPU of each pool; running jobs' use per group.
  std::map<std::string, int64_t> quota, group_used;
  if (o.quotas) {
    for (const Node& n : nodes) {
      if (!n.pool.empty()) quota[n.pool] += 1000LL * n.gpu_count;
    }
  }
  // Whether a job placed now counts as guaranteed (not preemptible).
  auto is_guaranteed = [&](const EventJob& j, int64_t demand) {
    const int64_t used = group_used[j.group] + demand;
    if (!o.tiers) return o.quotas && used <= quota[j.group];
    switch (j.tier) {
      case Tier::kGold:
        return true;
      case Tier::kBronze:
        return false;
      case Tier::kSilver:
        break;
    }
    const auto q = quota.find(j.group);
    const double base =
        static_cast<double>(q != quota.end() ? q->second : cluster.total_gpu_milli());
    const double load = static_cast<double>(cluster.used_gpu_milli()) /
                        static_cast<double>(cluster.total_gpu_milli());
    return static_cast<double>(used) <= SilverQuotaScale(load) * base;
  };
  std::vector<double> remaining(jobs.size()), segment_start(jobs.size(), -1);
  std::vector<char> consolidated(jobs.size(), 0);
  std::vector<double> shrunk_by(jobs.size(), 0);           // milli-GPU handed back by consolidation
  int64_t job_events = static_cast<int64_t>(jobs.size());  // arrivals and completions pending
  std::vector<int> epoch(jobs.size(), 0);
  std::vector<char> borrowing(jobs.size(), 0);
  for (size_t i = 0; i < jobs.size(); ++i) remaining[i] = jobs[i].duration_s;
  std::vector<char> forever(jobs.size());  // runs past the end of the trace
  for (size_t i = 0; i < jobs.size(); ++i) forever[i] = jobs[i].duration_s < 0;
  std::vector<size_t> running;              // ids, in start order
  std::vector<char> down(nodes.size(), 0);  // spot nodes reclaimed, for now

  // Over-commit: a share books request / margin; `request` keeps what it
  // asked for. Work is tracked at a rate: remaining[id] is the work left as
  // of mark[id], done at rate[id] (1 unless its GPU is contended).
  auto is_share = [&jobs](size_t id) {
    const auto& m = jobs[id].members;
    return m.size() == 1 && m[0].num_gpu == 1 && m[0].gpu_milli < 1000;
  };
  std::vector<int> request(jobs.size(), 0);
  // Only a share whose utilization is known is over-committed: nothing
  // says that one of unknown utilization leaves any of its request unused.
  auto book = [&](size_t id, int milli) {  // sets a share's request and booking
    request[id] = milli;
    jobs[id].members[0].gpu_milli =
        o.overcommit && jobs[id].gpu_util_pct >= 0
            ? static_cast<int>(std::ceil(milli / OvercommitMargin(jobs[id].tier)))
            : milli;
  };
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (is_share(i)) book(i, jobs[i].members[0].gpu_milli);
  }

  std::vector<double> rate(jobs.size(), 1.0), mark(jobs.size(), 0), seg_work(jobs.size(), 0);
  std::map<std::pair<int, int>, std::vector<size_t>> on_gpu;  // contended shares per GPU
  std::map<Tier, std::pair<double, double>> tier_share_s;     // (run, beyond margin) per tier
  double slowdown_area = 0;
  auto advance = [&](size_t id, double t) {  // brings remaining[id] to time t
    const double dt = t - mark[id];
    if (o.overcommit && is_share(id) && dt > 0) {
      run.share_run_s += dt;
      slowdown_area += dt / rate[id];
      auto& [ran, beyond] = tier_share_s[jobs[id].tier];
      ran += dt;
      if (rate[id] < 1) run.slowed_s += dt;
      if (1 / rate[id] > OvercommitMargin(jobs[id].tier) + 1e-9) {
        run.above_margin_s += dt;
        beyond += dt;
      }
    }
    // Clamped: rounding must not turn a finishing job into one that never ends.
    if (!forever[id]) remaining[id] = std::max(0.0, remaining[id] - dt * rate[id]);
    mark[id] = t;
  };
  auto push_completion = [&](size_t id, double t) {
    if (forever[id]) return;
    events.push({t + remaining[id] / rate[id], 0, seq++, id, epoch[id]});
    ++job_events;
  };
  auto busy_of = [&](size_t j) {  // a share's busy milli-GPU
    return request[j] * (jobs[j].gpu_util_pct >= 0 ? jobs[j].gpu_util_pct / 100 : 1.0);
  };
  auto gpu_busy = [&](std::pair<int, int> gpu) {
    double b = 0;
    if (auto it = on_gpu.find(gpu); it != on_gpu.end()) {
      for (size_t j : it->second) b += busy_of(j);
    }
    return b;
  };
  // Over-commit safety: may share `id` join GPU (node, g) of `at` (the
  // cluster, or a trial copy without `gone`)? The node must hold its CPU,
  // memory and booking, and the slowdown there after it joins must stay
  // within the margin of every share on the GPU, its own included — or, not
  // `contended`, there must be no slowdown at all.
  auto margin_ok = [&](size_t id, const Cluster& at, int node, int g, bool contended,
                       const std::vector<size_t>& gone = {}) {
    const Pod& pod = jobs[id].members[0];
    const NodeState& st = at.state(node);
    if (st.cpu_left < pod.cpu_milli || st.mem_left < pod.memory_mib ||
        st.gpu_left[static_cast<size_t>(g)] < pod.gpu_milli) {
      return false;
    }
    double limit = contended ? OvercommitMargin(jobs[id].tier) : 1.0;
    double busy = busy_of(id);
    if (auto it = on_gpu.find({node, g}); it != on_gpu.end()) {
      for (size_t j : it->second) {
        if (std::find(gone.begin(), gone.end(), j) != gone.end()) continue;
        limit = std::min(limit, OvercommitMargin(jobs[j].tier));
        busy += busy_of(j);
      }
    }
    return std::max(1.0, busy / 1000) <= limit + 1e-9;
  };
  // The shares on a GPU changed at t: every one there gets its new rate and
  // a new completion (the old one goes stale with the epoch).
  auto reshare = [&](std::pair<int, int> gpu, double t) {
    const auto& there = on_gpu[gpu];
    const double speed = 1 / std::max(1.0, gpu_busy(gpu) / 1000);
    for (size_t j : there) {
      advance(j, t);
      rate[j] = speed;
      ++epoch[j];
      push_completion(j, t);
    }
  };
  auto gpu_of = [&placed](size_t id) {
    return std::make_pair(placed[id].members[0].first, placed[id].members[0].second[0]);
  };
  auto demand_of = [&jobs](size_t id) {
    int64_t d = 0;
    for (const Pod& p : jobs[id].members) d += p.gpu_demand_milli();
    return d;
  };
  auto stop = [&](size_t id, double t) {  // frees a running job's resources
    advance(id, t);
    if (o.overcommit && is_share(id)) {
      auto& there = on_gpu[gpu_of(id)];
      there.erase(std::find(there.begin(), there.end(), id));
      reshare(gpu_of(id), t);
    }
    for (size_t m = 0; m < placed[id].members.size(); ++m) {
      cluster.Unbind(jobs[id].members[m], placed[id].members[m].first,
                     placed[id].members[m].second);
    }
    const double hours = (t - segment_start[id]) / 3600.0;
    for (size_t m = 0; m < placed[id].members.size(); ++m) {
      const double gpu_h =
          static_cast<double>(jobs[id].members[m].gpu_demand_milli()) / 1000.0 * hours;
      const bool spot = nodes[static_cast<size_t>(placed[id].members[m].first)].spot;
      run.gpu_hours += gpu_h;
      if (spot) run.spot_gpu_hours += gpu_h;
      run.cost_on_demand_gpu_hours += spot ? gpu_h * o.spot_price_ratio : gpu_h;
    }
    run.consolidation_freed_gpu_hours += shrunk_by[id] / 1000.0 * hours;
    group_used[jobs[id].group] -= demand_of(id);
    running.erase(std::find(running.begin(), running.end(), id));
    segment_start[id] = -1;
  };
  // Can `j` be placed once `victims` are gone? Tried on a copy, greedily.
  auto fits_without = [&](const EventJob& j, const std::vector<size_t>& victims) {
    Cluster trial = cluster;
    for (size_t v : victims) {
      for (size_t m = 0; m < placed[v].members.size(); ++m) {
        trial.Unbind(jobs[v].members[m], placed[v].members[m].first, placed[v].members[m].second);
      }
    }
    const size_t id = static_cast<size_t>(&j - jobs.data());
    if (!o.overcommit || !is_share(id)) return FitsGreedily(std::move(trial), j.members);
    // A share also needs a GPU whose contention stays within every margin
    // once the victims are gone.
    for (int n = 0; n < static_cast<int>(nodes.size()); ++n) {
      if (down[static_cast<size_t>(n)]) continue;
      for (int g = 0; g < nodes[static_cast<size_t>(n)].gpu_count; ++g) {
        if (margin_ok(id, trial, n, g, true, victims)) return true;
      }
    }
    return false;
  };

  // A placed job starts (or resumes) running at t.
  auto begin_segment = [&](size_t id, double t, bool guaranteed) {
    segment_start[id] = t;
    borrowing[id] = (o.quotas || o.tiers) && !guaranteed;
    group_used[jobs[id].group] += demand_of(id);
    running.push_back(id);
    mark[id] = t;
    seg_work[id] = remaining[id];
    rate[id] = 1;
    if (o.overcommit && is_share(id)) {
      // The filter passed the node for some GPU within the margins; the
      // policy may have picked another GPU there: move to one that is.
      auto& [node, gpus] = placed[id].members[0];
      const Pod& pod = jobs[id].members[0];
      cluster.Unbind(pod, node, gpus);  // margin_ok reads the GPUs without it
      if (!margin_ok(id, cluster, node, gpus[0], contention_allowed)) {
        for (int g = 0; g < nodes[static_cast<size_t>(node)].gpu_count; ++g) {
          if (margin_ok(id, cluster, node, g, contention_allowed)) {
            gpus = {g};
            break;
          }
        }
      }
      cluster.Bind(pod, node, gpus);
      on_gpu[gpu_of(id)].push_back(id);
      reshare(gpu_of(id), t);  // pushes its completion too
    } else {
      push_completion(id, t);
    }
    if (o.consolidate && !consolidated[id] && jobs[id].gpu_util_pct >= 0 &&
        jobs[id].gpu_util_pct < o.consolidate_below_pct) {
      events.push({t + o.consolidate_after_s, 4, seq++, id, epoch[id]});
    }
  };

  // A move (consolidation, redistribution): the running job is checkpointed
  // where it stands (no work lost), its resources are freed, and it will pay
  // a restore when it starts again. Returns whether it was guaranteed.
  auto checkpoint_out = [&](size_t id, double t) {
    const bool guaranteed = !borrowing[id];
    stop(id, t);  // brings remaining[id] to t
    ++epoch[id];
    if (!forever[id]) remaining[id] += o.restore_cost_s;
    return guaranteed;
  };

  // Consolidation: a long-tail job moves onto a small GPU share. Its
  // own freed resources always hold the smaller share, so the move cannot
  // fail; the policy may still put it elsewhere.
  auto consolidate_pass = [&](double t) {
    std::vector<size_t> movers;
    for (size_t r : running) {
      const EventJob& j = jobs[r];
      if (consolidated[r] || j.members.size() != 1 || j.gpu_util_pct < 0 ||
          j.gpu_util_pct >= o.consolidate_below_pct ||
          t - segment_start[r] < o.consolidate_after_s ||
          (is_share(r) ? request[r] : j.members[0].gpu_demand_milli()) <=
              o.consolidate_share_milli) {
        continue;
      }
      movers.push_back(r);
    }
    for (size_t r : movers) {
      const int64_t before = demand_of(r);
      const bool guaranteed = checkpoint_out(r, t);
      jobs[r].members[0].num_gpu = 1;
      book(r, o.consolidate_share_milli);
      if (!try_place(jobs[r], placed[r])) {
        return base::InternalError("consolidation could not place job " + jobs[r].id);
      }
      consolidated[r] = 1;
      shrunk_by[r] = static_cast<double>(before - demand_of(r));
      ++run.consolidations;
      begin_segment(r, t, guaranteed);
    }
    return base::OkStatus();
  };

  // Load redistribution between nodes (see event_sim.h).
  std::map<std::pair<int, int>, double> last_exchange;  // node pair -> time
  auto redistribute_pass = [&](double t) {
    const int node_count = static_cast<int>(nodes.size());
    std::vector<double> load(static_cast<size_t>(node_count), 0);
    for (const auto& [gpu, there] : on_gpu) {
      if (!there.empty()) load[static_cast<size_t>(gpu.first)] += gpu_busy(gpu);
    }
    double hottest = 0;
    for (int n = 0; n < node_count; ++n) {
      const int gpus = nodes[static_cast<size_t>(n)].gpu_count;
      load[static_cast<size_t>(n)] = gpus ? load[static_cast<size_t>(n)] / (1000.0 * gpus) : 0;
      hottest = std::max(hottest, load[static_cast<size_t>(n)]);
    }
    std::vector<std::pair<double, std::pair<int, int>>> hot;
    for (const auto& [gpu, there] : on_gpu) {
      if (there.size() > 1 && gpu_busy(gpu) > 1000) hot.push_back({gpu_busy(gpu), gpu});
    }
    std::sort(hot.rbegin(), hot.rend());
    for (const auto& [busy, gpu] : hot) {
      const auto& there = on_gpu[gpu];
      if (gpu_busy(gpu) <= 1000 || there.size() < 2) continue;  // relieved by an earlier move
      const size_t mover = *std::max_element(
          there.begin(), there.end(), [&](size_t a, size_t b) { return busy_of(a) < busy_of(b); });
      const int from = gpu.first;
      const Pod& pod = jobs[mover].members[0];
      // The least loaded eligible node with a GPU that takes the share
      // without contention.
      int best = -1, best_gpu = -1;
      for (int n = 0; n < node_count; ++n) {
        const auto un = static_cast<size_t>(n);
        if (n == from || down[un] ||
            load[un] > load[static_cast<size_t>(from)] - o.redistribute_gap * hottest) {
          continue;
        }
        const auto pair = std::minmax(from, n);
        if (auto it = last_exchange.find(pair);
            it != last_exchange.end() && t - it->second < o.redistribute_cooldown_s) {
          continue;
        }
        if (best >= 0 && load[un] >= load[static_cast<size_t>(best)]) continue;
        for (int g = 0; g < nodes[un].gpu_count; ++g) {
          if (margin_ok(mover, cluster, n, g, false)) {  // runs there uncontended
            best = n;
            best_gpu = g;
            break;
          }
        }
      }
      if (best < 0) continue;
      const bool guaranteed = checkpoint_out(mover, t);
      const std::vector<int> to = {best_gpu};
      cluster.Bind(pod, best, to);
      placed[mover].members = {{best, to}};
      last_exchange[std::minmax(from, best)] = t;
      const double busy_gpus = busy_of(mover) / 1000.0;
      load[static_cast<size_t>(from)] -= busy_gpus / nodes[static_cast<size_t>(from)].gpu_count;
      load[static_cast<size_t>(best)] += busy_gpus / nodes[static_cast<size_t>(best)].gpu_count;
      ++run.redistributions;
      begin_segment(mover, t, guaranteed);
    }
  };

  // Preemption of a running job: the work since its last checkpoint is lost,
  // a restore is added, and it goes back to the queue (through `requeue`).
  auto preempt = [&](size_t v, double t, std::vector<size_t>& requeue) {
    advance(v, t);
    // Work done in this run (wall time when the job has no end).
    const double ran = forever[v] ? t - segment_start[v] : seg_work[v] - remaining[v];
    const double kept_work =
        o.checkpoint_interval_s > 0
            ? std::floor(ran / o.checkpoint_interval_s) * o.checkpoint_interval_s
            : 0;
    run.lost_gpu_hours += static_cast<double>(demand_of(v)) / 1000.0 * (ran - kept_work) / 3600.0;
    if (!forever[v]) remaining[v] = seg_work[v] - kept_work + o.restore_cost_s;
    stop(v, t);
    ++epoch[v];
    ++run.preemptions;
    ++tier_preempted[jobs[v].tier];
    if (++preempted_times[v] == o.max_retries) ++run.retry_limited;
    requeue.push_back(v);
  };

  // Spot reclaims: a Poisson process per spot node, on its own generator.
  std::mt19937_64 spot_rng(o.seed ^ 0x5b07ull);
  std::exponential_distribution<double> gap(
      o.spot_interruptions_per_day > 0 ? o.spot_interruptions_per_day / 86400.0 : 1.0);
  if (o.spot_interruptions_per_day > 0) {
    for (size_t n = 0; n < nodes.size(); ++n) {
      if (nodes[n].spot) events.push({t0 + gap(spot_rng), 2, seq++, n});
    }
  }
  bool spot_only = false;
  bool any_spot = false;
  for (const Node& n : nodes) any_spot |= n.spot;
  // Without spot nodes the filter passes every node: leave it out, so that incremental scoring
  // (which no filter may accompany) can choose.
  if (any_spot) framework.AddFilter(std::make_unique<NodeFilter>(&down, &spot_only, &nodes));
  if (o.overcommit) {
    framework.AddFilter(std::make_unique<FunctionFilter>(
        "overcommit-margin", [&](const Cluster&, const Pod&, int node) {
          if (!is_share(placing)) return true;
          for (int g = 0; g < nodes[static_cast<size_t>(node)].gpu_count; ++g) {
            if (margin_ok(placing, cluster, node, g, contention_allowed)) return true;
          }
          return false;
        }));
  }
  spot_only_flag = &spot_only;
  has_spot = any_spot;

  double now = t0;
  // The last arrival or live completion: a stale completion (of a run that
  // was preempted or re-rated) can still pop later and must not extend the run.
  double last_effect = t0;
  // A run in which preemptions undo work faster than jobs make it (spot
  // reclaims more often than checkpoints) would never end: stop it.
  const int64_t max_events =
      o.max_events > 0 ? o.max_events : 100 * static_cast<int64_t>(jobs.size()) + 1'000'000;
  while (!events.empty() && job_events > 0) {
    if (run.events > max_events) {
      return base::ResourceExhaustedError(
          "the run has not ended after " + std::to_string(run.events) + " events (" +
          std::to_string(run.preemptions) + " preemptions, " + std::to_string(run.completed) +
          " of " + std::to_string(run.jobs) +
          " jobs completed): preemptions undo work faster than jobs make it; checkpoint more "
          "often or lower the spot reclaim rate");
    }
    now = events.top().time;
    // Everything that happens at `now`.
    while (!events.empty() && events.top().time == now) {
      const Event e = events.top();
      events.pop();
      ++run.events;
      if (e.kind == 2) {  // a spot node is reclaimed: its jobs are preempted
        ++run.spot_interruptions;
        down[e.job] = 1;
        std::vector<size_t> victims;
        for (size_t r : running) {
          for (const auto& member : placed[r].members) {
            if (member.first == static_cast<int>(e.job)) {
              victims.push_back(r);
              break;
            }
          }
        }
        std::vector<size_t> back;
        // A victim's old completion stays queued (and counts down when it
        // pops, ignored by its epoch); its rerun pushes a new one.
        for (size_t v : victims) preempt(v, now, back);
        for (size_t v : back) queue.insert(queue_key(v));
        events.push({now + o.spot_recovery_s, 3, seq++, e.job});
        continue;
      }
      if (e.kind == 4) continue;  // the pass below consolidates what is due
      if (e.kind == 3) {          // the node is back; its next reclaim is drawn
        down[e.job] = 0;
        events.push({now + gap(spot_rng), 2, seq++, e.job});
        continue;
      }
      --job_events;
      EventJob& j = jobs[e.job];
      if (e.kind == 1) {  // arrival
        if (!j.members.empty() && j.members[0].gpu_models.empty()) {
          auto [it, inserted] = shape_fits.try_emplace(ShapeOf(j), false);
          if (inserted) it->second = fits_empty(j);
          if (!it->second) {
            ++run.never_fit;
            continue;
          }
        } else if (!fits_empty(j)) {
          ++run.never_fit;
          continue;
        }
        queue.insert(queue_key(e.job));
        last_effect = now;
      } else if (e.epoch == epoch[e.job] && segment_start[e.job] >= 0) {  // completion
        stop(e.job, now);
        ++run.completed;
        jct.push_back(now - static_cast<double>(j.submit_s));
        last_effect = now;
      }
    }
    if (o.consolidate) SEEDANCE_RETURN_IF_ERROR(consolidate_pass(now));
    // Scheduling pass over the head of the queue.
    // Within one pass resources only shrink, so a shape that failed fails
    // again: remember failed shapes, and skip jobs asking for more GPU than
    // is free at all (unless preemption may free it).
    // Only the first backfill_window jobs are looked at; a job placed leaves the queue, a job
    // preempted in the pass joins it after the pass.
    std::vector<size_t> requeued;
    size_t looked = 0;
    std::set<Shape> failed;
    for (auto next = queue.begin();
         next != queue.end() && looked < static_cast<size_t>(o.backfill_window);) {
      const auto here = next++;
      const size_t id = std::get<2>(*here);
      ++looked;
      EventJob& j = jobs[id];
      const int64_t demand = demand_of(id);
      const Shape shape = ShapeOf(j);
      const bool guaranteed = is_guaranteed(j, demand);
      const bool typed = !j.members.empty() && !j.members[0].gpu_models.empty();
      bool placed_now = false;
      if (demand <= cluster.total_gpu_milli() - cluster.used_gpu_milli() &&
          (typed || !failed.count(shape))) {
        placed_now = try_place(j, placed[id]);
        if (!placed_now && !typed) failed.insert(shape);
      }
      if (!placed_now && guaranteed) {
        // Preempt borrowers of a lower tier or of other groups: lowest
        // tier first, then the most recently started.
        std::vector<size_t> order;
        for (auto it = running.rbegin(); it != running.rend(); ++it) {
          const size_t r = *it;
          if (!borrowing[r] || (o.max_retries >= 0 && preempted_times[r] >= o.max_retries)) {
            continue;
          }
          if (jobs[r].group == j.group && rank(r) <= rank(id)) continue;
          order.push_back(r);
        }
        std::stable_sort(order.begin(), order.end(),
                         [&](size_t a, size_t b) { return rank(a) > rank(b); });
        std::vector<size_t> victims;
        bool room = false;
        for (size_t r : order) {
          if (room) break;
          victims.push_back(r);
          room = fits_without(j, victims);
        }
        if (room) {
          for (size_t v : victims) preempt(v, now, requeued);
          placed_now = try_place(j, placed[id]);
        }
      }
      if (!placed_now) continue;
      queue.erase(here);
      if (started_at[id] < 0) {
        ++run.started;
        started_at[id] = now;
        const double d = now - static_cast<double>(j.submit_s);
        delay.push_back(d);
        group_delay[j.group].push_back(d);
        tier_delay[j.tier].push_back(d);
      }
      begin_segment(id, now, guaranteed);
    }
    for (size_t v : requeued) queue.insert(queue_key(v));
    // After placing: contention the pass just created is relieved at once.
    if (o.overcommit && o.redistribute) redistribute_pass(now);
    if (o.check_invariants) SEEDANCE_RETURN_IF_ERROR(cluster.Check());
    const double used = static_cast<double>(cluster.used_gpu_milli()) /
                        static_cast<double>(cluster.total_gpu_milli());
    used_area += (now - last_t) * (use.empty() ? 0 : use.back().second);
    last_t = now;
    use.push_back({now, used});
  }
  now = last_effect;
  for (size_t id : std::vector<size_t>(running)) stop(id, now);  // still running at the end
  for (const auto& j : jobs) ++group_jobs[j.group];
  run.still_queued = static_cast<int64_t>(queue.size());
  run.makespan_s = now - t0;
  run.mean_gpu_used_pct = run.makespan_s > 0 ? 100 * used_area / run.makespan_s : 0;
  // 100 slices of time-weighted use.
  run.gpu_used_pct_over_time.assign(100, 0.0);
  if (run.makespan_s > 0) {
    // use[k].second holds on [use[k].first, use[k+1].first).
    const double slice = run.makespan_s / 100;
    size_t k = 0;
    for (size_t sl = 0; sl < 100; ++sl) {
      const double lo = t0 + slice * static_cast<double>(sl);
      const double hi = sl == 99 ? now : t0 + slice * static_cast<double>(sl + 1);
      while (k + 1 < use.size() && use[k + 1].first <= lo) ++k;
      double area = 0;
      for (size_t m = k; m + 1 < use.size() && use[m].first < hi; ++m) {
        const double a0 = std::max(lo, use[m].first), a1 = std::min(hi, use[m + 1].first);
        if (a1 > a0) area += use[m].second * (a1 - a0);
      }
      run.gpu_used_pct_over_time[sl] = hi > lo ? 100 * area / (hi - lo) : 0;
    }
  }
  run.jct_s = Of(jct);
  run.queue_delay_s = Of(delay);
  for (const auto& [g, n] : group_jobs) {
    GroupFigures f{g, n, Of(group_delay[g]), -1};
    if (auto slo = o.slo_queue_delay_s.find(g); slo != o.slo_queue_delay_s.end()) {
      const auto& d = group_delay[g];
      const auto met =
          std::count_if(d.begin(), d.end(), [&](double x) { return x <= slo->second; });
      f.slo_attainment_pct = 100.0 * static_cast<double>(met) / static_cast<double>(n);
    }
    run.groups.push_back(std::move(f));
  }
  if (run.share_run_s > 0) run.mean_share_slowdown = slowdown_area / run.share_run_s;
  if (o.tiers) {
    std::map<Tier, int64_t> tier_jobs;
    for (const auto& j : jobs) ++tier_jobs[j.tier];
    for (const auto& [t, n] : tier_jobs) {
      TierFigures f;
      f.tier = t;
      f.jobs = n;
      const auto& d = tier_delay[t];
      f.started = static_cast<int64_t>(d.size());
      f.queue_delay_s = Of(d);
      f.preemptions = tier_preempted[t];
      f.share_run_s = tier_share_s[t].first;
      f.above_margin_s = tier_share_s[t].second;
      if (auto slo = o.slo_queue_delay_s.find(std::string(TierName(t)));
          slo != o.slo_queue_delay_s.end()) {
        const auto met =
            std::count_if(d.begin(), d.end(), [&](double x) { return x <= slo->second; });
        f.slo_attainment_pct = 100.0 * static_cast<double>(met) / static_cast<double>(n);
      }
      run.tiers.push_back(f);
    }
  }
  run.nodes_examined = framework.nodes_examined();
  run.runtime_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return run;
}

}  // namespace seedance::sched
