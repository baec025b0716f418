// The cost model's reports from their YAML inputs, one call each: what `seedancectl cost
// tco|roi|power|breakdown|power-fit` print and seedance.cost's functions of the same names
// return. `source` names the text in errors ("(defaults)" for the built-in "{}").
#pragma once

#include <string>
#include <string_view>

#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/cost/gpu_catalog.h"

namespace seedance::cost {

base::StatusOr<base::Report> TcoYamlReport(std::string_view yaml, const std::string& source,
                                           const GpuCatalog& catalog);
base::StatusOr<base::Report> RoiYamlReport(std::string_view yaml, const std::string& source,
                                           const GpuCatalog& catalog);
base::StatusOr<base::Report> PowerYamlReport(std::string_view yaml, const std::string& source,
                                             const GpuCatalog& catalog);
base::StatusOr<base::Report> BreakdownYamlReport(std::string_view yaml, const std::string& source,
                                                 const GpuCatalog& catalog);
// The fit of a samples CSV.
base::StatusOr<base::Report> PowerFitCsvReport(std::string_view csv, const std::string& source);

}  // namespace seedance::cost
