// Strict, typed reading of YAML mappings with errors that name the file, the
// line and the key. Every YAML input of Seedance (job specs, the GPU catalog
// override, later policy files) is read through this class, so they all
// reject the same mistakes the same way:
//
//   - a key that the schema does not know, or a key given twice;
//   - a value of the wrong type (a quoted "8" where a number is expected,
//     a mapping where a scalar is expected, 4.5 where an integer is expected);
//   - a number outside its allowed range (negative counts, zero sizes);
//   - a string that is not one of the allowed choices.
//
// The `where` of each error is "<file>:<line>: <dotted.key.path>" with
// 1-based line numbers. yaml-cpp exceptions never escape this file.
//
// Thread safety: a YamlMap is immutable once made.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/status.h"

namespace seedance::base {

// Parses a YAML document. A syntax error becomes InvalidArgument with where
// "<file>:<line>:<column>". An empty document is an error too.
StatusOr<YAML::Node> ParseYaml(std::string_view text, const std::string& file);

class YamlMap {
 public:
  // `node` must be a mapping (else InvalidArgument). `path` is the dotted key
  // path of this mapping inside the document ("" for the root).
  static StatusOr<YamlMap> FromNode(const YAML::Node& node, std::string file, std::string path);

  // Every key must be one of `allowed`, and none may repeat.
  Status CheckKeys(std::initializer_list<std::string_view> allowed) const;

  bool Has(std::string_view key) const;

  // Typed getters. With `fallback`, a missing key yields the fallback; without,
  // a missing key is an error. Present values are always fully checked.
  StatusOr<int64_t> GetInt(std::string_view key, std::optional<int64_t> fallback = std::nullopt,
                           int64_t min = std::numeric_limits<int64_t>::min(),
                           int64_t max = std::numeric_limits<int64_t>::max()) const;
  StatusOr<double> GetNumber(std::string_view key, std::optional<double> fallback = std::nullopt,
                             double min = -std::numeric_limits<double>::max(),
                             double max = std::numeric_limits<double>::max()) const;
  StatusOr<bool> GetBool(std::string_view key, std::optional<bool> fallback = std::nullopt) const;
  StatusOr<std::string> GetString(std::string_view key,
                                  std::optional<std::string> fallback = std::nullopt) const;
  // A string that must be one of `choices`, compared without regard to ASCII case (a choice is
  // an identifier, as a GPU id is: `BF16` is `bf16`); the choice's own spelling is returned.
  StatusOr<std::string> GetChoice(std::string_view key, std::span<const std::string_view> choices,
                                  std::optional<std::string> fallback = std::nullopt) const;
  // A non-empty list of distinct strings, each one of `choices` as GetChoice matches them (a flow
  // or block sequence); an empty vector when the key is absent. Errors name the element
  // ("key[1]").
  StatusOr<std::vector<std::string>> GetChoiceList(std::string_view key,
                                                   std::span<const std::string_view> choices) const;
  // A nested mapping; required.
  StatusOr<YamlMap> GetMap(std::string_view key) const;
  // A nested mapping, or nullopt when the key is absent.
  StatusOr<std::optional<YamlMap>> GetOptionalMap(std::string_view key) const;
  // A sequence of mappings (paths "key[0]", "key[1]", ...); required.
  StatusOr<std::vector<YamlMap>> GetMapList(std::string_view key) const;

  // "<file>:<line>: <path.key>" for `key` (the mapping's own line when absent).
  std::string Where(std::string_view key) const;
  // "<file>:<line>: <path>" for the mapping itself.
  std::string WhereSelf() const;
  // The dotted path of `key` inside the document.
  std::string KeyPath(std::string_view key) const;

  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }

 private:
  YamlMap(const YAML::Node& node, std::string file, std::string path)
      : node_(node), file_(std::move(file)), path_(std::move(path)) {}

  // The value node of `key`, or an undefined node.
  YAML::Node Find(std::string_view key) const;
  Status TypeError(std::string_view key, std::string_view expected, const YAML::Node& value) const;

  YAML::Node node_;
  std::string file_;
  std::string path_;
};

}  // namespace seedance::base
