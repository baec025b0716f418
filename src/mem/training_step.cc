#include "seedance/mem/training_step.h"

#include <string>

namespace seedance::mem {

namespace {

// Sizes in 128-bit arithmetic: each factor is below 2^31 in any accepted job spec, so no product
// of four of them overflows before the check against kMaxBufferSize.
__extension__ typedef __int128 Wide;  // a GCC and clang extension; -Wpedantic accepts it so marked

base::StatusOr<int64_t> Fits(Wide bytes, const char* what) {
  if (bytes < 0 || bytes > kMaxBufferSize) {
    return base::InvalidArgumentError(
        std::string(what) + " would need more than the 2^50 bytes one buffer may have",
        "training step");
  }
  return static_cast<int64_t>(bytes);
}

}  // namespace

base::StatusOr<int64_t> ActivationBytesPerLayer(const TrainingStepShape& t) {
  const Wide sbh = Wide{t.sequence_length} * t.micro_batch * t.hidden_size;
  const Wide attention = Wide{5} * t.attention_heads * t.sequence_length * t.sequence_length *
                         t.micro_batch;  // 5·a·s²·b
  return Fits((34 * sbh + attention) * t.bytes_per_element / 2, "the activations of one layer");
}

base::StatusOr<std::vector<Buffer>> TrainingStepLifetimes(const TrainingStepShape& t) {
  const int64_t L = t.layers;
  const int64_t end = 2 * L + 3;
  const int64_t e = t.bytes_per_element;
  std::vector<Buffer> out;
  auto add = [&out](std::string id, int64_t lower, int64_t upper, int64_t size, BufferKind kind) {
    if (size > 0) out.push_back({std::move(id), lower, upper, size, kind});
  };
  for (const int64_t params :
       {t.embedding_parameters, t.head_parameters, t.other_parameters, t.layer_parameters}) {
    SEEDANCE_RETURN_IF_ERROR(Fits(Wide{params} * 8, "one tensor's optimizer state").status());
  }
  auto persistent = [&](const std::string& name, int64_t params) {
    add(name + ".weight", 0, end, params * e, BufferKind::kWeight);
    add(name + ".grad", 0, end, params * e, BufferKind::kGradient);
    if (t.fp32_master_weights)
      add(name + ".master", 0, end, params * 4, BufferKind::kOptimizerState);
    add(name + ".optimizer", 0, end, params * t.optimizer_bytes_per_param,
        BufferKind::kOptimizerState);
  };
  persistent("embedding", t.embedding_parameters);
  persistent("head", t.head_parameters);
  persistent("final_norm", t.other_parameters);
  SEEDANCE_ASSIGN_OR_RETURN(const int64_t activations, ActivationBytesPerLayer(t));
  SEEDANCE_ASSIGN_OR_RETURN(
      const int64_t flowing,
      Fits(Wide{t.sequence_length} * t.micro_batch * t.hidden_size * e, "the activation gradient"));
  for (int64_t i = 1; i <= L; ++i) {
    const std::string name = "layer" + std::to_string(i);
    persistent(name, t.layer_parameters);
    const int64_t backward = 2 * L + 2 - i;
    add(name + ".activations", i, backward + 1, activations, BufferKind::kActivation);
    add(name + ".input_grad", backward, backward + 1, flowing, BufferKind::kWorkspace);
  }
  SEEDANCE_ASSIGN_OR_RETURN(
      const int64_t logits,
      Fits(Wide{t.sequence_length} * t.micro_batch * t.vocab_size * 4, "the logits"));
  add("logits", L + 1, L + 3, logits, BufferKind::kActivation);
  add("logits.grad", L + 2, L + 3, logits, BufferKind::kWorkspace);
  return out;
}

}  // namespace seedance::mem
