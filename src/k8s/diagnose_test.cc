#include "seedance/k8s/diagnose.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "seedance/base/prometheus_text.h"
#include "seedance/base/report.h"

namespace seedance::k8s {
namespace {

const double kEtcdBounds[] = {0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256};

// An etcd /metrics page whose WAL fsyncs take about `fsync_s` each (all in one bucket).
std::string EtcdText(double fsync_s, uint64_t syncs, double leader_changes, double slow_applies,
                     double has_leader = 1) {
  base::PrometheusWriter w;
  std::vector<uint64_t> cumulative;
  for (double b : kEtcdBounds) cumulative.push_back(fsync_s <= b ? syncs : 0);
  cumulative.push_back(syncs);
  w.Family("etcd_disk_wal_fsync_duration_seconds", "histogram", "fsync");
  w.Histogram({}, kEtcdBounds, cumulative, fsync_s * static_cast<double>(syncs));
  w.Family("etcd_disk_backend_commit_duration_seconds", "histogram", "commit");
  w.Histogram({}, kEtcdBounds, cumulative, fsync_s * static_cast<double>(syncs));
  w.Family("etcd_server_leader_changes_seen_total", "counter", "x");
  w.Sample({}, leader_changes);
  w.Family("etcd_server_has_leader", "gauge", "x");
  w.Sample({}, has_leader);
  w.Family("etcd_server_slow_apply_total", "counter", "x");
  w.Sample({}, slow_applies);
  return w.str();
}

std::string ApiserverText(double write_s) {
  base::PrometheusWriter w;
  const double bounds[] = {0.05, 0.1, 0.5, 1, 2, 5};
  std::vector<uint64_t> writes, reads;
  for (double b : bounds) {
    writes.push_back(write_s <= b ? 100 : 0);
    reads.push_back(100);
  }
  writes.push_back(100);
  reads.push_back(100);
  w.Family("apiserver_request_duration_seconds", "histogram", "x");
  w.Histogram({{"verb", "POST"}}, bounds, writes, 1);
  w.Histogram({{"verb", "GET"}}, bounds, reads, 1);
  return w.str();
}

MetricsSource Source(const std::string& name, const std::string& text) {
  base::StatusOr<base::PromText> parsed = base::ParsePrometheusText(text, name);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  MetricsSource s;
  s.name = name;
  s.now = *parsed;
  return s;
}

std::vector<std::string> Patterns(const Diagnosis& d) {
  std::vector<std::string> ids;
  for (const ClusterFinding& f : d.findings) ids.push_back(f.pattern);
  return ids;
}

TEST(Diagnose, ACleanClusterIsClean) {
  base::StatusOr<Diagnosis> d = DiagnoseCluster(
      {Source("etcd", EtcdText(0.0015, 500, 1, 0)), Source("apiserver", ApiserverText(0.03))});
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_TRUE(d->findings.empty());
  const base::Report r = DiagnosisToReport(*d);
  EXPECT_EQ(r["summary"].get<std::string>().rfind("clean", 0), 0u) << r["summary"];
  EXPECT_EQ(r["sources"][0]["components"], "etcd");
  EXPECT_EQ(r["sources"][1]["components"], "kube-apiserver");
}

TEST(Diagnose, ASlowDiskIsTheRootOfTheApiServersSlowWrites) {
  base::StatusOr<Diagnosis> d = DiagnoseCluster(
      {Source("api.txt", ApiserverText(2)), Source("etcd.txt", EtcdText(0.05, 500, 1, 3))});
  ASSERT_TRUE(d.ok());
  // Root cause first; the consequences name it.
  EXPECT_EQ(Patterns(*d), (std::vector<std::string>{"etcd-slow-disk", "etcd-slow-apply",
                                                    "apiserver-slow-writes"}));
  EXPECT_EQ(d->findings[0].consequence_of, "");
  EXPECT_EQ(d->findings[1].consequence_of, "etcd-slow-disk");
  EXPECT_EQ(d->findings[2].consequence_of, "etcd-slow-disk");
  ASSERT_EQ(d->findings[0].evidence.size(), 2u);  // WAL fsync and backend commit
  EXPECT_NE(d->findings[0].evidence[0].find("etcd.txt: p99 of WAL fsync"), std::string::npos)
      << d->findings[0].evidence[0];
  EXPECT_NE(d->findings[0].confirm[0].find("fio"), std::string::npos);
  // Only mutating verbs count: the GETs stay fast.
  EXPECT_NE(d->findings[2].evidence[0].find("mutating"), std::string::npos);
  // The report: a root cause has no consequence_of row at all; a consequence names its root.
  const base::Report r = DiagnosisToReport(*d);
  EXPECT_FALSE(r["findings"]["etcd-slow-disk"].contains("consequence_of"));
  EXPECT_EQ(r["findings"]["etcd-slow-apply"]["consequence_of"], "etcd-slow-disk");
  // A measurement row shows the value of what it is named for: etcd has a leader (1).
  bool seen = false;
  for (const base::Report& m : r["measurements"]) {
    if (m["source"] != "etcd.txt" || m["check"] != "etcd_has_leader") continue;
    seen = true;
    EXPECT_EQ(m["value"], 1.0);
    EXPECT_EQ(m["over"], false);
  }
  EXPECT_TRUE(seen);
}

// A histogram that is malformed hides what the well-formed one shows (a slow disk here): each
// class is an error naming the file and line, never a "clean" verdict.
TEST(Diagnose, MalformedHistogramsAreErrorsWithTheLine) {
  const std::string slow = EtcdText(0.05, 500, 1, 0);
  ASSERT_FALSE(DiagnoseCluster({Source("etcd.txt", slow)})->findings.empty());
  const std::string bucket = "etcd_disk_wal_fsync_duration_seconds_bucket";
  // The line of the first sample of `name` whose text contains `needle`, 1-based.
  auto line_of = [&](const std::string& needle) {
    size_t pos = slow.find(needle);
    return 1 + static_cast<int>(std::count(slow.begin(), slow.begin() + pos, '\n'));
  };
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string t = slow;
    const size_t pos = t.find(from);
    EXPECT_NE(pos, std::string::npos) << from;
    t.replace(pos, from.size(), to);
    return t;
  };
  const std::string first = bucket + "{le=\"0.001\"} 0\n";
  const std::string inf = bucket + "{le=\"+Inf\"} 500\n";
  struct Case {
    std::string what, text, message;
    int line;
  };
  const std::vector<Case> cases = {
      {"a duplicated bucket", replace(first, first + first), "appears twice", line_of(first) + 1},
      {"a NaN count", replace(first, bucket + "{le=\"0.001\"} NaN\n"), "finite", line_of(first)},
      {"a negative count", replace(first, bucket + "{le=\"0.001\"} -1\n"), "finite",
       line_of(first)},
      {"counts that fall", replace(first, bucket + "{le=\"0.001\"} 900\n"), "fall",
       line_of(bucket + "{le=\"0.002\"}")},
      {"no +Inf bucket", replace(inf, ""), "+Inf", line_of(first)},
      {"no le", replace(first, bucket + "{quantile=\"x\"} 0\n"), "le", line_of(first)},
  };
  for (const Case& c : cases) {
    base::StatusOr<Diagnosis> d = DiagnoseCluster({Source("etcd.txt", c.text)});
    ASSERT_FALSE(d.ok()) << c.what;
    EXPECT_EQ(d.status().where(), "etcd.txt:" + std::to_string(c.line)) << c.what;
    EXPECT_NE(d.status().message().find(c.message), std::string::npos)
        << c.what << ": " << d.status().ToString();
  }
  // The earlier scrape of a window is checked too.
  MetricsSource windowed = Source("etcd.txt", slow);
  windowed.before = Source("etcd.txt", cases[0].text).now;
  windowed.window_seconds = 10;
  EXPECT_FALSE(DiagnoseCluster({windowed}).ok());
}

// A check with nothing to judge (no observations) makes the verdict "undetermined", not "clean".
TEST(Diagnose, NoObservationsIsUndeterminedNotClean) {
  base::StatusOr<Diagnosis> d = DiagnoseCluster({Source("etcd", EtcdText(0.001, 0, 1, 0))});
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_TRUE(d->findings.empty());
  EXPECT_TRUE(Undetermined(*d));
  const base::Report r = DiagnosisToReport(*d);
  EXPECT_EQ(r["summary"].get<std::string>().rfind("undetermined", 0), 0u) << r["summary"];
  EXPECT_NE(r["summary"].get<std::string>().find("etcd: etcd_wal_fsync_p99"), std::string::npos)
      << r["summary"];
  bool any = false;
  for (const auto& m : r["measurements"]) any = any || m["undetermined"].get<bool>();
  EXPECT_TRUE(any);
  EXPECT_FALSE(Undetermined(*DiagnoseCluster({Source("etcd", EtcdText(0.001, 10, 1, 0))})));
}

TEST(Diagnose, LeaderChangesAreChurnBeyondTheFirstElection) {
  base::StatusOr<Diagnosis> one = DiagnoseCluster({Source("etcd", EtcdText(0.001, 10, 1, 0))});
  EXPECT_TRUE(one->findings.empty());
  base::StatusOr<Diagnosis> many = DiagnoseCluster({Source("etcd", EtcdText(0.001, 10, 4, 0))});
  ASSERT_EQ(Patterns(*many), std::vector<std::string>{"etcd-leader-churn"});
  EXPECT_NE(many->findings[0].confirm[0].find("lease expired"), std::string::npos);
  base::StatusOr<Diagnosis> none = DiagnoseCluster({Source("etcd", EtcdText(0.001, 10, 1, 0, 0))});
  EXPECT_EQ(Patterns(*none), std::vector<std::string>{"etcd-leader-churn"});
}

TEST(Diagnose, AWindowLooksOnlyAtWhatHappenedInIt) {
  // 1,000 slow fsyncs long ago, 2,000 fast ones in the window: the window is clean.
  MetricsSource s = Source("http://etcd/metrics", EtcdText(0.05, 1000, 3, 5));
  base::PrometheusWriter w;
  // Then 2,000 fsyncs of 1.5 ms: <= 0.002 but not <= 0.001.
  std::vector<uint64_t> cumulative;
  for (double b : kEtcdBounds)
    cumulative.push_back((b >= 0.002 ? 2000 : 0) + (b >= 0.064 ? 1000 : 0));
  cumulative.push_back(3000);
  w.Family("etcd_disk_wal_fsync_duration_seconds", "histogram", "fsync");
  w.Histogram({}, kEtcdBounds, cumulative, 0);
  w.Family("etcd_server_leader_changes_seen_total", "counter", "x");
  w.Sample({}, 3);
  w.Family("etcd_server_slow_apply_total", "counter", "x");
  w.Sample({}, 5);
  s.before = s.now;
  s.now = *base::ParsePrometheusText(w.str(), "later");
  s.window_seconds = 10;
  base::StatusOr<Diagnosis> d = DiagnoseCluster({s});
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->findings.empty()) << d->findings[0].evidence[0];
  EXPECT_EQ(DiagnosisToReport(*d)["basis"], "increase over a window of 10 s");
  for (const ClusterMeasurement& m : d->measurements) {
    if (m.check == "etcd_wal_fsync_p99") {
      EXPECT_EQ(m.observations, 2000);
      EXPECT_GT(m.value, 0.001);
      EXPECT_LE(m.value, 0.002);
    }
  }
}

