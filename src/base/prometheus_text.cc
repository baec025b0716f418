#include "seedance/base/prometheus_text.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace seedance::base {

std::string EscapeLabelValue(const std::string& value) {
  std::string out;
  for (char ch : value) {
    if (ch == '\\') {
      out += "\\\\";
    } else if (ch == '"') {
      out += "\\\"";
    } else if (ch == '\n') {
      out += "\\n";
    } else {
      out += ch;
    }
  }
  return out;
}

std::string FormatSampleValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[64];
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    std::snprintf(buf, sizeof(buf), "%.0f", value);
    return buf;
  }
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);  // shortest round trip
  return std::string(buf, ec == std::errc() ? end : buf);
}

void PrometheusWriter::Family(std::string_view name, std::string_view type, std::string_view help) {
  out_ << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
  name_ = std::string(name);
}

void PrometheusWriter::Line(std::string_view name, const Labels& labels, double value) {
  out_ << name;
  if (!labels.empty()) {
    out_ << "{";
    for (size_t i = 0; i < labels.size(); ++i) {
      out_ << (i ? "," : "") << labels[i].first << "=\"" << EscapeLabelValue(labels[i].second)
           << "\"";
    }
    out_ << "}";
  }
  out_ << " " << FormatSampleValue(value) << "\n";
}

void PrometheusWriter::Sample(const Labels& labels, double value) { Line(name_, labels, value); }

void PrometheusWriter::Histogram(const Labels& labels, std::span<const double> bounds,
                                 std::span<const uint64_t> cumulative, double sum) {
  Labels with_le = labels;
  with_le.emplace_back("le", "");
  for (size_t b = 0; b <= bounds.size(); ++b) {
    with_le.back().second = b < bounds.size() ? FormatSampleValue(bounds[b]) : "+Inf";
    Line(name_ + "_bucket", with_le, static_cast<double>(cumulative[b]));
  }
  Line(name_ + "_sum", labels, sum);
  Line(name_ + "_count", labels, static_cast<double>(cumulative[bounds.size()]));
}

}  // namespace seedance::base
