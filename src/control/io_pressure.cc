#include "seedance/control/io_pressure.h"

#include <algorithm>
#include <cmath>

#include "seedance/base/parse.h"

namespace seedance::control {
namespace {

base::Status Bad(const std::string& file, size_t line, std::string what) {
  return base::InvalidArgumentError(std::move(what), file + ":" + std::to_string(line + 1));
}

}  // namespace

base::StatusOr<IoPressure> ParseIoPressure(std::string_view text, const std::string& file) {
  IoPressure p;
  bool seen_some = false, seen_full = false;
  const std::vector<std::string_view> lines = base::SplitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::vector<std::string_view> fields = base::SplitFields(lines[i]);
    if (fields.empty()) continue;
    if (fields.size() != 5 || (fields[0] != "some" && fields[0] != "full")) {
      return Bad(file, i, "expected 'some|full avg10=.. avg60=.. avg300=.. total=..'");
    }
    PressureLine& line = fields[0] == "some" ? p.some : p.full;
    bool& seen = fields[0] == "some" ? seen_some : seen_full;
    if (seen) return Bad(file, i, "'" + std::string(fields[0]) + "' appears twice");
    seen = true;
    const char* keys[] = {"avg10=", "avg60=", "avg300=", "total="};
    double* averages[] = {&line.avg10, &line.avg60, &line.avg300};
    for (int k = 0; k < 4; ++k) {
      const std::string_view f = fields[static_cast<size_t>(k) + 1];
      if (!f.starts_with(keys[k])) {
        return Bad(file, i, "field " + std::to_string(k + 2) + ": expected '" + keys[k] + "'");
      }
      const std::string_view value = f.substr(std::string_view(keys[k]).size());
      if (k < 3) {
        const auto v = base::ParseFiniteDouble(value);
        if (!v || *v < 0 || *v > 100) {
          return Bad(
              file, i,
              std::string(keys[k]) + " must be a percentage, got '" + std::string(value) + "'");
        }
        *averages[k] = *v;
      } else {
        const auto v = base::ParseInt64(value);
        if (!v || *v < 0) {
          return Bad(file, i,
                     "total= must be a non-negative integer, got '" + std::string(value) + "'");
        }
        line.total_us = *v;
      }
    }
  }
  if (!seen_some) return base::InvalidArgumentError("no 'some' line", file);
  // Kernels before 5.13 wrote no `full` line for the CPU file; for io both are present, but a
  // missing one is not fatal: `some` is what the controller reads.
  return p;
}

base::StatusOr<IoPressure> ReadIoPressure(base::Env& env) {
  SEEDANCE_ASSIGN_OR_RETURN(std::string text, env.ReadFile(kIoPressurePath));
  return ParseIoPressure(text, kIoPressurePath);
}

double StallShare(const IoPressure& before, const IoPressure& after, double wall_s) {
  if (wall_s <= 0) return 0;
  const double stalled_s = static_cast<double>(after.some.total_us - before.some.total_us) / 1e6;
  return std::clamp(stalled_s / wall_s, 0.0, 1.0);
}

}  // namespace seedance::control
