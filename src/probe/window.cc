#include "seedance/probe/window.h"

namespace seedance::probe {

base::StatusOr<std::vector<std::string>> ParseMetricFilter(std::string_view list,
                                                           std::string_view where) {
  std::vector<std::string> out;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    const std::string item(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    bool known = false;
    for (const auto& name : ValueNames()) {
      known |= name == item || name.starts_with(item + ".");
    }
    if (!known) {
      std::string names;
      for (const auto& n : ValueNames()) names += (names.empty() ? "" : ", ") + n;
      return base::InvalidArgumentError(
          "unknown metric '" + item + "'; known: " + names + " (or a prefix: cpu, gpu, ...)",
          std::string(where));
    }
    out.push_back(item);
  }
  return out;
}

base::Report WindowReport(const Snapshot& before, const Snapshot& after,
                          const std::vector<Value>& values, const std::vector<Finding>& findings) {
  base::Report r = base::Report::object();
  const int64_t whole_ms = after.unix_nanos / 1000000;  // truncated on purpose
  r["timestamp_s"] = static_cast<double>(whole_ms) / 1000.0;
  r["window_s"] =
      static_cast<double>(after.host.monotonic_nanos - before.host.monotonic_nanos) / 1e9;
  r["values"] = ValuesToReport(values);
  r["findings"] = FindingsToReport(findings);
  r["notes"] = after.notes;
  return r;
}

base::StatusOr<base::Report> SampleWindow(Probe& probe, base::Env& clock,
                                          std::chrono::nanoseconds interval,
                                          const std::vector<std::string>& metrics) {
  SEEDANCE_ASSIGN_OR_RETURN(const Snapshot before, probe.Read());
  clock.SleepFor(interval);
  SEEDANCE_ASSIGN_OR_RETURN(const Snapshot after, probe.Read());
  const std::vector<Value> values = WindowValues(probe, before, after, metrics);
  return WindowReport(before, after, values, Evaluate(values));
}

}  // namespace seedance::probe
