#include "seedance/plan/step_replay.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "seedance/mem/replay.h"
#include "seedance/plan/memory_model.h"

namespace seedance::plan {
namespace {

using mem::Buffer;
using mem::BufferKind;

// Appends a buffer of at least one byte (the allocator serves no empty requests; a zero-size
// term is simply absent).
void Add(std::vector<Buffer>& out, std::string id, int64_t lower, int64_t upper, double bytes,
         BufferKind kind) {
  const auto size = static_cast<int64_t>(std::ceil(bytes));
  if (size <= 0 || upper <= lower) return;
  out.push_back(Buffer{std::move(id), lower, upper, size, kind});
}

// One pass (forward or backward) of one micro-batch on the stage: its time span.
struct Pass {
  int64_t micro_batch = 0;
  bool forward = true;
  int64_t start = 0;  // the first unit; a pass takes `units` consecutive units
};

}  // namespace

base::StatusOr<std::vector<Buffer>> PlannedStepBuffers(const JobSpec& spec,
                                                       const ModelFigures& figures,
                                                       const ParallelConfig& c) {
  SEEDANCE_RETURN_IF_ERROR(CheckParallelism(c, spec));
  const ModelSpec& model = spec.model;
  const TrainingSpec training = TrainingOf(spec.training, c);
  const int64_t d = DataParallel(c, spec.hardware.total_gpus());
  const int64_t m = MicroBatchesPerStep(c, spec.hardware.total_gpus(), training.global_batch);
  const int64_t shards = d * c.context_parallel;  // CP ranks hold the same weights
  const MemoryEstimate peak = EstimateMemory(spec, figures, c, int64_t{1} << 62);
  const std::string stage_name = peak.peak_stage;
  const int64_t stage = stage_name == "last" ? c.pipeline - 1 : stage_name == "second" ? 1 : 0;
  const bool last = stage == c.pipeline - 1;
  const bool has_head = last;
  const bool has_embedding = stage == 0;
  const std::optional<Framework> framework = RunningFramework(spec, c);
  const auto in_flight =
      static_cast<int64_t>(std::ceil(InFlightMicroBatches(c, m, stage, framework)));
  const int64_t simulated = std::min(m, in_flight + 2);
  const int64_t layers = StageLayers(c, model.layers, stage);
  const int64_t units = layers + (has_head ? 1 : 0);  // a pass's time units
  const double t = static_cast<double>(c.tensor);

  // 1F1B on this stage.
  std::vector<Pass> passes;
  int64_t next_forward = 0, next_backward = 0, clock = 0;
  auto run = [&](bool forward) {
    passes.push_back({forward ? next_forward++ : next_backward++, forward, clock});
    clock += units;
  };
  while (next_forward < std::min(in_flight, simulated)) run(true);
  while (next_forward < simulated) {
    run(false);
    run(true);
  }
  while (next_backward < simulated) run(false);
  const int64_t end = clock + 1;  // the optimizer step

  std::vector<Buffer> out;
  // Model states, per layer and for the stage's embedding and head.
  const StateBytes sb = StateBytesFor(training, framework, &c);
  const int zero = ShardingStage(training, framework, c);  // BF16_Optimizer shards as ZeRO 1
  // DDP under autocast holds the 16-bit casts of the layers' and the LM head's weights, and
  // torchtitan's and Accelerate's DDP their buckets beside the gradients, as the memory model
  // counts them.
  const bool ddp = c.zero_stage == 0 && sb.master == 0;
  const bool autocast_casts = ddp && training.precision != base::NumericFormat::kFp32 &&
                              training.precision != base::NumericFormat::kTf32;
  const FrameworkTraits traits = TraitsOf(framework);
  const bool ddp_buckets = ddp && traits.ddp_buckets_beside_gradients;
  // FSDP2 keeps its shards, gradients and optimizer states as ZeRO 3 does at ZeRO 2 too, beside
  // the gathered weights ZeRO 2 holds and, under a pipeline that gathers once a step, the
  // unsharded gradients it accumulates (memory_model.cc).
  const bool fsdp2 = traits.reshards_after_backward && c.zero_stage >= 2;
  const bool once_a_step = GathersOnceAStep(framework, c);
  const int state_zero = fsdp2 ? 3 : zero;
  // Bytes per activation element and per gathered weight (16-bit or fp32 compute).
  const double e = StateBytesFor(training).weight;
  auto states = [&](const std::string& name, int64_t params, double casts) {
    const StateBytes w{.weight = sb.weight, .gradient = 0, .master = 0, .optimizer = 0};
    const StateBytes g{.weight = 0, .gradient = sb.gradient, .master = 0, .optimizer = 0};
    const StateBytes mo{.weight = 0,
                        .gradient = 0,
                        .master = c.offload_optimizer ? 0 : sb.master,
                        .optimizer = c.offload_optimizer ? 0 : sb.optimizer,
                        .gradient_copy = c.offload_optimizer ? 0 : sb.gradient_copy};
    Add(out, name + ".weights", 0, end,
        static_cast<double>(ModelStateBytes(params, w, state_zero, shards)), BufferKind::kWeight);
    Add(out, name + ".gradients", 0, end,
        static_cast<double>(ModelStateBytes(params, g, state_zero, shards)), BufferKind::kGradient);
    Add(out, name + ".optimizer", 0, end,
        static_cast<double>(ModelStateBytes(params, mo, state_zero, shards)),
        BufferKind::kOptimizerState);
    if (fsdp2 && (c.zero_stage == 2 || once_a_step)) {
      Add(out, name + ".unsharded.weights", 0, end, static_cast<double>(params) * e,
          BufferKind::kWeight);
    }
    if (once_a_step) {
      Add(out, name + ".accumulated.gradients", 0, end, static_cast<double>(params) * sb.gradient,
          BufferKind::kGradient);
    }
    if (autocast_casts && casts > 0) {
      Add(out, name + ".autocast.weights", 0, end, casts * 2.0, BufferKind::kWeight);
    }
    if (ddp_buckets) {
      Add(out, name + ".bucket.gradients", 0, end, static_cast<double>(params) * sb.gradient,
          BufferKind::kGradient);
    }
  };
  const int64_t layer_params = figures.layer_parameters / c.tensor;
  for (int64_t i = 0; i < layers; ++i) {
    states("layer" + std::to_string(i), layer_params, static_cast<double>(layer_params));
  }
  int64_t root_params = 0;
  if (has_embedding) root_params += figures.embedding_parameters / c.tensor;
  if (has_head) {
    const bool tied_copy = c.pipeline > 1 && model.tie_embeddings;
    root_params +=
        (tied_copy ? figures.embedding_parameters : figures.lm_head_parameters) / c.tensor;
    root_params += figures.parameters - figures.embedding_parameters -
                   model.layers * figures.layer_parameters - figures.lm_head_parameters;
  }
  const double head_casts =
      has_head ? static_cast<double>(model.vocab_size) * static_cast<double>(model.hidden_size) / t
               : 0;
  states("root", root_params, head_casts);

  // Activation parts of one layer and one micro-batch.
  ParallelConfig keep_all = c;
  keep_all.recompute = Recompute::kNone;
  keep_all.recompute_layers = 0;
  const LayerActivations parts = LayerActivationParts(model, training, keep_all, {}, framework);
  double attention = 0, mlp = 0, norms = 0;
  for (const DroppablePart& part : parts.parts) {
    const auto bytes = static_cast<double>(part.bytes);
    if (part.name == "attention") attention = bytes;
    if (part.name == "mlp") mlp = bytes;
    if (part.name == "norms") norms = bytes;
  }
  const auto input = static_cast<double>(parts.kept_bytes);
  const double kept_attention =
      c.recompute == Recompute::kSelective
          ? static_cast<double>(LayerActivationBytes(model, training, c, framework)) - input - mlp -
                norms
          : attention;
  // Op-selective keeps one set of tensors from the forward pass to the backward pass.
  const double op_selective =
      static_cast<double>(LayerActivationBytes(model, training, c, framework)) - input;
  const double sp = c.sequence_parallel ? t : 1;
  const double tokens = static_cast<double>(model.sequence_length) *
                        static_cast<double>(c.micro_batch) /
                        static_cast<double>(c.context_parallel);
  const double grad_flow = e * tokens * static_cast<double>(model.hidden_size) / sp;
  const double sbv = tokens * static_cast<double>(model.vocab_size) / t;
  const double gathered_layer = static_cast<double>(layer_params) * e;
  const double unsharded_grads = static_cast<double>(layer_params) * sb.gradient;
  // torchtitan reshards the embedding after its forward pass: only the head stays gathered.
  const int64_t root_held = has_embedding && traits.keeps_head_gathered
                                ? root_params - figures.embedding_parameters / c.tensor
                                : root_params;
  const double root_gathered = static_cast<double>(root_held) * e;
  const double root_unsharded_grads = static_cast<double>(root_held) * sb.gradient;
  const double head_fresh_grads = has_head ? head_casts * e : 0;
  // PyTorch's FSDP at ZeRO 2 (SHARD_GRAD_OP) reduce-scatters each unit's unsharded gradients
  // after its backward pass, as at ZeRO 3.
  const bool torch_zero2 = fsdp2 && c.zero_stage == 2;

  const bool deepspeed_pipe = framework == Framework::kDeepSpeed && c.pipeline > 1;
  if (deepspeed_pipe) {  // the persistent receive buffers, of a / t each
    const double partition =
        e * tokens * static_cast<double>(model.hidden_size) / static_cast<double>(c.tensor);
    if (!has_head) Add(out, "pipe_grad_receive", 0, end, partition, BufferKind::kWorkspace);
    if (!has_embedding) {
      Add(out, "pipe_activation_receive", 0, end, partition, BufferKind::kWorkspace);
    }
  }

  std::vector<int64_t> forward_start(static_cast<size_t>(simulated));
  for (const Pass& pass : passes) {
    const std::string mb = "mb" + std::to_string(pass.micro_batch);
    if (pass.forward) {
      forward_start[static_cast<size_t>(pass.micro_batch)] = pass.start;
      continue;
    }
    // The backward pass: the head first (if any), then the layers in reverse.
    const int64_t f0 = forward_start[static_cast<size_t>(pass.micro_batch)];
    const int64_t b0 = pass.start;
    auto forward_of = [&](int64_t layer) { return f0 + layer; };
    auto backward_of = [&](int64_t layer) {
      return b0 + (has_head ? 1 : 0) + (layers - 1 - layer);
    };
    for (int64_t i = 0; i < layers; ++i) {
      const std::string id = mb + ".layer" + std::to_string(i);
      const int64_t f = forward_of(i), b = backward_of(i);
      Add(out, id + ".input", f, b + 1, input, BufferKind::kActivation);
      // Full recomputation covers every layer, or the first recompute_layers of the stage.
      const bool full =
          c.recompute == Recompute::kFull && (c.recompute_layers == 0 || i < c.recompute_layers);
      const int64_t from = full ? b : f;  // recomputed parts exist for the backward pass alone
      if (c.recompute == Recompute::kOpSelective) {
        Add(out, id + ".kept", f, b + 1, op_selective, BufferKind::kActivation);
        Add(out, id + ".recomputed", b, b + 1, attention + mlp + norms - op_selective,
            BufferKind::kActivation);
      } else {
        const bool partial = c.recompute == Recompute::kFull && !full;
        Add(out, id + ".attention", from, b + 1, full || partial ? attention : kept_attention,
            BufferKind::kActivation);
        Add(out, id + ".mlp", from, b + 1, mlp, BufferKind::kActivation);
        Add(out, id + ".norms", from, b + 1, norms, BufferKind::kActivation);
      }
      Add(out, id + ".grad_input", b, b + 1, grad_flow, BufferKind::kActivation);
      if (once_a_step) {
        // The layer's fresh gradients until they are added into the accumulator.
        Add(out, id + ".fresh_grads", b, b + 1, gathered_layer, BufferKind::kWorkspace);
      } else {
        if (c.zero_stage == 3) {
          Add(out, id + ".gathered_fwd", f, f + 2, gathered_layer, BufferKind::kWorkspace);
          Add(out, id + ".gathered_bwd", b, b + 2, gathered_layer, BufferKind::kWorkspace);
        }
        if (c.zero_stage == 3 || torch_zero2) {
          Add(out, id + ".unsharded_grads", b, b + 1, unsharded_grads, BufferKind::kWorkspace);
        }
      }
    }
    // DeepSpeed's pipeline engine, as memory_model.cc counts it: each micro-batch's stage output
    // (its 1/t partition under tensor parallelism) until its backward pass, without tensor
    // parallelism a clone of the received input, and the output and incoming gradient rebuilt
    // for the backward pass. Megatron frees the output once sent; the last stage sends none.
    if (deepspeed_pipe) {
      const double a = e * tokens * static_cast<double>(model.hidden_size);
      if (!has_head) {
        Add(out, mb + ".stage_output", f0 + layers - 1, b0 + 1, c.tensor > 1 ? a / t : a,
            BufferKind::kActivation);
        Add(out, mb + ".rebuilt_output_and_grad", b0, b0 + 1, c.tensor > 1 ? 3 * a : a,
            BufferKind::kActivation);
      }
      if (!has_embedding && c.tensor == 1) {
        Add(out, mb + ".input_clone", f0, b0 + 1, a, BufferKind::kActivation);
      }
    }
    if (has_head) {
      const int64_t head_f = f0 + layers;
      Add(out, mb + ".logits", head_f, b0 + 1, e * sbv, BufferKind::kActivation);
      Add(out, mb + ".logits_fp32", head_f, b0 + 1, 4 * sbv, BufferKind::kActivation);
    }
    if (once_a_step) {
      Add(out, mb + ".head_fresh_grads", b0, b0 + 1, head_fresh_grads, BufferKind::kWorkspace);
    } else if (c.zero_stage == 3 || torch_zero2) {
      Add(out, mb + ".root_unsharded_grads", b0, b0 + units, root_unsharded_grads,
          BufferKind::kWorkspace);
    } else {
      // DeepSpeed's contiguous reduce bucket of 5e8 elements (ZeRO 2, or ZeRO 1 offloaded); plain
      // ZeRO 1 reduces after the backward passes, outside this peak (DDP's buckets are the
      // gradients themselves).
      if (framework == Framework::kDeepSpeed && DeepSpeedContiguousBucket(c)) {
        Add(out, mb + ".bucket", b0, b0 + units, 5e8 * e, BufferKind::kWorkspace);
      }
    }
  }
  // One gathered copy of the root unit while any micro-batch is between its forward and its
  // backward pass: from the step's first forward pass to its last backward pass.
  if (c.zero_stage == 3 && !once_a_step) {
    Add(out, "root_gathered", 0, clock, root_gathered, BufferKind::kWorkspace);
  }
  return out;
}

base::StatusOr<StepReplay> ReplayPlannedStep(const JobSpec& spec, const ModelFigures& figures,
                                             const ParallelConfig& c, mem::AllocatorPolicy policy) {
  SEEDANCE_ASSIGN_OR_RETURN(std::vector<Buffer> buffers, PlannedStepBuffers(spec, figures, c));
  SEEDANCE_ASSIGN_OR_RETURN(mem::ReplayResult r, mem::Replay(buffers, policy));
  StepReplay s;
  s.policy = policy;
  s.buffers = static_cast<int64_t>(buffers.size());
  s.requested_peak_bytes = r.requested_peak_bytes;
  s.reserved_peak_bytes = r.reserved_peak_bytes;
  s.margin_fraction = r.requested_peak_bytes > 0
                          ? static_cast<double>(r.reserved_peak_bytes) /
                                    static_cast<double>(r.requested_peak_bytes) -
                                1
                          : 0;
  return s;
}

base::Report StepReplayToReport(const StepReplay& r) {
  base::Report out = base::Report::object();
  out["policy"] = std::string(mem::AllocatorPolicyName(r.policy));
  out["buffers"] = r.buffers;
  out["requested_peak_bytes"] = r.requested_peak_bytes;
  out["reserved_peak_bytes"] = r.reserved_peak_bytes;
  out["margin_fraction"] = r.margin_fraction;
  return out;
}

}  // namespace seedance::plan
