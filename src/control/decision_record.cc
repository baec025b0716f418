#include "seedance/control/decision_record.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>

namespace seedance::control {
namespace {

bool IsName(const std::string& s) {
  if (s.empty() || s[0] < 'a' || s[0] > 'z') return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

base::Status CheckName(const std::string& value, const char* field) {
  if (IsName(value)) return base::OkStatus();
  return base::InvalidArgumentError("'" + value + "' is not a name of the form [a-z][a-z0-9_]*",
                                    field);
}

std::string Value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);  // shortest round trip
  return std::string(buf, ec == std::errc() ? end : buf);
}

}  // namespace

std::string DecisionJsonLine(const Decision& d) {
  nlohmann::ordered_json j;
  j["time"] = d.time_s;
  j["step"] = d.step;
  j["controller"] = d.controller;
  j["action"] = d.action;
  j["applied"] = d.applied;
  j["reason"] = d.reason;
  nlohmann::ordered_json inputs = nlohmann::ordered_json::object();
  for (const auto& [name, value] : d.inputs) {
    inputs[name] = std::isfinite(value) ? nlohmann::ordered_json(value) : nlohmann::ordered_json();
  }
  j["inputs"] = std::move(inputs);
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

base::StatusOr<std::unique_ptr<DecisionRecorder>> DecisionRecorder::Open(
    const std::string& log_path) {
  std::FILE* log = nullptr;
  if (!log_path.empty()) {
    log = std::fopen(log_path.c_str(), "a");  // O_APPEND: each line lands whole at the end
    if (log == nullptr) {
      return base::NotFoundError(std::string("cannot open for appending: ") + std::strerror(errno),
                                 log_path);
    }
  }
  return std::unique_ptr<DecisionRecorder>(new DecisionRecorder(log));
}

DecisionRecorder::DecisionRecorder(std::FILE* log) : log_(log) {}

DecisionRecorder::~DecisionRecorder() {
  if (log_ != nullptr) std::fclose(log_);
}

base::Status DecisionRecorder::Record(const Decision& d) {
  if (auto s = CheckName(d.controller, "controller"); !s.ok()) return s;
  if (auto s = CheckName(d.action, "action"); !s.ok()) return s;
  const std::string line = DecisionJsonLine(d);
  std::lock_guard<std::mutex> lock(mu_);
  if (log_ != nullptr) {
    // Unbuffered single write of the whole line, then flushed: a crash loses no earlier line.
    if (std::fwrite(line.data(), 1, line.size(), log_) != line.size() || std::fflush(log_) != 0) {
      return base::InternalError(std::string("writing the decision log: ") + std::strerror(errno));
    }
  }
  ++counts_[{d.controller, d.action, d.applied}];
  ++recorded_;
  return base::OkStatus();
}

base::Status DecisionRecorder::SetSetting(const std::string& controller, const std::string& setting,
                                          double value) {
  if (auto s = CheckName(controller, "controller"); !s.ok()) return s;
  if (auto s = CheckName(setting, "setting"); !s.ok()) return s;
  std::lock_guard<std::mutex> lock(mu_);
  settings_[{controller, setting}] = value;
  return base::OkStatus();
}

int64_t DecisionRecorder::recorded() const {
  std::lock_guard<std::mutex> lock(mu_);
  return recorded_;
}

std::string DecisionRecorder::RenderPrometheus() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::ostringstream out;
  out << "# HELP seedance_control_decisions_total Decisions taken by the training-loop "
         "controllers (applied=\"false\": observe-only).\n"
         "# TYPE seedance_control_decisions_total counter\n";
  for (const auto& [key, count] : counts_) {
    const auto& [controller, action, applied] = key;
    out << "seedance_control_decisions_total{controller=\"" << controller << "\",action=\""
        << action << "\",applied=\"" << (applied ? "true" : "false") << "\"} " << count << "\n";
  }
  out << "# HELP seedance_control_setting The controllers' current settings (batch size, "
         "accumulation steps, checkpoint interval, frozen layers).\n"
         "# TYPE seedance_control_setting gauge\n";
  for (const auto& [key, value] : settings_) {
    out << "seedance_control_setting{controller=\"" << key.first << "\",setting=\"" << key.second
        << "\"} " << Value(value) << "\n";
  }
  return out.str();
}

}  // namespace seedance::control
