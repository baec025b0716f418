#include "seedance/base/report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <vector>

#include "seedance/base/enum_names.h"

namespace seedance::base {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string WithThousands(std::string digits) {
  const bool negative = !digits.empty() && digits.front() == '-';
  if (negative) digits.erase(0, 1);
  std::string out;
  const size_t n = digits.size();
  for (size_t i = 0; i < n; ++i) {
    out += digits[i];
    if ((n - i - 1) % 3 == 0 && i + 1 < n) out += ',';
  }
  return negative ? "-" + out : out;
}

std::string FormatDouble(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) {
    return WithThousands(std::to_string(static_cast<long long>(v)));
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

// Numbers that name something (a process, a port, an id) rather than count it: no thousands
// separators. The key is the last part of a dotted path.
bool IsIdentifier(std::string_view key) {
  key = key.substr(key.rfind('.') == std::string_view::npos ? 0 : key.rfind('.') + 1);
  for (std::string_view name : {"pid", "port", "id", "uid", "gid"}) {
    if (key == name || EndsWith(key, "_" + std::string(name))) return true;
  }
  return false;
}

// One cell or value: scalars as text, anything nested as compact JSON.
std::string Cell(std::string_view key, const Report& v) {
  std::string text;
  switch (v.type()) {
    case Report::value_t::null:
      return "-";
    case Report::value_t::boolean:
      return v.get<bool>() ? "true" : "false";
    case Report::value_t::string:
      return v.get<std::string>();
    case Report::value_t::number_integer:
      text = std::to_string(v.get<int64_t>());
      if (!IsIdentifier(key)) text = WithThousands(text);
      break;
    case Report::value_t::number_unsigned:
      text = std::to_string(v.get<uint64_t>());
      if (!IsIdentifier(key)) text = WithThousands(text);
      break;
    case Report::value_t::number_float:
      text = FormatDouble(v.get<double>());
      break;
    case Report::value_t::array: {
      bool scalars =
          std::all_of(v.begin(), v.end(), [](const Report& e) { return e.is_primitive(); });
      if (scalars) {
        std::string out;
        for (const auto& e : v) out += (out.empty() ? "" : ", ") + Cell("", e);
        return out.empty() ? "-" : out;
      }
      return DumpJson(v);
    }
    default:
      return DumpJson(v);
  }
  if (EndsWith(key, "_bytes") && v.is_number()) text += " (" + HumanBytes(v.get<double>()) + ")";
  return text;
}

std::string Title(std::string_view key) {
  std::string out(key);
  for (char& c : out)
    c = c == '_' ? ' ' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool IsListOfObjects(const Report& v) {
  return v.is_array() && !v.empty() &&
         std::all_of(v.begin(), v.end(), [](const Report& e) { return e.is_object(); });
}

// A list of sentences (strings with spaces, such as reasons or notes): one per line, not joined
// with commas.
bool IsListOfSentences(const Report& v) {
  return v.is_array() && !v.empty() && std::all_of(v.begin(), v.end(), [](const Report& e) {
           return e.is_string() && e.get_ref<const std::string&>().find(' ') != std::string::npos;
         });
}

// A figure's interval beside it: an object with an "interval" member whose keys name sibling
// figures ({"step_time_s": 1.9, "interval": {"step_time_s": [1.6, 2.3]}}) shows each as
// "1.9 (1.6–2.3)"; what else the interval holds (its level, notes) stays under "interval".
std::string Short(std::string_view key, double v) {
  if (key.find("_bytes") != std::string_view::npos) return HumanBytes(v);
  if (std::fabs(v) >= 1000 && std::fabs(v) < 1e15) {
    return WithThousands(std::to_string(std::llround(v)));
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

Report FoldIntervals(const Report& obj) {
  if (!obj.is_object() || !obj.contains("interval") || !obj["interval"].is_object()) return obj;
  Report out = Report::object();
  Report rest = Report::object();
  const Report& interval = obj["interval"];
  for (auto it = interval.begin(); it != interval.end(); ++it) {
    const Report& range = it.value();
    const bool pair = range.is_array() && range.size() == 2 && range[0].is_number() &&
                      range[1].is_number() && obj.contains(it.key()) && obj[it.key()].is_number();
    if (!pair) rest[it.key()] = range;
  }
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (it.key() == "interval") {
      if (!rest.empty()) out["interval"] = rest;
      continue;
    }
    const Report* range = interval.contains(it.key()) ? &interval[it.key()] : nullptr;
    if (range != nullptr && range->is_array() && range->size() == 2 && (*range)[0].is_number() &&
        (*range)[1].is_number() && it.value().is_number()) {
      std::string text = Cell(it.key(), it.value());
      const double lo = (*range)[0].get<double>(), hi = (*range)[1].get<double>();
      // "1.6–2.3", but "-0.4 to -0.27" where a dash would read as a minus sign.
      const std::string range_text =
          Short(it.key(), lo) + (lo < 0 || hi < 0 ? " to " : "–") + Short(it.key(), hi);
      if (EndsWith(text, ")")) {  // "... (22.1 GiB)": the range joins the unit's parentheses
        text.insert(text.size() - 1, "; " + range_text);
      } else {
        text += " (" + range_text + ")";
      }
      out[it.key()] = text;
    } else {
      out[it.key()] = it.value();
    }
  }
  return out;
}

// A row's cells: nested objects flattened to dotted keys ("jct_s.p50", the JSON path), and what a
// cell cannot hold — a list of objects, or a list of more than kMaxCellItems values — kept aside
// to be shown under the table.
constexpr size_t kMaxCellItems = 8;
using Cells = std::vector<std::pair<std::string, const Report*>>;

void Flatten(const Report& obj, const std::string& prefix, Cells& cells, Cells& aside) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
    const Report& v = it.value();
    if (v.is_object() && !v.empty()) {
      Flatten(v, key, cells, aside);
    } else if (IsListOfObjects(v) || (v.is_array() && v.size() > kMaxCellItems)) {
      aside.emplace_back(key, &v);
    } else {
      cells.emplace_back(key, &v);
    }
  }
}

// Fitting text to a width (code points; see DisplayWidth).
std::string Pad(const std::string& text, size_t width) {
  const size_t w = DisplayWidth(text);
  return w >= width ? text : text + std::string(width - w, ' ');
}

// The first `columns` code points of `text`.
std::string Prefix(std::string_view text, size_t columns) {
  size_t seen = 0, i = 0;
  for (; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      if (seen == columns) break;
      ++seen;
    }
  }
  return std::string(text.substr(0, i));
}

// At most `columns` wide, ending in "…" when cut.
std::string Cut(const std::string& text, size_t columns) {
  if (columns == 0 || DisplayWidth(text) <= columns) return text;
  return Prefix(text, columns - 1) + "…";
}

// `line` broken at spaces into lines of at most `max` columns, each continuation indented by
// `hang` spaces (a word longer than a line is broken where it must be).
void AppendWrapped(const std::string& line, size_t max, size_t hang, std::string& out) {
  if (max == 0 || DisplayWidth(line) <= max) {
    out += line + "\n";
    return;
  }
  if (hang + 8 >= max) hang = std::min<size_t>(4, max / 2);  // deep nesting: a short hang
  std::string_view rest(line);
  bool first = true;
  while (!rest.empty()) {
    const std::string lead = first ? "" : std::string(hang, ' ');
    const size_t room = max - DisplayWidth(lead);
    if (DisplayWidth(rest) <= room) {
      out += lead + std::string(rest) + "\n";
      break;
    }
    const std::string head = Prefix(rest, room + 1);  // a space just past the room still breaks
    const size_t space = head.rfind(' ');
    const size_t floor = first ? hang : 0;  // never break inside the first line's key
    // At the last space that fits (dropping it), else mid-word at the room's end.
    const bool at_space = space != std::string::npos && space > floor;
    const size_t cut = at_space ? space : Prefix(rest, room).size();
    const size_t next = at_space ? cut + 1 : cut;
    out += lead + std::string(rest.substr(0, cut)) + "\n";
    rest.remove_prefix(next);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    first = false;
  }
}

// A cell of a width-limited table is cut at this many columns.
constexpr size_t kMaxCellColumns = 40;

class Renderer {
 public:
  explicit Renderer(const TableOptions& options) : options_(options) {}

