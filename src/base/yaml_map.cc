#include "seedance/base/yaml_map.h"

#include <yaml-cpp/depthguard.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <sstream>

#include "seedance/base/ascii.h"

namespace seedance::base {
namespace {

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

// Plain (unquoted) scalars have tag "?"; quoted ones have tag "!".
bool IsQuoted(const YAML::Node& node) { return node.Tag() == "!"; }

std::string Describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "nothing (null)";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Undefined:
      return "nothing";
    case YAML::NodeType::Scalar:
      return (IsQuoted(node) ? "the string " : "") + Quote(node.Scalar());
  }
  return "an unknown node";
}

std::string JoinChoices(std::span<const std::string_view> choices) {
  std::string out;
  for (size_t i = 0; i < choices.size(); ++i) {
    if (i) out += ", ";
    out += choices[i];
  }
  return out;
}

// The 1-based line where a second document starts, if the text holds one: a "---" line after
// content or after a first "---", or content after a "..." end marker. (A document marker at
// the start of a line cannot be inside a scalar, so a line scan is exact; yaml-cpp's LoadAll
// is not used because some malformed inputs make it loop.)
std::optional<int> SecondDocumentLine(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a UTF-8 byte order mark
  int line = 1;
  bool begun = false, ended = false;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    std::string_view l = text.substr(pos, end - pos);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    const bool marker = l.starts_with("---") && (l.size() == 3 || l[3] == ' ' || l[3] == '\t');
    const size_t first = l.find_first_not_of(" \t");
    const bool blank = first == std::string_view::npos || l[first] == '#';  // or a comment
    if (marker) {
      if (begun || ended) return line;
      begun = true;
    } else if (l.starts_with("...") && (l.size() == 3 || l[3] == ' ' || l[3] == '\t')) {
      ended = true;
    } else if (!blank && !(l.front() == '%' && !begun)) {
      if (ended) return line;
      begun = true;
    }
    pos = end + 1;
    ++line;
  }
  return std::nullopt;
}

}  // namespace

StatusOr<YAML::Node> ParseYaml(std::string_view text, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's guard against stack exhaustion; its own message says only "bad file".
    return InvalidArgumentError(
        "YAML nesting too deep: the parser stops at " + std::to_string(e.depth()) +
            " levels (a few hundred nested collections); Seedance's files nest a few levels",
        file + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1));
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(
        "YAML syntax error: " + e.msg,
        file + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1));
  }
  // A second document is an error rather than silently dropped.
  if (const std::optional<int> second = SecondDocumentLine(text)) {
    return InvalidArgumentError(
        "a second YAML document starts here; a Seedance file holds one document",
        file + ":" + std::to_string(*second));
  }
  if (!root.IsDefined() || root.IsNull()) {
    return InvalidArgumentError("the document is empty", file + ":1");
  }
  return root;
}

StatusOr<YamlMap> YamlMap::FromNode(const YAML::Node& node, std::string file, std::string path) {
  if (!node.IsMap()) {
    std::string where = file + ":" + std::to_string(node.Mark().line + 1);
    if (!path.empty()) where += ": " + path;
    return InvalidArgumentError("expected a mapping of keys to values" +
                                    (path.empty() ? "" : " at " + Quote(path)) + ", got " +
                                    Describe(node),
                                where);
  }
  return YamlMap(node, std::move(file), std::move(path));
}

std::string YamlMap::KeyPath(std::string_view key) const {
  if (path_.empty()) return std::string(key);
  return path_ + "." + std::string(key);
}

std::string YamlMap::WhereSelf() const {
  std::string out = file_ + ":" + std::to_string(node_.Mark().line + 1);
  if (!path_.empty()) out += ": " + path_;
  return out;
}

std::string YamlMap::Where(std::string_view key) const {
  int line = node_.Mark().line;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) {
      line = it->first.Mark().line;
      break;
    }
  }
  return file_ + ":" + std::to_string(line + 1) + ": " + KeyPath(key);
}

