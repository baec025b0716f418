// Findings with advice (feature PROBE-3, PROBE-4): a documented rule table over
// window values. Every threshold is a named setting whose default comes from
// features PROBE-3 and PROBE-4 (docs/design/node.md lists each rule):
//
//   gpu.mem_bw > 90 %                       -> topology-aware placement
//   gpu.mem_bw > 70 %                       -> near the bandwidth-saturation knee:
//                                              effective compute 1 - exp(-0.8 x)
//   net.share > 70 % of line rate           -> gradient compression (same knee)
//   cpu.iowait > 12 %                       -> storage / input pipeline bound
//   gpu.util > 85 % and gpu.mem_used < 60 % -> FP16/BF16 mixed precision
//   gpu.mem_used > 85 %                     -> quantize or plan memory
//   gpu.util < 40 %                         -> GPU underused: pack or scale down
#pragma once

#include <string>
#include <vector>

#include "seedance/base/report.h"
#include "seedance/probe/probe.h"

namespace seedance::probe {

struct RuleThresholds {
  double gpu_mem_bw_critical_pct = 90;
  double saturation_knee = 0.70;  // x/B beyond ~0.7
  double saturation_k = 0.8;      // f(x) = 1 - exp(-k x / B)
  double iowait_pct = 12;
  double gpu_busy_pct = 85;
  double gpu_mem_spare_pct = 60;
  double gpu_mem_pressure_pct = 85;
  double gpu_light_load_pct = 40;
};

struct Finding {
  std::string severity;  // "info", "warning"
  std::string rule;      // "gpu_mem_bw_high", ...
  std::string metric;    // the value that fired, with labels: "gpu.mem_bw{gpu=0}"
  double value = 0;
  double threshold = 0;
  std::string message;
  std::string advice;
};

// Bandwidth-saturation model (feature PROBE-4): the fraction of peak compute
// left when demand is `demand_fraction` of peak bandwidth: 1 - exp(-k x).
double EffectiveComputeFraction(double demand_fraction, double k = 0.8);

std::vector<Finding> Evaluate(const std::vector<Value>& values, const RuleThresholds& t = {});

base::Report FindingsToReport(const std::vector<Finding>& findings);

}  // namespace seedance::probe
