// What the serving engine needs of a tokenizer, whichever the model's file brings: llama2.c's
// (llama.h, BOS before every prompt, </s> ends) or a GGUF file's byte-level BPE
// (bpe_tokenizer.h, no BOS for the models read here, the file's end-of-sequence token ends).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace seedance::kv {

class TextTokenizer {
 public:
  virtual ~TextTokenizer() = default;
  // Token ids of `text`, without BOS.
  virtual std::vector<int> Encode(std::string_view text) const = 0;
  // The bytes `token` adds after `previous` (the BOS id, or -1 at the very start).
  virtual std::string Decode(int previous, int token) const = 0;
  // The id put before every prompt; none when the model takes prompts as they are.
  virtual std::optional<int> Bos() const = 0;
  // The ids that end a generation (not part of its text).
  virtual std::vector<int> StopIds() const = 0;
};

}  // namespace seedance::kv