YAML::Node YamlMap::Find(std::string_view key) const {
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) return it->second;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

bool YamlMap::Has(std::string_view key) const { return Find(key).IsDefined(); }

Status YamlMap::TypeError(std::string_view key, std::string_view expected,
                          const YAML::Node& value) const {
  return InvalidArgumentError(
      Quote(KeyPath(key)) + " must be " + std::string(expected) + ", got " + Describe(value),
      Where(key));
}

Status YamlMap::CheckKeys(std::initializer_list<std::string_view> allowed) const {
  std::set<std::string> seen;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const YAML::Node k = it->first;  // a copy: the iterator yields a temporary proxy
    const std::string where_key = file_ + ":" + std::to_string(k.Mark().line + 1) + ": " +
                                  KeyPath(k.IsScalar() ? k.Scalar() : std::string("?"));
    if (!k.IsScalar()) return InvalidArgumentError("keys must be plain names", where_key);
    const std::string& name = k.Scalar();
    bool known = false;
    for (std::string_view a : allowed) known = known || a == name;
    if (!known) {
      std::string list;
      for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      return InvalidArgumentError(
          "unknown key " + Quote(KeyPath(name)) + " (expected one of: " + list + ")", where_key);
    }
    if (!seen.insert(name).second) {
      return InvalidArgumentError("key " + Quote(KeyPath(name)) + " is given twice", where_key);
    }
  }
  return OkStatus();
}

StatusOr<int64_t> YamlMap::GetInt(std::string_view key, std::optional<int64_t> fallback,
                                  int64_t min, int64_t max) const {
  YAML::Node v = Find(key);
  if (!v.IsDefined()) {
    if (fallback) return *fallback;
    return InvalidArgumentError("missing required key " + Quote(KeyPath(key)), Where(key));
  }
  if (!v.IsScalar() || IsQuoted(v)) return TypeError(key, "an integer", v);
  int64_t value = 0;
  try {
    value = v.as<int64_t>();
  } catch (const YAML::Exception&) {
    return TypeError(key, "an integer", v);
  }
  if (value < min || value > max) {
    std::string range = max == std::numeric_limits<int64_t>::max()
                            ? "at least " + std::to_string(min)
                            : "between " + std::to_string(min) + " and " + std::to_string(max);
    return InvalidArgumentError(
        Quote(KeyPath(key)) + " must be " + range + ", got " + std::to_string(value), Where(key));
  }
  return value;
}

StatusOr<double> YamlMap::GetNumber(std::string_view key, std::optional<double> fallback,
                                    double min, double max) const {
  YAML::Node v = Find(key);
  if (!v.IsDefined()) {
    if (fallback) return *fallback;
    return InvalidArgumentError("missing required key " + Quote(KeyPath(key)), Where(key));
  }
  if (!v.IsScalar() || IsQuoted(v)) return TypeError(key, "a number", v);
  double value = 0;
  try {
    value = v.as<double>();
  } catch (const YAML::Exception&) {
    return TypeError(key, "a number", v);
  }
  if (!std::isfinite(value)) return TypeError(key, "a finite number", v);
  if (value < min || value > max) {
    std::ostringstream msg;
    msg << Quote(KeyPath(key)) << " must be ";
    if (max == std::numeric_limits<double>::max()) {
      msg << "at least " << min;
    } else {
      msg << "between " << min << " and " << max;
    }
    msg << ", got " << v.Scalar();
    return InvalidArgumentError(msg.str(), Where(key));
  }
  return value;
}

StatusOr<bool> YamlMap::GetBool(std::string_view key, std::optional<bool> fallback) const {
  YAML::Node v = Find(key);
  if (!v.IsDefined()) {
    if (fallback) return *fallback;
    return InvalidArgumentError("missing required key " + Quote(KeyPath(key)), Where(key));
  }
  if (!v.IsScalar() || IsQuoted(v)) return TypeError(key, "true or false", v);
  try {
    return v.as<bool>();
  } catch (const YAML::Exception&) {
    return TypeError(key, "true or false", v);
  }
}

