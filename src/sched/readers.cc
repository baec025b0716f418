#include "seedance/sched/readers.h"

#include <cmath>
#include <cstdio>
#include <unordered_set>

#include "seedance/base/civil_time.h"
#include "seedance/base/csv.h"
#include "seedance/base/parse.h"

namespace seedance::sched {
namespace {

using base::CsvRecord;
using base::CsvTable;

// The header must be exactly `want`, in order.
base::Status ExactHeader(const CsvTable& t, std::initializer_list<std::string_view> want) {
  const auto& h = t.header();
  bool same = h.size() == want.size();
  size_t i = 0;
  for (std::string_view w : want) {
    if (!same) break;
    same = h[i++] == w;
  }
  if (same) return base::OkStatus();
  std::string expected;
  for (std::string_view w : want) expected += (expected.empty() ? "" : ",") + std::string(w);
  return base::InvalidArgumentError("unexpected columns; expected '" + expected + "'",
                                    t.file() + ":1");
}

base::StatusOr<int64_t> IntIn(const CsvTable& t, const CsvRecord& r, size_t col, int64_t lo,
                              int64_t hi) {
  SEEDANCE_ASSIGN_OR_RETURN(int64_t v, t.Int(r, col));
  if (v < lo || v > hi) {
    return base::InvalidArgumentError("'" + t.header()[col] + "' must be in [" +
                                          std::to_string(lo) + ", " + std::to_string(hi) +
                                          "], got " + std::to_string(v),
                                      t.Where(r, col));
  }
  return v;
}

base::StatusOr<double> Number(const CsvTable& t, const CsvRecord& r, size_t col) {
  const std::string& s = r.fields[col];
  const std::optional<double> v = base::ParseFiniteDouble(s);
  if (!v) {
    return base::InvalidArgumentError("'" + t.header()[col] + "' must be a number, got '" + s + "'",
                                      t.Where(r, col));
  }
  return *v;
}

base::Status UniqueName(std::unordered_set<std::string>& seen, const CsvTable& t,
                        const CsvRecord& r, size_t col) {
  const std::string& name = r.fields[col];
  if (name.empty()) return base::InvalidArgumentError("empty name", t.Where(r, col));
  if (!seen.insert(name).second) {
    return base::InvalidArgumentError("duplicate name '" + name + "'", t.Where(r, col));
  }
  return base::OkStatus();
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) break;
    start = at + 1;
  }
  return out;
}

constexpr int64_t kMaxMilli = int64_t{1} << 40;

}  // namespace

base::StatusOr<std::vector<Node>> ReadAlibabaNodes(std::string_view text, const std::string& file) {
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::Parse(text, file));
  SEEDANCE_RETURN_IF_ERROR(ExactHeader(t, {"sn", "cpu_milli", "memory_mib", "gpu", "model"}));
  std::vector<Node> nodes;
  std::unordered_set<std::string> seen;
  for (const CsvRecord& r : t.records()) {
    SEEDANCE_RETURN_IF_ERROR(UniqueName(seen, t, r, 0));
    Node n;
    n.name = r.fields[0];
    SEEDANCE_ASSIGN_OR_RETURN(n.cpu_milli, IntIn(t, r, 1, 1, kMaxMilli));
    SEEDANCE_ASSIGN_OR_RETURN(n.memory_mib, IntIn(t, r, 2, 0, kMaxMilli));
    SEEDANCE_ASSIGN_OR_RETURN(int64_t gpus, IntIn(t, r, 3, 0, 1024));
    n.gpu_count = static_cast<int>(gpus);
    n.gpu_model = r.fields[4];
    if ((n.gpu_count == 0) != n.gpu_model.empty()) {
      return base::InvalidArgumentError(
          "'model' must be given exactly when the node has GPUs (gpu = " + std::to_string(gpus) +
              ")",
          t.Where(r, 4));
    }
    nodes.push_back(std::move(n));
  }
  return nodes;
}

