#include "seedance/kv/greedy.h"

#include <algorithm>
#include <string>

namespace seedance::kv {

base::StatusOr<std::vector<int>> GreedyDecode(const LlamaModel& model, KvCache& cache,
                                              std::span<const int> prompt, int max_tokens,
                                              int stop) {
  const LlamaConfig& c = model.config();
  if (prompt.empty()) return base::InvalidArgumentError("the prompt is empty", "prompt");
  if (max_tokens < 0 ||
      static_cast<int64_t>(prompt.size()) + max_tokens > static_cast<int64_t>(c.seq_len)) {
    return base::OutOfRangeError("a prompt of " + std::to_string(prompt.size()) + " tokens and " +
                                     std::to_string(max_tokens) + " more pass seq_len " +
                                     std::to_string(c.seq_len),
                                 "max_tokens");
  }
  std::vector<float> logits(static_cast<size_t>(c.vocab_size));
  int pos = 0;
  for (int token : prompt) SEEDANCE_RETURN_IF_ERROR(model.Forward(token, pos++, cache, logits));
  std::vector<int> out;
  for (int i = 0; i < max_tokens; ++i) {
    const int next =
        static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    out.push_back(next);
    if (next == stop || i + 1 == max_tokens) break;
    SEEDANCE_RETURN_IF_ERROR(model.Forward(next, pos++, cache, logits));
  }
  return out;
}

}  // namespace seedance::kv
