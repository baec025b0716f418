// The reports of `seedancectl cost` verbs that read files (the comparison's report is in
// bench_compare.h): built here so the CLI and Python print the same thing.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/cost/pareto.h"

namespace seedance::cost {

struct Objective {
  std::string column;
  Direction direction = Direction::kMax;
};

// "throughput:max,memory:min,power:min" -> objectives; 1 to 3 of them, each column once.
// Errors name `where` (the flag) and the bad item.
base::StatusOr<std::vector<Objective>> ParseObjectives(std::string_view text,
                                                       std::string_view where);

// The objective values of each record of a CSV (a header naming the columns; the objective
// columns must be finite numbers), in file order. Errors name file, line and column.
base::StatusOr<std::vector<std::vector<double>>> ParetoCsvValues(
    std::string_view csv, const std::string& file, const std::vector<Objective>& objectives);

// The front of the points of a CSV (a header naming the columns, one point a line; the objective
// columns must be finite numbers, other columns are carried along as text). The report lists the
// settings, the counts and the front's rows (every column, plus `row`, the point's 1-based
// position among the records) in file order. `unique` keeps one row per distinct point.
base::StatusOr<base::Report> ParetoCsvReport(std::string_view csv, const std::string& file,
                                             const std::vector<Objective>& objectives,
                                             Dominance dominance, bool unique);

}  // namespace seedance::cost