base::StatusOr<std::vector<Pod>> ReadAlibabaPods(std::string_view text, const std::string& file) {
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::Parse(text, file));
  const bool full = t.header().size() == 11;
  if (full) {
    SEEDANCE_RETURN_IF_ERROR(
        ExactHeader(t, {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec",
                        "qos", "pod_phase", "creation_time", "deletion_time", "scheduled_time"}));
  } else {
    SEEDANCE_RETURN_IF_ERROR(
        ExactHeader(t, {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"}));
  }
  std::vector<Pod> pods;
  std::unordered_set<std::string> seen;
  for (const CsvRecord& r : t.records()) {
    SEEDANCE_RETURN_IF_ERROR(UniqueName(seen, t, r, 0));
    Pod p;
    p.name = r.fields[0];
    SEEDANCE_ASSIGN_OR_RETURN(p.cpu_milli, IntIn(t, r, 1, 0, kMaxMilli));
    SEEDANCE_ASSIGN_OR_RETURN(p.memory_mib, IntIn(t, r, 2, 0, kMaxMilli));
    SEEDANCE_ASSIGN_OR_RETURN(int64_t ng, IntIn(t, r, 3, 0, 1024));
    SEEDANCE_ASSIGN_OR_RETURN(int64_t gm, IntIn(t, r, 4, 0, 1000));
    p.num_gpu = static_cast<int>(ng);
    p.gpu_milli = static_cast<int>(gm);
    if ((p.num_gpu == 0) != (p.gpu_milli == 0)) {
      return base::InvalidArgumentError("'gpu_milli' must be 0 exactly when num_gpu is 0",
                                        t.Where(r, 4));
    }
    if (p.num_gpu > 1 && p.gpu_milli != 1000) {
      return base::InvalidArgumentError("a pod with several GPUs must take whole GPUs (1000)",
                                        t.Where(r, 4));
    }
    if (full) {
      if (!r.fields[5].empty()) p.gpu_models = Split(r.fields[5], '|');
      for (const auto& m : p.gpu_models) {
        if (m.empty())
          return base::InvalidArgumentError("empty GPU type in 'gpu_spec'", t.Where(r, 5));
      }
      SEEDANCE_ASSIGN_OR_RETURN(p.qos, ParseQos(r.fields[6], t.Where(r, 6)));
      p.phase = r.fields[7];
      if (p.phase != "Running" && p.phase != "Failed" && p.phase != "Pending" &&
          p.phase != "Succeeded") {
        return base::InvalidArgumentError(
            "'pod_phase' must be Running, Failed, Pending or Succeeded, got '" + p.phase + "'",
            t.Where(r, 7));
      }
      for (size_t col : {size_t{8}, size_t{9}, size_t{10}}) {
        if (r.fields[col].empty()) continue;
        SEEDANCE_ASSIGN_OR_RETURN(int64_t v, IntIn(t, r, col, 0, int64_t{1} << 40));
        (col == 8 ? p.creation_s : col == 9 ? p.deletion_s : p.scheduled_s) = v;
      }
      if (!p.creation_s) {
        return base::InvalidArgumentError("'creation_time' is required", t.Where(r, 8));
      }
      if (p.deletion_s && *p.deletion_s < *p.creation_s) {
        return base::InvalidArgumentError("'deletion_time' is before 'creation_time'",
                                          t.Where(r, 9));
      }
      if (p.scheduled_s && *p.scheduled_s < *p.creation_s) {
        return base::InvalidArgumentError("'scheduled_time' is before 'creation_time'",
                                          t.Where(r, 10));
      }
    }
    pods.push_back(std::move(p));
  }
  return pods;
}

base::StatusOr<std::vector<Job>> ReadPhillyJobs(std::string_view text, const std::string& file) {
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::Parse(text, file));
  SEEDANCE_RETURN_IF_ERROR(
      ExactHeader(t, {"timestamp", "duration", "num_gpus", "gpu_time", "cluster"}));
  std::vector<Job> jobs;
  jobs.reserve(t.records().size());
  for (const CsvRecord& r : t.records()) {
    Job j;
    const std::string& ts = r.fields[0];
    const std::optional<int64_t> submit = base::ParseCivilSeconds(ts);
    if (!submit || ts.size() != 19) {
      return base::InvalidArgumentError(
          "'timestamp' must be 'YYYY-MM-DD HH:MM:SS', got '" + ts + "'", t.Where(r, 0));
    }
    j.submit_s = *submit;
    SEEDANCE_ASSIGN_OR_RETURN(j.duration_s, Number(t, r, 1));
    if (j.duration_s < 0)
      return base::InvalidArgumentError("'duration' is negative", t.Where(r, 1));
    SEEDANCE_ASSIGN_OR_RETURN(int64_t g, IntIn(t, r, 2, 1, 1 << 20));
    j.num_gpus = static_cast<int>(g);
    SEEDANCE_ASSIGN_OR_RETURN(double gpu_time, Number(t, r, 3));
    if (std::fabs(gpu_time - j.duration_s * j.num_gpus) > 1e-6 * (1 + gpu_time)) {
      return base::InvalidArgumentError("'gpu_time' must equal duration x num_gpus", t.Where(r, 3));
    }
    j.vc = r.fields[4];
    if (j.vc.empty()) return base::InvalidArgumentError("empty 'cluster'", t.Where(r, 4));
    jobs.push_back(std::move(j));
  }
  return jobs;
}

base::StatusOr<std::map<std::string, double>> ReadJobUtilization(std::string_view text,
                                                                 const std::string& file) {
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::Parse(text, file));
  SEEDANCE_RETURN_IF_ERROR(ExactHeader(t, {"id", "gpu_util_pct"}));
  std::map<std::string, double> util;
  std::unordered_set<std::string> seen;
  for (const CsvRecord& r : t.records()) {
    SEEDANCE_RETURN_IF_ERROR(UniqueName(seen, t, r, 0));
    SEEDANCE_ASSIGN_OR_RETURN(double pct, Number(t, r, 1));
    if (!(pct >= 0 && pct <= 100)) {
      return base::InvalidArgumentError("'gpu_util_pct' must be within 0..100", t.Where(r, 1));
    }
    util[r.fields[0]] = pct;
  }
  return util;
}

