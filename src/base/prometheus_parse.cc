#include "seedance/base/prometheus_parse.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "seedance/base/ascii.h"
#include "seedance/base/parse.h"

namespace seedance::base {
namespace {

bool PromLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool PromDigit(char c) { return c >= '0' && c <= '9'; }
bool PromNameStart(char c) { return PromLetter(c) || c == '_' || c == ':'; }
bool PromNameChar(char c) { return PromNameStart(c) || PromDigit(c); }
bool PromLabelStart(char c) { return PromLetter(c) || c == '_'; }
bool PromLabelChar(char c) { return PromLabelStart(c) || PromDigit(c); }
bool PromBlank(char c) { return c == ' ' || c == '\t'; }

// A cursor over one line; each reader returns an error message or "" and advances.
class PromLineReader {
 public:
  explicit PromLineReader(std::string_view line) : line_(line) {}
  bool AtEnd() const { return pos_ >= line_.size(); }
  char Peek() const { return AtEnd() ? '\0' : line_[pos_]; }
  void SkipBlanks() {
    while (!AtEnd() && PromBlank(line_[pos_])) ++pos_;
  }
  std::string_view Rest() const { return line_.substr(std::min(pos_, line_.size())); }

  std::string_view Take(bool (*first)(char), bool (*rest)(char)) {
    const size_t start = pos_;
    if (AtEnd() || !first(line_[pos_])) return {};
    ++pos_;
    while (!AtEnd() && rest(line_[pos_])) ++pos_;
    return line_.substr(start, pos_ - start);
  }
  std::string_view TakeToken() {  // up to the next blank
    const size_t start = pos_;
    while (!AtEnd() && !PromBlank(line_[pos_])) ++pos_;
    return line_.substr(start, pos_ - start);
  }
  bool Consume(char c) {
    if (Peek() != c || AtEnd()) return false;
    ++pos_;
    return true;
  }
  // A quoted label value after its opening quote, unescaped into `out`.
  std::string QuotedValue(std::string* out) {
    while (!AtEnd()) {
      const char c = line_[pos_++];
      if (c == '"') return "";
      if (c != '\\') {
        *out += c;
        continue;
      }
      if (AtEnd()) break;
      const char e = line_[pos_++];
      if (e == '\\' || e == '"') {
        *out += e;
      } else if (e == 'n') {
        *out += '\n';
      } else {
        return std::string("label value: unknown escape '\\") + e + "'; expected \\\\, \\\" or \\n";
      }
    }
    return "label value: expected a closing '\"' before the end of the line";
  }

