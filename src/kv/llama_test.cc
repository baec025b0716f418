#include "seedance/kv/llama.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "seedance/base/testing/data.h"
#include "seedance/kv/eval.h"

namespace seedance::kv {
namespace {

TEST(Llama, LoadsTheTinyModelAndGeneratesText) {
  const std::string dir = (base::testing::DataDir() / "tiny-llama").string();
  SEEDANCE_REQUIRE_DATA(dir);
  auto model = LlamaModel::Load(*base::Env::Default(), dir + "/aidreams260K.bin");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const LlamaConfig& c = model->config();
  EXPECT_EQ(c.dim, 64);
  EXPECT_EQ(c.n_layers, 4);
  EXPECT_EQ(c.vocab_size, 512);
  EXPECT_EQ(c.seq_len, 128);
  auto tok = Tokenizer::Load(*base::Env::Default(), dir + "/tok512.bin", c.vocab_size);
  ASSERT_TRUE(tok.ok()) << tok.status().ToString();
  EvalOptions o;
  o.tokens = 40;
  o.quant.width = KvWidth::kInt8;
  auto r = EvaluateKvCache(*model, &*tok, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::string text = (*r)["text"];
  EXPECT_GT(text.size(), 40u);  // real words, not byte soup: mostly letters and spaces
  int letters = 0;
  for (char ch : text) letters += std::isalpha(static_cast<unsigned char>(ch)) || ch == ' ';
  EXPECT_GT(letters, static_cast<int>(text.size() * 0.8)) << text;
  // Encode then decode gives the text back.
  const auto ids = tok->Encode("a gentle hum");
  std::string back;
  int prev = 1;
  for (int id : ids) {
    back += tok->Decode(prev, id);
    prev = id;
  }
  EXPECT_EQ(back, "a gentle hum");
}

TEST(Llama, RejectsDamagedCheckpoints) {
  const std::string dir = (base::testing::DataDir() / "tiny-llama").string();
  SEEDANCE_REQUIRE_DATA(dir);
  auto bytes = base::Env::Default()->ReadFile(dir + "/aidreams260K.bin");
  ASSERT_TRUE(bytes.ok());
  auto cut = LlamaModel::FromBytes(std::string_view(*bytes).substr(0, bytes->size() - 4), "m.bin");
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.status().where(), "m.bin");
  std::string bad = *bytes;
  bad[4 * 3] = 0;  // n_heads = 0 (low byte of 4)
  EXPECT_EQ(LlamaModel::FromBytes(bad, "m.bin").status().where(), "m.bin: n_heads");
  EXPECT_FALSE(LlamaModel::FromBytes("abc", "m.bin").ok());
}

// Hardening finding 9: a NaN or infinite weight is refused at load, naming the tensor and the
// byte, instead of surfacing as a non-finite key somewhere in the cache.
TEST(Llama, NonFiniteWeightsAreRefusedAtLoad) {
  const std::string dir = (base::testing::DataDir() / "tiny-llama").string();
  SEEDANCE_REQUIRE_DATA(dir);
  auto bytes = base::Env::Default()->ReadFile(dir + "/aidreams260K.bin");
  ASSERT_TRUE(bytes.ok());
  int32_t h[7];
  std::memcpy(h, bytes->data(), sizeof(h));
  const size_t dim = static_cast<size_t>(h[0]), vocab = static_cast<size_t>(std::abs(h[5]));
  // The first value of rms_att_weight, which follows the vocab x dim embedding table.
  std::string bad = *bytes;
  const size_t at = 28 + 4 * vocab * dim;
  const float nan = std::nanf("");
  std::memcpy(bad.data() + at, &nan, 4);
  auto m = LlamaModel::FromBytes(bad, "m.bin");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().where(), "m.bin");
  EXPECT_EQ(m.status().message(),
            "weight rms_att_weight[0] at byte " + std::to_string(at) + " is NaN");
  const float inf = INFINITY;
  bad = *bytes;
  std::memcpy(bad.data() + bad.size() - 4, &inf, 4);
  m = LlamaModel::FromBytes(bad, "m.bin");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("is infinite"), std::string::npos);
}

