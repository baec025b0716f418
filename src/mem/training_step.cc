#include "seedance/mem/training_step.h"

#include <string>

namespace seedance::mem {

int64_t ActivationBytesPerLayer(const TrainingStepShape& t) {
  const int64_t sbh = t.sequence_length * t.micro_batch * t.hidden_size;
  const int64_t attention =
      5 * t.attention_heads * t.sequence_length * t.sequence_length * t.micro_batch;  // 5·a·s²·b
  return (34 * sbh + attention) * t.bytes_per_element / 2;
}

std::vector<Buffer> TrainingStepLifetimes(const TrainingStepShape& t) {
  const int64_t L = t.layers;
  const int64_t end = 2 * L + 3;
  const int64_t e = t.bytes_per_element;
  std::vector<Buffer> out;
  auto add = [&out](std::string id, int64_t lower, int64_t upper, int64_t size, BufferKind kind) {
    if (size > 0) out.push_back({std::move(id), lower, upper, size, kind});
  };
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
  const int64_t activations = ActivationBytesPerLayer(t);
  const int64_t flowing = t.sequence_length * t.micro_batch * t.hidden_size * e;
  for (int64_t i = 1; i <= L; ++i) {
    const std::string name = "layer" + std::to_string(i);
    persistent(name, t.layer_parameters);
    const int64_t backward = 2 * L + 2 - i;
    add(name + ".activations", i, backward + 1, activations, BufferKind::kActivation);
    add(name + ".input_grad", backward, backward + 1, flowing, BufferKind::kWorkspace);
  }
  const int64_t logits = t.sequence_length * t.micro_batch * t.vocab_size * 4;
  add("logits", L + 1, L + 3, logits, BufferKind::kActivation);
  add("logits.grad", L + 2, L + 3, logits, BufferKind::kWorkspace);
  return out;
}

}  // namespace seedance::mem
