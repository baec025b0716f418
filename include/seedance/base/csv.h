// A strict CSV reader for Seedance's data files (allocation lifetimes,
// cluster traces): a header row naming the columns, then one record per line.
//
// Rules: fields are separated by commas; a field may be quoted with double
// quotes ("" inside quotes is one quote); quoted fields may not span lines;
// CRLF line ends are accepted; blank lines are skipped. Every record must
// have exactly as many fields as the header. Errors name "<file>:<line>".
//
// Thread safety: CsvTable is immutable once made.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/parse.h"  // ParseInt64, the reader of integer fields
#include "seedance/base/status.h"

namespace seedance::base {

struct CsvRecord {
  int line = 0;  // 1-based line number in the file
  std::vector<std::string> fields;
};

class CsvTable {
 public:
  // Parses `text`; `file` names it in errors.
  static StatusOr<CsvTable> Parse(std::string_view text, const std::string& file);

  const std::string& file() const { return file_; }
  const std::vector<std::string>& header() const { return header_; }
  const std::vector<CsvRecord>& records() const { return records_; }

  // Index of a column, or nullopt.
  std::optional<size_t> Column(std::string_view name) const;
  // An error at the header line when two columns share a name (for readers that take any
  // columns and would otherwise read one of the two).
  Status CheckUniqueColumns() const;
  // Every column must be one of `allowed` and each of `required` must exist;
  // a column may not repeat. Errors point at the header line.
  Status CheckColumns(std::initializer_list<std::string_view> required,
                      std::initializer_list<std::string_view> allowed) const;

  // "<file>:<line>: <column>" for a field of a record.
  std::string Where(const CsvRecord& record, size_t column) const;

  // Typed field access. Errors: "<column> must be an integer, got 'x'" with Where().
  StatusOr<int64_t> Int(const CsvRecord& record, size_t column) const;

 private:
  std::string file_;
  int header_line_ = 0;
  std::vector<std::string> header_;
  std::vector<CsvRecord> records_;
};

}  // namespace seedance::base
