#include "seedance/base/yaml_override.h"

#include <yaml-cpp/yaml.h>

#include "seedance/base/yaml_map.h"

namespace seedance::base {
namespace {

std::vector<std::string> SplitPath(std::string_view key) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = key.find('.', start);
    parts.emplace_back(key.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts;
}

// A value as YAML; an empty text is null.
StatusOr<YAML::Node> LoadValue(const std::string& text, const std::string& where) {
  try {
    YAML::Node value = YAML::Load(text);
    if (!value.IsDefined()) return YAML::Node(YAML::NodeType::Null);
    return value;
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError("the value is not YAML: " + e.msg, where);
  }
}

// Writes `node` as YAML, keeping what the reader would otherwise lose: a scalar that was quoted
// (its tag "!") is written quoted, so `"8"` stays a string that a strict reader refuses where a
// number belongs, as it refuses it in the original file.
void Emit(const YAML::Node& node, YAML::Emitter& out) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      out << YAML::BeginMap;
      for (const auto& kv : node) {
        out << YAML::Key;
        Emit(kv.first, out);
        out << YAML::Value;
        Emit(kv.second, out);
      }
      out << YAML::EndMap;
      break;
    case YAML::NodeType::Sequence:
      out << YAML::BeginSeq;
      for (const auto& item : node) Emit(item, out);
      out << YAML::EndSeq;
      break;
    case YAML::NodeType::Scalar:
      if (node.Tag() == "!") {
        out << YAML::DoubleQuoted << node.Scalar();
      } else {
        out << node.Scalar();
      }
      break;
    default:
      out << YAML::Null;
  }
}

}  // namespace

StatusOr<YamlOverride> ParseYamlOverride(std::string_view text, std::string_view where) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return InvalidArgumentError(
        "expected KEY=VALUE with a dotted key (hardware.gpu=H200), got '" + std::string(text) + "'",
        std::string(where));
  }
  return YamlOverride{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
}

StatusOr<std::string> ApplyYamlOverrides(std::string_view text, const std::string& file,
                                         const std::vector<YamlOverride>& overrides,
                                         std::string_view where) {
  auto parsed = ParseYaml(text, file);
  if (!parsed.ok()) return parsed.status();
  YAML::Node root = *parsed;
  if (!root.IsMap()) return InvalidArgumentError("expected a mapping at the top", file);
  for (const YamlOverride& o : overrides) {
    const std::string at = std::string(where) + " " + o.key;
    const std::vector<std::string> path = SplitPath(o.key);
    for (const std::string& part : path) {
      if (part.empty()) {
        return InvalidArgumentError("expected a dotted key of non-empty names (hardware.gpu)", at);
      }
    }
    auto value = LoadValue(o.value, at);
    if (!value.ok()) return value.status();
    // Walk down, making missing mappings; a scalar or a list on the way is an error.
    YAML::Node node = root;
    std::string walked;
    for (size_t i = 0; i + 1 < path.size(); ++i) {
      walked += (walked.empty() ? "" : ".") + path[i];
      YAML::Node next = node[path[i]];
      if (!next.IsDefined() || next.IsNull()) {
        node[path[i]] = YAML::Node(YAML::NodeType::Map);
        next.reset(node[path[i]]);  // (assigning a Node would write through it)
      } else if (!next.IsMap()) {
        return InvalidArgumentError(
            "'" + walked + "' is not a mapping, so it has no key '" + path[i + 1] + "'", at);
      }
      node.reset(next);
    }
    node[path.back()] = *value;
  }
  YAML::Emitter out;
  Emit(root, out);
  if (!out.good()) {
    return InvalidArgumentError("cannot write the document back: " + out.GetLastError(), file);
  }
  return std::string(out.c_str()) + "\n";
}

}  // namespace seedance::base
