// Prometheus text exposition (format 0.0.4), the reading half (prometheus_text.h writes it):
// what `seedancectl diagnose` reads from kube-scheduler, kube-apiserver, etcd and node exporters.
//
// Grammar, one line at a time ('\n' ends a line; a '\r' before it is dropped):
//   blank line                                    ignored
//   # HELP name text                              kept per family (text unescaped: \\ and \n)
//   # TYPE name counter|gauge|histogram|summary|untyped
//   # anything else                               a comment, ignored
//   name[{label="value",...[,]}] value [timestamp]
// name: [a-zA-Z_:][a-zA-Z0-9_:]*; label name: [a-zA-Z_][a-zA-Z0-9_]*, unique within a sample;
// label value: any bytes with \\, \" and \n escaped (another escape is an error, as in
// Prometheus). value: a decimal or exponent float, NaN, +Inf, -Inf or Inf (any case);
// timestamp: milliseconds since the epoch, an integer. Spaces or tabs separate the parts.
// A TYPE line for a family must come before its samples and at most once.
//
// Errors say what was expected and where, the source and line ("label 'le': expected '\"'
// (etcd.txt:12)"); nothing of a text with an error is returned.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seedance/base/status.h"

namespace seedance::base {

struct PromSample {
  std::string name;
  // Sorted by label name, so equal label sets compare equal.
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;
  std::optional<int64_t> timestamp_ms;
  int line = 0;  // 1-based, in the text it came from

  // The value of a label, or "" when the sample has none of that name.
  std::string_view Label(std::string_view label) const;
};

struct PromText {
  std::vector<PromSample> samples;           // in the order of the text
  std::map<std::string, std::string> types;  // family name -> its TYPE
  std::map<std::string, std::string> help;   // family name -> its HELP text
};

// `source` names the text in errors (a file name or URL).
StatusOr<PromText> ParsePrometheusText(std::string_view text, std::string_view source);

// The float spellings of a sample value; nullopt for anything else.
std::optional<double> ParsePrometheusValue(std::string_view text);

}  // namespace seedance::base