TEST(Diagnose, KubeletAndRdmaPatternsFromTheDegradationTable) {
  base::PrometheusWriter w;
  const double bounds[] = {1, 5, 30, 60};
  const uint64_t slow[] = {0, 10, 20, 100, 100};
  w.Family("kubelet_pod_start_duration_seconds", "histogram", "x");
  w.Histogram({}, bounds, slow, 4000);
  w.Family("node_infiniband_port_excessive_buffer_overrun_errors_total", "counter", "x");
  w.Sample({{"device", "mlx5_0"}, {"port", "1"}}, 700);
  w.Sample({{"device", "mlx5_1"}, {"port", "1"}}, 600);
  base::StatusOr<Diagnosis> d = DiagnoseCluster({Source("node.txt", w.str())});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(Patterns(*d),
            (std::vector<std::string>{"pod-start-cri-timeout", "rdma-receive-drops"}));
  EXPECT_NE(d->findings[0].confirm[0].find("systemctl status containerd"), std::string::npos);
  EXPECT_NE(d->findings[1].confirm[0].find("rdma qp show"), std::string::npos);
}

TEST(Diagnose, MetricsOfSomethingElseAreAnError) {
  base::StatusOr<Diagnosis> d = DiagnoseCluster({Source("nginx.txt", "nginx_up 1\n")});
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().ToString().find("nginx.txt"), std::string::npos);
}

}  // namespace
}  // namespace seedance::k8s
