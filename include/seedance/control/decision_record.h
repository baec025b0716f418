// Where the controllers' decisions go (feature CTRL's audit trail): one JSON line per decision in
// a log file, and counters and current settings in Prometheus text for the probe's exporter.
//
// A decision line (one JSON object, keys in this order, one line, '\n'-terminated):
//   {"time":1764720000.123,"step":120,"controller":"batch","action":"grow","applied":true,
//    "reason":"memory 0.41 < 0.65 for 3 steps: 16 -> 32","inputs":{"memory_share":0.41}}
// `applied` is false in observe-only mode: the decision was taken and logged, not acted on.
// Lines are appended with one write each (O_APPEND), so ranks may share a file.
//
// Prometheus families (RenderPrometheus):
//   seedance_control_decisions_total{controller,action,applied}   counter
//   seedance_control_setting{controller,setting}                  gauge, the current value
// Controller, action and setting names must match [a-z][a-z0-9_]* (Record and SetSetting check),
// so they need no escaping as label values.
//
// Thread safety: every member function may be called from any thread.
#pragma once

#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "seedance/base/status.h"

namespace seedance::control {

struct Decision {
  double time_s = 0;  // Unix seconds
  int64_t step = 0;
  std::string controller;  // "batch", "accumulation", "checkpoint", "freeze"
  std::string action;      // "grow", "shrink", "save", "freeze", ...
  bool applied = true;
  std::string reason;
  std::vector<std::pair<std::string, double>> inputs;  // in the order given
};

// The decision's JSON line, '\n' included. Non-finite inputs are written as null.
std::string DecisionJsonLine(const Decision& decision);

class DecisionRecorder {
 public:
  // log_path empty: no log file. Otherwise the file is opened for appending (created if missing).
  static base::StatusOr<std::unique_ptr<DecisionRecorder>> Open(const std::string& log_path);
  ~DecisionRecorder();
  DecisionRecorder(const DecisionRecorder&) = delete;
  DecisionRecorder& operator=(const DecisionRecorder&) = delete;

  base::Status Record(const Decision& decision);
  base::Status SetSetting(const std::string& controller, const std::string& setting, double value);
  std::string RenderPrometheus() const;
  int64_t recorded() const;

 private:
  explicit DecisionRecorder(std::FILE* log);

  mutable std::mutex mu_;
  std::FILE* log_;  // null without a log file
  int64_t recorded_ = 0;
  std::map<std::tuple<std::string, std::string, bool>, int64_t> counts_;
  std::map<std::pair<std::string, std::string>, double> settings_;
};

}  // namespace seedance::control
