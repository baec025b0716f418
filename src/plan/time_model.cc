#include "seedance/plan/time_model.h"

#include <algorithm>

#include "seedance/plan/memory_model.h"

namespace seedance::plan {
namespace {

struct Machine {
  double flops = 0;     // dense peak x gemm fraction, FLOP/s
  double hbm = 0;       // achievable bytes/s
  double overhead = 0;  // s per kernel
  double e = 2;         // bytes per activation element
};

double Gemm(const Machine& m, double rows, double inner, double cols) {
  const double flops = 2 * rows * inner * cols;
  const double bytes = m.e * (rows * inner + inner * cols + rows * cols);
  return std::max(flops / m.flops, bytes / m.hbm) + m.overhead;
}

double Streaming(const Machine& m, double bytes, int kernels) {
  return bytes / m.hbm + kernels * m.overhead;
}

// Ring all-reduce, reduce-scatter and all-gather over `n` ranks.
double AllReduce(double bytes, double n, double link_bytes_per_s, const HardwareModel& hw) {
  if (n <= 1) return 0;
  return 2 * (n - 1) / n * bytes / (link_bytes_per_s * hw.collective_fraction) +
         hw.collective_latency_s;
}
double ReduceScatter(double bytes, double n, double link_bytes_per_s, const HardwareModel& hw) {
  if (n <= 1) return 0;
  return (n - 1) / n * bytes / (link_bytes_per_s * hw.collective_fraction) +
         hw.collective_latency_s;
}

// Forward times of one layer and one micro-batch.
struct LayerForward {
  double gemms = 0, attention = 0, elementwise = 0, tp = 0;
  // Parts of the above that recomputation repeats.
  double qkv = 0, out = 0, mlp_in = 0, mlp_out = 0, norms = 0, activation = 0;
  double total() const { return gemms + attention + elementwise + tp; }
};

LayerForward ForwardOfLayer(const ModelSpec& model, const ParallelConfig& c, const Machine& m,
                            double intra_bytes_per_s, const HardwareModel& hw) {
  const double tokens =
      static_cast<double>(c.micro_batch) * static_cast<double>(model.sequence_length);
  const double s = static_cast<double>(model.sequence_length);
  const double b = static_cast<double>(c.micro_batch);
  const double h = static_cast<double>(model.hidden_size);
  const double kv = static_cast<double>(model.kv_heads) * static_cast<double>(model.head_dim());
  const double f = static_cast<double>(model.ffn_size);
  const double t = static_cast<double>(c.tensor);
  const bool gpt = model.family == "gpt";
  const double sp = c.sequence_parallel ? t : 1;
  LayerForward l;
  l.qkv = Gemm(m, tokens, h, (h + 2 * kv) / t);
  l.out = Gemm(m, tokens, h / t, h);
  l.mlp_in = Gemm(m, tokens, h, (gpt ? 1 : 2) * f / t);
  l.mlp_out = Gemm(m, tokens, f / t, h);
  l.gemms = l.qkv + l.out + l.mlp_in + l.mlp_out;
  // Causal fused attention: half of QK^T and PV; reads Q, K, V and writes the output.
  const double attention_flops = 0.5 * 4 * b * s * s * h / t;
  const double attention_bytes = m.e * tokens * (2 * h + 2 * kv) / t;
  l.attention = std::max(attention_flops / m.flops, attention_bytes / m.hbm) + m.overhead;
  // Two norms (read + write), two residual adds (2 reads + 1 write), the activation, rotary.
  l.norms = Streaming(m, m.e * tokens * h * 4 / sp, 2);
  l.activation = Streaming(m, m.e * tokens * f / t * (gpt ? 2 : 3), 1);
  double other = m.e * tokens * h * 6 / sp;
  if (!gpt) other += 2 * m.e * tokens * (h + kv) / t;
  l.elementwise = l.norms + l.activation + Streaming(m, other, gpt ? 4 : 5);
  if (c.tensor > 1) {
    l.tp = 2 * AllReduce(m.e * tokens * h, t, intra_bytes_per_s, hw);
  }
  return l;
}

Machine MachineFor(const cost::GpuSpec& gpu, const TrainingSpec& training,
                   const HardwareModel& hw) {
  Machine m;
  m.flops = gpu.DenseTflops(training.precision).value_or(0) * 1e12 * hw.gemm_peak_fraction;
  m.hbm = gpu.memory_bandwidth_gbytes_per_s * 1e9 * hw.memory_bandwidth_fraction;
  m.overhead = hw.kernel_overhead_s;
  m.e = StateBytesFor(training).weight;
  return m;
}

}  // namespace

LayerPartSeconds LayerPartForwardSeconds(const JobSpec& spec, const ParallelConfig& c,
                                         const cost::GpuSpec& gpu, const HardwareModel& hw) {
  const Machine m = MachineFor(gpu, TrainingOf(spec.training, c), hw);
  const LayerForward l = ForwardOfLayer(spec.model, c, m, 1, hw);  // no TP traffic needed
  return {.attention_s = l.qkv + l.attention + l.out,
          .mlp_s = l.mlp_in + l.activation + l.mlp_out,
          .norms_s = l.norms};
}

StepTime EstimateStepTime(const JobSpec& spec, const ModelFigures& figures, const ParallelConfig& c,
                          const cost::GpuSpec& gpu, const Links& links, const HardwareModel& hw) {
  const ModelSpec& model = spec.model;
  const TrainingSpec training = TrainingOf(spec.training, c);
  const HardwareSpec& hardware = spec.hardware;
  const StateBytes sb = StateBytesFor(training);
  const Machine m = MachineFor(gpu, training, hw);
  const double intra = links.intra_node_gbytes_per_s * 1e9;
  const double inter = links.inter_node_gbytes_per_s * 1e9;

  const int64_t gpus = hardware.total_gpus();
  const int64_t d = DataParallel(c, gpus);
  const int64_t steps_per_pipeline = training.global_batch / (c.micro_batch * d);  // exact
  const auto micro_batches = static_cast<double>(steps_per_pipeline);
  const double p = static_cast<double>(c.pipeline);
  const int64_t layers_per_stage = model.layers / c.pipeline;  // exact
  const auto layers = static_cast<double>(layers_per_stage);
  const double tokens =
      static_cast<double>(c.micro_batch) * static_cast<double>(model.sequence_length);
  const double t = static_cast<double>(c.tensor);

  const LayerForward fwd = ForwardOfLayer(model, c, m, intra, hw);
  const double layer_compute_fwd = fwd.gemms + fwd.attention + fwd.elementwise;
  double recompute = 0, recompute_tp = 0;
  if (c.recompute == Recompute::kFull) {
    recompute = layer_compute_fwd;
    recompute_tp = fwd.tp;
  } else if (c.recompute == Recompute::kSelective) {
    recompute = fwd.attention;
  }
  // The last stage's LM head GEMM (forward + backward) and fp32 cross-entropy.
  const double vocab = static_cast<double>(model.vocab_size);
  const double head = 3 * Gemm(m, tokens, static_cast<double>(model.hidden_size), vocab / t) +
                      Streaming(m, 3 * 4 * tokens * vocab / t, 3);
  const double compute_mb = layers * (3 * layer_compute_fwd + recompute) + head;
  const double tp_mb = layers * (2 * fwd.tp + recompute_tp);
  const double micro_batch_s = compute_mb + tp_mb;

  StepTime st;
  st.compute_s = micro_batches * compute_mb;
  st.recompute_s = micro_batches * layers * recompute;
  st.tp_comm_s = micro_batches * tp_mb;
  if (c.pipeline > 1) {
    st.pp_bubble_s = (p - 1) / static_cast<double>(c.virtual_stages) * micro_batch_s;
    // Stages fill whole nodes once t x d GPUs reach a node: their boundaries cross the network.
    const bool across = c.tensor * d >= hardware.gpus_per_node && hardware.nodes > 1;
    const double link = across ? inter : intra;
    const double sp = c.sequence_parallel ? t : 1;
    const double bytes = m.e * tokens * static_cast<double>(model.hidden_size) / sp;
    st.pp_p2p_s = micro_batches * 2 * static_cast<double>(c.virtual_stages) *
                  (bytes / (link * hw.collective_fraction) + hw.collective_latency_s);
  }

  // Data parallelism over d ranks of one (tensor, pipeline) position.
  const double dp_link =
      c.tensor * d <= hardware.gpus_per_node || hardware.nodes == 1 ? intra : inter;
  const double dd = static_cast<double>(d);
  const double params = static_cast<double>(figures.parameters) / (t * p);
  const double grads = params * sb.gradient;
  const double weights = params * sb.weight;
  const double backward_mb = layers * 2 * layer_compute_fwd;
  if (d > 1) {
    if (c.zero_stage <= 1 && c.gradient_compression != GradCompression::kNone) {
      const double host_bw =
          hardware.host.memory_gbytes_per_s * 1e9 / static_cast<double>(hardware.gpus_per_node);
      st.dp_comm_s =
          CompressedExchangeSeconds(c.gradient_compression, params, sb.gradient, dd, host_bw,
                                    hardware.host.pcie_gbytes_per_s * 1e9, dp_link,
                                    hw.collective_fraction, hw.collective_latency_s)
              .total();
      st.dp_exposed_s = std::max(0.0, st.dp_comm_s - backward_mb);
    } else if (c.zero_stage <= 1) {
      st.dp_comm_s = AllReduce(grads, dd, dp_link, hw);
      st.dp_exposed_s = std::max(0.0, st.dp_comm_s - backward_mb);
    } else if (c.zero_stage == 2) {
      const double rs = ReduceScatter(grads, dd, dp_link, hw);
      const double ag = ReduceScatter(weights, dd, dp_link, hw);
      st.dp_comm_s = micro_batches * rs + ag;
      st.dp_exposed_s = micro_batches * std::max(0.0, rs - backward_mb) + ag;
    } else {
      const double per_mb =
          2 * ReduceScatter(weights, dd, dp_link, hw) + ReduceScatter(grads, dd, dp_link, hw);
      st.dp_comm_s = micro_batches * per_mb;
      st.dp_exposed_s = micro_batches * std::max(0.0, per_mb - compute_mb);
    }
  }
  // Optimizer: read and write master weights and states, read gradients, write weights.
  const double shard = c.zero_stage >= 1 ? params / dd : params;
  if (c.offload_optimizer) {
    const HostSpec& host = hardware.host;
    const double host_bw =
        host.memory_gbytes_per_s * 1e9 / static_cast<double>(hardware.gpus_per_node);
    const double pcie = host.pcie_gbytes_per_s * 1e9;
    st.optimizer_s = shard * (2.0 * (sb.master + sb.optimizer) + 4 + sb.weight) / host_bw;
    st.offload_s =
        std::max(0.0, shard * sb.gradient / pcie - backward_mb) + shard * sb.weight / pcie;
  } else {
    st.optimizer_s =
        Streaming(m, shard * (2.0 * (sb.master + sb.optimizer) + sb.gradient + sb.weight), 4);
  }

  st.step_s = st.compute_s + st.tp_comm_s + st.pp_bubble_s + st.pp_p2p_s + st.dp_exposed_s +
              st.optimizer_s + st.offload_s;

  const double tokens_per_step =
      static_cast<double>(training.global_batch) * static_cast<double>(model.sequence_length);
  st.model_flops_per_step = TrainingFlopsPerToken(model, figures) * tokens_per_step;
  const double lh = static_cast<double>(model.layers) * static_cast<double>(model.hidden_size) *
                    static_cast<double>(model.sequence_length);
  const double layer_matmul = static_cast<double>(figures.matmul_parameters) -
                              vocab * static_cast<double>(model.hidden_size);
  double recompute_per_token = 0;
  if (c.recompute == Recompute::kFull) recompute_per_token = 2 * layer_matmul + 4 * lh;
  if (c.recompute == Recompute::kSelective) recompute_per_token = 4 * lh;
  st.hardware_flops_per_step = st.model_flops_per_step + recompute_per_token * tokens_per_step;
  return st;
}

base::Report StepTimeToReport(const StepTime& t) {
  base::Report r = base::Report::object();
  r["compute_s"] = t.compute_s;
  r["recompute_s"] = t.recompute_s;
  r["tensor_parallel_comm_s"] = t.tp_comm_s;
  r["pipeline_bubble_s"] = t.pp_bubble_s;
  r["pipeline_p2p_s"] = t.pp_p2p_s;
  r["data_parallel_comm_s"] = t.dp_comm_s;
  r["data_parallel_exposed_s"] = t.dp_exposed_s;
  r["optimizer_s"] = t.optimizer_s;
  r["offload_s"] = t.offload_s;
  r["step_s"] = t.step_s;
  return r;
}

}  // namespace seedance::plan
