// Total cost of ownership (feature COST-2): the cost of a GPU-hour as a sum of terms, and from it
// the cost per PFLOP-hour at a stated precision and achieved utilization, and per 1,000 requests
// of a serving job.
//
// Per GPU-hour, in USD:
//   rented:  price            the catalog's dated hourly price (with its kind) or your own;
//                             power is in the price: its energy is reported, not charged again
//   owned:   capex terms, each depreciated as  C * (1 - residual_fraction) / (life_years *
//            hours_per_year):
//              gpu            purchase_price_usd (the accelerator alone)
//              host           host_share * gpu (CPUs, memory, board, chassis: default 0.40)
//              network        network_share * (gpu + host) (default 0.235), unless
//                             other_usd_per_gpu_hour.network gives it per hour
//              storage        storage_share * (gpu + host) (default 0.015), unless
//                             other_usd_per_gpu_hour.storage gives it per hour
//            colocation       IT kW per GPU * colocation_usd_per_kw_month * 12 / hours_per_year
//                             (default 184.06 USD per kW-month)
//            power            P_gpu_share / 1000 * pue * price_per_kwh_usd, where P_gpu_share is
//                             one GPU's draw at busy_fraction plus its share of the node's other
//                             terms (power.h's model, gpus_per_node GPUs to a node)
//            operations       other_usd_per_gpu_hour.operations: staff and support, required
//                             (no neutral published figure)
//   rented:  the instance price holds host, network and local disk; storage and operations
//            beyond it are other_usd_per_gpu_hour's (0 unless given, and the report says so)
// per PFLOP-hour      = per GPU-hour / (dense peak TFLOPS at `precision` * utilization / 1000)
// per 1,000 requests  = per GPU-hour / (tokens_per_s_per_gpu * 3600 / tokens_per_request / 1000)
//
// Defaults and their sources are in docs/design/cost.md and docs/inputs.md; inputs without a
// neutral published figure (the purchase price and life of an owned GPU, its operations) have no
// default and must be given. Every term of the breakdown says what it rests on (`basis`).
//
// Thread safety: plain values and pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "seedance/base/numeric_format.h"
#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/cost/gpu_catalog.h"
#include "seedance/cost/power.h"

namespace seedance::cost {

enum class Ownership { kRented, kOwned };
std::string_view OwnershipName(Ownership o);

struct TcoSpec {
  std::string gpu = "H100-SXM";  // catalog id
  int64_t gpus = 1;
  base::NumericFormat precision = base::NumericFormat::kBf16;
  double utilization = 1.0;  // achieved share of the dense peak; 1 = cost per peak PFLOP-hour
  Ownership ownership = Ownership::kRented;
  // rented: the price; nullopt = the catalog's
  std::optional<double> price_per_gpu_hour_usd;
  // owned
  double purchase_price_usd = 0;  // per GPU: the accelerator alone
  double life_years = 0;
  double residual_fraction = 0;
  double hours_per_year = 8760;
  double host_share = 0.40;      // the server beyond its GPUs, per unit of GPU price
  double network_share = 0.235;  // the cluster network, per unit of server (GPU + host) price
  double storage_share = 0.015;  // shared storage, per unit of server price
  double colocation_usd_per_kw_month = 184.06;  // per kW of IT load
  // power (owned: charged; rented: energy only)
  PowerCoefficients power;
  int gpus_per_node = 8;
  double busy_fraction = 1.0;      // share of hours the GPUs compute (their draw follows it)
  double cpu_utilization_pct = 0;  // the node's other load terms (power.h)
  double memory_bandwidth_gbytes_per_s = 0;
  double nvme_kiops = 0;
  double price_per_kwh_usd = 0.0806;  // US industrial average 2023 (EIA)
  // other running costs per GPU-hour (given: they replace the owned capex shares above)
  std::optional<double> network_usd_per_gpu_hour;
  std::optional<double> storage_usd_per_gpu_hour;
  std::optional<double> operations_usd_per_gpu_hour;
  // serving: per 1,000 requests when both are given
  double tokens_per_request = 0;
  double tokens_per_s_per_gpu = 0;
};

// The YAML (every key optional unless stated):
//   gpu: H100-SXM
//   gpus: 8
//   precision: bf16
//   utilization: 0.45
//   ownership: owned              # or rented
//   price_per_gpu_hour_usd: 2.5   # rented only
//   owned: {purchase_price_usd: 30000, life_years: 5, residual_fraction: 0.1,
//           hours_per_year: 8760, host_share: 0.4, network_share: 0.235, storage_share: 0.015,
//           colocation_usd_per_kw_month: 184.06}   # purchase price and life required
//   (owned also requires other_usd_per_gpu_hour.operations)
//   power: {busy_fraction: 0.8, gpus_per_node: 8, cpu_utilization_pct: 20,
//           memory_bandwidth_gbytes_per_s: 0, nvme_kiops: 0, price_per_kwh_usd: 0.0806,
//           coefficients: {...}}    # power.h's PowerCoefficients
//   other_usd_per_gpu_hour: {network: 0.05, storage: 0.02, operations: 0.1}
//   serving: {tokens_per_request: 700, tokens_per_s_per_gpu: 2500}
// Errors name the file, line and key: a negative price, a life of 0 years, a PUE below 1, a
// precision the GPU has no peak for, price_per_gpu_hour_usd with ownership owned, ...
base::StatusOr<TcoSpec> ParseTcoSpec(std::string_view yaml, const std::string& file,
                                     const GpuCatalog& catalog);

struct TcoBreakdown {
  double compute_usd_per_gpu_hour = 0;     // rent, or the GPU's depreciation
  double host_usd_per_gpu_hour = 0;        // owned
  double colocation_usd_per_gpu_hour = 0;  // owned
  double power_usd_per_gpu_hour = 0;       // 0 when rented
  double network_usd_per_gpu_hour = 0;
  double storage_usd_per_gpu_hour = 0;
  double operations_usd_per_gpu_hour = 0;
  double total_usd_per_gpu_hour = 0;
  double facility_watts_per_gpu = 0;
  double energy_kwh_per_gpu_hour = 0;
  double usd_per_pflop_hour = 0;
  std::optional<double> usd_per_1k_requests;
  std::optional<double> usd_per_million_tokens;
};

// Errors: the GPU is not in the catalog or has no peak at the precision.
base::StatusOr<TcoBreakdown> ComputeTco(const TcoSpec& spec, const GpuCatalog& catalog);

// The report of `seedancectl cost tco`: the inputs (with the price's kind, date and source),
// the breakdown per GPU-hour and the derived figures, per GPU and for the cluster per hour and
// per year.
base::StatusOr<base::Report> TcoReport(const TcoSpec& spec, const GpuCatalog& catalog);

}  // namespace seedance::cost
