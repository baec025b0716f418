#include "seedance/plan/time_model.h"

#include <algorithm>
#include <cmath>

#include "seedance/plan/attention_softmax.h"
#include "seedance/plan/memory_model.h"

namespace seedance::plan {
namespace {

// Everything one layout's step needs from the GPU, the framework and the fitted model.
struct Machine {
  double peak = 0;           // dense FLOP/s of the GEMMs' precision
  double gemm_fraction = 1;  // anchor x coefficient
  double gemm_ref = 1;       // the shape factor of the anchor's own shape
  double attention_fwd = 0;  // FLOP/s of the fused attention kernel, long sequences
  double attention_bwd = 0;
  double hbm = 0;  // achievable bytes/s of the elementwise kernels
  double gap = 0;  // seconds between kernels
  double e = 2;    // bytes per activation element
  bool fp8 = false;
  bool eager_attention = false;
  ScoreBytes score_bytes;  // per score element, eager attention (attention_softmax.h)
  FrameworkTraits traits;
  KernelCurves curves;
  ModelCoefficients k;
};

double ShapeFactor(const Machine& m, double x) { return x / (x + m.curves.gemm_half_dim); }

// One GEMM of rows x inner x cols on a roofline with the fitted shape curve.
double Gemm(const Machine& m, double rows, double inner, double cols) {
  const double flops = 2 * rows * inner * cols;
  const double eff = m.gemm_fraction * ShapeFactor(m, rows) * ShapeFactor(m, inner) *
                     ShapeFactor(m, cols) / m.gemm_ref;
  const double bytes = m.e * (rows * inner + inner * cols + rows * cols);
  return std::max(flops / (m.peak * std::min(eff, 1.0)), bytes / m.hbm) + m.curves.gemm_fixed_s;
}

double Stream(const Machine& m, double bytes) { return bytes / m.hbm; }

// A collective over `n` ranks moving `wire` bytes per rank over a link of `link` bytes/s per GPU.
double Collective(double wire, double n, double link, const LinkCurve& curve) {
  if (n <= 1 || wire <= 0) return 0;
  return curve.latency_s + wire / (link * curve.busbw_fraction);
}
double AllReduceWire(double bytes, double n) { return 2 * (n - 1) / n * bytes; }
double ShardWire(double bytes, double n) { return (n - 1) / n * bytes; }  // RS or AG

// The part of a collective of `comm` seconds that a window of `window` seconds of compute does
// not hide, plus the contention of the hidden part.
double Exposed(double comm, double window, double loss) {
  return std::max(0.0, comm - window) + loss * std::min(comm, window);
}

const LinkCurve& NvlinkCurve(const Machine& m, GpuFamily family) {
  return family == GpuFamily::kAmpere ? m.curves.nvlink_ampere : m.curves.nvlink_hopper;
}

// Forward seconds of one layer for one micro-batch (T tokens on this GPU).
struct LayerForward {
  double qkv = 0, out = 0, mlp_in = 0, mlp_out = 0;  // GEMMs
  double attention = 0;                              // the attention core
  double attention_bwd = 0;                          // its backward pass
  double norms = 0, activation = 0, other = 0;       // elementwise kernels
  double fp8_casts = 0;                              // FP8: quantizing the GEMMs' operands
  double fp8_casts_bwd = 0;                          // the same in the backward pass
  double fp8_kernels = 0, fp8_kernels_bwd = 0;       // their kernels (apart from `kernels`)
  double kernels = 0;                                // kernel count (for the gaps)
  double tp = 0;                                     // TP collectives (seconds, not hidden)
  double cp = 0;                                     // CP ring exchange, exposed
  double gemms() const { return qkv + out + mlp_in + mlp_out; }
  double elementwise() const { return norms + activation + other + fp8_casts; }
  double compute() const { return gemms() + attention + elementwise(); }
};

LayerForward ForwardOfLayer(const ModelSpec& model, const ParallelConfig& c, const Machine& m,
                            const Links& links, GpuFamily family, int64_t gpus_per_node) {
  const double cp = static_cast<double>(c.context_parallel);
  const double s = static_cast<double>(model.sequence_length);
  const double b = static_cast<double>(c.micro_batch);
  const double tokens = b * s / cp;
  const double h = static_cast<double>(model.hidden_size);
  const double a = static_cast<double>(model.attention_heads);
  const double d = static_cast<double>(model.head_dim());
  const double kv = static_cast<double>(model.kv_heads) * d;
  const double f = static_cast<double>(model.ffn_size);
  const double t = static_cast<double>(c.tensor);
  const double k_in = static_cast<double>(model.mlp_in_projections());
  const bool gpt = model.family == "gpt";
  const bool rotary = model.family != "gpt";
  const double sp = c.sequence_parallel ? t : 1;
  const double e = m.e;
  const bool fused = m.traits.fused_kernels;
  LayerForward l;
  if (fused) {
    l.qkv = Gemm(m, tokens, h, (h + 2 * kv) / t);
    l.mlp_in = Gemm(m, tokens, h, k_in * f / t);
    l.kernels += 2;
  } else {  // PyTorch modules: separate q, k, v and gate, up projections
    l.qkv = Gemm(m, tokens, h, h / t) + 2 * Gemm(m, tokens, h, kv / t);
    l.mlp_in = k_in * Gemm(m, tokens, h, f / t);
    l.kernels += 3 + k_in;
  }
  l.out = Gemm(m, tokens, h / t, h);
  l.mlp_out = Gemm(m, tokens, f / t, h);
  l.kernels += 2;

  // The attention core: causal, so half of QK^T and PV; with context parallelism each GPU holds
  // s / cp queries against all s keys (load-balanced chunks).
  const double heads = a / t;
  if (m.eager_attention) {
    // Materialized scores: two batched GEMMs over the whole s x s square, the softmax's and
    // dropout's bytes over it (attention_softmax.h).
    const double batch = b * heads;
    const double scores = batch * (s / cp) * s;
    const double gemm = Gemm(m, batch * (s / cp), d, s) + Gemm(m, batch * (s / cp), s, d);
    l.attention = gemm + Stream(m, m.score_bytes.forward * scores);
    l.attention_bwd = 2 * gemm + Stream(m, m.score_bytes.backward * scores);
    l.kernels += 4;
  } else {
    const double flops = 0.5 * 4 * b * (s / cp) * s * heads * d;
    // The kernel's throughput falls at short lengths and small heads; the anchor is at 16k
    // tokens and head dim 128.
    const double chunk = s / cp;
    const double half = m.curves.attention_half_seq, half_d = m.curves.attention_half_dim;
    const double scale = chunk / (chunk + half) * (kAttentionAnchorLength + half) /
                         kAttentionAnchorLength * d / (d + half_d) * (128 + half_d) / 128;
    l.attention = flops / (m.attention_fwd * scale);
    l.attention_bwd = 2.5 * flops / (m.attention_bwd * scale);
    l.kernels += 1;
  }

  // Elementwise kernels, bytes per token. Fused: each norm reads and writes its tensor once,
  // rotary once over q and k, the activation reads its inputs and writes its output, the
  // residual adds read two tensors and write one. Eager PyTorch: the norm's composite ops
  // (square, mean, rsqrt, two multiplies), rotary through complex fp32 (cast, multiply, cast
  // back), the activation and the gate's multiply apart.
  const double norm_bytes = fused ? 2 * e : 7 * e;
  const double rope_bytes = fused ? 2 * e : 16 + 2 * e;
  const double act_bytes = model.family == "llama" ? (fused ? 3 * e : 5 * e) : 2 * e;
  l.norms = Stream(m, 2 * norm_bytes * tokens * h / sp);
  l.activation = Stream(m, act_bytes * tokens * f / t);
  double other = 2 * 3 * e * tokens * h / sp;  // two residual adds
  if (rotary) other += rope_bytes * tokens * (h + kv) / t;
  if (gpt) other += 2 * tokens * h / sp;  // dropout masks
  l.other = Stream(m, other);
  l.kernels += fused ? 5 : 16;
  if (m.fp8 && fused) {
    // Transformer Engine fuses the cast into the norms before QKV and MLP-in; the inputs of the
    // output projection and of MLP-out are quantized apart (read 2 bytes, write 1).
    l.fp8_casts = Stream(m, 3 * tokens * (h + f) / t);
    l.fp8_casts_bwd = 2 * l.fp8_casts;
    l.fp8_kernels = 2;
    l.fp8_kernels_bwd = 4;
  } else if (m.fp8) {
    // torchao's Float8Linear: torchtitan v0.2's float8 converter, tensorwise, compiled as
    // `--emit torchtitan` writes it (torchtitan's docs/float8.md calls compiling it required).
    const Fp8Casts casts = TorchaoFloat8Casts(model, c);
    l.fp8_casts = Stream(m, casts.forward_bytes);
    l.fp8_casts_bwd = Stream(m, casts.backward_bytes);
    l.fp8_kernels = casts.forward_kernels;
    l.fp8_kernels_bwd = casts.backward_kernels;
  }

  // Tensor parallelism: two all-reduces of the layer's activations forward (all-gather +
  // reduce-scatter with sequence parallelism: the same bytes), on NVLink inside the node.
  if (c.tensor > 1) {
    const double bytes = e * tokens * h;
    const double one = Collective(AllReduceWire(bytes, t), t, links.intra_node_gbytes_per_s * 1e9,
                                  NvlinkCurve(m, family));
    l.tp = 2 * one;
    if (m.traits.tp_overlap) l.tp *= 1 - m.k[Coef::kTpOverlap];
  }
  // Context parallelism: the ring passes each GPU's K and V chunk cp - 1 times, hidden behind
  // the attention as far as cp_overlap says.
  if (c.context_parallel > 1) {
    const bool inside = c.tensor * c.context_parallel <= gpus_per_node;
    const double link =
        inside ? links.intra_node_gbytes_per_s * 1e9 : links.inter_node_gbytes_per_s * 1e9;
    const LinkCurve& curve = inside ? NvlinkCurve(m, family) : m.curves.network;
    const double chunk_bytes = 2 * e * b * (s / cp) * kv / t;
    const double ring = (cp - 1) * (curve.latency_s + chunk_bytes / (link * curve.busbw_fraction));
    l.cp = (1 - m.k[Coef::kCpOverlap]) * std::min(ring, l.attention) +
           std::max(0.0, ring - l.attention);
  }
  return l;
}

Machine MachineFor(const cost::GpuSpec& gpu, const ModelSpec& model, const TrainingSpec& training,
                   const ParallelConfig& c, std::optional<Framework> framework,
                   const HardwareModel& hw) {
  Machine m;
  const FrameworkTraits traits = TraitsOf(framework);
  m.traits = traits;
  m.curves = hw.curves;
  m.k = hw.coefficients;
  const GpuFamily family = FamilyOf(gpu);
  m.fp8 = training.precision == base::NumericFormat::kFp8;
  m.peak = gpu.DenseTflops(training.precision).value_or(0) * 1e12;
  double mamf = MamfFraction(gpu, training.precision);
  if (mamf <= 0) mamf = 1;  // no anchor: the datasheet roofline
  m.gemm_fraction = mamf * m.k[m.fp8 ? Coef::kFp8Gemm : Coef::kGemm];
  // The anchor is the best shape's figure: a GEMM of large square-ish dimensions.
  const double ref = ShapeFactor(m, 4096);
  m.gemm_ref = ref * ref * ref;
  // Attention runs in 16 bits (FP8 training keeps it in bf16).
  const base::NumericFormat attention_format =
      m.fp8 ? base::NumericFormat::kBf16 : training.precision;
  const double attention_peak = gpu.DenseTflops(attention_format).value_or(0) * 1e12;
  AttentionKernel kernel = AttentionKernel::kFlash2;
  // "flash" is the framework's default: Megatron-Core's Transformer Engine prefers cuDNN's on
  // Hopper (TE v1.2 on, with --attention-backend auto); PyTorch's SDPA and flash-attn, which the
  // other frameworks' model code calls, run FlashAttention-2.
  const bool megatron = framework.value_or(Framework::kMegatron) == Framework::kMegatron;
  const bool cudnn = training.attention == "cudnn" || (training.attention == "flash" && megatron);
  if (cudnn && family == GpuFamily::kHopper) kernel = AttentionKernel::kCudnn;
  const AttentionPeak anchor = AttentionAnchor(family, kernel);
  const double coef = m.k[Coef::kAttention];
  m.attention_fwd =
      anchor.forward_tflops > 0 ? anchor.forward_tflops * 1e12 * coef : attention_peak * coef;
  m.attention_bwd =
      anchor.backward_tflops > 0 ? anchor.backward_tflops * 1e12 * coef : attention_peak * coef;
  m.eager_attention = MaterializesScores(training);
  m.hbm =
      gpu.memory_bandwidth_gbytes_per_s * 1e9 * hw.curves.stream_fraction * m.k[Coef::kMemoryBound];
  m.gap = m.k[Coef::kKernelGap];
  m.e = StateBytesFor(training).weight;
  m.score_bytes = ScoreBytesOf(SoftmaxPathOf(model, training, c, framework), m.e,
                               model.family == "gpt", FallbackScales(framework));
  return m;
}

// Seconds of the LM head and the loss (forward and backward) for one micro-batch.
double HeadSeconds(const ModelSpec& model, const ParallelConfig& c, const Machine& m) {
  const double tokens = static_cast<double>(c.micro_batch) *
                        static_cast<double>(model.sequence_length) /
                        static_cast<double>(c.context_parallel);
  const double vocab = static_cast<double>(model.vocab_size) / static_cast<double>(c.tensor);
  const double h = static_cast<double>(model.hidden_size);
  // The cross-entropy over the logits: fused (Megatron's vocabulary-parallel loss reads the
  // 16-bit logits and writes their gradient, fp32 inside) or eager (upcast to fp32, log-softmax,
  // its backward, the cast back).
  const double loss_bytes = m.traits.fused_kernels ? 4 * m.e + 4 : 28 + 2 * m.e;
  return 3 * Gemm(m, tokens, h, vocab) + Stream(m, loss_bytes * tokens * vocab) + 6 * m.gap;
}

// What the passes over a stage's parameters depend on (ParameterPassBytes).
struct PassInputs {
  int zero = 0;                  // the sharding stage (ShardingStage)
  double shards = 1;             // ranks the gradients are sharded over (d x cp)
  double micro_batches = 1;      // a step's, per pipeline
  double reduced_bytes = 2;      // the precision the gradients are reduced in
  double recomputed_share = 0;   // the share of the stage's layers run forward again
  double params = 0;             // the stage's parameters on this GPU
  double layer_params = 0;       // of them, the decoder layers'
  double head_params = 0;        // the LM head's weight as its matmul reads it (tied or not)
  double regathered_params = 0;  // of params, those ZeRO 3 gathers again for the backward pass
  bool once_a_step = false;      // one gather and one reduction a step (GathersOnceAStep)
};

// Bytes the framework's passes over the stage's parameters outside the GEMMs stream in one
// micro-batch, averaged over the step's micro-batches (FrameworkTraits::ParameterPasses).
double ParameterPassBytes(const Machine& m, const TrainingSpec& training,
                          std::optional<Framework> framework, const ParallelConfig& c,
                          const StateBytes& sb, const PassInputs& in) {
  const double mb = in.micro_batches;
  const double later = (mb - 1) / mb;  // micro-batches that add to a sum
  const double g = sb.gradient;
  switch (m.traits.parameter_passes) {
    case FrameworkTraits::ParameterPasses::kNone:
      return 0;
    case FrameworkTraits::ParameterPasses::kDeepSpeed: {
      if (RunsBf16Optimizer(training, framework, c)) return in.params * (2 + 4 + 8 + 4);
      if (in.zero <= 1) return in.params * 3.0 * g * later;  // autograd's in-place add
      // The copy into the reduce bucket, then the add into the rank's partition; ZeRO 2 also
      // copies its reduced share into a fresh partition buffer every micro-batch
      // (copy_grads_in_partition).
      double bytes = 2.0 * g + 3.0 * g * later / in.shards;
      if (in.zero == 2) bytes += 2.0 * g / in.shards;
      return in.params * bytes;
    }
    case FrameworkTraits::ParameterPasses::kPyTorch: {
      if (in.once_a_step) {
        // FSDP2 under a pipeline: one gather's copy-out and one reduce-scatter's copy-in a step;
        // the gradients accumulated unsharded every micro-batch, in the reduce precision — the
        // first cast into the accumulator, the later ones added into it with their cast fused
        // (to_accumulated_grad_if_needed, accumulate_unsharded_grad_if_needed) — or, in the
        // compute precision, by autograd's in-place add from the second.
        const double r = in.reduced_bytes;
        const double accumulation =
            m.e < r ? (m.e + r) / mb + (m.e + 2 * r) * later : 3 * m.e * later;
        return in.params * (accumulation + (2 * m.e + 2 * r) / mb);
      }
      if (in.zero >= 2) {
        // FSDP2: each gather's copy-out (read and write), the reduce-scatter's copy-in.
        const double gathered = in.zero == 3 ? in.params + in.regathered_params : in.params;
        return gathered * 2 * m.e + in.params * (m.e + in.reduced_bytes);
      }
      double bytes = 0;
      if (m.traits.ddp_syncs_every_micro_batch) {
        // torchtitan's DDP: into the buckets divided (one pass: mul_out) and back, every
        // micro-batch; AccumulateGrad's add from the second.
        bytes = in.params * (3.0 * g * later + 2 * 2.0 * g);
      } else if (m.traits.ddp_buckets_beside_gradients) {
        // Accelerate's DDP: AccumulateGrad adds from the second micro-batch (.grad set to None
        // once a step); the gradients go into the buckets divided and back once a step.
        bytes = in.params * (3.0 * g * later + 2 * 2.0 * g / mb);
      } else {
        // The FSDP plan's DDP: .grad is the bucket, zeroed and divided in place once a step;
        // AccumulateGrad adds every micro-batch into it.
        bytes = in.params * (3.0 * g + (g + 2.0 * g) / mb);
      }
      // Autocast: the layers' and the head's weights cast on each forward pass (the layers'
      // again when recomputed), their gradients cast back.
      if (m.e < g) {
        bytes += (g + m.e) * (in.layer_params * (2 + in.recomputed_share) + 2 * in.head_params);
      }
      return bytes;
    }
  }
  return 0;
}

}  // namespace

Fp8Casts TorchaoFloat8Casts(const ModelSpec& model, const ParallelConfig& c) {
  const double tokens = static_cast<double>(c.micro_batch) *
                        static_cast<double>(model.sequence_length) /
                        static_cast<double>(c.context_parallel);
  const double h = static_cast<double>(model.hidden_size);
  const double kv = static_cast<double>(model.kv_heads) * static_cast<double>(model.head_dim());
  const double f = static_cast<double>(model.ffn_size);
  const double t = static_cast<double>(c.tensor);
  const double k_in = static_cast<double>(model.mlp_in_projections());
  const double linears = 5 + k_in;  // q, k, v, output; gate and up (or the MLP's one); down
  // torchao/testing/training/roofline_utils.py, tensorwise: an activation read for its amax and
  // read again to write fp8 in both layouts; a weight read for its amax and cast forward, cast
  // in the other layout backward.
  constexpr double kActivation = 6, kWeightForward = 5, kWeightBackward = 3;
  // Elements on this GPU. Column-parallel q, k, v, gate and up give their shard of the outputs;
  // row-parallel output and down projections take their shard of the inputs. Without TP each
  // linear casts its own input (the shared hidden state once per linear); with it, torchtitan
  // casts the attention's and the MLP's input once, on the sequence shard, and the row-parallel
  // projections' output gradients on the shard.
  const bool tp = c.tensor > 1;
  const double inputs = (tp ? 2 * h / t : (3 + k_in) * h) + (h + f) / t;
  const double outputs = (h + 2 * kv + k_in * f) / t + 2 * h / t;
  const double weights = (h * (h + 2 * kv) + h * h + (k_in + 1) * h * f) / t;
  const double input_casts = tp ? 4 : linears;
  return {.forward_bytes = kActivation * tokens * inputs + kWeightForward * weights,
          .backward_bytes = kActivation * tokens * outputs + kWeightBackward * weights,
          .forward_kernels = 3 * input_casts + 3 * linears,
          .backward_kernels = 3 * linears + linears};
}

LayerPartSeconds LayerPartForwardSeconds(const JobSpec& spec, const ParallelConfig& c,
                                         const cost::GpuSpec& gpu, const HardwareModel& hw) {
  const Machine m =
      MachineFor(gpu, spec.model, TrainingOf(spec.training, c), c, RunningFramework(spec, c), hw);
  Links none;
  none.intra_node_gbytes_per_s = none.inter_node_gbytes_per_s = 1;
  const LayerForward l =
      ForwardOfLayer(spec.model, c, m, none, FamilyOf(gpu), spec.hardware.gpus_per_node);
  return {.attention_s = l.qkv + l.attention + l.out,
          .mlp_s = l.mlp_in + l.activation + l.mlp_out,
          .norms_s = l.norms};
}

StepTime EstimateStepTime(const JobSpec& spec, const ModelFigures& figures, const ParallelConfig& c,
                          const cost::GpuSpec& gpu, const Links& links, const HardwareModel& hw) {
  const ModelSpec& model = spec.model;
  const TrainingSpec training = TrainingOf(spec.training, c);
  const HardwareSpec& hardware = spec.hardware;
  const std::optional<Framework> framework = RunningFramework(spec, c);
  const FrameworkTraits traits = TraitsOf(framework);
  const StateBytes sb = StateBytesFor(training, framework, &c);
  const Machine m = MachineFor(gpu, model, training, c, framework, hw);
  const GpuFamily family = FamilyOf(gpu);
  // Bytes a parameter in the data-parallel collectives (framework.h, FrameworkTraits).
  const double gathered_bytes = m.traits.gather_in_compute_precision ? m.e : sb.weight;
  // BF16_Optimizer at ZeRO 0 shards and gathers as ZeRO 1 does (ShardingStage).
  const int zero = ShardingStage(training, framework, c);
  // DDP, ZeRO 0 under FSDP's plan, all-reduces the fp32 gradients autocast leaves.
  double reduced_bytes = sb.gradient;
  if (m.traits.reduce == FrameworkTraits::Reduce::kComputePrecision && zero >= 2) {
    reduced_bytes = m.e;
  }
  if (m.traits.reduce == FrameworkTraits::Reduce::kFp32) reduced_bytes = 4;
  // DeepSpeed at ZeRO 0-1 (FrameworkTraits::serial_reduction_below_zero2): one reduction after
  // the backward passes, in the compute precision; the whole gradient all-reduced, or each
  // partition reduced to its owner once offload turns the contiguous buckets on.
  const bool serial_reduction = m.traits.serial_reduction_below_zero2 && zero <= 1;
  const bool whole_allreduce = serial_reduction && !c.offload_optimizer;
  if (serial_reduction) reduced_bytes = m.e;
  const ModelCoefficients& k = hw.coefficients;
  const double intra = links.intra_node_gbytes_per_s * 1e9;
  const double inter = links.inter_node_gbytes_per_s * 1e9;

  const int64_t gpus = hardware.total_gpus();
  const int64_t d = DataParallel(c, gpus);
  const auto micro_batches =
      static_cast<double>(MicroBatchesPerStep(c, gpus, training.global_batch));  // exact
  const double p = static_cast<double>(c.pipeline);
  const double v = static_cast<double>(c.virtual_stages);
  const double t = static_cast<double>(c.tensor);
  const double cp = static_cast<double>(c.context_parallel);
  const double tokens =
      static_cast<double>(c.micro_batch) * static_cast<double>(model.sequence_length) / cp;

  const LayerForward fwd = ForwardOfLayer(model, c, m, links, family, hardware.gpus_per_node);
  const double layer_fwd = fwd.compute() + (fwd.kernels + fwd.fp8_kernels) * m.gap;
  // Backward: twice the GEMMs (input and weight gradients), the attention kernel's backward,
  // about twice the elementwise bytes (the FP8 casts as counted above), twice the kernels; the
  // TP collectives mirror the forward.
  const double layer_bwd = 2 * fwd.gemms() + fwd.attention_bwd +
                           2 * (fwd.elementwise() - fwd.fp8_casts) + fwd.fp8_casts_bwd +
                           (2 * fwd.kernels + fwd.fp8_kernels_bwd) * m.gap;
  double layer_recompute = 0, recompute_tp = 0;
  double recomputed_layers = 0;  // per stage
  const int64_t stage_layers = MaxStageLayers(c, model.layers);
  const auto layers = static_cast<double>(stage_layers);
  switch (c.recompute) {
    case Recompute::kFull:
      layer_recompute = layer_fwd;
      recompute_tp = fwd.tp;
      recomputed_layers = c.recompute_layers > 0 ? static_cast<double>(c.recompute_layers) : layers;
      break;
    case Recompute::kSelective:
      layer_recompute = fwd.attention;
      recomputed_layers = layers;
      break;
    case Recompute::kOpSelective:  // every other matmul and the elementwise kernels
      layer_recompute = 0.5 * fwd.gemms() + fwd.elementwise() + 0.5 * fwd.kernels * m.gap;
      recomputed_layers = layers;
      break;
    case Recompute::kNone:
      break;
  }
  // The slowest stage: the most layers, or the last stage's layers and the LM head when that is
  // more (with one stage, both).
  const double head = HeadSeconds(model, c, m);
  // A stage of n layers: full recomputation of the first recompute_layers (all when 0), the
  // other modes every layer.
  auto stage_seconds = [&](double n) {
    const double recomputed = c.recompute == Recompute::kFull && c.recompute_layers > 0
                                  ? std::min(static_cast<double>(c.recompute_layers), n)
                                  : n;
    return n * (layer_fwd + layer_bwd) + recomputed * layer_recompute;
  };
  // The framework's passes over the stage's parameters outside the GEMMs, a micro-batch's share.
  const double params = static_cast<double>(StageParameters(model, figures, c));
  const double head_params =
      static_cast<double>(model.vocab_size) * static_cast<double>(model.hidden_size) / t;
  // torchtitan keeps the head gathered from its forward pass to its backward pass: ZeRO 3
  // gathers the rest again (FrameworkTraits::keeps_head_gathered).
  const double regathered_params =
      traits.keeps_head_gathered && c.pipeline == 1 ? params - head_params : params;
  const bool once_a_step = GathersOnceAStep(framework, c);
  const double recomputed_share = c.recompute == Recompute::kFull ? recomputed_layers / layers
                                  : c.recompute == Recompute::kOpSelective ? 1
                                                                           : 0;
  const PassInputs passes{
      .zero = zero,
      .shards = static_cast<double>(d * c.context_parallel),
      .micro_batches = micro_batches,
      .reduced_bytes = reduced_bytes,
      .recomputed_share = recomputed_share,
      .params = params,
      .layer_params = layers * static_cast<double>(figures.layer_parameters) / t,
      .head_params = head_params,
      .regathered_params = regathered_params,
      .once_a_step = once_a_step};
  const double accumulate = Stream(m, ParameterPassBytes(m, training, framework, c, sb, passes));
  const double last_layers = static_cast<double>(StageLayers(c, model.layers, c.pipeline - 1));
  const double stage_compute =
      accumulate + (c.pipeline == 1
                        ? stage_seconds(layers) + head
                        : std::max(stage_seconds(layers), stage_seconds(last_layers) + head));
  const double stage_comm = layers * (2 * fwd.tp + 3 * fwd.cp) + recomputed_layers * recompute_tp;
  const double micro_batch_s = stage_compute + stage_comm;

  StepTime st;
  st.compute_s = micro_batches * stage_compute;
  st.recompute_s = micro_batches * recomputed_layers * layer_recompute;
  st.tp_comm_s = micro_batches * stage_comm;
  if (c.pipeline > 1) {
    // 1F1B's bubble, (p - 1)/v micro-batch times, holds while each model chunk's group of
    // micro-batches fills the pipeline. With fewer micro-batches than stages (PyTorch's
    // interleaved schedule runs m < p) every micro-batch's chunks wait on the p stages: the step
    // lasts p + (m - 1)/v micro-batch times, not m + (p - 1)/v.
    const double idle = std::max((p - 1) / v, (p - micro_batches) + (micro_batches - 1) / v);
    st.pp_bubble_s = idle * micro_batch_s * k[Coef::kBubble];
    // Stages fill whole nodes once t x cp x d GPUs reach a node: their boundaries cross the
    // network.
    const bool across =
        c.tensor * c.context_parallel * d >= hardware.gpus_per_node && hardware.nodes > 1;
    const double link = across ? inter : intra;
    const LinkCurve& curve = across ? m.curves.network : NvlinkCurve(m, family);
    const double sp = c.sequence_parallel ? t : 1;
    const double bytes = m.e * tokens * static_cast<double>(model.hidden_size) / sp;
    const double one = curve.latency_s + bytes / (link * curve.busbw_fraction);
    if (m.traits.blocking_pipeline) {
      // DeepSpeed's engine (v0.6 runtime/pipe/schedule.py, engine.py, p2p.py): sends and
      // receives block; a tensor-parallel stage sends its 1/t partition, its metadata first (two
      // latencies), and the passes all-gather what they need whole over the tensor-parallel
      // group: the received input, the stage's own output again for its backward pass, the
      // received gradient. A middle stage takes part in four transfers and three gathers a
      // micro-batch; with two stages each takes part in two of each. The waits stretch every
      // slot of the schedule, fill and drain included: m + p - 1 of them.
      const double send =
          (c.tensor > 1 ? 2 : 1) * curve.latency_s + bytes / t / (link * curve.busbw_fraction);
      const double gather = Collective(ShardWire(bytes, t), t, intra, NvlinkCurve(m, family));
      const double per_micro_batch =
          c.pipeline >= 3 ? 4 * send + 3 * gather : 2 * send + 2 * gather;
      st.pp_p2p_s = (micro_batches + p - 1) * per_micro_batch;
    } else {
      // Fill and drain wait on every transfer; in the steady state only the latency shows.
      st.pp_p2p_s = 2 * v * ((p - 1) * one + micro_batches * curve.latency_s);
    }
    // A tied embedding's gradient is all-reduced between the first and the last stage once the
    // pipeline has flushed (DeepSpeed's ReduceTiedGrads, Megatron's finalize_model_grads),
    // beside no compute.
    if (model.tie_embeddings) {
      const double tied = static_cast<double>(model.vocab_size) *
                          static_cast<double>(model.hidden_size) / t * reduced_bytes;
      st.pp_p2p_s += Collective(AllReduceWire(tied, 2), 2, link, curve);
    }
  }

  // Data parallelism over d x cp ranks of one (tensor, pipeline) position (context-parallel
  // ranks hold the same weights). TP and CP groups are innermost, so a node holds
  // gpus_per_node / (t x cp) ranks of each data-parallel group.
  const double dp = static_cast<double>(d) * cp;
  const double per_node = std::max(1.0, static_cast<double>(hardware.gpus_per_node) / (t * cp));
  const bool dp_inside = dp <= per_node || hardware.nodes == 1;
  const double dp_link = dp_inside ? intra : std::min(intra, per_node * inter);
  // The network's latency is the 128-rank anchor's whatever the group's size: the small-message
  // rows show no growth with the ranks (16 ranks: 65-74 us on p5, 161 us on p4de; 128: 58 us).
  const LinkCurve& curve = dp_inside ? NvlinkCurve(m, family) : m.curves.network;
  const double grads = params * reduced_bytes;
  const double weights = params * gathered_bytes;
  const double loss = k[Coef::kOverlapLoss];
  // DeepSpeed's pipeline engine reduces after the flush and gathers inside the optimizer's step,
  // and at ZeRO 0-1 its engine does so without a pipeline too: no compute window hides either.
  const bool serial_dp = (m.traits.blocking_pipeline && c.pipeline > 1) || serial_reduction;
  const double backward_mb = serial_dp ? 0 : layers * layer_bwd;
  const double forward_mb = serial_dp ? 0 : layers * layer_fwd;
  if (dp > 1) {
    if (zero <= 1 && c.gradient_compression != GradCompression::kNone) {
      const double host_bw =
          hardware.host.memory_gbytes_per_s * 1e9 / static_cast<double>(hardware.gpus_per_node);
      st.dp_comm_s = CompressedExchangeSeconds(c.gradient_compression, params, sb.gradient, dp,
                                               host_bw, hardware.host.pcie_gbytes_per_s * 1e9,
                                               dp_link, curve.busbw_fraction, curve.latency_s)
                         .total();
      st.dp_exposed_s = Exposed(st.dp_comm_s, backward_mb, loss);
    } else if (zero == 0) {
      // One all-reduce behind the last micro-batch's backward pass; torchtitan's DDP one behind
      // every micro-batch's (FrameworkTraits::ddp_syncs_every_micro_batch).
      const double reductions = m.traits.ddp_syncs_every_micro_batch ? micro_batches : 1;
      const double ar = Collective(AllReduceWire(grads, dp), dp, dp_link, curve);
      st.dp_comm_s = reductions * ar;
      st.dp_exposed_s = reductions * Exposed(ar, backward_mb, loss);
    } else if (once_a_step) {
      // FSDP2 under a pipeline (GathersOnceAStep): the weights gathered during the step's first
      // forward pass, the first layer's gather not hidden; each model chunk's accumulated
      // gradients reduce-scattered after the chunk's last backward pass. The first stage's first
      // chunk ends the pipeline's drain: its share has no compute after it, the other chunks'
      // run beside the last backward passes of the chunks after them.
      const double ag = Collective(ShardWire(weights, dp), dp, dp_link, curve);
      const double rs = Collective(ShardWire(grads, dp), dp, dp_link, curve);
      const double later_chunks = (v - 1) / v;
      st.dp_comm_s = ag + rs;
      st.dp_exposed_s = Exposed(ag, forward_mb, loss) + ag / std::max(1.0, layers) + rs / v +
                        Exposed(rs * later_chunks, backward_mb * later_chunks, loss);
    } else if (zero == 1) {
      // The distributed optimizer: gradients reduce-scattered during the last micro-batch's
      // backward, the updated weights all-gathered during the next step's first forward.
      // DeepSpeed all-reduces the whole gradient instead (serial_reduction_below_zero2).
      const double rs = whole_allreduce ? Collective(AllReduceWire(grads, dp), dp, dp_link, curve)
                                        : Collective(ShardWire(grads, dp), dp, dp_link, curve);
      const double ag = Collective(ShardWire(weights, dp), dp, dp_link, curve);
      st.dp_comm_s = rs + ag;
      st.dp_exposed_s = Exposed(rs, backward_mb, loss) + Exposed(ag, forward_mb, loss);
    } else if (zero == 2) {
      const double rs = Collective(ShardWire(grads, dp), dp, dp_link, curve);
      const double ag = Collective(ShardWire(weights, dp), dp, dp_link, curve);
      if (m.traits.reshards_after_backward) {
        // FSDP2 with reshard_after_forward=False: a gather and a reduce-scatter every
        // micro-batch, the first layer's gather not hidden.
        st.dp_comm_s = micro_batches * (ag + rs);
        st.dp_exposed_s =
            micro_batches * (Exposed(ag, forward_mb, loss) + Exposed(rs, backward_mb, loss) +
                             ag / std::max(1.0, layers));
      } else {
        // DeepSpeed reduces every micro-batch's gradients, Megatron-style sharding (MegaScale)
        // once a step; the updated weights gathered once.
        const double reductions = framework == Framework::kDeepSpeed ? micro_batches : 1;
        st.dp_comm_s = reductions * rs + ag;
        st.dp_exposed_s =
            reductions * Exposed(rs, backward_mb, loss) + Exposed(ag, forward_mb, loss);
      }
    } else {
      // ZeRO-3 / FSDP: the weights gathered for the forward and again for the backward, the
      // gradients reduce-scattered, every micro-batch; the first layer's gather is not hidden.
      const double ag = Collective(ShardWire(weights, dp), dp, dp_link, curve);
      const double ag_bwd =
          Collective(ShardWire(regathered_params * gathered_bytes, dp), dp, dp_link, curve);
      const double rs = Collective(ShardWire(grads, dp), dp, dp_link, curve);
      st.dp_comm_s = micro_batches * (ag + ag_bwd + rs);
      st.dp_exposed_s =
          micro_batches * (Exposed(ag, forward_mb, loss) + Exposed(ag_bwd + rs, backward_mb, loss) +
                           ag / std::max(1.0, layers));
    }
  }
  // Optimizer: read the gradients, read and write master weights and states, write the weights,
  // and the gradient norm's read, over the GPU's shard.
  const double shard = zero >= 1 ? params / dp : params;
  if (c.offload_optimizer) {
    const HostSpec& host = hardware.host;
    const double host_bw =
        host.memory_gbytes_per_s * 1e9 / static_cast<double>(hardware.gpus_per_node);
    const double pcie = host.pcie_gbytes_per_s * 1e9;
    st.optimizer_s = shard * (2.0 * (sb.master + sb.optimizer) + 4 + sb.weight) / host_bw;
    // ZeRO-Offload sends the gradient partition to the host's fp32 buffer as fp32
    // (async_inplace_copy_grad_to_fp32_buffer_from_gpu: src_tensor.float()) and brings the
    // updated 16-bit weights back.
    st.offload_s = std::max(0.0, shard * 4 / pcie - backward_mb) + shard * sb.weight / pcie;
    // DeepSpeed's ZeRO 2 and 3 accumulate an offloaded partition's gradients in host memory,
    // each transfer hidden only behind its micro-batch's backward pass: ZeRO 2 brings the running
    // sum back to add to on the GPU every micro-batch after the first and sends it out again
    // every micro-batch, the last included, as DeepSpeed 0.19.8 runs it (the release --emit
    // writes for; zero/stage_1_and_2.py copy_grads_in_partition, async_accumulate_grad_in_cpu_
    // via_gpu; v0.6.2-v0.15 sent it every micro-batch but the last, and no published run
    // offloads); ZeRO 3 round-trips every micro-batch, the first included (stage3.py
    // partition_grads). ZeRO 1 reduces once, after the last, but with more than one micro-batch
    // its boundary still copies the (never written) host sum to the GPU to add to: one more
    // transfer, after the backward passes.
    if (m.traits.parameter_passes == FrameworkTraits::ParameterPasses::kDeepSpeed) {
      const double round_trip = 2 * shard * sb.gradient / pcie;
      const double trips = zero == 3 ? micro_batches : zero == 2 ? micro_batches - 1 : 0;
      st.offload_s += trips * std::max(0.0, round_trip - layers * layer_bwd);
      if (zero == 2 && micro_batches > 1) {
        st.offload_s += std::max(0.0, round_trip / 2 - layers * layer_bwd);  // the last send
      }
      if (zero <= 1 && micro_batches > 1) st.offload_s += shard * sb.gradient / pcie;
    }
  } else {
    st.optimizer_s = Stream(m, shard * (2.0 * (sb.master + sb.gradient_copy + sb.optimizer) +
                                        2 * sb.gradient + sb.weight)) +
                     8 * m.gap;
    // BF16_Optimizer's step reads the whole fp32 accumulator for the gradient norm and zeroes it
    // after (get_grads_for_norm, clear_hp_grads): every parameter of the stage, not the shard.
    // Clipping, when the job turns it on, reads and writes it once more: not counted.
    if (RunsBf16Optimizer(training, framework, c)) st.optimizer_s += Stream(m, params * (4 + 4));
  }
  st.fixed_s = k[Coef::kStepFixed];

  st.step_s = st.compute_s + st.tp_comm_s + st.pp_bubble_s + st.pp_p2p_s + st.dp_exposed_s +
              st.optimizer_s + st.offload_s + st.fixed_s;

  const double tokens_per_step =
      static_cast<double>(training.global_batch) * static_cast<double>(model.sequence_length);
  st.model_flops_per_step = TrainingFlopsPerToken(model, figures) * tokens_per_step;
  const double lh = static_cast<double>(model.layers) * static_cast<double>(model.hidden_size) *
                    static_cast<double>(model.sequence_length);
  const double vocab = static_cast<double>(model.vocab_size);
  const double layer_matmul = static_cast<double>(figures.matmul_parameters) -
                              vocab * static_cast<double>(model.hidden_size);
  const double share = recomputed_layers / std::max(1.0, layers);
  double recompute_per_token = 0;
  if (c.recompute == Recompute::kFull) recompute_per_token = share * (2 * layer_matmul + 4 * lh);
  if (c.recompute == Recompute::kSelective) recompute_per_token = 4 * lh;
  if (c.recompute == Recompute::kOpSelective) recompute_per_token = layer_matmul;
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
  r["fixed_s"] = t.fixed_s;
  r["step_s"] = t.step_s;
  return r;
}

}  // namespace seedance::plan
