#include "seedance/plan/serving.h"

#include <algorithm>
#include <cmath>

#include "seedance/plan/model_figures.h"

namespace seedance::plan {
namespace {

// Bytes per GPU of a replica with TP `t` holding `requests` requests of `context` tokens.
double ReplicaBytes(const JobSpec& spec, const ModelFigures& f, int64_t t, double kv_per_token,
                    double requests, double context, const MemorySettings& memory) {
  const ServingSpec& s = spec.serving;
  const double tt = static_cast<double>(t);
  const double e = base::NumericFormatBytes(s.precision);
  const double weights = static_cast<double>(f.parameters) * e / tt;
  const double kv = kv_per_token * context * requests / tt;
  // A decode step's activations (a few h-wide vectors per request) and fp32 logits.
  const double step = requests * (8 * static_cast<double>(spec.model.hidden_size) * 2 +
                                  4 * static_cast<double>(spec.model.vocab_size) / tt);
  return (weights + kv + step) * (1 + memory.fragmentation_fraction) +
         static_cast<double>(memory.runtime_reserve_bytes);
}

}  // namespace

std::vector<KvPrecision> AdmittedKvPrecisions(const ServingSpec& serving) {
  std::vector<KvPrecision> out;
  for (const KvPrecision& p : MeasuredKvPrecisions()) {
    if (p.engine != serving.engine) continue;
    const bool named = serving.kv_precision == p.name;
    if (named || (serving.kv_precision == "auto" && p.kl_mean <= serving.max_kv_kl)) {
      out.push_back(p);
    }
  }
  return out;
}

ServingEvaluation EvaluateServing(const JobSpec& spec, const cost::GpuSpec& gpu, int64_t tensor,
                                  const KvPrecision& kv, const MemorySettings& memory,
                                  const HardwareModel& hw) {
  const ServingSpec& s = spec.serving;
  const ModelSpec& m = spec.model;
  const ModelFigures f = ComputeModelFigures(m);
  const Links links = ResolveLinks(spec.hardware, gpu);
  const double capacity = static_cast<double>(gpu.MemoryBytes());
  ServingEvaluation e;
  e.tensor = tensor;
  e.kv = kv;
  e.kv_bits_per_value = KvBitsPerValue(kv, s.precision);
  const double kv_per_token = KvCacheBytesPerTokenAtBits(m, e.kv_bits_per_value);
  e.replicas = spec.hardware.total_gpus() / tensor;
  e.requests_per_replica = (s.concurrent_requests + e.replicas - 1) / e.replicas;
  const double b = static_cast<double>(e.requests_per_replica);
  const double context = static_cast<double>(s.context_length);
  const double bytes = ReplicaBytes(spec, f, tensor, kv_per_token, b, context, memory);
  e.memory_bytes_per_gpu = static_cast<int64_t>(std::min(std::ceil(bytes), 0x1p62));
  e.fits = bytes <= capacity;
  // The largest whole number of requests per replica, and context, that still fit (the bytes
  // grow linearly in each).
  const double empty = ReplicaBytes(spec, f, tensor, kv_per_token, 0, context, memory);
  const double per_request =
      ReplicaBytes(spec, f, tensor, kv_per_token, 1, context, memory) - empty;
  if (capacity > empty && per_request > 0) {
    const double n = std::floor((capacity - empty) / per_request);
    e.max_concurrent_requests =
        static_cast<int64_t>(std::min(n, 1e15)) * e.replicas;  // bounded for the cast
  }
  const double no_context = ReplicaBytes(spec, f, tensor, kv_per_token, b, 0, memory);
  const double per_token = ReplicaBytes(spec, f, tensor, kv_per_token, b, 1, memory) - no_context;
  if (capacity > no_context && per_token > 0) {
    // What fits, and never past the model's own context.
    e.max_context_length = static_cast<int64_t>(std::min(
        std::floor((capacity - no_context) / per_token), static_cast<double>(m.sequence_length)));
  }
  // Decode step.
  const double tt = static_cast<double>(tensor);
  const double ew = base::NumericFormatBytes(s.precision);
  const double read =
      static_cast<double>(f.parameters) * ew / tt + kv_per_token * context / 2 * b / tt;
  // The training model's anchors: the streaming share of HBM, the GEMMs' MAMF share (the
  // datasheet peak where no row measures this GPU), the gaps between kernels, NVLink's curve.
  const ModelCoefficients& k = hw.coefficients;
  const double hbm =
      gpu.memory_bandwidth_gbytes_per_s * 1e9 * hw.curves.stream_fraction * k[Coef::kMemoryBound];
  const double mamf = MamfFraction(gpu, s.precision);
  const double peak =
      gpu.DenseTflops(s.precision).value_or(0) * 1e12 * (mamf > 0 ? mamf * k[Coef::kGemm] : 1.0);
  const double flops = 2 * static_cast<double>(f.parameters) / tt * b;
  const double layers = static_cast<double>(m.layers);
  // With TP, two ring all-reduces per layer of `tokens` x hidden bf16 activations.
  const auto tp_all_reduces_s = [&](double tokens) {
    if (tensor <= 1) return 0.0;
    const double message = 2.0 * tokens * static_cast<double>(m.hidden_size);
    const LinkCurve& curve =
        FamilyOf(gpu) == GpuFamily::kAmpere ? hw.curves.nvlink_ampere : hw.curves.nvlink_hopper;
    return layers * 2 *
           (2 * (tt - 1) / tt * message /
                (links.intra_node_gbytes_per_s * 1e9 * curve.busbw_fraction) +
            curve.latency_s);
  };
  const double step = std::max(read / hbm, peak > 0 ? flops / peak : 0.0) +
                      layers * 10 * k[Coef::kKernelGap] + tp_all_reduces_s(b);
  e.decode_step_s = step;
  // Prefill of one request's prompt of p tokens, alone on the replica: the larger of its FLOPs
  // (2 x parameters x p, and causal attention's QK^T and AV, 2 x layers x p^2 x h) at the GEMM
  // rate and one read of the weights, plus the kernels and, with TP, two all-reduces per layer of
  // p x h values.
  const double p = static_cast<double>(s.prompt_length);
  const double h = static_cast<double>(m.hidden_size);
  const double prefill_flops =
      (2 * static_cast<double>(f.parameters) * p + 2 * layers * p * p * h) / tt;
  const double prefill = std::max(peak > 0 ? prefill_flops / peak : 0.0,
                                  static_cast<double>(f.parameters) * ew / tt / hbm) +
                         layers * 10 * k[Coef::kKernelGap] + tp_all_reduces_s(p);
  e.prefill_s = prefill;
  e.prefill_tokens_per_s_per_gpu = p / prefill * static_cast<double>(e.replicas) /
                                   static_cast<double>(spec.hardware.total_gpus());
  e.tokens_per_s = b / step * static_cast<double>(e.replicas);
  const double gpus = static_cast<double>(spec.hardware.total_gpus());
  e.tokens_per_s_per_gpu = e.tokens_per_s / gpus;
  e.cost_per_million_tokens_usd = spec.price_per_gpu_hour_usd * gpus / 3600 / e.tokens_per_s * 1e6;
  return e;
}

std::vector<ServingEvaluation> SearchServing(const JobSpec& spec, const cost::GpuSpec& gpu) {
  std::vector<ServingEvaluation> out;
  const ModelSpec& m = spec.model;
  const std::vector<KvPrecision> widths = AdmittedKvPrecisions(spec.serving);
  for (int64_t t = 1; t <= spec.hardware.gpus_per_node; ++t) {
    if (spec.hardware.gpus_per_node % t != 0 || m.attention_heads % t != 0 || m.kv_heads % t != 0) {
      continue;
    }
    for (const KvPrecision& kv : widths) out.push_back(EvaluateServing(spec, gpu, t, kv));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const ServingEvaluation& a, const ServingEvaluation& b) {
                     if (a.fits != b.fits) return a.fits;
                     // Equal within rounding: the more faithful cache.
                     const double scale = std::max(a.tokens_per_s_per_gpu, b.tokens_per_s_per_gpu);
                     if (std::abs(a.tokens_per_s_per_gpu - b.tokens_per_s_per_gpu) > 1e-9 * scale) {
                       return a.tokens_per_s_per_gpu > b.tokens_per_s_per_gpu;
                     }
                     return a.kv.kl_mean < b.kv.kl_mean;
                   });
  return out;
}

