// The power model of a GPU node (feature COST-7): the IT power of a node as a sum of terms, the
// facility power through the PUE, energy per step and per token; and a least-squares fit of the
// model's coefficients from measured samples.
//
//   P_gpu(u)      = TDP * (idle_fraction + (1 - idle_fraction) * u)        per GPU, u in [0, 1]
//   P_it          = base_watts
//                 + gpus * P_gpu(gpu_utilization)
//                 + cpu_watts_per_pct * cpu_utilization_pct
//                 + memory_watts_per_gbytes_per_s * memory_bandwidth_gbytes_per_s
//                 + nvme_watts_per_kiops * nvme_kiops
//                 + cooling_watts_per_kelvin * inlet_above_setpoint_k
//   P_facility    = P_it * pue
//   energy/step   = P_facility * step_time_s                  (joules)
//   energy/token  = energy/step / tokens_per_step
//
// Defaults (docs/design/cost.md gives each one's source): the CPU, memory-bandwidth and NVMe
// coefficients and the PUE are the design notes' (0.82 W per % of CPU, 0.15 W per GB/s, 0.003 W
// per thousand IOPS, PUE 1.28); idle_fraction 1 is the datasheet bound (every GPU at its TDP
// whatever it does) until a fit or a measurement replaces it; base_watts and the cooling
// coefficient are 0 (no published figure: state yours or fit them).
//
// Thread safety: plain values and pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/report.h"
#include "seedance/base/status.h"

namespace seedance::base {
class YamlMap;
}

namespace seedance::cost {

struct PowerCoefficients {
  double base_watts = 0;
  double gpu_idle_fraction = 1.0;  // share of TDP drawn at zero utilization
  double cpu_watts_per_pct = 0.82;
  double memory_watts_per_gbytes_per_s = 0.15;
  double nvme_watts_per_kiops = 0.003;
  double cooling_watts_per_kelvin = 0;
  double pue = 1.28;
};

// What the node does: the model's inputs.
struct NodeLoad {
  int gpus = 8;
  double gpu_tdp_watts = 700;
  double gpu_utilization = 1.0;  // [0, 1]
  double cpu_utilization_pct = 0;
  double memory_bandwidth_gbytes_per_s = 0;
  double nvme_kiops = 0;
  double inlet_above_setpoint_k = 0;
};

struct PowerBreakdown {
  double base_watts = 0, gpu_watts = 0, cpu_watts = 0, memory_watts = 0, nvme_watts = 0,
         cooling_watts = 0;
  double it_watts = 0;        // the sum of the terms
  double facility_watts = 0;  // it_watts * pue
};

PowerBreakdown NodePower(const PowerCoefficients& c, const NodeLoad& load);

// Reads the `coefficients:` mapping (every key optional, defaults above) of a YAML input;
// errors name file, line and key (a PUE below 1, a negative coefficient, an idle fraction
// outside [0, 1]).
base::StatusOr<PowerCoefficients> ReadPowerCoefficients(const base::YamlMap& map);

// `seedancectl cost power --input FILE`: the node's power and, when `step:` gives step_time_s
// and tokens_per_step, the energy per step and per token. The YAML:
//   gpu: H100-SXM          # catalog id: its TDP (or gpu_tdp_watts: 700)
//   gpus: 8
//   load: {gpu_utilization: 0.7, cpu_utilization_pct: 30, memory_bandwidth_gbytes_per_s: 40,
//          nvme_kiops: 5, inlet_above_setpoint_k: 0}
//   coefficients: {...}    # PowerCoefficients, every key optional
//   step: {step_time_s: 1.2, tokens_per_step: 524288}
struct PowerSpec {
  NodeLoad load;
  PowerCoefficients coefficients;
  double step_time_s = 0;      // 0: no per-step figures
  double tokens_per_step = 0;  // 0: no per-token figure
  std::string gpu;             // catalog id the TDP came from, or "" when given directly
};
class GpuCatalog;
base::StatusOr<PowerSpec> ParsePowerSpec(std::string_view yaml, const std::string& file,
                                         const GpuCatalog& catalog);
base::Report PowerReport(const PowerSpec& spec);

// ---- Fitting the coefficients to measurements ----------------------------------------------

// One measured sample: the node's IT power (watts before the PUE, e.g. from RAPL or a PDU) and
// the load terms at that moment.
struct PowerSample {
  double watts = 0;
  double gpu_busy_tdp_watts = 0;  // sum over the GPUs of TDP * utilization
  double gpu_tdp_watts = 0;       // sum over the GPUs of TDP: the same in every sample of a fit
  double cpu_utilization_pct = 0;
  double memory_bandwidth_gbytes_per_s = 0;
  double nvme_kiops = 0;
  double inlet_above_setpoint_k = 0;
};

// Which terms a fit estimates; a term whose column is constant over the samples cannot be told
// apart from the base and is left out (reported as not fitted).
struct PowerFit {
  std::vector<std::string> terms;       // "base_watts", "cpu_watts_per_pct", ...
  std::vector<double> coefficients;     // per term
  std::vector<double> standard_errors;  // per term (residual variance * (X'X)^-1)
  double r_squared = 0;
  double residual_watts_rms = 0;
  int samples = 0;
};

// Ordinary least squares of watts on an intercept and the load columns that vary (CPU, memory
// bandwidth, NVMe, cooling, GPU busy TDP), solved by Householder QR (the normal equations would
// square the condition number). The GPU column's coefficient is 1 - idle_fraction; the intercept
// is base_watts + idle_fraction * gpu_tdp_watts, from which base_watts is recovered (reported
// with the intercept's standard error). Without a varying GPU column the intercept (reported as
// base_watts) includes whatever the GPUs drew at their constant load. Errors: fewer samples than
// terms plus one, a rank-deficient design (proportional columns), gpu_tdp_watts differing between
// samples.
base::StatusOr<PowerFit> FitPower(const std::vector<PowerSample>& samples);

// Samples from a CSV with a `watts` column and any of the load columns
// (cpu_utilization_pct, memory_bandwidth_gbytes_per_s, nvme_kiops, inlet_above_setpoint_k,
// gpu_utilization with gpus and gpu_tdp_watts); errors name file, line and column.
base::StatusOr<std::vector<PowerSample>> ReadPowerSamples(std::string_view csv,
                                                          const std::string& file);
base::Report PowerFitReport(const PowerFit& fit, const std::string& file);

}  // namespace seedance::cost
