#include "seedance/k8s/diagnose.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "seedance/k8s/histogram_quantile.h"

namespace seedance::k8s {
namespace {

enum class DiagnoseCheckKind { kHistogram, kCounter, kGaugeAbove, kGaugeZero };

struct DiagnoseCheck {
  const char* id;
  const char* component;
  DiagnoseCheckKind kind;
  std::vector<const char*> families;  // the first one a source has is read
  const char* what;
  double quantile = 0;          // histogram checks
  double threshold = 0;         // histogram: seconds; gauge: value
  double total_threshold = 0;   // counters without a window: total > this
  const char* label = nullptr;  // only samples whose `label` is one of `values`
  std::vector<const char*> values = {};
};

const std::vector<DiagnoseCheck>& DiagnoseChecks() {
  static const std::vector<DiagnoseCheck> checks = {
      {"etcd_wal_fsync_p99",
       "etcd",
       DiagnoseCheckKind::kHistogram,
       {"etcd_disk_wal_fsync_duration_seconds"},
       "p99 of WAL fsync",
       0.99,
       0.010},
      {"etcd_backend_commit_p99",
       "etcd",
       DiagnoseCheckKind::kHistogram,
       {"etcd_disk_backend_commit_duration_seconds"},
       "p99 of backend commit",
       0.99,
       0.025},
      {"etcd_leader_changes",
       "etcd",
       DiagnoseCheckKind::kCounter,
       {"etcd_server_leader_changes_seen_total"},
       "leader changes",
       0,
       0,
       1},
      {"etcd_has_leader",
       "etcd",
       DiagnoseCheckKind::kGaugeZero,
       {"etcd_server_has_leader"},
       "has a leader (1) or not (0)"},
      {"etcd_heartbeat_failures",
       "etcd",
       DiagnoseCheckKind::kCounter,
       {"etcd_server_heartbeat_send_failures_total"},
       "heartbeat send failures",
       0,
       0,
       0},
      {"etcd_slow_applies",
       "etcd",
       DiagnoseCheckKind::kCounter,
       {"etcd_server_slow_apply_total"},
       "applies slower than 100 ms",
       0,
       0,
       0},
      {"apiserver_mutating_p99",
       "kube-apiserver",
       DiagnoseCheckKind::kHistogram,
       {"apiserver_request_duration_seconds"},
       "p99 of mutating API calls",
       0.99,
       1.0,
       0,
       "verb",
       {"POST", "PUT", "PATCH", "DELETE"}},
      {"apiserver_etcd_p99",
       "kube-apiserver",
       DiagnoseCheckKind::kHistogram,
       {"etcd_request_duration_seconds"},
       "p99 of requests to etcd",
       0.99,
       0.1},
      {"scheduler_algorithm_p99",
       "kube-scheduler",
       DiagnoseCheckKind::kHistogram,
       {"scheduler_scheduling_algorithm_duration_seconds"},
       "p99 of the scheduling algorithm",
       0.99,
       0.1},
      {"scheduler_attempt_p99",
       "kube-scheduler",
       DiagnoseCheckKind::kHistogram,
       {"scheduler_scheduling_attempt_duration_seconds",
        "scheduler_e2e_scheduling_duration_seconds"},
       "p99 of a scheduling attempt",
       0.99,
       1.0},
      {"scheduler_binding_p99",
       "kube-scheduler",
       DiagnoseCheckKind::kHistogram,
       {"scheduler_binding_duration_seconds"},
       "p99 of binding",
       0.99,
       1.0},
      {"scheduler_unschedulable_pods",
       "kube-scheduler",
       DiagnoseCheckKind::kGaugeAbove,
       {"scheduler_pending_pods"},
       "pods in the unschedulable queue",
       0,
       0,
       0,
       "queue",
       {"unschedulable"}},
      {"kubelet_pod_start_p99",
       "kubelet",
       DiagnoseCheckKind::kHistogram,
       {"kubelet_pod_start_duration_seconds"},
       "p99 of pod start",
       0.99,
       30.0},
      {"kubelet_runtime_errors",
       "kubelet",
       DiagnoseCheckKind::kCounter,
       {"kubelet_runtime_operations_errors_total"},
       "container runtime operation errors",
       0,
       0,
       0},
      {"rdma_buffer_overruns",
       "rdma",
       DiagnoseCheckKind::kCounter,
       {"node_infiniband_port_excessive_buffer_overrun_errors_total"},
       "receive buffer overruns",
       0,
       0,
       1000},
      {"rdma_receive_discards",
       "rdma",
       DiagnoseCheckKind::kCounter,
       {"node_infiniband_port_discards_received_total"},
       "received packets discarded",
       0,
       0,
       1000},
      {"rdma_receive_errors",
       "rdma",
       DiagnoseCheckKind::kCounter,
       {"node_infiniband_port_errors_received_total"},
       "receive errors",
       0,
       0,
       1000},
  };
  return checks;
}

struct DiagnosePattern {
  const char* id;
  const char* severity;
  const char* title;
  std::vector<const char*> checks;  // any of them
  const char* cause;
  std::vector<const char*> confirm;
  const char* fix;
};

const std::vector<DiagnosePattern>& DiagnosePatterns() {
  static const std::vector<DiagnosePattern> patterns = {
      {"etcd-slow-disk",
       "critical",
       "etcd's disk is slow",
       {"etcd_wal_fsync_p99", "etcd_backend_commit_p99"},
       "every etcd write waits for its WAL fsync and backend commit; a slow disk delays every "
       "API write, lease renewal and leader heartbeat behind it",
       {"fio --rw=write --ioengine=sync --fdatasync=1 --directory=<etcd data dir> --size=22m "
        "--bs=2300 --name=etcd-fsync   # the fdatasync p99 it prints should be under 10 ms",
        "etcdctl check perf"},
       "put etcd's data directory (or its --wal-dir) on a dedicated SSD or NVMe disk, keep other "
       "I/O off that disk, and raise etcd's I/O priority (ionice -c2 -n0)"},
      {"etcd-leader-churn",
       "critical",
       "etcd changes leader (checkpoint timeouts)",
       {"etcd_leader_changes", "etcd_has_leader", "etcd_heartbeat_failures"},
       "while etcd elects a leader, lease renewals fail: leases expire, controllers lose their "
       "leader election, and jobs that checkpoint through the API time out",
       {"kubectl logs -n kube-system etcd-0 | grep \"lease expired\"",
        "etcdctl endpoint status --write-out=table"},
       "find why heartbeats are missed (a slow disk, a starved CPU, the network between members); "
       "set --heartbeat-interval near the members' round trip and --election-timeout to 10x it"},
      {"etcd-slow-apply",
       "warning",
       "etcd applies requests slowly",
       {"etcd_slow_applies"},
       "applies over 100 ms: etcd's disk or CPU is saturated, or requests are large (lists of "
       "many objects)",
       {"kubectl logs -n kube-system etcd-0 | grep \"took too long\""},
       "fix etcd's disk or CPU first; page large lists (limit/continue) in clients"},
      {"apiserver-slow-writes",
       "warning",
       "the API server is slow",
       {"apiserver_mutating_p99", "apiserver_etcd_p99"},
       "API calls wait on etcd (see the etcd findings), on admission webhooks, or on API priority "
       "and fairness queues",
       {"kubectl get --raw /metrics | grep -E "
        "'apiserver_request_duration_seconds_bucket|etcd_request_duration_seconds_bucket'"},
       "fix etcd first when it is slow; otherwise look at webhook latency "
       "(apiserver_admission_webhook_admission_duration_seconds) and flow-control rejections"},
      {"scheduler-slow-algorithm",
       "warning",
       "the scheduler's filters and scores are slow",
       {"scheduler_algorithm_p99"},
       "each pod's filter and score pass takes long: many nodes scored, heavy plugins, or a slow "
       "scheduler extender",
       {"curl -s http://<scheduler>/metrics | grep "
        "scheduler_framework_extension_point_duration_seconds_bucket"},
       "lower percentageOfNodesToScore, disable plugins the cluster does not need, and check the "
       "extender's own latency"},
      {"scheduler-slow-attempts",
       "warning",
       "scheduling attempts are slow",
       {"scheduler_attempt_p99", "scheduler_binding_p99"},
       "attempts (or their binding) take long while the algorithm is fast: binding waits for the "
       "API server and etcd",
       {"curl -s http://<scheduler>/metrics | grep -E "
        "'scheduler_binding_duration_seconds_bucket|scheduler_e2e_scheduling_duration_seconds_"
        "bucket'"},
       "fix the API server and etcd latency it waits on"},
      {"pods-unschedulable",
       "warning",
       "pods wait as unschedulable",
       {"scheduler_unschedulable_pods"},
       "no node fits them: requests above free capacity, taints, affinity, or quota",
       {"kubectl get pods -A --field-selector=status.phase=Pending",
        "kubectl describe pod <pod>   # its events name the filters that failed"},
       "free or add capacity, or relax the pods' constraints"},
      {"pod-start-cri-timeout",
       "critical",
       "pods start slowly (over 30 s)",
       {"kubelet_pod_start_p99", "kubelet_runtime_errors"},
       "the CNI plugin's calls into the container runtime time out (containerd's socket "
       "blocked), so sandboxes are retried",
       {"systemctl status containerd | grep \"timeout\"",
        "journalctl -u containerd --since -1h | grep -i timeout"},
       "restart or upgrade containerd; check the CNI plugin's own logs and its IP pool"},
      {"rdma-receive-drops",
       "critical",
       "RDMA receive queues drop packets",
       {"rdma_buffer_overruns", "rdma_receive_discards", "rdma_receive_errors"},
       "receive queues overflow: buffers are not posted fast enough, or flow control (PFC/ECN) "
       "is off, so collectives retransmit and stall",
       {"rdma qp show | awk '$3 ~ /RECV/ && $8 > 1000 {print \"QP:\", $1, \"RQ_DROPS:\", $8}'",
        "rdma statistic show"},
       "enable PFC/ECN end to end, and give NCCL more receive buffers (NCCL_IB_QPS_PER_CONNECTION, "
       "NCCL_BUFFSIZE)"},
  };
  return patterns;
}

// Findings the slow disk explains when both match.
bool ExplainedBySlowDisk(std::string_view pattern) {
  return pattern == "etcd-leader-churn" || pattern == "etcd-slow-apply" ||
         pattern == "apiserver-slow-writes" || pattern == "scheduler-slow-attempts";
}

bool DiagnoseSelected(const base::PromSample& s, const DiagnoseCheck& c) {
  if (c.label == nullptr) return true;
  const std::string_view v = s.Label(c.label);
  return std::any_of(c.values.begin(), c.values.end(), [&](const char* x) { return v == x; });
}

bool DiagnoseHasFamily(const base::PromText& text, std::string_view family) {
  const std::string bucket = std::string(family) + "_bucket";
  return std::any_of(text.samples.begin(), text.samples.end(), [&](const base::PromSample& s) {
    return s.name == family || s.name == bucket;
  });
}

std::vector<HistogramSeries> DiagnoseFiltered(std::vector<HistogramSeries> series,
                                              const DiagnoseCheck& c) {
  if (c.label == nullptr) return series;
  std::erase_if(series, [&](const HistogramSeries& h) {
    std::string_view v;
    for (const auto& [k, val] : h.labels) {
      if (k == c.label) v = val;
    }
    return std::none_of(c.values.begin(), c.values.end(), [&](const char* x) { return v == x; });
  });
  return series;
}

// The sum over selected samples of a counter or gauge family.
double DiagnoseSumOf(const base::PromText& text, std::string_view family, const DiagnoseCheck& c) {
  double total = 0;
  for (const base::PromSample& s : text.samples) {
    if (s.name == family && DiagnoseSelected(s, c)) total += s.value;
  }
  return total;
}

std::optional<ClusterMeasurement> DiagnoseMeasure(const MetricsSource& src,
                                                  const DiagnoseCheck& c) {
  const char* family = nullptr;
  for (const char* f : c.families) {
    if (DiagnoseHasFamily(src.now, f)) {
      family = f;
      break;
    }
  }
  if (family == nullptr) return std::nullopt;
  ClusterMeasurement m;
  m.source = src.name;
  m.check = c.id;
  m.component = c.component;
  m.what = std::string(c.what) + " (" + family + ")";
  switch (c.kind) {
    case DiagnoseCheckKind::kHistogram: {
      std::vector<HistogramSeries> now = DiagnoseFiltered(CollectHistograms(src.now, family), c);
      if (src.before) {
        std::vector<HistogramSeries> before =
            DiagnoseFiltered(CollectHistograms(*src.before, family), c);
        for (HistogramSeries& h : now) {
          const auto it = std::find_if(before.begin(), before.end(), [&](const HistogramSeries& b) {
            return b.labels == h.labels;
          });
          h = Increase(h, it == before.end() ? nullptr : &*it);
        }
      }
      const HistogramSeries total = SumByLe(now);
      m.observations = total.count;
      m.unit = "s";
      m.threshold = c.threshold;
      m.value = BucketQuantile(c.quantile, total.buckets);
      m.undetermined = std::isnan(m.value);
      m.over = !m.undetermined && m.value > c.threshold;
      break;
    }
    case DiagnoseCheckKind::kCounter: {
      const double now = DiagnoseSumOf(src.now, family, c);
      if (src.before) {
        const double before = DiagnoseSumOf(*src.before, family, c);
        m.value = now >= before ? now - before : now;  // a restart: the new total
        m.what = "increase of " + m.what;
        m.threshold = 0;
      } else {
        m.value = now;
        m.what = "total of " + m.what;
        m.threshold = c.total_threshold;
      }
      m.over = m.value > m.threshold;
      break;
    }
    case DiagnoseCheckKind::kGaugeAbove:
      m.value = DiagnoseSumOf(src.now, family, c);
      m.threshold = c.threshold;
      m.over = m.value > m.threshold;
      break;
    case DiagnoseCheckKind::kGaugeZero:
      m.value = DiagnoseSumOf(src.now, family, c);
      m.threshold = 1;  // below 1: no leader
      m.over = m.value < 1;
      break;
  }
  return m;
}

// Four significant digits: "0.06123 s", "3".
std::string DiagnoseFigure(double v, const std::string& unit) {
  if (std::isnan(v)) return "no observations";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf + (unit.empty() ? std::string() : " " + unit);
}

}  // namespace

base::StatusOr<Diagnosis> DiagnoseCluster(const std::vector<MetricsSource>& sources) {
  Diagnosis d;
  for (const MetricsSource& src : sources) {
    if (src.before) d.window_seconds = src.window_seconds;
    std::set<std::string> components;
    for (const DiagnoseCheck& c : DiagnoseChecks()) {
      if (c.kind != DiagnoseCheckKind::kHistogram) continue;
      for (const char* family : c.families) {
        SEEDANCE_RETURN_IF_ERROR(CheckHistograms(src.now, family, src.name));
        if (src.before) {
          SEEDANCE_RETURN_IF_ERROR(
              CheckHistograms(*src.before, family, src.name + " (the earlier scrape)"));
        }
      }
    }
    for (const DiagnoseCheck& c : DiagnoseChecks()) {
      std::optional<ClusterMeasurement> m = DiagnoseMeasure(src, c);
      if (!m) continue;
      components.insert(m->component);
      d.measurements.push_back(std::move(*m));
    }
    d.components.emplace_back(src.name,
                              std::vector<std::string>(components.begin(), components.end()));
  }
  if (d.measurements.empty()) {
    std::string names;
    for (const MetricsSource& s : sources) names += (names.empty() ? "" : ", ") + s.name;
    return base::FailedPreconditionError(
        "no etcd, kube-apiserver, kube-scheduler, kubelet or node-exporter InfiniBand metrics in " +
        names + "; point --metrics at those components' /metrics");
  }
  for (const DiagnosePattern& p : DiagnosePatterns()) {
    ClusterFinding f;
    for (const ClusterMeasurement& m : d.measurements) {
      if (!m.over || std::find_if(p.checks.begin(), p.checks.end(), [&](const char* id) {
                       return m.check == id;
                     }) == p.checks.end()) {
        continue;
      }
      std::string rel = m.check == "etcd_has_leader" ? " < " : " > ";
      f.evidence.push_back(m.source + ": " + m.what + " " + DiagnoseFigure(m.value, m.unit) + rel +
                           DiagnoseFigure(m.threshold, m.unit));
    }
    if (f.evidence.empty()) continue;
    f.pattern = p.id;
    f.severity = p.severity;
    f.title = p.title;
    f.cause = p.cause;
    f.fix = p.fix;
    f.confirm.assign(p.confirm.begin(), p.confirm.end());
    d.findings.push_back(std::move(f));
  }
  const bool slow_disk =
      std::any_of(d.findings.begin(), d.findings.end(),
                  [](const ClusterFinding& f) { return f.pattern == "etcd-slow-disk"; });
  if (slow_disk) {
    for (ClusterFinding& f : d.findings) {
      if (ExplainedBySlowDisk(f.pattern)) f.consequence_of = "etcd-slow-disk";
    }
  }
  // Root causes first, then by severity; otherwise the table's order.
  std::stable_sort(
      d.findings.begin(), d.findings.end(), [](const ClusterFinding& a, const ClusterFinding& b) {
        const auto rank = [](const ClusterFinding& f) {
          return (f.consequence_of.empty() ? 0 : 2) + (f.severity == "critical" ? 0 : 1);
        };
        return rank(a) < rank(b);
      });
  return d;
}

bool Undetermined(const Diagnosis& d) {
  return std::any_of(d.measurements.begin(), d.measurements.end(),
                     [](const ClusterMeasurement& m) { return m.undetermined; });
}

base::Report DiagnosisToReport(const Diagnosis& d) {
  base::Report r;
  std::string undetermined;
  size_t n_undetermined = 0;
  for (const ClusterMeasurement& m : d.measurements) {
    if (!m.undetermined) continue;
    ++n_undetermined;
    undetermined += (undetermined.empty() ? "" : ", ") + m.source + ": " + m.check;
  }
  if (d.findings.empty() && n_undetermined > 0) {
    // Not clean: what could not be measured may be what is wrong.
    r["summary"] = "undetermined: no degradation pattern matched, but " +
                   std::to_string(n_undetermined) + " of " + std::to_string(d.measurements.size()) +
                   " checks could not be computed (no observations in the histogram, or only its "
                   "+Inf bucket): " +
                   undetermined;
  } else if (d.findings.empty()) {
    r["summary"] = "clean: no degradation pattern matched (" +
                   std::to_string(d.measurements.size()) + " measurements)";
  } else {
    std::string ids;
    for (const ClusterFinding& f : d.findings) ids += (ids.empty() ? "" : ", ") + f.pattern;
    r["summary"] = std::to_string(d.findings.size()) + " degradation pattern" +
                   (d.findings.size() == 1 ? "" : "s") + " matched: " + ids;
  }
  r["basis"] = d.window_seconds > 0
                   ? "increase over a window of " + DiagnoseFigure(d.window_seconds, "s")
                   : std::string("totals since each process started (one scrape each)");
  r["sources"] = base::Report::array();
  for (const auto& [source, components] : d.components) {
    base::Report s;
    s["source"] = source;
    std::string joined;
    for (const std::string& c : components) joined += (joined.empty() ? "" : ",") + c;
    s["components"] = joined.empty() ? "none recognised" : joined;
    r["sources"].push_back(s);
  }
  // Keyed by pattern, root causes first: the table form prints each as a block of lines.
  r["findings"] = base::Report::object();
  for (const ClusterFinding& f : d.findings) {
    base::Report j;
    j["severity"] = f.severity;
    j["title"] = f.title;
    if (!f.consequence_of.empty()) j["consequence_of"] = f.consequence_of;  // no empty row
    j["evidence"] = f.evidence;
    j["cause"] = f.cause;
    j["confirm"] = f.confirm;
    j["fix"] = f.fix;
    r["findings"][f.pattern] = j;
  }
  r["measurements"] = base::Report::array();
  for (const ClusterMeasurement& m : d.measurements) {
    base::Report j;
    j["source"] = m.source;
    j["check"] = m.check;
    j["value"] = std::isnan(m.value) ? base::Report(nullptr) : base::Report(m.value);
    j["unit"] = m.unit;
    j["threshold"] = m.threshold;
    j["over"] = m.over;
    j["undetermined"] = m.undetermined;
    j["observations"] = m.observations;
    r["measurements"].push_back(j);
  }
  return r;
}

}  // namespace seedance::k8s
