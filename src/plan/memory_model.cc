#include "seedance/plan/memory_model.h"

#include <algorithm>
#include <cmath>

namespace seedance::plan {
namespace {

bool LowPrecision(base::NumericFormat f) {
  return f != base::NumericFormat::kFp32 && f != base::NumericFormat::kTf32;
}

// Whole bytes, saturated at 2^62 (a figure that large fits no GPU; the cast stays defined).
int64_t Ceil(double bytes) { return static_cast<int64_t>(std::min(std::ceil(bytes), 0x1p62)); }

// Parameters held by the first and the last pipeline stage.
struct StageParams {
  int64_t first = 0, last = 0;
};

StageParams ParamsPerStage(const ModelSpec& model, const ModelFigures& f, const ParallelConfig& c) {
  const int64_t t = c.tensor;
  const int64_t layers = model.layers / c.pipeline * f.layer_parameters / t;
  const int64_t embedding = f.embedding_parameters / t;
  const int64_t head = f.lm_head_parameters / t;
  const int64_t norm = f.parameters - f.embedding_parameters - model.layers * f.layer_parameters -
                       f.lm_head_parameters;
  if (c.pipeline == 1) return {layers + embedding + head + norm, layers + embedding + head + norm};
  // A tied head needs the embedding's weights on the last stage too (Megatron keeps a copy
  // there and all-reduces their gradients).
  const int64_t last_head = model.tie_embeddings ? embedding : head;
  return {layers + embedding, layers + last_head + norm};
}

}  // namespace

TrainingSpec TrainingOf(const TrainingSpec& training, const ParallelConfig& c) {
  TrainingSpec t = training;
  if (c.precision) t.precision = *c.precision;
  if (c.optimizer_states) t.optimizer_states = *c.optimizer_states;
  return t;
}

StateBytes StateBytesFor(const TrainingSpec& training) {
  StateBytes b;
  const bool low = LowPrecision(training.precision);
  b.weight = low ? 2 : 4;
  b.gradient = b.weight;
  b.master = low ? 4 : 0;
  const std::string& o = training.optimizer;
  b.optimizer = o == "adamw" || o == "adam" ? 8 : o == "sgd" ? 0 : 4;
  if (training.optimizer_states == base::NumericFormat::kBf16) b.optimizer /= 2;
  return b;
}

int64_t ModelStateBytes(int64_t params, const StateBytes& b, int stage, int64_t d) {
  const double p = static_cast<double>(params);
  const double dd = static_cast<double>(d);
  switch (stage) {
    case 0:
      return Ceil(p * b.total());
    case 1:
      return Ceil(p * (b.weight + b.gradient) + p * (b.master + b.optimizer) / dd);
    case 2:
      return Ceil(p * b.weight + p * (b.gradient + b.master + b.optimizer) / dd);
    default:
      return Ceil(p * b.total() / dd);
  }
}

namespace {

// The terms of one layer's activations for one micro-batch, before recomputation.
struct Terms {
  double input = 0;      // the layer's input (the first norm's)
  double norms = 0;      // the first norm's output, the second norm's input and output, masks
  double attention = 0;  // Q, K, V, the attention output, and the kernel's saved state
  double scores = 0;     // eager attention's s x s tensors (0 with fused attention)
  double mlp = 0;        // the MLP's intermediates
};

Terms TermsOf(const ModelSpec& model, const TrainingSpec& training, const ParallelConfig& c) {
  const double s = static_cast<double>(model.sequence_length);
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
  x.input = e * s * b * h / sp;
  x.norms = 3 * e * s * b * h / sp + (gpt ? 2 * s * b * h / sp : 0);  // + dropout masks (1 B)
  x.attention = e * s * b * h / t + 2 * e * s * b * kv / t + e * s * b * h / t;  // Q,K,V; output
  if (training.attention == "flash") {
    x.attention += 4 * a * s * b / t;  // log-sum-exp per row and head
  } else {
    const double scores = a * s * s * b / t;
    x.scores = e * scores + (gpt ? (e + 1) * scores : 0);  // softmax; dropout mask and output
  }
  x.mlp = (gpt ? 2 : 3) * e * s * b * f / t;
  return x;
}

}  // namespace

double InFlightMicroBatches(const ParallelConfig& c, int64_t micro_batches) {
  const int64_t p = c.pipeline;
  double in_flight = static_cast<double>(std::min(p, micro_batches));
  if (c.virtual_stages > 1) {
    in_flight *= 1 + static_cast<double>(p - 1) / static_cast<double>(p * c.virtual_stages);
  }
  return in_flight;
}

int64_t LayerActivationBytes(const ModelSpec& model, const TrainingSpec& training,
                             const ParallelConfig& c) {
  const Terms x = TermsOf(model, training, c);
  if (c.recompute == Recompute::kFull) return Ceil(x.input);
  const double scores = c.recompute == Recompute::kNone ? x.scores : 0;
  return Ceil(x.input + x.norms + x.attention + scores + x.mlp);
}

LayerActivations LayerActivationParts(const ModelSpec& model, const TrainingSpec& training,
                                      const ParallelConfig& c, const LayerPartSeconds& seconds) {
  const Terms x = TermsOf(model, training, c);
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
  const int64_t d = DataParallel(c, spec.hardware.total_gpus());
  const int64_t p = c.pipeline;
  const int64_t micro_batches = training.global_batch / (c.micro_batch * d);
  const StateBytes sb = StateBytesFor(training);
  const StageParams params = ParamsPerStage(model, figures, c);
  const double e = LowPrecision(training.precision) ? 2 : 4;

  const double layers_per_stage = static_cast<double>(model.layers) / static_cast<double>(p);
  const double per_layer = static_cast<double>(LayerActivationBytes(model, training, c));
  double transient = 0;  // one layer's full activations while it is recomputed
  if (c.recompute == Recompute::kFull) {
    ParallelConfig none = c;
    none.recompute = Recompute::kNone;
    transient = static_cast<double>(LayerActivationBytes(model, training, none));
  }
  const double first_act =
      per_layer * layers_per_stage * InFlightMicroBatches(c, micro_batches) + transient;
  const double last_act = per_layer * layers_per_stage + transient;
  const double sbv = static_cast<double>(model.sequence_length) *
                     static_cast<double>(c.micro_batch) * static_cast<double>(model.vocab_size);
  const double logits = (e + 4) * sbv / static_cast<double>(c.tensor);

  // Two DDP buckets (gradients as bucket views). At ZeRO 3, FSDP's units as torchtitan and
  // accelerate wrap them — one per layer, the root holding the embeddings and the output head:
  // the gathered weights of the current and the prefetched layer and the current layer's
  // gradients before their reduce-scatter, plus the root unit's weights, which stay gathered
  // from the forward to the backward pass, and its gradients before their reduce-scatter
  // (measured on CPU ranks: bench/plan/cpu_validation.py).
  const double layer_params =
      static_cast<double>(figures.layer_parameters) / static_cast<double>(c.tensor);
  auto temporaries = [&](int64_t root_params) {
    if (c.zero_stage < 3) return 2.0 * 25 * (1 << 20);
    const double root = static_cast<double>(root_params) / static_cast<double>(c.tensor);
    return layer_params * (2 * sb.weight + sb.gradient) + root * (sb.weight + sb.gradient);
  };
  const int64_t head_params = figures.lm_head_parameters;
  auto stage = [&](int64_t stage_params, int64_t root_params, double act, double logit_bytes,
                   const char* name) {
    MemoryEstimate m;
    m.peak_stage = name;
    m.parameters_on_gpu = stage_params;
    StateBytes on_gpu = sb;
    if (c.offload_optimizer) on_gpu.master = on_gpu.optimizer = 0;
    m.model_state_bytes = ModelStateBytes(stage_params, on_gpu, c.zero_stage, d);
    m.activation_bytes = Ceil(act);
    m.logits_bytes = Ceil(logit_bytes);
    m.temporary_bytes = Ceil(temporaries(root_params));
    const int64_t managed =
        m.model_state_bytes + m.activation_bytes + m.logits_bytes + m.temporary_bytes;
    m.fragmentation_bytes = Ceil(static_cast<double>(managed) * settings.fragmentation_fraction);
    m.reserve_bytes = settings.runtime_reserve_bytes;
    m.total_bytes = managed + m.fragmentation_bytes + m.reserve_bytes;
    m.fits = m.total_bytes <= capacity_bytes;
    if (c.offload_optimizer) {
      const double shard = static_cast<double>(stage_params) / static_cast<double>(d);
      m.host_bytes_per_node = Ceil(shard * (sb.master + sb.optimizer + 4) *
                                   static_cast<double>(spec.hardware.gpus_per_node));
      m.fits = m.fits &&
               static_cast<double>(m.host_bytes_per_node) <= spec.hardware.host.memory_gbytes * 1e9;
    }
    return m;
  };
  const int64_t first_root = figures.embedding_parameters + (p == 1 ? head_params : 0);
  const MemoryEstimate first =
      stage(params.first, first_root, first_act, p == 1 ? logits : 0, p == 1 ? "only" : "first");
  if (p == 1) return first;
  const MemoryEstimate last = stage(params.last, head_params, last_act, logits, "last");
  return last.total_bytes > first.total_bytes ? last : first;
}

base::Report MemoryEstimateToReport(const MemoryEstimate& m) {
  base::Report r = base::Report::object();
  r["peak_stage"] = m.peak_stage;
  r["parameters_on_gpu"] = m.parameters_on_gpu;
  r["model_state_bytes"] = m.model_state_bytes;
  r["activation_bytes"] = m.activation_bytes;
  r["logits_bytes"] = m.logits_bytes;
  r["temporary_bytes"] = m.temporary_bytes;
  r["fragmentation_bytes"] = m.fragmentation_bytes;
  r["reserve_bytes"] = m.reserve_bytes;
  r["total_bytes"] = m.total_bytes;
  if (m.host_bytes_per_node > 0) r["host_bytes_per_node"] = m.host_bytes_per_node;
  return r;
}

}  // namespace seedance::plan