// Hardening finding 2: Encode falls back to the byte tokens 3..258, so a vocabulary under 259
// pieces is refused at load instead of read out of bounds.
TEST(Llama, TokenizerNeedsTheByteTokens) {
  const std::string dir = (base::testing::DataDir() / "tiny-llama").string();
  SEEDANCE_REQUIRE_DATA(dir);
  auto small = Tokenizer::Load(*base::Env::Default(), dir + "/tok512.bin", 258);
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.status().message().find("259"), std::string_view::npos);
  EXPECT_TRUE(Tokenizer::Load(*base::Env::Default(), dir + "/tok512.bin", 512).ok());
}

// llama2.c's own encoder, quadratic: the reference the heap-based Encode must agree with token
// for token (the best-scoring pair first, the leftmost of equal scores).
std::vector<int> ReferenceEncode(const std::vector<std::string>& pieces,
                                 const std::vector<float>& scores, std::string_view text) {
  std::unordered_map<std::string, int> index;
  for (size_t i = 0; i < pieces.size(); ++i) index.emplace(pieces[i], static_cast<int>(i));
  std::vector<int> tokens;
  const std::string s = text.empty() ? std::string() : " " + std::string(text);
  for (size_t i = 0; i < s.size();) {
    size_t len = 1;
    while (i + len < s.size() && (static_cast<unsigned char>(s[i + len]) & 0xC0) == 0x80) ++len;
    const auto it = index.find(s.substr(i, len));
    if (it != index.end()) {
      tokens.push_back(it->second);
    } else {
      for (size_t j = 0; j < len; ++j) tokens.push_back(static_cast<unsigned char>(s[i + j]) + 3);
    }
    i += len;
  }
  while (true) {
    float best = -1e10f;
    int best_id = -1;
    size_t best_at = 0;
    for (size_t i = 0; i + 1 < tokens.size(); ++i) {
      const auto it = index.find(pieces[tokens[i]] + pieces[tokens[i + 1]]);
      if (it != index.end() && scores[it->second] > best) {
        best = scores[it->second];
        best_id = it->second;
        best_at = i;
      }
    }
    if (best_id < 0) break;
    tokens[best_at] = best_id;
    tokens.erase(tokens.begin() + static_cast<int64_t>(best_at) + 1);
  }
  return tokens;
}

// Issue 40 class 8: Encode was llama2.c's quadratic loop (a 64 KB prompt took 24 s before the
// length check). The O(n log n) encoder gives the reference's tokens on random text: words of
// the vocabulary, repeats (equal-score ties), multi-byte UTF-8 and bytes with no piece.
TEST(Llama, EncodeAgreesWithTheQuadraticReference) {
  const std::string dir = (base::testing::DataDir() / "tiny-llama").string();
  SEEDANCE_REQUIRE_DATA(dir);
  auto tok = Tokenizer::Load(*base::Env::Default(), dir + "/tok512.bin", 512);
  ASSERT_TRUE(tok.ok());
  const std::string bytes = *base::Env::Default()->ReadFile(dir + "/tok512.bin");
  std::vector<std::string> pieces;
  std::vector<float> scores;
  for (size_t at = 4; pieces.size() < 512;) {
    float score;
    int32_t len;
    std::memcpy(&score, bytes.data() + at, 4);
    std::memcpy(&len, bytes.data() + at + 4, 4);
    scores.push_back(score);
    pieces.emplace_back(bytes.data() + at + 8, static_cast<size_t>(len));
    at += 8 + static_cast<size_t>(len);
  }
  std::mt19937 rng(11);
  const std::vector<std::string> atoms = {"the ", "a ",   "gentle ", "hum",  "once upon a time",
                                          " ",    "aaaa", "ababab",  "日本", "é",
                                          "\xff", "\n",   "Lily",    "!",    "?",
                                          "zzz",  "ing ", "ed "};
  for (int trial = 0; trial < 300; ++trial) {
    std::string text;
    const int parts = static_cast<int>(rng() % 40);
    for (int k = 0; k < parts; ++k) {
      if (rng() % 5 == 0) {
        text += static_cast<char>(rng() % 256);
      } else {
        text += atoms[rng() % atoms.size()];
      }
    }
    ASSERT_EQ(tok->Encode(text), ReferenceEncode(pieces, scores, text)) << trial << ": " << text;
  }
  std::string long_text;
  while (long_text.size() < 3000) long_text += atoms[rng() % atoms.size()];
  EXPECT_EQ(tok->Encode(long_text), ReferenceEncode(pieces, scores, long_text));
}

}  // namespace
}  // namespace seedance::kv
