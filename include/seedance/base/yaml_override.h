// Setting keys of a YAML document from the command line or a program, as Helm's `--set` does:
// `hardware.gpu=H200` sets the key `gpu` of the mapping `hardware`, making the mappings on the
// way where they are missing. The value is YAML (so `8` is a number, `H200` and `"8"` strings,
// `[1, 2]` a list); the result is the whole document written back as YAML text, which the
// document's own parser then checks as it checks any input.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seedance/base/status.h"

namespace seedance::base {

struct YamlOverride {
  std::string key;    // dotted path: "hardware.gpu"
  std::string value;  // YAML text: "H200", "8", "[fp8, bf16]"
};

// "KEY=VALUE" as given to --set; InvalidArgument at `where` when there is no "=" or no key.
StatusOr<YamlOverride> ParseYamlOverride(std::string_view text, std::string_view where = "--set");

// `text` (a YAML mapping, read from `file`) with each override applied in order. Errors name the
// override ("--set hardware.gpu") when its path runs into a value that is not a mapping, its key
// is empty, or its value is not YAML; a syntax error in `text` names the file and line.
StatusOr<std::string> ApplyYamlOverrides(std::string_view text, const std::string& file,
                                         const std::vector<YamlOverride>& overrides,
                                         std::string_view where = "--set");

}  // namespace seedance::base
