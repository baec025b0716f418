#include "seedance/cost/bench_compare.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "seedance/base/csv.h"
#include "seedance/base/enum_names.h"
#include "seedance/base/parse.h"
#include "seedance/cost/stats.h"

namespace seedance::cost {
namespace {

using base::Report;
using Json = nlohmann::json;

constexpr base::EnumTable<CompareMetric, 2> kMetricNames = {
    {{CompareMetric::kRealTime, "real_time"}, {CompareMetric::kCpuTime, "cpu_time"}}};

// Nanoseconds per unit of Google Benchmark's time_unit.
base::StatusOr<double> NanosecondsPer(const Json& entry, const std::string& where) {
  if (!entry.contains("time_unit")) return 1.0;  // the library's default unit
  const Json& unit = entry["time_unit"];
  if (unit.is_string()) {
    const auto& u = unit.get_ref<const std::string&>();
    if (u == "ns") return 1.0;
    if (u == "us") return 1e3;
    if (u == "ms") return 1e6;
    if (u == "s") return 1e9;
  }
  return base::InvalidArgumentError("expected time_unit ns, us, ms or s, got " + unit.dump(),
                                    where + ".time_unit");
}

base::StatusOr<double> FiniteNumber(const Json& entry, const char* key, const std::string& where) {
  if (!entry.contains(key)) return base::InvalidArgumentError("missing", where + "." + key);
  const Json& v = entry[key];
  if (!v.is_number() || !std::isfinite(v.get<double>())) {
    return base::InvalidArgumentError("expected a finite number, got " + v.dump(),
                                      where + "." + key);
  }
  return v.get<double>();
}

base::StatusOr<SampleSet> ReadGoogleBenchmark(const Json& doc, const std::string& file) {
  SampleSet set{file, "google-benchmark", {}};
  const Json& list = doc["benchmarks"];
  if (!list.is_array()) {
    return base::InvalidArgumentError("expected an array", file + ": benchmarks");
  }
  std::map<std::string, size_t> index;
  size_t aggregates = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string where = file + ": benchmarks[" + std::to_string(i) + "]";
    const Json& e = list[i];
    if (!e.is_object()) return base::InvalidArgumentError("expected an object", where);
    if (e.contains("run_type") && e["run_type"] != "iteration") {
      ++aggregates;
      continue;
    }
    if (e.value("error_occurred", false)) continue;
    const char* name_key = e.contains("run_name") ? "run_name" : "name";
    if (!e.contains(name_key) || !e[name_key].is_string()) {
      return base::InvalidArgumentError("expected a string", where + "." + name_key);
    }
    const std::string name = e[name_key].get<std::string>();
    SEEDANCE_ASSIGN_OR_RETURN(const double scale, NanosecondsPer(e, where));
    SEEDANCE_ASSIGN_OR_RETURN(const double real, FiniteNumber(e, "real_time", where));
    SEEDANCE_ASSIGN_OR_RETURN(const double cpu, FiniteNumber(e, "cpu_time", where));
    auto [it, added] = index.emplace(name, set.benchmarks.size());
    if (added) set.benchmarks.push_back({name, {}, {}});
    BenchmarkSamples& b = set.benchmarks[it->second];
    b.real_time.push_back(real * scale);
    b.cpu_time.push_back(cpu * scale);
  }
  if (set.benchmarks.empty() && aggregates > 0) {
    return base::InvalidArgumentError(
        "the file holds aggregate rows only (mean, median, ...), not the repetitions the tests "
        "need: run the benchmark with --benchmark_repetitions=N and without "
        "--benchmark_report_aggregates_only",
        file);
  }
  return set;
}

base::StatusOr<SampleSet> ReadJsonSamples(const Json& doc, const std::string& file) {
  SampleSet set{file, "json-samples", {}};
  for (const auto& [name, values] : doc.items()) {
    const std::string where = file + ": " + name;
    if (!values.is_array() || values.empty()) {
      return base::InvalidArgumentError(
          values.is_array() ? "the sample is empty" : "expected an array of numbers", where);
    }
    BenchmarkSamples b{name, {}, {}};
    for (size_t i = 0; i < values.size(); ++i) {
      if (!values[i].is_number() || !std::isfinite(values[i].get<double>())) {
        return base::InvalidArgumentError("expected a finite number, got " + values[i].dump(),
                                          where + "[" + std::to_string(i) + "]");
      }
      b.real_time.push_back(values[i].get<double>());
    }
    set.benchmarks.push_back(std::move(b));
  }
  return set;
}

base::StatusOr<SampleSet> ReadCsvSamples(std::string_view text, const std::string& file) {
  SEEDANCE_ASSIGN_OR_RETURN(const base::CsvTable table, base::CsvTable::Parse(text, file));
  SEEDANCE_RETURN_IF_ERROR(table.CheckColumns({"name", "value"}, {"name", "value"}));
  const size_t name_col = *table.Column("name");
  const size_t value_col = *table.Column("value");
  SampleSet set{file, "csv-samples", {}};
  std::map<std::string, size_t> index;
  for (const base::CsvRecord& r : table.records()) {
    const auto v = base::ParseFiniteDouble(r.fields[value_col]);
    if (!v) {
      return base::InvalidArgumentError(
          "value must be a finite number, got '" + r.fields[value_col] + "'",
          table.Where(r, value_col));
    }
    const std::string& name = r.fields[name_col];
    if (name.empty()) return base::InvalidArgumentError("name is empty", table.Where(r, name_col));
    auto [it, added] = index.emplace(name, set.benchmarks.size());
    if (added) set.benchmarks.push_back({name, {}, {}});
    set.benchmarks[it->second].real_time.push_back(*v);
  }
  return set;
}

// A number for the report: finite values as they are, anything else as null.
Report Num(double v) { return std::isfinite(v) ? Report(v) : Report(nullptr); }

}  // namespace

