#include "seedance/kv/gguf.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "seedance/kv/llama.h"
#include "seedance/kv/testing/gguf_writer.h"
#include "seedance/precision/formats.h"

namespace seedance::kv {
namespace {

using testing::GgufWriter;

uint16_t Fp16(float v) { return precision::FloatToHalf(v); }

std::string Block(std::initializer_list<uint16_t> halves, const std::vector<uint8_t>& bytes) {
  std::string out;
  for (uint16_t h : halves) out.append(reinterpret_cast<const char*>(&h), 2);
  out.append(bytes.begin(), bytes.end());
  return out;
}

GgufWriter Sample() {
  GgufWriter w;
  w.Str("general.architecture", "llama");
  w.U32("llama.block_count", 2);
  w.I32("signed", -7);
  w.F32("llama.rope.freq_base", 100000.0F);
  w.Bool("tokenizer.ggml.add_bos_token", false);
  w.Strings("tokenizer.ggml.tokens", {"a", "b", "\xc4\xa0"});
  w.I32s("tokenizer.ggml.token_type", {1, 1, 3});
  w.F32Tensor("norm.weight", {4}, {1, 2, 3, 4});
  w.F32Tensor("matrix", {2, 3}, {1, 2, 3, 4, 5, 6});
  return w;
}

TEST(GgufTest, ReadsMetadataAndTensorsBack) {
  const std::string bytes = Sample().Bytes();
  auto f = GgufFile::Parse(bytes, "m.gguf");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(*f->Text("general.architecture"), "llama");
  EXPECT_EQ(*f->Integer("llama.block_count"), 2);
  EXPECT_EQ(*f->Integer("signed"), -7);
  EXPECT_DOUBLE_EQ(*f->Real("llama.rope.freq_base"), 100000.0);
  EXPECT_DOUBLE_EQ(*f->Real("llama.block_count"), 2.0);  // an integer read as a number
  EXPECT_FALSE(*f->Boolean("tokenizer.ggml.add_bos_token"));
  const auto tokens = f->Array("tokenizer.ggml.tokens", GgufValueType::kString);
  ASSERT_TRUE(tokens.ok());
  ASSERT_EQ((*tokens)->size(), 3u);
  EXPECT_EQ((**tokens)[2].text, "\xc4\xa0");
  EXPECT_EQ((*f->Array("tokenizer.ggml.token_type", GgufValueType::kInt32))->at(2).integer, 3);
  ASSERT_EQ(f->tensors().size(), 2u);
  const GgufTensor* m = *f->Tensor("matrix");
  EXPECT_EQ(m->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(m->offset % 32, 0u);
  EXPECT_EQ(*f->Dequantize(*m), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  // Errors name the file and the key.
  const auto missing = f->Integer("llama.context_length");
  EXPECT_EQ(missing.status().where(), "m.gguf");
  EXPECT_NE(missing.status().message().find("llama.context_length"), std::string::npos);
  const auto wrong = f->Integer("general.architecture");
  EXPECT_NE(wrong.status().message().find("is a string (an integer expected)"), std::string::npos);
  EXPECT_EQ(f->Tensor("absent").status().code(), base::StatusCode::kNotFound);
}

// The block formats, against their definitions written out here: Q8_0 x = d q; Q4_0
// x = d (q - 8) with the low nibbles first; Q4_1 x = d q + m.
TEST(GgufTest, DequantizesTheBlockFormatsByTheirDefinitions) {
  std::vector<uint8_t> q8(32), q4(16);
  for (int j = 0; j < 32; ++j) q8[j] = static_cast<uint8_t>(static_cast<int8_t>(j * 7 - 100));
  for (int j = 0; j < 16; ++j) q4[j] = static_cast<uint8_t>((j & 0xF) | (((15 - j) & 0xF) << 4));
  const float d = 0.5F, m = -1.25F;
  std::vector<float> out(32);
  const std::string b8 = Block({Fp16(d)}, q8);
  ASSERT_TRUE(
      DequantizeGgml(8, {reinterpret_cast<const uint8_t*>(b8.data()), b8.size()}, 32, out.data()));
  for (int j = 0; j < 32; ++j) EXPECT_EQ(out[j], d * static_cast<float>(j * 7 - 100));
  const std::string b40 = Block({Fp16(d)}, q4);
  ASSERT_TRUE(DequantizeGgml(2, {reinterpret_cast<const uint8_t*>(b40.data()), b40.size()}, 32,
                             out.data()));
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(out[j], d * static_cast<float>(j - 8));
    EXPECT_EQ(out[j + 16], d * static_cast<float>(15 - j - 8));
  }
  const std::string b41 = Block({Fp16(d), Fp16(m)}, q4);
  ASSERT_TRUE(DequantizeGgml(3, {reinterpret_cast<const uint8_t*>(b41.data()), b41.size()}, 32,
                             out.data()));
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(out[j], d * static_cast<float>(j) + m);
    EXPECT_EQ(out[j + 16], d * static_cast<float>(15 - j) + m);
  }
  EXPECT_EQ(GgmlBytes(3, 64), 40u);
  EXPECT_EQ(GgmlBytes(3, 33), 0u);      // not whole blocks
  EXPECT_EQ(GgmlBytes(14, 256), 210u);  // Q6_K: sized, not dequantized
  EXPECT_FALSE(DequantizeGgml(14, {}, 256, out.data()));
}

TEST(GgufTest, ATensorOfAnotherTypeIsNamedWhenDequantized) {
  GgufWriter w;
  w.Tensor("blk.0.ffn_down.weight", {256}, 14, std::string(210, '\0'));
  const std::string bytes = w.Bytes();
  auto f = GgufFile::Parse(bytes, "q6.gguf");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  const auto d = f->Dequantize(f->tensors()[0]);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("blk.0.ffn_down.weight is Q6_K"), std::string::npos);
}

// Every prefix of a valid file is an error naming the file, never a crash.
TEST(GgufTest, EveryTruncationIsAnError) {
  const std::string bytes = Sample().Bytes();
  for (size_t n = 0; n < bytes.size(); ++n) {
    const auto f = GgufFile::Parse(std::string_view(bytes).substr(0, n), "cut.gguf");
    ASSERT_FALSE(f.ok()) << n;
    ASSERT_EQ(f.status().where(), "cut.gguf") << n;
  }
}

TEST(GgufTest, LyingHeadersAreErrors) {
  auto parse = [](std::string bytes) { return GgufFile::Parse(bytes, "lie.gguf").status(); };
  auto expect = [](const base::Status& s, const std::string& text) {
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find(text), std::string::npos) << s.ToString();
  };
  std::string good = Sample().Bytes();
  std::string b = good;
  b[0] = 'X';
  expect(parse(b), "not a GGUF file");
  b = good;
  b[4] = 1;
  expect(parse(b), "GGUF version 1");
  b = good;
  const uint64_t huge = uint64_t{1} << 40;
  std::memcpy(b.data() + 8, &huge, 8);  // tensor_count
  expect(parse(b), "tensor_count");
  b = good;
  std::memcpy(b.data() + 16, &huge, 8);  // kv_count
  expect(parse(b), "kv_count");
  // A string whose length runs past the end.
  b = good;
  std::memcpy(b.data() + 24, &huge, 8);  // the first key's length
  expect(parse(b), "bytes remain");
  // Data past the end of the file.
  expect(parse(good.substr(0, good.size() - 4)), "run past the end of the file");
  // Duplicate keys, unknown tensor types, misaligned offsets.
  GgufWriter dup;
  dup.U32("a", 1);
  dup.U32("a", 2);
  expect(parse(dup.Bytes()), "appears twice");
  GgufWriter unknown;
  unknown.Tensor("t", {4}, 99, std::string(16, '\0'));
  expect(parse(unknown.Bytes()), "unknown tensor type id 99");
  GgufWriter rows;
  rows.Tensor("t", {33}, 3, std::string(40, '\0'));
  expect(parse(rows.Bytes()), "not whole Q4_1 blocks");
  GgufWriter align;
  align.U32("general.alignment", 48);
  expect(parse(align.Bytes()), "power of two");
}

// Metadata that promises a huge model beside tiny tensors is an error before anything that size
// is allocated (the weights are sized from the tensors the file holds).
TEST(GgufTest, ALyingModelIsRefusedBeforeItsWeightsAreAllocated) {
  GgufWriter w;
  w.Str("general.architecture", "llama");
  w.U32("llama.embedding_length", 2);
  w.U32("llama.feed_forward_length", 1 << 20);
  w.U32("llama.block_count", 4096);
  w.U32("llama.attention.head_count", 1);
  w.U32("llama.context_length", 8);
  w.F32Tensor("token_embd.weight", {2, 1}, {0.5F, 0.25F});
  const std::string bytes = w.Bytes();
  auto f = GgufFile::Parse(bytes, "huge.gguf");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  const auto m = LlamaModel::FromGguf(*f);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("no tensor blk.0.attn_norm.weight"), std::string::npos)
      << m.status().ToString();
}

}  // namespace
}  // namespace seedance::kv
