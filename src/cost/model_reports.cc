#include "seedance/cost/model_reports.h"

#include "seedance/cost/breakdown.h"
#include "seedance/cost/power.h"
#include "seedance/cost/roi.h"
#include "seedance/cost/tco.h"

namespace seedance::cost {

base::StatusOr<base::Report> TcoYamlReport(std::string_view yaml, const std::string& source,
                                           const GpuCatalog& catalog) {
  SEEDANCE_ASSIGN_OR_RETURN(const TcoSpec spec, ParseTcoSpec(yaml, source, catalog));
  return TcoReport(spec, catalog);
}

base::StatusOr<base::Report> RoiYamlReport(std::string_view yaml, const std::string& source,
                                           const GpuCatalog& catalog) {
  SEEDANCE_ASSIGN_OR_RETURN(const RoiSpec spec, ParseRoiSpec(yaml, source, catalog));
  return RoiReport(spec);
}

base::StatusOr<base::Report> PowerYamlReport(std::string_view yaml, const std::string& source,
                                             const GpuCatalog& catalog) {
  SEEDANCE_ASSIGN_OR_RETURN(const PowerSpec spec, ParsePowerSpec(yaml, source, catalog));
  return PowerReport(spec);
}

base::StatusOr<base::Report> BreakdownYamlReport(std::string_view yaml, const std::string& source,
                                                 const GpuCatalog& catalog) {
  SEEDANCE_ASSIGN_OR_RETURN(const BreakdownSpec spec, ParseBreakdownSpec(yaml, source, catalog));
  return BreakdownReport(spec, catalog);
}

base::StatusOr<base::Report> PowerFitCsvReport(std::string_view csv, const std::string& source) {
  SEEDANCE_ASSIGN_OR_RETURN(const auto samples, ReadPowerSamples(csv, source));
  auto fit = FitPower(samples);
  if (!fit.ok()) return fit.status().WithWhere(source);
  return PowerFitReport(*fit, source);
}

}  // namespace seedance::cost
