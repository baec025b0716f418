#include "seedance/cost/reports.h"

#include <algorithm>
#include <set>

#include "seedance/base/csv.h"
#include "seedance/base/parse.h"

namespace seedance::cost {

base::StatusOr<std::vector<Objective>> ParseObjectives(std::string_view text,
                                                       std::string_view where) {
  std::vector<Objective> out;
  std::set<std::string> seen;
  std::vector<std::string_view> items;
  for (size_t start = 0; start <= text.size();) {
    const size_t comma = std::min(text.find(',', start), text.size());
    items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  for (std::string_view item : items) {
    const size_t colon = item.rfind(':');
    if (colon == std::string_view::npos || colon == 0) {
      return base::InvalidArgumentError(
          "expected COLUMN:max or COLUMN:min, got '" + std::string(item) + "'", std::string(where));
    }
    Objective o;
    o.column = std::string(item.substr(0, colon));
    SEEDANCE_ASSIGN_OR_RETURN(o.direction, ParseDirection(item.substr(colon + 1), where));
    if (!seen.insert(o.column).second) {
      return base::InvalidArgumentError("column '" + o.column + "' is named twice",
                                        std::string(where));
    }
    out.push_back(std::move(o));
  }
  if (out.empty() || out.size() > 3) {
    return base::InvalidArgumentError(
        "expected 1 to 3 objectives, got " + std::to_string(out.size()), std::string(where));
  }
  return out;
}

namespace {

// The objective columns of each record of a parsed table, in file order.
base::StatusOr<std::vector<std::vector<double>>> ObjectiveValues(
    const base::CsvTable& table, const std::vector<Objective>& objectives) {
  std::vector<size_t> columns;
  for (const Objective& o : objectives) {
    const auto c = table.Column(o.column);
    if (!c) {
      return base::InvalidArgumentError("no column '" + o.column + "' in the header",
                                        table.file() + ":1");
    }
    columns.push_back(*c);
  }
  std::vector<std::vector<double>> out;
  out.reserve(table.records().size());
  for (const base::CsvRecord& r : table.records()) {
    std::vector<double> point;
    for (size_t c : columns) {
      const auto v = base::ParseFiniteDouble(r.fields[c]);
      if (!v) {
        return base::InvalidArgumentError(
            table.header()[c] + " must be a finite number, got '" + r.fields[c] + "'",
            table.Where(r, c));
      }
      point.push_back(*v);
    }
    out.push_back(std::move(point));
  }
  return out;
}

}  // namespace

base::StatusOr<std::vector<std::vector<double>>> ParetoCsvValues(
    std::string_view csv, const std::string& file, const std::vector<Objective>& objectives) {
  SEEDANCE_ASSIGN_OR_RETURN(const base::CsvTable table, base::CsvTable::Parse(csv, file));
  SEEDANCE_RETURN_IF_ERROR(table.CheckUniqueColumns());
  return ObjectiveValues(table, objectives);
}

base::StatusOr<base::Report> ParetoCsvReport(std::string_view csv, const std::string& file,
                                             const std::vector<Objective>& objectives,
                                             Dominance dominance, bool unique) {
  SEEDANCE_ASSIGN_OR_RETURN(const base::CsvTable table, base::CsvTable::Parse(csv, file));
  SEEDANCE_RETURN_IF_ERROR(table.CheckUniqueColumns());
  SEEDANCE_ASSIGN_OR_RETURN(const auto values, ObjectiveValues(table, objectives));
  std::vector<Direction> directions;
  directions.reserve(objectives.size());
  for (const Objective& o : objectives) directions.push_back(o.direction);
  std::vector<double> points;
  points.reserve(values.size() * objectives.size());
  for (const auto& p : values) points.insert(points.end(), p.begin(), p.end());
  SEEDANCE_ASSIGN_OR_RETURN(const std::vector<size_t> front,
                            unique ? UniqueFront(points, directions, dominance)
                                   : ParetoFront(points, directions, dominance));
  base::Report report = base::Report::object();
  report["input"] = file;
  base::Report objs = base::Report::array();
  for (const Objective& o : objectives) {
    objs.push_back({{"column", o.column}, {"direction", DirectionName(o.direction)}});
  }
  report["objectives"] = std::move(objs);
  report["dominance"] = DominanceName(dominance);
  report["unique"] = unique;
  report["points"] = table.records().size();
  report["front_size"] = front.size();
  base::Report rows = base::Report::array();
  for (size_t i : front) {
    const base::CsvRecord& r = table.records()[i];
    base::Report row = base::Report::object();
    row["row"] = i + 1;
    for (size_t c = 0; c < table.header().size(); ++c) {
      const auto v = base::ParseFiniteDouble(r.fields[c]);
      if (v) {
        row[table.header()[c]] = *v;
      } else {
        row[table.header()[c]] = r.fields[c];
      }
    }
    rows.push_back(std::move(row));
  }
  report["front"] = std::move(rows);
  return report;
}

}  // namespace seedance::cost
