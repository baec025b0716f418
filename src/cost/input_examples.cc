#include "seedance/cost/input_examples.h"

#include <string>
#include <utility>

#include "seedance/base/report.h"
#include "seedance/cost/power.h"

namespace seedance::cost {
namespace {

constexpr std::string_view kTco =
    R"(# seedancectl cost tco --input FILE: the cost of a GPU-hour (docs/inputs.md#tco).
# Every key is optional unless marked REQUIRED. This template is an owned cluster; for rented
# GPUs set `ownership: rented`, drop `owned`, and give price_per_gpu_hour_usd or take the
# catalog's dated price.
gpu: H100-SXM            # catalog id (seedancectl catalog list); default H100-SXM
gpus: 64                 # GPUs in the cluster; default 1
precision: bf16          # the dense peak that $/PFLOP-hour divides by; default bf16
utilization: 0.40        # achieved share of that peak (your MFU); default 1.0 (the peak)
ownership: owned         # owned or rented; default rented
# price_per_gpu_hour_usd: 2.50   # rented only: your price; default the catalog's
owned:                   # ownership: owned only
  purchase_price_usd: 25000      # REQUIRED, yours: the accelerator alone, per GPU (no default)
  life_years: 5                  # REQUIRED, yours: depreciation period (no default)
  residual_fraction: 0.1         # value left at the end of the life; default 0
  hours_per_year: 8760           # default 8760 (a calendar year)
  host_share: 0.40               # server beyond its GPUs, per unit of GPU price; default 0.40
                                 #   (SemiAnalysis's DGX H100 cost breakdown, 2023, via Epoch AI)
  network_share: 0.235           # cluster network per unit of server price; default 0.235
                                 #   (Epoch AI: interconnect 19% of cluster cost)
  storage_share: 0.015           # shared storage per unit of server price; default 0.015
                                 #   (Bernstein, 2025: 1-1.5% of AI data-centre capex)
  colocation_usd_per_kw_month: 184.06  # space and cooling per kW of IT load; default 184.06
                                 #   (CBRE North America Data Center Trends H2 2024)
power:
  busy_fraction: 0.8             # share of hours the GPUs compute; default 1.0
  gpus_per_node: 8               # default 8
  cpu_utilization_pct: 20        # the node's CPU load, %; default 0
  memory_bandwidth_gbytes_per_s: 0   # host memory traffic, GB/s; default 0
  nvme_kiops: 0                  # thousands of NVMe IOPS; default 0
  price_per_kwh_usd: 0.0806      # electricity, USD/kWh; default 0.0806 (EIA, US industrial 2023)
  @COEFFICIENTS@
other_usd_per_gpu_hour:
  operations: 0.10               # REQUIRED when owned, yours: staff, support, spares (no default)
  # network: 0.05                # per GPU-hour: replaces owned.network_share's figure
  # storage: 0.02                # per GPU-hour: replaces owned.storage_share's figure
serving:                         # optional: per 1,000 requests and per million tokens
  tokens_per_request: 700
  tokens_per_s_per_gpu: 2500
)";

constexpr std::string_view kRoi =
    R"(# seedancectl cost roi --input FILE: is an optimization worth its cost (docs/inputs.md#roi)?
optimization:
  one_off_cost_usd: 20000        # engineering to adopt it; default 0 (with the next, above 0)
  running_cost_per_month_usd: 500    # default 0
  saving_fraction: 0.15          # share of the baseline spend it saves, 0-1; default 0
baseline:
  gpu: H100-SXM                  # catalog id; default H100-SXM
  gpus: 64                       # default 64
  usd_per_gpu_hour: 2.50         # default 0 = the catalog's dated price for `gpu`
horizon_months: 12               # default 12
sensitivity:                     # the utilization x scale-out matrix
  utilization: {from: 0.4, to: 0.9, steps: 6}   # defaults shown (the design notes' grid)
  scale_out: {from: 1.0, to: 2.5, steps: 5}
  scale_out_efficiency: 0.78     # work grows as scale^this; default 0.78 (design notes)
  max_utilization: 0.9           # the most a repair can reach; default 0.9
rules:
  roi_threshold: 1.8             # repair when ROI is at least this; default 1.8
  min_utilization_for_scale_out: 0.35   # below it, repair first; default 0.35
)";

