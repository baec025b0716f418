// Cluster degradation diagnosis (feature PROBE-6; `seedancectl diagnose`): reads the Prometheus
// text of etcd, kube-apiserver, kube-scheduler, kubelets and node exporters (RDMA port counters)
// and names the degradation pattern, with the command that confirms it and the usual fix.
//
// Each source is one scrape (counters and histograms since its process started) or two scrapes
// `window_seconds` apart (their increase: what happened in the window, as rate() over it). Checks
// are measurements over a source with a threshold:
//   histogram checks   histogram_quantile(q, sum by (le) (buckets)), Prometheus's algorithm
//                      (histogram_quantile.h), optionally over some label values only
//   counter checks     the increase in the window (> 0 matches), or the total since start
//                      (> its own threshold: one leader election at start is normal)
//   gauge checks       the value now
// A pattern matches when any of its checks does. The thresholds and where they come from:
//   etcd WAL fsync p99 > 10 ms and backend commit p99 > 25 ms   etcd's hardware guidance
//   requests to etcd as the API server sees them, p99 > 100 ms  etcd's slow-request warning
//   API server mutating calls p99 > 1 s                         Kubernetes' API latency SLO
//   scheduler algorithm p99 > 100 ms, attempt p99 > 1 s         decided here (docs/design/node.md)
//   pod start p99 > 30 s                                        the degradation table (PROBE-6)
//   RDMA receive drops > 1,000 since start                      the degradation table (PROBE-6)
// When etcd's disk is slow, the API server, scheduler and leader findings it explains name it as
// their likely cause, and the root cause is listed first.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "seedance/base/prometheus_parse.h"
#include "seedance/base/report.h"

namespace seedance::k8s {

struct MetricsSource {
  std::string name;  // a file or URL, for the report
  base::PromText now;
  std::optional<base::PromText> before;  // the scrape `window_seconds` earlier
  double window_seconds = 0;
};

struct ClusterMeasurement {
  std::string source, check, component, what;  // what: "p99 of ...", "increase of ..."
  double value = 0;
  double threshold = 0;
  std::string unit;  // "s" or "" (a count)
  bool over = false;
  // The check could not be computed (a histogram with no observations in the window): neither
  // over nor clean.
  bool undetermined = false;
  double observations = 0;  // histogram checks: observations the quantile stands on
};

struct ClusterFinding {
  std::string pattern, severity, title, cause, fix;
  std::vector<std::string> confirm;   // commands, in order
  std::vector<std::string> evidence;  // "etcd.txt: p99 of WAL fsync 0.061 s > 0.01 s"
  std::string consequence_of;         // the pattern that likely causes this one, or ""
};

struct Diagnosis {
  std::vector<std::pair<std::string, std::vector<std::string>>> components;  // per source
  std::vector<ClusterMeasurement> measurements;
  std::vector<ClusterFinding> findings;  // root causes first
  double window_seconds = 0;             // 0: since each process started
};

// An error when no source holds any metric the checks read (pointed at the wrong thing).
base::StatusOr<Diagnosis> DiagnoseCluster(const std::vector<MetricsSource>& sources);

// {summary, basis, sources: [{source, components}], findings: [{pattern, severity, title,
// evidence, cause, confirm, fix, consequence_of}], measurements: [{source, check, value, unit,
// threshold, over, observations}]}.
// Whether some check had nothing to judge (a histogram with no observations): the diagnosis
// is then not clean even without findings.
bool Undetermined(const Diagnosis& d);

base::Report DiagnosisToReport(const Diagnosis& diagnosis);

}  // namespace seedance::k8s