 private:
  std::string_view line_;
  size_t pos_ = 0;
};

std::string PromUnescapeHelp(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && (text[i + 1] == '\\' || text[i + 1] == 'n')) {
      out += text[i + 1] == 'n' ? '\n' : '\\';
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

bool PromKnownType(std::string_view type) {
  return type == "counter" || type == "gauge" || type == "histogram" || type == "summary" ||
         type == "untyped";
}

// The family a sample belongs to: its name less a histogram's or summary's suffix when a TYPE
// line declared that base name.
std::string PromFamilyOf(const std::string& name, const std::map<std::string, std::string>& types) {
  for (std::string_view suffix : {"_bucket", "_sum", "_count"}) {
    if (name.size() > suffix.size() && name.ends_with(suffix)) {
      std::string base = name.substr(0, name.size() - suffix.size());
      const auto it = types.find(base);
      if (it != types.end() && (it->second == "histogram" || it->second == "summary")) return base;
    }
  }
  return name;
}

}  // namespace

std::string_view PromSample::Label(std::string_view label) const {
  for (const auto& [k, v] : labels) {
    if (k == label) return v;
  }
  return {};
}

std::optional<double> ParsePrometheusValue(std::string_view text) {
  const std::string lower = AsciiLower(text);
  std::string_view body = lower;
  double sign = 1;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    sign = body[0] == '-' ? -1 : 1;
    body.remove_prefix(1);
  }
  if (body == "nan" && sign > 0 && text.size() == 3)
    return std::numeric_limits<double>::quiet_NaN();
  if (body == "inf" || body == "infinity") return sign * std::numeric_limits<double>::infinity();
  if (body.empty() || body[0] == '-' || body[0] == '+') return std::nullopt;
  // Decimal forms, which ParseFiniteDouble reads strictly (no '+', no spaces).
  const std::optional<double> v = ParseFiniteDouble(std::string(body));
  if (!v) return std::nullopt;
  return sign * *v;
}

StatusOr<PromText> ParsePrometheusText(std::string_view text, std::string_view source) {
  PromText out;
  std::map<std::string, bool> family_has_samples;
  int number = 0;
  for (std::string_view line : SplitLines(text)) {
    ++number;
    const std::string where = std::string(source) + ":" + std::to_string(number);
    auto fail = [&](const std::string& what) { return InvalidArgumentError(what, where); };
    PromLineReader r(line);
    r.SkipBlanks();
    if (r.AtEnd()) continue;
    if (r.Consume('#')) {
      r.SkipBlanks();
      const std::string_view keyword = r.TakeToken();
      if (keyword != "HELP" && keyword != "TYPE") continue;  // a comment
      r.SkipBlanks();
      const std::string name(r.Take(PromNameStart, PromNameChar));
      if (name.empty()) return fail(std::string(keyword) + " line: expected a metric name");
      if (!r.AtEnd() && !PromBlank(r.Peek())) {
        return fail(std::string(keyword) + " line: unexpected character after the name '" + name +
                    "'");
      }
      r.SkipBlanks();
      if (keyword == "HELP") {
        if (out.help.count(name)) return fail("second HELP line for '" + name + "'");
        out.help[name] = PromUnescapeHelp(r.Rest());
        continue;
      }
      const std::string type(r.TakeToken());
      r.SkipBlanks();
      if (!PromKnownType(type) || !r.AtEnd()) {
        return fail("TYPE line for '" + name +
                    "': expected counter, gauge, histogram, summary or untyped");
      }
      if (out.types.count(name)) return fail("second TYPE line for '" + name + "'");
      if (family_has_samples.count(name)) {
        return fail("TYPE line for '" + name + "' after its samples");
      }
      out.types[name] = type;
      continue;
    }
    PromSample s;
    s.line = number;
    s.name = std::string(r.Take(PromNameStart, PromNameChar));
    if (s.name.empty()) return fail("expected a metric name, '#' or a blank line");
    if (r.Consume('{')) {
      while (true) {
        r.SkipBlanks();
        if (r.Consume('}')) break;
        const std::string label(r.Take(PromLabelStart, PromLabelChar));
        if (label.empty()) return fail("labels of '" + s.name + "': expected a label name or '}'");
        r.SkipBlanks();
        if (!r.Consume('=')) return fail("label '" + label + "': expected '='");
        r.SkipBlanks();
        if (!r.Consume('"')) return fail("label '" + label + "': expected '\"'");
        std::string value;
        if (std::string err = r.QuotedValue(&value); !err.empty()) return fail(err);
        for (const auto& [k, v] : s.labels) {
          if (k == label) return fail("label '" + label + "' given twice");
        }
        s.labels.emplace_back(label, std::move(value));
        r.SkipBlanks();
        if (r.Consume(',')) continue;
        if (r.Consume('}')) break;
        return fail("labels of '" + s.name + "': expected ',' or '}'");
      }
    }
    if (!PromBlank(r.Peek()))
      return fail("sample '" + s.name + "': expected a space, then a value");
    r.SkipBlanks();
    const std::string_view value = r.TakeToken();
    const std::optional<double> v = ParsePrometheusValue(value);
    if (!v) {
      return fail("sample '" + s.name + "': value '" + std::string(value) +
                  "' is not a number (expected e.g. 12, 0.5, 1e-3, NaN, +Inf)");
    }
    s.value = *v;
    r.SkipBlanks();
    if (!r.AtEnd()) {
      const std::string_view ts = r.TakeToken();
      const std::optional<int64_t> t = ParseInt64(ts);
      if (!t) {
        return fail("sample '" + s.name + "': timestamp '" + std::string(ts) +
                    "' is not an integer of milliseconds");
      }
      s.timestamp_ms = *t;
      r.SkipBlanks();
      if (!r.AtEnd()) return fail("sample '" + s.name + "': unexpected text after the timestamp");
    }
    std::sort(s.labels.begin(), s.labels.end());
    family_has_samples[PromFamilyOf(s.name, out.types)] = true;
    out.samples.push_back(std::move(s));
  }
  return out;
}

}  // namespace seedance::base
