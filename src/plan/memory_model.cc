#include "seedance/plan/memory_model.h"

#include <algorithm>
#include <cmath>

#include "seedance/plan/attention_softmax.h"

namespace seedance::plan {
namespace {

bool LowPrecision(base::NumericFormat f) {
  return f != base::NumericFormat::kFp32 && f != base::NumericFormat::kTf32;
}

// Whole bytes, saturated at 2^62 (a figure that large fits no GPU; the cast stays defined).
int64_t Ceil(double bytes) { return static_cast<int64_t>(std::min(std::ceil(bytes), 0x1p62)); }

// Parameters a GPU of stage `i` holds before tensor and data parallelism shard them: its layers,
// the embedding on the first stage, the LM head (a copy of the tied embedding) and the final
// norm on the last.
// (after tensor parallelism: the norms are replicated, everything else is split t ways).
int64_t ParamsOfStage(const ModelSpec& model, const ModelFigures& f, const ParallelConfig& c,
                      int64_t i) {
  const int64_t t = c.tensor;
  const int64_t layers = StageLayers(c, model.layers, i) * f.layer_parameters / t;
  const int64_t norm = f.parameters - f.embedding_parameters - model.layers * f.layer_parameters -
                       f.lm_head_parameters;
  const int64_t last_head =
      c.pipeline > 1 && model.tie_embeddings ? f.embedding_parameters : f.lm_head_parameters;
  int64_t p = layers;
  if (i == 0) p += f.embedding_parameters / t;
  if (i == c.pipeline - 1) p += last_head / t + norm;
  return p;
}

}  // namespace

TrainingSpec TrainingOf(const TrainingSpec& training, const ParallelConfig& c) {
  TrainingSpec t = training;
  if (c.precision) t.precision = *c.precision;
  if (c.optimizer_states) t.optimizer_states = *c.optimizer_states;
  return t;
}

StateBytes StateBytesFor(const TrainingSpec& training, std::optional<Framework> framework,
                         const ParallelConfig* layout) {
  StateBytes b;
  const bool low = LowPrecision(training.precision);
  b.weight = low ? 2 : 4;
  b.gradient = b.weight;
  b.master = low ? 4 : 0;
  const std::string& o = training.optimizer;
  b.optimizer = o == "adamw" || o == "adam" ? 8 : o == "sgd" ? 0 : 4;
  if (training.optimizer_states == base::NumericFormat::kBf16) b.optimizer /= 2;
  // DeepSpeed's BF16_Optimizer keeps an fp32 gradient accumulator for every parameter beside the
  // bf16 gradients; its ZeRO optimizer (and FP16_Optimizer) makes an fp32 copy of the gradient
  // partition for the step, sharded as the master weights are.
  if (framework == Framework::kDeepSpeed && LowPrecision(training.precision)) {
    if (RunsBf16Optimizer(training, framework, layout != nullptr ? *layout : ParallelConfig{})) {
      b.gradient = 2 + 4;
    } else {
      b.gradient_copy = 4;
    }
  }
  if (framework == Framework::kFsdp || framework == Framework::kTorchtitan ||
      framework == Framework::kAccelerate) {
    b.weight = 4;
    b.gradient = 4;
    b.master = 0;
  }
  return b;
}

bool RunsBf16Optimizer(const TrainingSpec& training, std::optional<Framework> framework,
                       const ParallelConfig& c) {
  return framework == Framework::kDeepSpeed && training.precision == base::NumericFormat::kBf16 &&
         c.zero_stage == 0 && !c.offload_optimizer;
}

int ShardingStage(const TrainingSpec& training, std::optional<Framework> framework,
                  const ParallelConfig& c) {
  return RunsBf16Optimizer(training, framework, c) ? 1 : c.zero_stage;
}

int64_t StageParameters(const ModelSpec& model, const ModelFigures& figures,
                        const ParallelConfig& c) {
  int64_t most = ParamsOfStage(model, figures, c, 0);
  if (c.pipeline > 1) most = std::max(most, ParamsOfStage(model, figures, c, c.pipeline - 1));
  if (c.pipeline > 2) most = std::max(most, ParamsOfStage(model, figures, c, 1));
  return most;
}

int64_t ModelStateBytes(int64_t params, const StateBytes& b, int stage, int64_t d) {
  const double p = static_cast<double>(params);
  const double dd = static_cast<double>(d);
  switch (stage) {
    case 0:
      return Ceil(p * b.total());
    case 1:
      return Ceil(p * (b.weight + b.gradient) +
                  p * (b.master + b.optimizer + b.gradient_copy) / dd);
    case 2:
      return Ceil(p * b.weight + p * (b.gradient + b.master + b.optimizer + b.gradient_copy) / dd);
    default:
      return Ceil(p * b.total() / dd);
  }
}

namespace {

// The terms of one layer's activations for one micro-batch, before recomputation.
struct Terms {
  double input = 0;         // the layer's input (the first norm's)
  double norms = 0;         // the first norm's output, the second norm's input and output, masks
  double attention = 0;     // Q, K, V, the attention output, and the kernel's saved state
  double scores = 0;        // eager attention's s x s tensors (0 with fused attention)
  double mlp = 0;           // the MLP's intermediates
  double op_selective = 0;  // what op-selective recomputation keeps
};

Terms TermsOf(const ModelSpec& model, const TrainingSpec& training, const ParallelConfig& c,
              std::optional<Framework> framework) {
  const double cp = static_cast<double>(c.context_parallel);
  const double s = static_cast<double>(model.sequence_length) / cp;  // this GPU's tokens
  const double keys = static_cast<double>(model.sequence_length);
  const double b = static_cast<double>(c.micro_batch);
  const double h = static_cast<double>(model.hidden_size);
  const double a = static_cast<double>(model.attention_heads);
  const double kv = static_cast<double>(model.kv_heads) * static_cast<double>(model.head_dim());
  const double f = static_cast<double>(model.ffn_size);
  const double t = static_cast<double>(c.tensor);
  const double e = LowPrecision(training.precision) ? 2 : 4;
  const bool gpt = model.family == "gpt";
  const double sp = c.sequence_parallel ? t : 1;  // divisor of the norm and mask terms

  Terms x;
  // Transformer Engine's FP8 GEMMs keep their saved inputs (the two norms' outputs, the
  // attention output, the MLP's last input) in 1 byte (Megatron-Core's, also when no framework
  // is stated).
  const bool fp8_saved = training.precision == base::NumericFormat::kFp8 &&
                         framework.value_or(Framework::kMegatron) == Framework::kMegatron;
  const double saved = fp8_saved ? 1 : e;
  x.input = e * s * b * h / sp;
  x.norms = (e + 2 * saved) * s * b * h / sp + (gpt ? 2 * s * b * h / sp : 0);  // + masks (1 B)
  x.attention = e * s * b * h / t + 2 * e * s * b * kv / t + saved * s * b * h / t;  // QKV; out
  if (!MaterializesScores(training)) {
    x.attention += 4 * a * s * b / t;  // log-sum-exp per row and head
  } else {
    // The softmax's probabilities (fp32 in Megatron's fallback), dropout's mask and output.
    const ScoreBytes bytes = ScoreBytesOf(SoftmaxPathOf(model, training, c, framework), e, gpt,
                                          FallbackScales(framework));
    x.scores = bytes.saved * a * s * keys * b / t;
  }
  const double mlp_in = static_cast<double>(model.mlp_in_projections());
  x.mlp = ((gpt ? 1 : mlp_in) * e + saved) * s * b * f / t;
  if (!TraitsOf(framework).fused_kernels) {
    // PyTorch's eager modules save more for their backward: each norm its normalized tensor and
    // output apart (composite ops), rotary its fp32 complex q and k, SwiGLU the activation's
    // output beside both projections.
    x.norms += 2 * e * s * b * h / sp;
    if (model.family != "gpt") x.attention += 4 * s * b * (h + kv) / t;
    if (model.family == "llama") x.mlp += e * s * b * f / t;
    if (gpt) {
      // Hugging Face's GPT-2 in eager PyTorch: the tanh-GELU as composite operators (its tanh
      // output, 0.5 x and 1 + tanh saved beside the input), and dropout masks of the activation's
      // dtype instead of bytes (two residual dropouts, and the attention probabilities').
      x.mlp += 3 * e * s * b * f / t;
      x.norms += 2 * (e - 1) * s * b * h / sp;
      if (MaterializesScores(training)) x.scores += (e - 1) * a * s * keys * b / t;
    }
  }
  // Op-selective: the input, q, v, the attention kernel's output and state, the MLP's first
  // input projection and its output.
  x.op_selective = x.input + e * s * b * (h + kv) / t + saved * s * b * h / t +
                   (!MaterializesScores(training) ? 4 * a * s * b / t : 0) + e * s * b * f / t +
                   e * s * b * h / sp;
  return x;
}

// DeepSpeed's pipeline engine (runtime/pipe/engine.py) on one stage, in bytes; a is one
// micro-batch's hidden states, e s b h (s / cp tokens). Each in-flight micro-batch's output is
// kept until its backward pass — as its 1/t partition under tensor parallelism, whole without —
// and, without tensor parallelism, a clone of the received input beside the input itself. For a
// micro-batch's backward pass the stage rebuilds the whole output and the whole incoming gradient
// from their partitions, with a third copy while a gathered partition is cloned (3 a; without
// tensor parallelism only the incoming gradient, a). One persistent receive buffer of a / t for
// gradients (not on the last stage) and one for activations (not on the first). Megatron frees
// a stage's output once it is sent, and its layer inputs are the only copies.
double DeepSpeedPipeBytes(const ModelSpec& model, const ParallelConfig& c, double e,
                          double in_flight, bool first, bool last) {
  const double a = e * static_cast<double>(model.sequence_length) /
                   static_cast<double>(c.context_parallel) * static_cast<double>(c.micro_batch) *
                   static_cast<double>(model.hidden_size);
  const double t = static_cast<double>(c.tensor);
  const bool partitioned = c.tensor > 1;
  double per_micro_batch = 0;
  if (!last) per_micro_batch += partitioned ? a / t : a;
  if (!first && !partitioned) per_micro_batch += a;
  const double backward = last ? 0 : (partitioned ? 3 * a : a);
  const double receive = (last ? 0 : a / t) + (first ? 0 : a / t);
  return in_flight * per_micro_batch + backward + receive;
}

}  // namespace

bool DeepSpeedContiguousBucket(const ParallelConfig& c) {
  return c.zero_stage == 2 || (c.zero_stage == 1 && c.offload_optimizer);
}

int64_t InterleavedGroup(int64_t pipeline, int64_t micro_batches,
                         std::optional<Framework> framework) {
  const int64_t p = pipeline, m = micro_batches;
  if (TraitsOf(framework).pytorch_pipeline_schedules) return m / std::max<int64_t>(1, m / p);
  for (int64_t n = p; n <= m; ++n) {
    if (m % n == 0 || m % n >= p) return n;
  }
  return 0;
}

double InFlightMicroBatches(const ParallelConfig& c, int64_t micro_batches, int64_t stage,
                            std::optional<Framework> framework) {
  const int64_t p = c.pipeline, v = c.virtual_stages;
  if (v == 1) return static_cast<double>(std::min(p - stage, micro_batches));
  const int64_t chunk_passes = micro_batches * v;
  // A layout Megatron refuses (m < p) and no framework runs is counted as PyTorch's.
  int64_t group = InterleavedGroup(p, micro_batches, framework);
  if (group == 0) group = micro_batches;
  const int64_t warmup = (v - 1) * group + 2 * (p - stage - 1);
  return static_cast<double>(std::min(warmup + 1, chunk_passes)) / static_cast<double>(v);
}

int64_t LayerActivationBytes(const ModelSpec& model, const TrainingSpec& training,
                             const ParallelConfig& c, std::optional<Framework> framework) {
  const Terms x = TermsOf(model, training, c, framework);
  if (c.recompute == Recompute::kFull) return Ceil(x.input);
  if (c.recompute == Recompute::kOpSelective) return Ceil(x.op_selective + x.scores);
  const double scores = c.recompute == Recompute::kNone ? x.scores : 0;
  return Ceil(x.input + x.norms + x.attention + scores + x.mlp);
}

LayerActivations LayerActivationParts(const ModelSpec& model, const TrainingSpec& training,
                                      const ParallelConfig& c, const LayerPartSeconds& seconds,
                                      std::optional<Framework> framework) {
  const Terms x = TermsOf(model, training, c, framework);
  LayerActivations layer;
  layer.kept_bytes = Ceil(x.input);
  layer.parts = {{"attention", Ceil(x.attention + x.scores), seconds.attention_s},
                 {"mlp", Ceil(x.mlp), seconds.mlp_s},
                 {"norms", Ceil(x.norms), seconds.norms_s}};
  return layer;
}

MemoryEstimate EstimateMemory(const JobSpec& spec, const ModelFigures& figures,
                              const ParallelConfig& c, int64_t capacity_bytes,
                              const MemorySettings& settings) {
  const ModelSpec& model = spec.model;
  const TrainingSpec training = TrainingOf(spec.training, c);
  const std::optional<Framework> framework = RunningFramework(spec, c);
  const int64_t d = DataParallel(c, spec.hardware.total_gpus());
  const int64_t p = c.pipeline;
  const int64_t micro_batches =
      MicroBatchesPerStep(c, spec.hardware.total_gpus(), training.global_batch);
  // Context-parallel ranks hold the same weights: the optimizer shards over d x cp.
  const int64_t shards = d * c.context_parallel;
  const StateBytes sb = StateBytesFor(training, framework, &c);
  const double e = LowPrecision(training.precision) ? 2 : 4;  // activations, gathered weights

  const double per_layer = static_cast<double>(LayerActivationBytes(model, training, c, framework));
  ParallelConfig none = c;
  none.recompute = Recompute::kNone;
  none.recompute_layers = 0;
  const double full_layer =
      static_cast<double>(LayerActivationBytes(model, training, none, framework));
  // One layer's full activations while it is recomputed (op-selective: what it drops).
  const double transient = c.recompute == Recompute::kFull          ? full_layer
                           : c.recompute == Recompute::kOpSelective ? full_layer - per_layer
                                                                    : 0;
  // The activations of one micro-batch on a stage of `layers` layers.
  auto activations = [&](double layers) {
    if (c.recompute == Recompute::kFull && c.recompute_layers > 0) {
      const double kept = std::min(layers, static_cast<double>(c.recompute_layers));
      return kept * per_layer + (layers - kept) * full_layer;
    }
    return layers * per_layer;
  };
  const double sbv = static_cast<double>(model.sequence_length) /
                     static_cast<double>(c.context_parallel) * static_cast<double>(c.micro_batch) *
                     static_cast<double>(model.vocab_size);
  const double logits = (e + 4) * sbv / static_cast<double>(c.tensor);

  // At ZeRO 3, FSDP's units as torchtitan and
  // accelerate wrap them — one per layer, the root holding the embeddings and the output head:
  // the gathered 16-bit weights of the current and the prefetched layer and the current layer's
  // gradients before their reduce-scatter, plus the root unit's weights, which stay gathered
  // from the forward to the backward pass, and its gradients before their reduce-scatter
  // (measured on CPU ranks: bench/plan/cpu_validation.py).
  const double layer_params =
      static_cast<double>(figures.layer_parameters) / static_cast<double>(c.tensor);
  const FrameworkTraits traits = TraitsOf(framework);
  auto temporaries = [&](int64_t root_params) {
    // DeepSpeed's ZeRO 2 reduces through contiguous buckets of 5e8 elements (its
    // reduce_bucket_size default): two with overlap_comm, which the time model's overlapped
    // reduction assumes and --emit writes at ZeRO 2 (stage_1_and_2.py allocates a second ipg
    // buffer for it). ZeRO 1 turns the contiguous buckets off (DeepSpeed v0.6-v0.12) — unless
    // the optimizer is offloaded, which turns one back on — and all-reduces flattened gradients
    // after the backward passes, when the activations are gone, so nothing of it adds to the
    // backward pass's peak.
    if (framework == Framework::kDeepSpeed && c.zero_stage < 3) {
      if (!DeepSpeedContiguousBucket(c)) return 0.0;
      return (c.zero_stage == 2 ? 2 : 1) * 5e8 * e;
    }
    const double root = static_cast<double>(root_params) / static_cast<double>(c.tensor);
    // FSDP's SHARD_GRAD_OP: a unit's unsharded gradients wait for their reduce-scatter — the
    // current layer's and the root's (the head's come first in the backward pass).
    if (c.zero_stage == 2 && traits.reshards_after_backward) {
      return (layer_params + root) * sb.gradient;
    }
    // DDP's buckets are the gradients themselves (gradient_as_bucket_view): nothing beyond the
    // model states (the CPU validation's DDP rows were 8-15% high while two 25 MiB buckets were
    // counted on top).
    if (c.zero_stage < 3) return 0.0;
    return layer_params * (2 * e + sb.gradient) + root * (e + sb.gradient);
  };
  const int64_t head_params = figures.lm_head_parameters;
  const bool fsdp2 = traits.reshards_after_backward;
  const bool once_a_step = GathersOnceAStep(framework, c);
  auto stage = [&](int64_t i) {
    const bool first = i == 0, last = i == p - 1;
    MemoryEstimate m;
    m.peak_stage = p == 1 ? "only" : first ? "first" : last ? "last" : "second";
    m.parameters_on_gpu = ParamsOfStage(model, figures, c, i);
    StateBytes on_gpu = sb;
    if (c.offload_optimizer) on_gpu.master = on_gpu.optimizer = on_gpu.gradient_copy = 0;
    if (fsdp2 && c.zero_stage >= 2) {
      // FSDP2 keeps every parameter sharded, in fp32 when it computes in 16 bits (its own
      // master copy), gradients and optimizer states too: ZeRO 3's accounting. At ZeRO 2
      // (reshard_after_forward=False) a unit's gathered weights stay from the forward pass to
      // the backward pass, all of a stage's at the peak; under a pipeline that gathers once a
      // step (GathersOnceAStep) they stay the whole step, with the unsharded gradients
      // accumulated in the reduce precision beside them.
      const auto params = static_cast<double>(m.parameters_on_gpu);
      m.model_state_bytes = ModelStateBytes(m.parameters_on_gpu, on_gpu, 3, shards);
      if (c.zero_stage == 2 || once_a_step) m.model_state_bytes += Ceil(params * e);
      if (once_a_step) m.model_state_bytes += Ceil(params * sb.gradient);
    } else {
      m.model_state_bytes = ModelStateBytes(m.parameters_on_gpu, on_gpu,
                                            ShardingStage(training, framework, c), shards);
    }
    // DDP under autocast (ZeRO 0 under FSDP's plan or torchtitan: fp32 weights, no master copy)
    // holds the 16-bit cast of every layer's and the LM head's weight (tied or not) in
    // autocast's cache until the forward pass and the loss are over, recomputed layers' too,
    // and saves them for the backward pass; the embedding is looked up in fp32, and the norms'
    // few weights, which stay fp32, are counted with their layers
    // (tests/python/test_autocast_weight_casts.py measures both). torchtitan's and Accelerate's
    // DDP keep their buckets beside the gradients (FrameworkTraits::ddp_buckets_beside_gradients).
    if (c.zero_stage == 0 && sb.master == 0) {
      if (LowPrecision(training.precision)) {
        // The stage's layers' weights, and the LM head's on the last stage.
        double casts = static_cast<double>(StageLayers(c, model.layers, i)) *
                       static_cast<double>(figures.layer_parameters) /
                       static_cast<double>(c.tensor);
        if (last) {
          casts += static_cast<double>(model.vocab_size) * static_cast<double>(model.hidden_size) /
                   static_cast<double>(c.tensor);
        }
        m.model_state_bytes += Ceil(casts * e);
      }
      if (traits.ddp_buckets_beside_gradients) {
        m.model_state_bytes += Ceil(static_cast<double>(m.parameters_on_gpu) * sb.gradient);
      }
    }
    const double layers = static_cast<double>(StageLayers(c, model.layers, i));
    // 1F1B: stage i holds min(p - i, m) micro-batches; interleaved, the last stage too holds
    // the warm-up's chunks (InFlightMicroBatches).
    const double in_flight = InFlightMicroBatches(c, micro_batches, i, framework);
    const double pipe_buffers = framework == Framework::kDeepSpeed && p > 1
                                    ? DeepSpeedPipeBytes(model, c, e, in_flight, first, last)
                                    : 0;
    m.pipeline_buffer_bytes = Ceil(pipe_buffers);
    m.activation_bytes = Ceil(activations(layers) * in_flight + transient + pipe_buffers);
    m.logits_bytes = last ? Ceil(logits) : 0;
    // The root unit's parameters: the embedding's and the head's. torchtitan reshards the
    // embedding after its forward pass and gathers it again for the end of the backward pass,
    // when the activations are gone; only its head stays gathered at the peak.
    int64_t root = 0;
    if (first && !traits.keeps_head_gathered) root += figures.embedding_parameters;
    if (last) root += head_params;
    if (once_a_step) {
      // The weights and the gradients are model states here: one unit's fresh gradients
      // before they are added into the accumulator (the head's first, on the last stage).
      const double unit =
          std::max(layer_params,
                   last ? static_cast<double>(head_params) / static_cast<double>(c.tensor) : 0.0);
      m.temporary_bytes = Ceil(unit * e);
    } else {
      m.temporary_bytes = Ceil(temporaries(root));
    }
    const int64_t managed =
        m.model_state_bytes + m.activation_bytes + m.logits_bytes + m.temporary_bytes;
    m.fragmentation_bytes = Ceil(static_cast<double>(managed) * settings.fragmentation_fraction);
    m.reserve_bytes = settings.runtime_reserve_bytes;
    const int64_t modelled = managed + m.fragmentation_bytes + m.reserve_bytes;
    if (framework) {
      m.measured_overhead_bytes =
          Ceil(static_cast<double>(modelled) *
               settings.measured_overhead_fraction[static_cast<size_t>(*framework)]);
    }
    m.total_bytes = modelled + m.measured_overhead_bytes;
    m.capacity_bytes = capacity_bytes;
    if (c.offload_optimizer) {
      const double shard = static_cast<double>(m.parameters_on_gpu) / static_cast<double>(shards);
      m.host_bytes_per_node = Ceil(shard * (sb.master + sb.optimizer + 4) *
                                   static_cast<double>(spec.hardware.gpus_per_node));
      m.host_fits =
          static_cast<double>(m.host_bytes_per_node) <= spec.hardware.host.memory_gbytes * 1e9;
    }
    m.fits = m.total_bytes <= capacity_bytes && m.host_fits;
    return m;
  };
  MemoryEstimate peak = stage(0);
  for (int64_t i : {int64_t{1}, p - 1}) {
    if (i <= 0 || i >= p) continue;
    const MemoryEstimate other = stage(i);
    if (other.total_bytes > peak.total_bytes) peak = other;
  }
  return peak;
}

base::Report MemoryEstimateToReport(const MemoryEstimate& m) {
  base::Report r = base::Report::object();
  r["peak_stage"] = m.peak_stage;
  r["parameters_on_gpu"] = m.parameters_on_gpu;
  r["model_state_bytes"] = m.model_state_bytes;
  r["activation_bytes"] = m.activation_bytes;
  if (m.pipeline_buffer_bytes > 0) r["pipeline_buffer_bytes"] = m.pipeline_buffer_bytes;
  r["logits_bytes"] = m.logits_bytes;
  r["temporary_bytes"] = m.temporary_bytes;
  r["fragmentation_bytes"] = m.fragmentation_bytes;
  r["reserve_bytes"] = m.reserve_bytes;
  r["measured_overhead_bytes"] = m.measured_overhead_bytes;
  r["total_bytes"] = m.total_bytes;
  if (m.host_bytes_per_node > 0) r["host_bytes_per_node"] = m.host_bytes_per_node;
  return r;
}

}  // namespace seedance::plan