StatusOr<std::string> YamlMap::GetString(std::string_view key,
                                         std::optional<std::string> fallback) const {
  YAML::Node v = Find(key);
  if (!v.IsDefined()) {
    if (fallback) return *fallback;
    return InvalidArgumentError("missing required key " + Quote(KeyPath(key)), Where(key));
  }
  if (!v.IsScalar()) return TypeError(key, "a string", v);
  if (v.Scalar().empty()) return TypeError(key, "a non-empty string", v);
  return v.Scalar();
}

StatusOr<std::string> YamlMap::GetChoice(std::string_view key,
                                         std::span<const std::string_view> choices,
                                         std::optional<std::string> fallback) const {
  SEEDANCE_ASSIGN_OR_RETURN(std::string value, GetString(key, std::move(fallback)));
  for (std::string_view c : choices) {
    if (EqualsIgnoreCase(c, value)) return std::string(c);
  }
  return InvalidArgumentError(
      Quote(KeyPath(key)) + " must be one of: " + JoinChoices(choices) + "; got " + Quote(value),
      Where(key));
}

StatusOr<std::vector<std::string>> YamlMap::GetChoiceList(
    std::string_view key, std::span<const std::string_view> choices) const {
  YAML::Node v = Find(key);
  std::vector<std::string> out;
  if (!v.IsDefined()) return out;
  if (!v.IsSequence() || v.size() == 0) return TypeError(key, "a non-empty list", v);
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string element = std::string(key) + "[" + std::to_string(i) + "]";
    const std::string where =
        file_ + ":" + std::to_string(v[i].Mark().line + 1) + ": " + KeyPath(element);
    if (!v[i].IsScalar() || v[i].Scalar().empty()) {
      return InvalidArgumentError(
          Quote(KeyPath(element)) + " must be a string, got " + Describe(v[i]), where);
    }
    const auto match = std::find_if(choices.begin(), choices.end(), [&](std::string_view c) {
      return EqualsIgnoreCase(c, v[i].Scalar());
    });
    if (match == choices.end()) {
      return InvalidArgumentError(Quote(KeyPath(element)) + " must be one of: " +
                                      JoinChoices(choices) + "; got " + Quote(v[i].Scalar()),
                                  where);
    }
    const std::string value(*match);
    for (const std::string& seen : out) {
      if (seen == value) {
        return InvalidArgumentError(Quote(KeyPath(element)) + " repeats " + Quote(value), where);
      }
    }
    out.push_back(value);
  }
  return out;
}

StatusOr<YamlMap> YamlMap::GetMap(std::string_view key) const {
  YAML::Node v = Find(key);
  if (!v.IsDefined()) {
    return InvalidArgumentError("missing required section " + Quote(KeyPath(key)), Where(key));
  }
  if (!v.IsMap()) return TypeError(key, "a mapping", v);
  return YamlMap(v, file_, KeyPath(key));
}

StatusOr<std::optional<YamlMap>> YamlMap::GetOptionalMap(std::string_view key) const {
  if (!Has(key)) return std::optional<YamlMap>();
  SEEDANCE_ASSIGN_OR_RETURN(YamlMap m, GetMap(key));
  return std::optional<YamlMap>(std::move(m));
}

StatusOr<std::vector<YamlMap>> YamlMap::GetMapList(std::string_view key) const {
  YAML::Node v = Find(key);
  if (!v.IsDefined()) {
    return InvalidArgumentError("missing required key " + Quote(KeyPath(key)), Where(key));
  }
  if (!v.IsSequence()) return TypeError(key, "a list", v);
  std::vector<YamlMap> out;
  for (size_t i = 0; i < v.size(); ++i) {
    SEEDANCE_ASSIGN_OR_RETURN(YamlMap m,
                              FromNode(v[i], file_, KeyPath(key) + "[" + std::to_string(i) + "]"));
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace seedance::base
