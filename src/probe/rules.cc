#include "seedance/probe/rules.h"

#include <cmath>
#include <cstdio>
#include <map>

namespace seedance::probe {

namespace {

std::string Key(const Value& v) {
  std::string s = v.metric;
  if (!v.labels.empty()) {
    s += "{";
    for (size_t i = 0; i < v.labels.size(); ++i) {
      s += (i ? "," : "") + v.labels[i].first + "=" + v.labels[i].second;
    }
    s += "}";
  }
  return s;
}

std::string Pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.0f%%", v);
  return buf;
}

}  // namespace

double EffectiveComputeFraction(double demand_fraction, double k) {
  return 1.0 - std::exp(-k * demand_fraction);
}

std::vector<Finding> Evaluate(const std::vector<Value>& values, const RuleThresholds& t) {
  std::vector<Finding> out;
  // Per-GPU values by GPU label, for the two-metric rule.
  std::map<std::string, std::map<std::string, double>> gpu;
  for (const auto& v : values) {
    if (v.metric.rfind("gpu.", 0) == 0 && !v.labels.empty())
      gpu[v.labels[0].second][v.metric] = v.value;
  }
  const double knee_pct = 100 * t.saturation_knee;
  for (const auto& v : values) {
    if (v.metric == "gpu.mem_bw") {
      if (v.value > t.gpu_mem_bw_critical_pct) {
        out.push_back({"warning", "gpu_mem_bw_high", Key(v), v.value, t.gpu_mem_bw_critical_pct,
                       "GPU memory busy " + Pct(v.value) + " of the time",
                       "topology-aware placement: keep the job's GPUs in one NVLink domain and its "
                       "CPU threads on the GPU's NUMA node (seedancectl topo show)"});
      } else if (v.value > knee_pct) {
        char eff[64];
        std::snprintf(eff, sizeof(eff), "%.0f%%",
                      100 * EffectiveComputeFraction(v.value / 100, t.saturation_k));
        out.push_back({"info", "gpu_mem_bw_knee", Key(v), v.value, knee_pct,
                       "GPU memory busy " + Pct(v.value) +
                           ": past the saturation knee, the bandwidth model leaves " + eff +
                           " of peak compute",
                       "cut bytes moved: lower precision (seedancectl precision), fused kernels"});
      }
    } else if (v.metric == "net.share" && v.value > knee_pct) {
      out.push_back({"warning", "net_saturated", Key(v), v.value, knee_pct,
                     "network at " + Pct(v.value) + " of line rate",
                     "compress gradients: seedance.torch.comm_hook (top-k or int8 with error "
                     "feedback); see seedancectl comm advise"});
    } else if (v.metric == "cpu.iowait" && v.value > t.iowait_pct) {
      out.push_back({"warning", "iowait_high", Key(v), v.value, t.iowait_pct,
                     "CPUs waiting on I/O " + Pct(v.value) + " of the time",
                     "storage or input pipeline bound: cache the data set on local NVMe, more "
                     "DataLoader workers with prefetch"});
    } else if (v.metric == "gpu.mem_used" && v.value > t.gpu_mem_pressure_pct) {
      out.push_back({"warning", "gpu_mem_pressure", Key(v), v.value, t.gpu_mem_pressure_pct,
                     "GPU memory " + Pct(v.value) + " used",
                     "quantize (KV cache int8/int4: seedancectl kv estimate) or plan memory reuse "
                     "(seedancectl mem plan)"});
    } else if (v.metric == "gpu.util" && v.value < t.gpu_light_load_pct) {
      out.push_back({"info", "gpu_underused", Key(v), v.value, t.gpu_light_load_pct,
                     "GPU busy only " + Pct(v.value) + " of the time",
                     "pack more work per GPU or scale down; check the input pipeline "
                     "(seedance.torch.numa_worker_init_fn)"});
    }
  }
  for (const auto& [index, m] : gpu) {
    auto util = m.find("gpu.util");
    auto mem = m.find("gpu.mem_used");
    if (util != m.end() && mem != m.end() && util->second > t.gpu_busy_pct &&
        mem->second < t.gpu_mem_spare_pct) {
      out.push_back(
          {"info", "mixed_precision_candidate", "gpu.util{gpu=" + index + "}", util->second,
           t.gpu_busy_pct,
           "GPU busy " + Pct(util->second) + " with " + Pct(mem->second) + " of its memory used",
           "compute-bound with memory to spare: FP16/BF16 autocast "
           "(seedance.torch.GradScaler)"});
    }
  }
  return out;
}

base::Report FindingsToReport(const std::vector<Finding>& findings) {
  base::Report list = base::Report::array();
  for (const auto& f : findings) {
    list.push_back({{"severity", f.severity},
                    {"rule", f.rule},
                    {"metric", f.metric},
                    {"value", f.value},
                    {"threshold", f.threshold},
                    {"message", f.message},
                    {"advice", f.advice}});
  }
  return list;
}

}  // namespace seedance::probe
