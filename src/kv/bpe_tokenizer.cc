#include "seedance/kv/bpe_tokenizer.h"

#include <algorithm>
#include <array>
#include <queue>

namespace seedance::kv {
namespace {

// GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the other 68 bytes for
// U+0100 onwards, so every byte has a visible character. Indexed by byte: its UTF-8.
const std::array<std::string, 256>& ByteChars() {
  static const std::array<std::string, 256> table = [] {
    std::array<std::string, 256> t;
    auto utf8 = [](uint32_t c) {
      std::string s;
      if (c < 0x80) {
        s += static_cast<char>(c);
      } else {
        s += static_cast<char>(0xC0 | (c >> 6));
        s += static_cast<char>(0x80 | (c & 0x3F));
      }
      return s;
    };
    uint32_t extra = 0;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      t[b] = utf8(printable ? b : 256 + extra++);
    }
    return t;
  }();
  return table;
}

// The inverse: a byte-level character's UTF-8 -> its byte.
const std::unordered_map<std::string, char>& CharBytes() {
  static const std::unordered_map<std::string, char> table = [] {
    std::unordered_map<std::string, char> t;
    for (int b = 0; b < 256; ++b) t[ByteChars()[b]] = static_cast<char>(b);
    return t;
  }();
  return table;
}

size_t Utf8Length(uint8_t lead) {
  return lead < 0x80           ? 1
         : (lead >> 5) == 0x6  ? 2
         : (lead >> 4) == 0xE  ? 3
         : (lead >> 3) == 0x1E ? 4
                               : 1;
}

}  // namespace

