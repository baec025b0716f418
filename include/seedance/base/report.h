// Reports: what every reporting command prints, as one document rendered
// either as JSON (`--output json`) or as an aligned text table (`--output
// table`, the default).
//
// A report is an ordered JSON object (nlohmann::ordered_json keeps the order
// in which fields were added). Conventions: snake_case keys with the unit in
// the name (`peak_bytes`, `solve_ms`, `price_per_gpu_hour_usd`).
//
// Table rendering: a top-level `verdict` (a list of sentences, at most 10, the answer in words)
// comes first by convention; each top-level object becomes a titled block of
// `key  value` lines; a list of objects becomes columns (like `kubectl get`);
// a list of sentences (strings with spaces) is one "- " line each; other lists of scalars are
// joined with commas. Integers get thousands separators,
// and values of `*_bytes` keys get a binary-unit suffix, e.g.
// `13,476,831,232 (12.6 GiB)`. JSON output is never rounded or decorated.
//
// The default table fits a terminal (TableOptions::max_width, 100 columns): a column table keeps
// the columns that fit, in the report's order (so a report puts what matters first), and says
// how many `-o wide` adds; columns with the same value in every row of a table of three or more
// rows are shown once, under it; long cells are cut with "…"; sentences and values wrap.
// `-o wide` (OutputFormat::kWide) gives every column in full.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/status.h"

namespace seedance::base {

using Report = nlohmann::ordered_json;

enum class OutputFormat { kTable, kWide, kJson };

// How the table form fits a reader.
struct TableOptions {
  // Display columns (code points) a line may take; 0: no limit (`-o wide`).
  size_t max_width = 100;
  // Top-level sections shown only with `verbose` (a spec's echo, derived figures); without it
  // the table ends with a line naming them.
  std::vector<std::string> verbose_sections;
  bool verbose = false;
};

// "table", "wide" or "json"; an error listing them otherwise.
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
std::string RenderTable(const Report& report, const TableOptions& options = {});
// kWide is RenderTable with no width limit.
std::string Render(const Report& report, OutputFormat format, const TableOptions& options = {});

// Code points of UTF-8 text: the columns it takes on a terminal (every character Seedance
// prints, "–" and "…" included, is one column wide).
size_t DisplayWidth(std::string_view text);

// Numbers in a report's sentences (verdicts): "%.*f" with `digits` decimals, and "%.*g" with
// `significant` digits ("0.113", "17.4", "9.55e+03").
std::string FixedText(double v, int digits);
std::string SignificantText(double v, int significant = 3);

// "1.5 GiB", "512 B": binary units, three significant digits.
std::string HumanBytes(double bytes);

}  // namespace seedance::base
