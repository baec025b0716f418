// The cost breakdown of a training job (feature COST-6): what a run costs in compute, storage
// I/O, network and scheduling overhead, from measured or planned inputs.
//
//   compute     = gpus * steps * step_time_s / 3600 * usd_per_gpu_hour
//   storage     = checkpoints * checkpoint_gb * usd_per_gb_written
//                 + stored_gb * months * usd_per_gb_month
//   network     = egress_gb * usd_per_gb_egress
//   scheduling  = gpus * (restarts * lost_s_per_restart + startup_s) / 3600 * usd_per_gpu_hour
//                 + queue_gpu_hours * usd_per_gpu_hour   (GPUs held while waiting, if billed)
// with `months` = the run's wall time (compute + scheduling) in months. Each price is yours (the
// storage and network prices default to 0: not charged unless stated); the GPU-hour price
// defaults to the catalog's, reported with its kind, date and source.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/cost/gpu_catalog.h"

namespace seedance::cost {

struct BreakdownSpec {
  std::string gpu = "H100-SXM";
  int64_t gpus = 8;
  double usd_per_gpu_hour = 0;  // 0 in the file: the catalog's
  // run
  double steps = 0;
  double step_time_s = 0;
  // storage
  double checkpoints = 0;
  double checkpoint_gb = 0;
  double usd_per_gb_written = 0;
  double stored_gb = 0;
  double usd_per_gb_month = 0;
  // network
  double egress_gb = 0;
  double usd_per_gb_egress = 0;
  // scheduling
  double restarts = 0;
  double lost_s_per_restart = 0;
  double startup_s = 0;
  double queue_gpu_hours = 0;
};

// The YAML:
//   gpu: H100-SXM
//   gpus: 64
//   usd_per_gpu_hour: 2.5
//   run: {steps: 10000, step_time_s: 1.3}                        # required
//   storage: {checkpoints: 20, checkpoint_gb: 140, usd_per_gb_written: 0, stored_gb: 2800,
//             usd_per_gb_month: 0.023}
//   network: {egress_gb: 0, usd_per_gb_egress: 0}
//   scheduling: {restarts: 3, lost_s_per_restart: 900, startup_s: 300, queue_gpu_hours: 0}
base::StatusOr<BreakdownSpec> ParseBreakdownSpec(std::string_view yaml, const std::string& file,
                                                 const GpuCatalog& catalog);

struct CostItem {
  std::string item;  // compute, storage_io, network, scheduling_overhead
  double usd = 0;
};

// A run's cost, item by item.
struct RunCost {
  double usd_per_gpu_hour = 0;
  bool catalog_price = false;  // the price is the catalog's (the spec gave none)
  std::vector<CostItem> items;
  double total_usd = 0;
  double gpu_hours = 0;  // the run's, its overheads' and the queue's
  double wall_hours = 0;
};

RunCost ComputeBreakdown(const BreakdownSpec& spec, const GpuCatalog& catalog);

// The report of `seedancectl cost breakdown`: each item's USD and share of the total, the run's
// GPU-hours and wall time.
base::Report BreakdownReport(const BreakdownSpec& spec, const GpuCatalog& catalog);

}  // namespace seedance::cost
