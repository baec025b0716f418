#include "seedance/base/csv.h"

#include <charconv>

namespace seedance::base {
namespace {

// Splits one line into fields. Returns an error message on a bad quote.
std::optional<std::string> SplitLine(std::string_view line, std::vector<std::string>& fields) {
  fields.clear();
  std::string field;
  size_t i = 0;
  bool quoted = false;
  while (true) {
    if (i < line.size() && line[i] == '"' && field.empty() && !quoted) {
      quoted = true;
      ++i;
      while (true) {
        if (i >= line.size()) return "unterminated quoted field";
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field += line[i++];
      }
      if (i < line.size() && line[i] != ',') return "text after a closing quote";
    }
    if (i >= line.size()) {
      fields.push_back(std::move(field));
      return std::nullopt;
    }
    if (line[i] == ',') {
      fields.push_back(std::move(field));
      field.clear();
      quoted = false;
      ++i;
      continue;
    }
    if (line[i] == '"') return "a quote inside an unquoted field";
    field += line[i++];
  }
}

}  // namespace

StatusOr<CsvTable> CsvTable::Parse(std::string_view text, const std::string& file) {
  CsvTable table;
  table.file_ = file;
  // A UTF-8 byte-order mark (spreadsheets write one) is not part of the first column's name.
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  int line_no = 0;
  size_t pos = 0;
  std::vector<std::string> fields;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) {
      if (end == text.size()) break;
      continue;
    }
    if (auto err = SplitLine(line, fields)) {
      return InvalidArgumentError(*err, file + ":" + std::to_string(line_no));
    }
    if (table.header_.empty()) {
      table.header_ = fields;
      table.header_line_ = line_no;
    } else {
      if (fields.size() != table.header_.size()) {
        return InvalidArgumentError(
            "expected " + std::to_string(table.header_.size()) + " fields (" +
                [&] {
                  std::string h;
                  for (const auto& c : table.header_) h += (h.empty() ? "" : ",") + c;
                  return h;
                }() +
                "), got " + std::to_string(fields.size()),
            file + ":" + std::to_string(line_no));
      }
      table.records_.push_back(CsvRecord{line_no, fields});
    }
    if (end == text.size()) break;
  }
  if (table.header_.empty()) return InvalidArgumentError("no header row", file + ":1");
  return table;
}

Status CsvTable::CheckUniqueColumns() const {
  for (size_t i = 0; i < header_.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (header_[j] == header_[i]) {
        return InvalidArgumentError("column '" + header_[i] + "' appears twice (columns " +
                                        std::to_string(j + 1) + " and " + std::to_string(i + 1) +
                                        ")",
                                    file_ + ":" + std::to_string(header_line_));
      }
    }
  }
  return OkStatus();
}

std::optional<size_t> CsvTable::Column(std::string_view name) const {
  for (size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == name) return i;
  }
  return std::nullopt;
}

Status CsvTable::CheckColumns(std::initializer_list<std::string_view> required,
                              std::initializer_list<std::string_view> allowed) const {
  const std::string where = file_ + ":" + std::to_string(header_line_);
  std::string allowed_list;
  for (std::string_view a : allowed)
    allowed_list += (allowed_list.empty() ? "" : ", ") + std::string(a);
  for (size_t i = 0; i < header_.size(); ++i) {
    bool known = false;
    for (std::string_view a : allowed) known = known || a == header_[i];
    if (!known) {
      return InvalidArgumentError(
          "unknown column '" + header_[i] + "' (expected: " + allowed_list + ")", where);
    }
    for (size_t j = 0; j < i; ++j) {
      if (header_[j] == header_[i]) {
        return InvalidArgumentError("column '" + header_[i] + "' appears twice", where);
      }
    }
  }
  for (std::string_view r : required) {
    if (!Column(r)) return InvalidArgumentError("missing column '" + std::string(r) + "'", where);
  }
  return OkStatus();
}

std::string CsvTable::Where(const CsvRecord& record, size_t column) const {
  return file_ + ":" + std::to_string(record.line) + ": " + header_[column];
}

StatusOr<int64_t> CsvTable::Int(const CsvRecord& record, size_t column) const {
  const std::string& text = record.fields[column];
  auto v = ParseInt64(text);
  if (!v) {
    const bool digits =
        !text.empty() && text.find_first_not_of("+-0123456789") == std::string::npos;
    return InvalidArgumentError(
        "'" + header_[column] + "' must be " +
            (digits ? std::string("an integer that fits in 64 bits") : std::string("an integer")) +
            ", got '" + text + "'",
        Where(record, column));
  }
  return *v;
}

}  // namespace seedance::base
