#include "seedance/kv/bpe_tokenizer.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "seedance/kv/testing/gguf_writer.h"

namespace seedance::kv {
namespace {

using testing::GgufWriter;

// GPT-2's byte -> character table, from its definition (bytes ! to ~, 0xA1 to 0xAC and 0xAE to
// 0xFF stand for themselves; the others take U+0100, U+0101, ... in byte order).
std::string ByteChar(int b) {
  int code = b, extra = 0;
  const auto printable = [](int x) {
    return (x >= 33 && x <= 126) || (x >= 161 && x <= 172) || x >= 174;
  };
  if (!printable(b)) {
    for (int x = 0; x < b; ++x) extra += printable(x) ? 0 : 1;
    code = 256 + extra;
  }
  std::string s;
  if (code < 0x80) {
    s += static_cast<char>(code);
  } else {
    s += static_cast<char>(0xC0 | (code >> 6));
    s += static_cast<char>(0x80 | (code & 0x3F));
  }
  return s;
}

// A vocabulary of the 256 byte tokens, `merged` tokens and two control tokens.
std::string Vocabulary(const std::vector<std::string>& merges, const std::string& pre = "gpt2") {
  GgufWriter w;
  std::vector<std::string> tokens = {"<|endoftext|>", "<|im_start|>"};
  std::vector<int32_t> types = {3, 3};
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(ByteChar(b));
    types.push_back(1);
  }
  for (const std::string& m : merges) {
    tokens.push_back(m.substr(0, m.find(' ')) + m.substr(m.find(' ') + 1));
    types.push_back(1);
  }
  w.Str("tokenizer.ggml.model", "gpt2");
  w.Str("tokenizer.ggml.pre", pre);
  w.Strings("tokenizer.ggml.tokens", tokens);
  w.I32s("tokenizer.ggml.token_type", types);
  w.Strings("tokenizer.ggml.merges", merges);
  w.U32("tokenizer.ggml.bos_token_id", 1);
  w.U32("tokenizer.ggml.eos_token_id", 0);
  return w.Bytes();
}

BpeTokenizer Load(const std::string& bytes) {
  auto f = GgufFile::Parse(bytes, "tok.gguf");
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  auto t = BpeTokenizer::FromGguf(*f);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return std::move(*t);
}

// GPT-2's pattern, by hand on cases that exercise each alternative (the Python test compares
// whole tokenizations with Transformers on real text).
TEST(BpeSplitTest, FollowsGpt2sPattern) {
  using V = std::vector<std::string_view>;
  EXPECT_EQ(SplitGpt2("Hello world"), (V{"Hello", " world"}));
  EXPECT_EQ(SplitGpt2("it's they're I'll"), (V{"it", "'s", " they", "'re", " I", "'ll"}));
  EXPECT_EQ(SplitGpt2("a  b"), (V{"a", " ", " b"}));
  EXPECT_EQ(SplitGpt2("x\n\ny"), (V{"x", "\n", "\n", "y"}));
  EXPECT_EQ(SplitGpt2("  end  "), (V{" ", " end", "  "}));
  EXPECT_EQ(SplitGpt2("3.14 \xcf\x80\xe2\x89\x88"),
            (V{"3", ".", "14", " \xcf\x80", "\xe2\x89\x88"}));
  EXPECT_EQ(SplitGpt2(" 'quoted'"), (V{" '", "quoted", "'"}));
  EXPECT_EQ(SplitGpt2("caf\xc3\xa9!!"), (V{"caf\xc3\xa9", "!!"}));
  EXPECT_EQ(SplitGpt2("\xff\xfe"), (V{"\xff\xfe"}));  // invalid bytes: one run of "other"
  EXPECT_EQ(SplitGpt2(""), V{});
}

TEST(BpeTokenizerTest, MergesLowestRankFirst) {
  const int base = 2 + 256;  // the merged tokens' ids start here
  const BpeTokenizer ab_first = Load(Vocabulary({"a b", "ab c", "b c"}));
  EXPECT_EQ(ab_first.Encode("abc"), (std::vector<int>{base + 1}));
  const BpeTokenizer bc_first = Load(Vocabulary({"b c", "a b", "ab c"}));
  EXPECT_EQ(bc_first.Encode("abc"), (std::vector<int>{2 + 'a', base}));  // "a", "bc"
  // Leftmost on a tie: "aaa" with "a a" merges the first two.
  const BpeTokenizer aa = Load(Vocabulary({"a a"}));
  EXPECT_EQ(aa.Encode("aaa"), (std::vector<int>{base, 2 + 'a'}));
}

TEST(BpeTokenizerTest, SpecialTokensAndBytesRoundTrip) {
  const BpeTokenizer t = Load(Vocabulary({"Ġ w", "Ġw o"}));
  EXPECT_EQ(t.Encode("<|im_start|>hi"), (std::vector<int>{1, 2 + 'h', 2 + 'i'}));
  EXPECT_EQ(t.Encode(" wo"), (std::vector<int>{2 + 256 + 1}));
  EXPECT_EQ(t.Find("<|im_start|>"), 1);
  EXPECT_EQ(t.bos_id(), 1);
  EXPECT_EQ(t.eos_id(), 0);
  EXPECT_EQ(t.TokenBytes(2 + 256), " w");
  std::mt19937 rng(3);
  for (int n = 0; n < 300; ++n) {
    std::string text(n % 40, '\0');
    for (char& ch : text) ch = static_cast<char>(rng() % 256);
    if (n % 3 == 0) text += "<|endoftext|>";
    EXPECT_EQ(t.Decode(t.Encode(text)), text) << n;
  }
}

TEST(BpeTokenizerTest, RefusesWhatItCannotReadByKey) {
  GgufWriter w;
  w.Str("tokenizer.ggml.model", "llama");
  auto f = GgufFile::Parse(w.Bytes(), "spm.gguf");
  ASSERT_TRUE(f.ok());
  EXPECT_NE(BpeTokenizer::FromGguf(*f).status().message().find("tokenizer.ggml.model"),
            std::string::npos);
  const std::string pre = Vocabulary({}, "llama-bpe");
  auto g = GgufFile::Parse(pre, "pre.gguf");
  EXPECT_NE(BpeTokenizer::FromGguf(*g).status().message().find("llama-bpe"), std::string::npos);
  const std::string bad = Vocabulary({"a zz"});
  auto h = GgufFile::Parse(bad, "merge.gguf");
  EXPECT_NE(BpeTokenizer::FromGguf(*h).status().message().find("merges[0]"), std::string::npos);
}

}  // namespace
}  // namespace seedance::kv
