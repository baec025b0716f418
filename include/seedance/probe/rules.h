// Findings with advice (SPEC PROBE-3, PROBE-4): a documented rule table over
// window values. Every threshold is a named setting whose default comes from
// the design notes (docs/design/node.md lists each rule with its source):
//
//   gpu.mem_bw > 90 %                       -> topology-aware placement (002 ch.1)
//   gpu.mem_bw > 70 %                       -> near the bandwidth-saturation knee:
//                                              effective compute 1 - exp(-0.8 x) (001 §2.1)
//   net.share > 70 % of line rate           -> gradient compression (same knee, 001 §2.1;
//                                              advice from 002 ch.1)
//   cpu.iowait > 12 %                       -> storage / input pipeline bound (002 §2.3)
//   gpu.util > 85 % and gpu.mem_used < 60 % -> FP16/BF16 mixed precision (002 §2.1)
//   gpu.mem_used > 85 %                     -> quantize or plan memory (002 §2.1)
//   gpu.util < 40 %                         -> GPU underused: pack or scale down (002 §4.4)
#pragma once

#include <string>
#include <vector>

#include "seedance/base/report.h"
#include "seedance/probe/probe.h"

namespace seedance::probe {

struct RuleThresholds {
  double gpu_mem_bw_critical_pct = 90;  // note 002 ch.1
  double saturation_knee = 0.70;        // note 001 §2.1: x/B beyond ~0.7
  double saturation_k = 0.8;            // note 001 §2.1: f(x) = 1 - exp(-k x / B)
  double iowait_pct = 12;               // note 002 §2.3
  double gpu_busy_pct = 85;             // note 002 §2.1
  double gpu_mem_spare_pct = 60;        // note 002 §2.1
  double gpu_mem_pressure_pct = 85;     // note 002 §2.1
  double gpu_light_load_pct = 40;       // note 002 §4.4
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

// Bandwidth-saturation model of note 001 §2.1: the fraction of peak compute
// left when demand is `demand_fraction` of peak bandwidth: 1 - exp(-k x).
double EffectiveComputeFraction(double demand_fraction, double k = 0.8);

std::vector<Finding> Evaluate(const std::vector<Value>& values, const RuleThresholds& t = {});

base::Report FindingsToReport(const std::vector<Finding>& findings);

}  // namespace seedance::probe
