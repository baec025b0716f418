// Reports: what every reporting command prints, as one document rendered
// either as JSON (`--output json`) or as an aligned text table (`--output
// table`, the default).
//
// A report is an ordered JSON object (nlohmann::ordered_json keeps the order
// in which fields were added). Conventions: snake_case keys with the unit in
// the name (`peak_bytes`, `solve_ms`, `price_per_gpu_hour_usd`).
//
// Table rendering: each top-level object becomes a titled block of
// `key  value` lines; a list of objects becomes columns (like `kubectl get`);
// a list of sentences (strings with spaces) is one "- " line each; other lists of scalars are
// joined with commas. Integers get thousands separators,
// and values of `*_bytes` keys get a binary-unit suffix, e.g.
// `13,476,831,232 (12.6 GiB)`. JSON output is never rounded or decorated.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "seedance/base/status.h"

namespace seedance::base {

using Report = nlohmann::ordered_json;

enum class OutputFormat { kTable, kJson };

// "table" or "json"; an error listing them otherwise.
StatusOr<OutputFormat> ParseOutputFormat(std::string_view text,
                                         std::string_view where = "--output");

// Pretty-printed JSON (2-space indent) with a trailing newline.
std::string RenderJson(const Report& report);
// Compact JSON (indent -1) or indented. Strings that are not valid UTF-8 (a
// byte from an input file that reached a report) are written with each bad
// byte replaced by U+FFFD instead of throwing: every JSON writer in Seedance
// goes through here or RenderJson.
std::string DumpJson(const Report& report, int indent = -1);
// The aligned text form described above, ending with a newline.
std::string RenderTable(const Report& report);
std::string Render(const Report& report, OutputFormat format);

// "1.5 GiB", "512 B": binary units, three significant digits.
std::string HumanBytes(double bytes);

}  // namespace seedance::base