  void Sentences(const Report& v, const std::string& indent, std::string& out) const {
    for (const auto& e : v) {
      AppendWrapped(indent + "- " + e.get<std::string>(), options_.max_width, indent.size() + 2,
                    out);
    }
  }

  void Columns(const Report& given, const std::string& indent, std::string& out) const {
    const bool limited = options_.max_width > 0;
    Report rows = Report::array();
    for (const Report& row : given) rows.push_back(FoldIntervals(row));
    std::vector<Cells> flat(rows.size()), aside(rows.size());
    std::vector<std::string> keys;
    for (size_t r = 0; r < rows.size(); ++r) {
      Flatten(rows[r], "", flat[r], aside[r]);
      for (const auto& [k, v] : flat[r]) {
        if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
      }
    }
    std::vector<std::vector<std::string>> cells;
    for (const Cells& row : flat) {
      std::vector<std::string> line;
      for (const auto& key : keys) {
        auto at =
            std::find_if(row.begin(), row.end(), [&](const auto& e) { return e.first == key; });
        line.push_back(at != row.end() ? Cell(key, *at->second) : "-");
      }
      cells.push_back(std::move(line));
    }
    // Prose (a column with a cell longer than a cell may be, holding spaces: a message, an
    // advice) goes under its row, wrapped, instead of being cut; other long cells are cut.
    std::vector<bool> prose(keys.size(), false);
    if (limited) {
      for (size_t c = 1; c < keys.size(); ++c) {
        prose[c] = std::any_of(cells.begin(), cells.end(), [&](const auto& l) {
          return DisplayWidth(l[c]) > kMaxCellColumns && l[c].find(' ') != std::string::npos;
        });
      }
    }
    // Columns with the same value in every row (compared before any cell is cut).
    std::vector<bool> constant(keys.size(), false);
    for (size_t c = 1; c < keys.size(); ++c) {
      constant[c] = limited && !prose[c] && cells.size() >= 3 &&
                    std::all_of(cells.begin(), cells.end(),
                                [&](const auto& l) { return l[c] == cells[0][c]; });
    }
    if (limited) {
      for (auto& line : cells) {
        for (size_t c = 0; c < keys.size(); ++c) {
          if (!prose[c]) line[c] = Cut(line[c], kMaxCellColumns);
        }
      }
    }
    // Which columns show: all of them wide; else not the ones the same in every row (said once
    // under the table) and no more than fit.
    std::vector<size_t> shown;
    std::vector<std::string> same;
    for (size_t c = 0; c < keys.size(); ++c) {
      if (prose[c]) continue;
      if (!constant[c]) {
        shown.push_back(c);
      } else if (cells[0][c] != "-") {
        same.push_back(Title(keys[c]) + " " + cells[0][c]);
      }
    }
    std::vector<size_t> width(keys.size());
    for (size_t c = 0; c < keys.size(); ++c) {
      width[c] = DisplayWidth(Title(keys[c]));
      for (const auto& line : cells) width[c] = std::max(width[c], DisplayWidth(line[c]));
    }
    size_t more = 0;
    if (limited) {
      const size_t budget = options_.max_width - std::min(options_.max_width, indent.size());
      size_t used = 0, kept = 0;
      for (; kept < shown.size(); ++kept) {
        const size_t need = width[shown[kept]] + (kept == 0 ? 0 : 2);
        if (kept > 0 && used + need > budget) break;
        used += need;
      }
      more = shown.size() - kept;
      shown.resize(kept);
    }
    auto emit = [&](const std::vector<std::string>& line) {
      std::string text = indent;
      for (size_t i = 0; i < shown.size(); ++i) {
        const size_t c = shown[i];
        text += i + 1 < shown.size() ? Pad(line[c], width[c] + 2) : line[c];
      }
      out += text + "\n";
    };
    std::vector<std::string> header;
    header.reserve(keys.size());
    for (const auto& k : keys) header.push_back(Title(k));
    emit(header);
    for (const auto& line : cells) {
      emit(line);
      for (size_t c = 0; c < keys.size(); ++c) {
        if (!prose[c] || line[c] == "-") continue;
        AppendWrapped(indent + "    " + keys[c] + ": " + line[c], options_.max_width,
                      indent.size() + 6, out);
      }
    }
    if (!same.empty()) {
      std::string line = indent + "every row: ";
      for (size_t i = 0; i < same.size(); ++i) line += (i ? ", " : "") + same[i];
      AppendWrapped(line, options_.max_width, indent.size() + 2, out);
    }
    if (more > 0) {
      out += indent + "(" + std::to_string(more) + " more column" + (more == 1 ? "" : "s") +
             ": -o wide)\n";
    }
    // Then what the cells could not hold, row by row, named by the row's first value.
    for (size_t r = 0; r < rows.size(); ++r) {
      const std::string row_name = cells[r].empty() ? "#" + std::to_string(r + 1) : cells[r][0];
      for (const auto& [key, v] : aside[r]) {
        out.append("\n").append(indent).append(row_name).append(": ").append(Title(key)) += "\n";
        if (IsListOfObjects(*v)) {
          Columns(*v, indent + "  ", out);
        } else {
          std::string line;
          for (const auto& e : *v) line.append(line.empty() ? "" : ", ").append(Cell(key, e));
          AppendWrapped(indent + "  " + line, options_.max_width, indent.size() + 2, out);
        }
      }
    }
  }