base::StatusOr<std::vector<Node>> ReadPaiMachines(std::string_view text, const std::string& file) {
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::Parse(text, file));
  SEEDANCE_RETURN_IF_ERROR(
      ExactHeader(t, {"machine", "gpu_type", "cap_cpu", "cap_mem", "cap_gpu"}));
  std::vector<Node> nodes;
  std::unordered_set<std::string> seen;
  for (const CsvRecord& r : t.records()) {
    SEEDANCE_RETURN_IF_ERROR(UniqueName(seen, t, r, 0));
    Node n;
    n.name = r.fields[0];
    SEEDANCE_ASSIGN_OR_RETURN(int64_t cores, IntIn(t, r, 2, 1, 1 << 20));
    SEEDANCE_ASSIGN_OR_RETURN(int64_t gb, IntIn(t, r, 3, 0, 1 << 30));
    SEEDANCE_ASSIGN_OR_RETURN(int64_t gpus, IntIn(t, r, 4, 0, 1024));
    n.cpu_milli = cores * 1000;
    n.memory_mib = gb * 1024;
    n.gpu_count = static_cast<int>(gpus);
    const std::string& type = r.fields[1];
    if (type.empty()) return base::InvalidArgumentError("empty 'gpu_type'", t.Where(r, 1));
    if ((type == "CPU") != (gpus == 0)) {
      return base::InvalidArgumentError("'gpu_type' CPU goes with cap_gpu 0 and only with it",
                                        t.Where(r, 1));
    }
    if (type != "CPU") n.gpu_model = type;
    nodes.push_back(std::move(n));
  }
  return nodes;
}

}  // namespace seedance::sched
