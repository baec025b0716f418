// The byte-level BPE tokenizer of GPT-2-style models, read from a GGUF file's vocabulary
// (tokenizer.ggml.model "gpt2": tokens, token types and merges), as Transformers builds it from
// the same file:
//   1. the text is split at the vocabulary's control and user-defined tokens (<|im_start|>, ...),
//      which become their ids;
//   2. each other stretch is split by GPT-2's pattern ('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+|
//      ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+; Unicode classes from ICU). For tokenizer.ggml.pre
//      "smollm" llama.cpp first isolates every digit;
//      Transformers, reading the same GGUF, does not, and this reader follows Transformers: the two
//      differ only where spaces precede a digit;
//   3. each piece's bytes are mapped to GPT-2's printable characters and merged by rank, the
//      lowest-ranked adjacent pair first (leftmost on ties).
// Pre-tokenizers other than "gpt2", "default" and "smollm" are refused by name.
#pragma once

#include <bitset>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "seedance/base/status.h"
#include "seedance/kv/gguf.h"
#include "seedance/kv/text_tokenizer.h"

namespace seedance::kv {

class BpeTokenizer : public TextTokenizer {
 public:
  // Errors name the file and the key: another tokenizer model or pre-tokenizer, a merge naming
  // an unknown token. A byte the vocabulary has no token for is dropped when encoding, as
  // Transformers does with the same file.
  static base::StatusOr<BpeTokenizer> FromGguf(const GgufFile& file);

  // Token ids of `text`, without BOS (Bos() says whether the model wants one).
  std::vector<int> Encode(std::string_view text) const override;
  // The bytes of `ids` (control tokens as their text); UTF-8 split across tokens joins up when
  // the ids are decoded together.
  std::string Decode(std::span<const int> ids) const;
  using TextTokenizer::Decode;
  // The bytes of one token.
  std::string TokenBytes(int id) const;
  std::string Decode(int /*previous*/, int token) const override { return TokenBytes(token); }
  // BOS when tokenizer.ggml.add_bos_token says so; generations end at the end-of-sequence token
  // and, when the file names one, the end-of-turn token.
  std::optional<int> Bos() const override;
  std::vector<int> StopIds() const override;

  int vocab_size() const { return static_cast<int>(tokens_.size()); }
  int bos_id() const { return bos_; }
  int eos_id() const { return eos_; }
  // The id of a token's exact text (control tokens by name: "<|im_end|>"); -1 when none.
  int Find(std::string_view token) const;

 private:
  void EncodePiece(std::string_view piece, std::vector<int>& out) const;
  void EncodeOrdinary(std::string_view text, std::vector<int>& out) const;

  std::vector<std::string> tokens_;  // as stored: byte-level characters
  std::unordered_map<std::string, int> ids_;
  std::unordered_map<std::string, int> ranks_;  // "left right" -> merge rank
  std::vector<std::string> specials_;           // control and user-defined tokens, longest first
  std::bitset<256> special_first_;              // the bytes a special token starts with
  int bos_ = -1, eos_ = -1, eot_ = -1;
  bool add_bos_ = false;
};

// GPT-2's pre-tokenizer pattern applied to `text` (valid UTF-8; an invalid byte counts as a
// character of its own that is neither letter, number nor space): the pieces, in order, which
// concatenate back to `text`.
std::vector<std::string_view> SplitGpt2(std::string_view text);

}  // namespace seedance::kv