base::Report ServingEvaluationToReport(const ServingEvaluation& e) {
  base::Report r = base::Report::object();
  r["tensor"] = e.tensor;
  r["kv_precision"] = std::string(e.kv.name);
  r["kv_bits_per_value"] = e.kv_bits_per_value;
  r["engine"] = std::string(ServingEngineName(e.kv.engine));
  r["kv_kl_mean"] = e.kv.kl_mean;
  r["kv_top1_agreement"] = e.kv.top1_agreement;
  r["replicas"] = e.replicas;
  r["requests_per_replica"] = e.requests_per_replica;
  r["fits"] = e.fits;
  r["memory_bytes_per_gpu"] = e.memory_bytes_per_gpu;
  r["max_concurrent_requests"] = e.max_concurrent_requests;
  r["max_context_length"] = e.max_context_length;
  r["decode_step_s"] = e.decode_step_s;
  r["tokens_per_s"] = e.tokens_per_s;
  r["tokens_per_s_per_gpu"] = e.tokens_per_s_per_gpu;
  r["cost_per_million_tokens_usd"] = e.cost_per_million_tokens_usd;
  r["prefill_s"] = e.prefill_s;
  r["prefill_tokens_per_s_per_gpu"] = e.prefill_tokens_per_s_per_gpu;
  return r;
}

}  // namespace seedance::plan