base::StatusOr<BpeTokenizer> BpeTokenizer::FromGguf(const GgufFile& f) {
  SEEDANCE_ASSIGN_OR_RETURN(const std::string model, f.Text("tokenizer.ggml.model"));
  if (model != "gpt2") {
    return base::InvalidArgumentError(
        "tokenizer.ggml.model is \"" + model + "\" (the byte-level BPE \"gpt2\" is read)",
        f.source());
  }
  BpeTokenizer t;
  if (f.Has("tokenizer.ggml.pre")) {
    SEEDANCE_ASSIGN_OR_RETURN(const std::string pre, f.Text("tokenizer.ggml.pre"));
    if (pre != "gpt2" && pre != "default" && pre != "smollm") {
      return base::InvalidArgumentError(
          "tokenizer.ggml.pre is \"" + pre + "\" (gpt2, default and smollm are supported)",
          f.source());
    }
  }
  SEEDANCE_ASSIGN_OR_RETURN(const auto* tokens,
                            f.Array("tokenizer.ggml.tokens", GgufValueType::kString));
  t.tokens_.reserve(tokens->size());
  for (const GgufValue& v : *tokens) {
    t.ids_.emplace(v.text, static_cast<int>(t.tokens_.size()));
    t.tokens_.push_back(v.text);
  }
  if (f.Has("tokenizer.ggml.token_type")) {
    SEEDANCE_ASSIGN_OR_RETURN(const auto* types,
                              f.Array("tokenizer.ggml.token_type", GgufValueType::kInt32));
    if (types->size() != tokens->size()) {
      return base::InvalidArgumentError("tokenizer.ggml.token_type has " +
                                            std::to_string(types->size()) + " entries for " +
                                            std::to_string(tokens->size()) + " tokens",
                                        f.source());
    }
    for (size_t i = 0; i < types->size(); ++i) {
      const int64_t type = (*types)[i].integer;  // 3 control, 4 user-defined
      if ((type == 3 || type == 4) && !t.tokens_[i].empty()) {
        t.specials_.push_back(t.tokens_[i]);
        t.special_first_[static_cast<uint8_t>(t.tokens_[i][0])] = true;
      }
    }
    std::sort(t.specials_.begin(), t.specials_.end(),
              [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  }
  SEEDANCE_ASSIGN_OR_RETURN(const auto* merges,
                            f.Array("tokenizer.ggml.merges", GgufValueType::kString));
  for (size_t i = 0; i < merges->size(); ++i) {
    const std::string& m = (*merges)[i].text;
    const size_t space = m.find(' ', 1);
    if (space == std::string::npos || !t.ids_.contains(m.substr(0, space)) ||
        !t.ids_.contains(m.substr(space + 1)) ||
        !t.ids_.contains(m.substr(0, space) + m.substr(space + 1))) {
      return base::InvalidArgumentError("tokenizer.ggml.merges[" + std::to_string(i) + "] \"" + m +
                                            "\" is not two tokens whose join is a token",
                                        f.source());
    }
    t.ranks_.emplace(m, static_cast<int>(i));
  }
  if (f.Has("tokenizer.ggml.add_bos_token")) {
    SEEDANCE_ASSIGN_OR_RETURN(t.add_bos_, f.Boolean("tokenizer.ggml.add_bos_token"));
  }
  for (auto [key, slot] : {std::pair{"tokenizer.ggml.bos_token_id", &t.bos_},
                           std::pair{"tokenizer.ggml.eos_token_id", &t.eos_},
                           std::pair{"tokenizer.ggml.eot_token_id", &t.eot_}}) {
    if (!f.Has(key)) continue;
    SEEDANCE_ASSIGN_OR_RETURN(const int64_t id, f.Integer(key));
    if (id < 0 || id >= t.vocab_size()) {
      return base::InvalidArgumentError(
          std::string(key) + " " + std::to_string(id) + " is outside the vocabulary", f.source());
    }
    *slot = static_cast<int>(id);
  }
  return t;
}

std::optional<int> BpeTokenizer::Bos() const {
  if (add_bos_ && bos_ >= 0) return bos_;
  return std::nullopt;
}

std::vector<int> BpeTokenizer::StopIds() const {
  std::vector<int> out;
  for (int id : {eos_, eot_}) {
    if (id >= 0 && std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  }
  return out;
}

int BpeTokenizer::Find(std::string_view token) const {
  const auto it = ids_.find(std::string(token));
  return it == ids_.end() ? -1 : it->second;
}

// One pre-tokenized piece: its bytes as byte-level symbols, merged lowest rank first (leftmost
// on ties) through a heap of candidate pairs over a linked list of symbols.
void BpeTokenizer::EncodePiece(std::string_view piece, std::vector<int>& out) const {
  struct Symbol {
    std::string text;
    int prev, next;
  };
  std::vector<Symbol> s;
  s.reserve(piece.size());
  for (size_t i = 0; i < piece.size(); ++i) {
    s.push_back({ByteChars()[static_cast<uint8_t>(piece[i])], static_cast<int>(i) - 1,
                 i + 1 < piece.size() ? static_cast<int>(i) + 1 : -1});
  }
  struct Candidate {
    int rank, left;
    size_t left_size, right_size;  // the symbols' sizes when pushed (stale entries skipped)
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : left > o.left;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  auto consider = [&](int left) {
    if (left < 0 || s[left].next < 0) return;
    const Symbol& a = s[left];
    const Symbol& b = s[a.next];
    const auto it = ranks_.find(a.text + " " + b.text);
    if (it != ranks_.end()) heap.push({it->second, left, a.text.size(), b.text.size()});
  };
  for (int i = 0; i + 1 < static_cast<int>(s.size()); ++i) consider(i);
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    Symbol& a = s[c.left];
    if (a.text.empty() || a.next < 0 || a.text.size() != c.left_size ||
        s[a.next].text.size() != c.right_size) {
      continue;  // one of the two changed since this pair was seen
    }
    Symbol& b = s[a.next];
    a.text += b.text;
    b.text.clear();
    a.next = b.next;
    if (a.next >= 0) s[a.next].prev = c.left;
    consider(a.prev);
    consider(c.left);
  }
  for (int i = 0; i >= 0 && i < static_cast<int>(s.size()); i = s[i].next) {
    const auto it = ids_.find(s[i].text);
    if (it != ids_.end()) {
      out.push_back(it->second);
    } else {
      // A symbol the vocabulary lacks (merges only make tokens, so a single byte: SmolLM2's
      // vocabulary has no token for 21 bytes, among them 0xC0, 0xC1 and 0xF5..0xFF, which valid
      // UTF-8 never holds): dropped, as Transformers' BPE does without an unknown token.
      for (size_t k = 0; k < s[i].text.size();) {
        const size_t len = Utf8Length(static_cast<uint8_t>(s[i].text[k]));
        const auto byte = ids_.find(s[i].text.substr(k, len));
        if (byte != ids_.end()) out.push_back(byte->second);
        k += len;
      }
    }
  }
}

void BpeTokenizer::EncodeOrdinary(std::string_view text, std::vector<int>& out) const {
  for (std::string_view piece : SplitGpt2(text)) EncodePiece(piece, out);
}

std::vector<int> BpeTokenizer::Encode(std::string_view text) const {
  std::vector<int> out;
  size_t start = 0, i = 0;
  while (i < text.size()) {
    const std::string* hit = nullptr;
    if (special_first_[static_cast<uint8_t>(text[i])]) {
      for (const std::string& sp : specials_) {
        if (text.substr(i, sp.size()) == sp) {
          hit = &sp;
          break;
        }
      }
    }
    if (hit == nullptr) {
      ++i;
      continue;
    }
    if (i > start) EncodeOrdinary(text.substr(start, i - start), out);
    out.push_back(ids_.at(*hit));
    i += hit->size();
    start = i;
  }
  if (start < text.size()) EncodeOrdinary(text.substr(start), out);
  return out;
}

std::string BpeTokenizer::TokenBytes(int id) const {
  if (id < 0 || id >= vocab_size()) return {};
  const std::string& t = tokens_[id];
  std::string out;
  for (size_t k = 0; k < t.size();) {
    const size_t len = Utf8Length(static_cast<uint8_t>(t[k]));
    const std::string ch = t.substr(k, len);
    const auto it = CharBytes().find(ch);
    out += it != CharBytes().end() ? std::string(1, it->second) : ch;
    k += len;
  }
  return out;
}

std::string BpeTokenizer::Decode(std::span<const int> ids) const {
  std::string out;
  for (int id : ids) out += TokenBytes(id);
  return out;
}

}  // namespace seedance::kv