std::string_view CompareMetricName(CompareMetric metric) {
  return base::EnumName(kMetricNames, metric);
}
base::StatusOr<CompareMetric> ParseCompareMetric(std::string_view text, std::string_view where) {
  return base::ParseEnum(kMetricNames, text, where);
}

base::StatusOr<SampleSet> ReadSamples(std::string_view text, const std::string& file) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) {
    return base::InvalidArgumentError("the file is empty", file);
  }
  if (text[first] != '{') return ReadCsvSamples(text, file);
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const Json::exception& e) {  // parse_error, and out_of_range for a number too big
    std::string what = e.what();
    const size_t at = what.find("] ");  // drop nlohmann's "[json.exception.parse_error.101] "
    return base::InvalidArgumentError(
        "malformed JSON: " + (at == std::string::npos ? what : what.substr(at + 2)), file);
  }
  if (doc.contains("benchmarks")) return ReadGoogleBenchmark(doc, file);
  return ReadJsonSamples(doc, file);
}

base::StatusOr<Report> CompareSamples(const SampleSet& a, const SampleSet& b,
                                      const CompareOptions& o) {
  if (!(o.alpha > 0 && o.alpha < 1)) {
    return base::InvalidArgumentError("expected a level in (0, 1), got " + std::to_string(o.alpha),
                                      "alpha");
  }
  if (!(o.noise_threshold >= 0) || !std::isfinite(o.noise_threshold)) {
    return base::InvalidArgumentError(
        "expected a finite share >= 0, got " + std::to_string(o.noise_threshold),
        "noise_threshold");
  }
  if (o.metric == CompareMetric::kCpuTime) {
    for (const SampleSet* s : {&a, &b}) {
      if (s->format != "google-benchmark") {
        return base::InvalidArgumentError(
            "cpu_time needs Google Benchmark JSON; this file has plain samples", s->file);
      }
    }
  }
  if (o.filter_a.empty() != o.filter_b.empty()) {
    return base::InvalidArgumentError("filter_a and filter_b go together", "filter_a");
  }
  if (!o.filter_a.empty()) {
    // Keep each side's matches, renamed so the two variants meet under one name.
    const std::string tag = "[" + o.filter_a + " vs " + o.filter_b + "]";
    auto keep = [&](const SampleSet& in, const std::string& filter) {
      SampleSet out{in.file, in.format, {}};
      for (const BenchmarkSamples& bench : in.benchmarks) {
        const size_t at = bench.name.find(filter);
        if (at == std::string::npos) continue;
        BenchmarkSamples renamed = bench;
        renamed.name.replace(at, filter.size(), tag);
        out.benchmarks.push_back(std::move(renamed));
      }
      return out;
    };
    CompareOptions plain = o;
    plain.filter_a.clear();
    plain.filter_b.clear();
    SEEDANCE_ASSIGN_OR_RETURN(Report r,
                              CompareSamples(keep(a, o.filter_a), keep(b, o.filter_b), plain));
    r["filter_a"] = o.filter_a;
    r["filter_b"] = o.filter_b;
    return r;
  }
  auto values = [&](const BenchmarkSamples& s) -> const std::vector<double>& {
    return o.metric == CompareMetric::kCpuTime ? s.cpu_time : s.real_time;
  };
  std::map<std::string, const BenchmarkSamples*> in_b;
  for (const auto& s : b.benchmarks) in_b[s.name] = &s;

  Report report = Report::object();
  report["a"] = a.file;
  report["b"] = b.file;
  report["format_a"] = a.format;
  report["format_b"] = b.format;
  report["metric"] = CompareMetricName(o.metric);
  report["lower_is_better"] = !o.higher_is_better;
  report["alpha"] = o.alpha;
  report["noise_threshold"] = o.noise_threshold;
  report["confidence"] = o.confidence;
  report["resamples"] = o.resamples;
  report["seed"] = o.seed;
  Report rows = Report::array();
  Report warnings = Report::array();
  Report only_a = Report::array();
  double log_ratio_sum = 0;
  int ratios = 0;
  int fewer_than_recommended = 0;
  for (const auto& sa : a.benchmarks) {
    auto it = in_b.find(sa.name);
    if (it == in_b.end()) {
      only_a.push_back(sa.name);
      continue;
    }
    const std::vector<double>& xa = values(sa);
    const std::vector<double>& xb = values(*it->second);
    in_b.erase(it);
    Report row = Report::object();
    row["name"] = sa.name;
    row["verdict"] = nullptr;  // second, so that the default table shows it: set below
    row["samples_a"] = xa.size();
    row["samples_b"] = xb.size();
    const double ma = Median(xa), mb = Median(xb);
    row["median_a"] = Num(ma);
    row["median_b"] = Num(mb);
    const double change = ma != 0 ? mb / ma - 1.0 : std::nan("");
    row["change"] = Num(change);
    if (std::isfinite(change) && ma > 0 && mb > 0) {
      log_ratio_sum += std::log(mb / ma);
      ++ratios;
    }
    if (xa.size() < 2 || xb.size() < 2) {
      row["change_ci_low"] = nullptr;
      row["change_ci_high"] = nullptr;
      row["p_value"] = nullptr;
      row["verdict"] = "too few samples";
      rows.push_back(std::move(row));
      continue;
    }
    if (static_cast<int>(std::min(xa.size(), xb.size())) < o.recommended_repetitions) {
      ++fewer_than_recommended;
    }
    SEEDANCE_ASSIGN_OR_RETURN(const MannWhitneyResult u, MannWhitneyU(xa, xb));
    BootstrapOptions bo;
    bo.statistic = BootstrapStatistic::kMedian;
    bo.method = BootstrapMethod::kBca;
    bo.confidence = o.confidence;
    bo.resamples = o.resamples;
    bo.seed = o.seed;
    // The interval of median(B) / median(A); BCa falls back to the percentile interval where it
    // is undefined (every resample on one side, as with constant samples).
    auto ci = ma != 0 ? BootstrapRatioCi(xb, xa, bo)
                      : base::StatusOr<ConfidenceInterval>(base::InvalidArgumentError("zero"));
    if (!ci.ok() && ma != 0) {
      bo.method = BootstrapMethod::kPercentile;
      ci = BootstrapRatioCi(xb, xa, bo);
    }
    const double low = ci.ok() ? ci->low - 1.0 : std::nan("");
    const double high = ci.ok() ? ci->high - 1.0 : std::nan("");
    row["change_ci_low"] = Num(low);
    row["change_ci_high"] = Num(high);
    row["p_value"] = u.p;
    const bool significant =
        u.p < o.alpha && ci.ok() && (low > 0 || high < 0) && std::fabs(change) >= o.noise_threshold;
    const bool better = o.higher_is_better ? change > 0 : change < 0;
    row["verdict"] = !significant ? "within noise" : better ? "faster" : "slower";
    rows.push_back(std::move(row));
  }
  Report only_b = Report::array();
  for (const auto& sb : b.benchmarks) {
    if (in_b.count(sb.name) != 0) only_b.push_back(sb.name);
  }
  if (fewer_than_recommended > 0) {
    warnings.push_back(std::to_string(fewer_than_recommended) + " benchmark(s) have fewer than " +
                       std::to_string(o.recommended_repetitions) +
                       " repetitions on a side: the U test may miss a real change (run with "
                       "--benchmark_repetitions=" +
                       std::to_string(o.recommended_repetitions) + " or more)");
  }
  if (rows.empty()) warnings.push_back("no benchmark name is in both files");
  report["benchmarks"] = std::move(rows);
  report["geomean_ratio"] = ratios > 0 ? Report(std::exp(log_ratio_sum / ratios)) : Report(nullptr);
  report["only_in_a"] = std::move(only_a);
  report["only_in_b"] = std::move(only_b);
  report["warnings"] = std::move(warnings);
  return report;
}

}  // namespace seedance::cost