constexpr std::string_view kPower =
    R"(# seedancectl cost power --input FILE: a node's power and energy (docs/inputs.md#power).
gpu: H100-SXM                    # catalog id, for its TDP; default H100-SXM
# gpu_tdp_watts: 700             # instead of gpu: the TDP itself
gpus: 8                          # GPUs in the node; default 8
load:
  gpu_utilization: 1.0           # 0-1; default 1.0
  cpu_utilization_pct: 0         # %; default 0
  memory_bandwidth_gbytes_per_s: 0   # default 0
  nvme_kiops: 0                  # default 0
  inlet_above_setpoint_k: 0      # kelvin; default 0
@COEFFICIENTS@
step:                            # optional: energy per step and per token
  step_time_s: 1.3
  tokens_per_step: 2097152
)";

constexpr std::string_view kBreakdown =
    R"(# seedancectl cost breakdown --input FILE: a training run's cost, item by item (docs/inputs.md#breakdown).
gpu: H100-SXM                    # catalog id; default H100-SXM
gpus: 64                         # default 8
usd_per_gpu_hour: 2.50           # default 0 = the catalog's dated price for `gpu`
run:                             # REQUIRED
  steps: 10000
  step_time_s: 1.3
storage:                         # every price defaults to 0: not charged unless stated
  checkpoints: 20
  checkpoint_gb: 140
  usd_per_gb_written: 0
  stored_gb: 2800
  usd_per_gb_month: 0.023
network:
  egress_gb: 0
  usd_per_gb_egress: 0
scheduling:
  restarts: 3                    # jobs restarted after a failure
  lost_s_per_restart: 900        # work lost per restart, s
  startup_s: 300                 # start-up time, s
  queue_gpu_hours: 0             # GPU-hours held while queued
)";

// The power model's coefficients at their defaults (power.h), in both the TCO and the power
// templates, `indent` spaces in.
std::string Coefficients(size_t indent) {
  const PowerCoefficients d;
  const std::string pad(indent, ' ');
  std::string out =
      "coefficients:   # the power model's, at their defaults (docs/inputs.md#power)\n";
  for (const auto& [key, value] :
       {std::pair{"base_watts", d.base_watts},
        {"gpu_idle_fraction", d.gpu_idle_fraction},
        {"cpu_watts_per_pct", d.cpu_watts_per_pct},
        {"memory_watts_per_gbytes_per_s", d.memory_watts_per_gbytes_per_s},
        {"nvme_watts_per_kiops", d.nvme_watts_per_kiops},
        {"cooling_watts_per_kelvin", d.cooling_watts_per_kelvin},
        {"pue", d.pue}}) {
    out += pad + "  " + key + ": " + base::SignificantText(value, 6) + "\n";
  }
  return out;
}

std::string WithCoefficients(std::string_view text) {
  std::string out(text);
  const size_t at = out.find("@COEFFICIENTS@\n");
  size_t indent = 0;
  while (at > indent && out[at - indent - 1] == ' ') ++indent;
  out.replace(at, std::string_view("@COEFFICIENTS@\n").size(), Coefficients(indent));
  return out;
}

}  // namespace

std::optional<std::string> InputExample(std::string_view verb) {
  if (verb == "tco") return WithCoefficients(kTco);
  if (verb == "roi") return std::string(kRoi);
  if (verb == "power") return WithCoefficients(kPower);
  if (verb == "breakdown") return std::string(kBreakdown);
  return std::nullopt;
}

}  // namespace seedance::cost
