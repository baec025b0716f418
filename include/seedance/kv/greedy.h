// Greedy decoding straight on the model (no server, no batching): the reference path the tests
// compare with Transformers' generate(do_sample=False).
#pragma once

#include <span>
#include <vector>

#include "seedance/base/status.h"
#include "seedance/kv/cache.h"
#include "seedance/kv/llama.h"

namespace seedance::kv {

// Runs `prompt` (not empty) through `model` into `cache` (empty), then appends the argmax
// token (the lowest id on a tie, as torch.argmax) `max_tokens` times, stopping after `stop` when
// it is >= 0. Returns the generated ids. OutOfRange when the context would pass seq_len.
base::StatusOr<std::vector<int>> GreedyDecode(const LlamaModel& model, KvCache& cache,
                                              std::span<const int> prompt, int max_tokens,
                                              int stop = -1);

}  // namespace seedance::kv