  void Object(const Report& given, const std::string& indent, std::string& out) const {
    const Report obj = FoldIntervals(given);
    size_t width = 0;
    for (auto it = obj.begin(); it != obj.end(); ++it) width = std::max(width, it.key().size());
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      const Report& v = it.value();
      if (v.is_object()) {
        out += indent + it.key() + ":\n";
        Object(v, indent + "  ", out);
      } else if (IsListOfObjects(v)) {
        out += indent + it.key() + ":\n";
        Columns(v, indent + "  ", out);
      } else if (IsListOfSentences(v)) {
        out += indent + it.key() + ":\n";
        Sentences(v, indent + "  ", out);
      } else {
        AppendWrapped(
            indent + it.key() + std::string(width - it.key().size() + 2, ' ') + Cell(it.key(), v),
            options_.max_width, indent.size() + width + 2, out);
      }
    }
  }

  std::string Document(const Report& report) const {
    std::string out;
    if (!report.is_object()) {
      if (IsListOfObjects(report)) {
        Columns(report, "", out);
      } else {
        out = Cell("", report) + "\n";
      }
      return out;
    }
    // Consecutive top-level scalars form one aligned block; objects and lists
    // of objects become titled sections separated by blank lines.
    Report scalars = Report::object();
    auto flush_scalars = [&] {
      if (scalars.empty()) return;
      if (!out.empty()) out += "\n";
      Object(scalars, "", out);
      scalars = Report::object();
    };
    std::vector<std::string> hidden;
    for (auto it = report.begin(); it != report.end(); ++it) {
      const Report& v = it.value();
      const auto& verbose = options_.verbose_sections;
      if (!options_.verbose &&
          std::find(verbose.begin(), verbose.end(), it.key()) != verbose.end()) {
        hidden.push_back(it.key());
        continue;
      }
      if (v.is_object() || IsListOfObjects(v) || IsListOfSentences(v)) {
        flush_scalars();
        if (!out.empty()) out += "\n";
        out += Title(it.key()) + "\n";
        if (v.is_object()) {
          Object(v, "  ", out);
        } else if (IsListOfObjects(v)) {
          Columns(v, "  ", out);
        } else {
          Sentences(v, "  ", out);
        }
      } else {
        scalars[it.key()] = v;
      }
    }
    flush_scalars();
    if (!hidden.empty()) {
      std::string line = "\n(--verbose adds ";
      for (size_t i = 0; i < hidden.size(); ++i) {
        line += (i == 0 ? "" : i + 1 == hidden.size() ? " and " : ", ") + Title(hidden[i]);
      }
      AppendWrapped(line + ")", options_.max_width, 1, out);
    }
    return out;
  }

 private:
  const TableOptions& options_;
};

}  // namespace

size_t DisplayWidth(std::string_view text) {
  size_t n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

StatusOr<OutputFormat> ParseOutputFormat(std::string_view text, std::string_view where) {
  static constexpr EnumTable<OutputFormat, 3> kNames = {{{OutputFormat::kTable, "table"},
                                                         {OutputFormat::kWide, "wide"},
                                                         {OutputFormat::kJson, "json"}}};
  return ParseEnum(kNames, text, where);
}

std::string DumpJson(const Report& report, int indent) {
  return report.dump(indent, ' ', false, Report::error_handler_t::replace);
}

std::string RenderJson(const Report& report) { return DumpJson(report, 2) + "\n"; }

std::string RenderTable(const Report& report, const TableOptions& options) {
  return Renderer(options).Document(report);
}

std::string Render(const Report& report, OutputFormat format, const TableOptions& options) {
  switch (format) {
    case OutputFormat::kJson:
      return RenderJson(report);
    case OutputFormat::kWide: {
      TableOptions wide = options;
      wide.max_width = 0;
      return RenderTable(report, wide);
    }
    case OutputFormat::kTable:
      break;
  }
  return RenderTable(report, options);
}

std::string FixedText(double v, int digits) {
  char buf[384];  // a double's "%.*f" at up to 15 decimals fits
  std::snprintf(buf, sizeof(buf), "%.*f", std::clamp(digits, 0, 15), v);
  return buf;
}

std::string SignificantText(double v, int significant) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*g", std::clamp(significant, 1, 17), v);
  return buf;
}

std::string HumanBytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int unit = 0;
  double v = bytes;
  while (std::fabs(v) >= 1024.0 && unit < 6) {
    v /= 1024.0;
    ++unit;
  }
  char buf[32];
  if (unit == 0) {
    std::snprintf(buf, sizeof(buf), "%.0f B", v);
  } else {
    // Three significant digits, without switching to exponent form (1020 KiB).
    std::snprintf(buf, sizeof(buf), v >= 100 ? "%.0f %s" : "%.3g %s", v, kUnits[unit]);
  }
  return buf;
}

}  // namespace seedance::base
