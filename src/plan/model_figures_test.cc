#include "seedance/plan/model_figures.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "seedance/base/testing/data.h"

namespace seedance::plan {
namespace {

ModelSpec Gpt2(int64_t layers, int64_t hidden, int64_t heads) {
  return ModelSpec{.family = "gpt",
                   .layers = layers,
                   .hidden_size = hidden,
                   .attention_heads = heads,
                   .kv_heads = heads,
                   .ffn_size = 4 * hidden,
                   .vocab_size = 50257,
                   .sequence_length = 1024,
                   .tie_embeddings = true};
}

// Published parameter counts (the released checkpoints' tensor sizes summed).
TEST(ModelFiguresTest, Gpt2SmallAndMediumMatchTheReleasedCheckpoints) {
  EXPECT_EQ(ComputeModelFigures(Gpt2(12, 768, 12)).parameters, 124'439'808);
  EXPECT_EQ(ComputeModelFigures(Gpt2(24, 1024, 16)).parameters, 354'823'168);
}

ModelSpec Llama2_7B() {
  return ModelSpec{.family = "llama",
                   .layers = 32,
                   .hidden_size = 4096,
                   .attention_heads = 32,
                   .kv_heads = 32,
                   .ffn_size = 11008,
                   .vocab_size = 32000,
                   .sequence_length = 4096,
                   .tie_embeddings = false};
}

TEST(ModelFiguresTest, Llama2_7BMatchesTheReleasedCheckpoint) {
  ModelFigures f = ComputeModelFigures(Llama2_7B());
  EXPECT_EQ(f.parameters, 6'738'415'616);
  EXPECT_EQ(f.embedding_parameters, 32000 * 4096);
  EXPECT_EQ(f.lm_head_parameters, 32000 * 4096);
}

// A real trained checkpoint in llama2.c format: its file holds a 7-int32
// header, then every parameter as float32, then the unused RoPE tables
// (2 * seq_len * head_dim / 2 floats). So the file size tells the count.
TEST(ModelFiguresTest, TinyLlamaMatchesItsCheckpointFileSize) {
  const auto path = base::testing::DataDir() / "tiny-llama" / "aidreams260K.bin";
  SEEDANCE_REQUIRE_DATA(path);
  std::ifstream in(path, std::ios::binary);
  int32_t header[7];
  in.read(reinterpret_cast<char*>(header), sizeof(header));
  ASSERT_TRUE(in.good());
  ModelSpec m{.family = "llama",
              .layers = header[2],
              .hidden_size = header[0],
              .attention_heads = header[3],
              .kv_heads = header[4],
              .ffn_size = header[1],
              .vocab_size = std::abs(header[5]),
              .sequence_length = header[6],
              .tie_embeddings = header[5] > 0};
  const int64_t file_bytes = static_cast<int64_t>(std::filesystem::file_size(path));
  const int64_t rope_floats = m.sequence_length * m.head_dim();  // real + imaginary halves
  const int64_t expected = (file_bytes - 28) / 4 - rope_floats;
  EXPECT_EQ(ComputeModelFigures(m).parameters, expected);
}

TEST(ModelFiguresTest, GroupedQueryAttentionShrinksKAndV) {
  ModelSpec mha = Llama2_7B();
  ModelSpec gqa = mha;
  gqa.kv_heads = 8;  // kv_dim 1024 instead of 4096
  const int64_t saved_per_layer = 2 * 4096 * (4096 - 1024);
  EXPECT_EQ(ComputeModelFigures(mha).layer_parameters - ComputeModelFigures(gqa).layer_parameters,
            saved_per_layer);
}

TEST(ModelFiguresTest, KvCacheBytes) {
  // 2 (K and V) x 32 layers x 32 heads x 128 dims x 2 bytes = 512 KiB per token.
  EXPECT_EQ(KvCacheBytesPerToken(Llama2_7B(), base::NumericFormat::kBf16), 524'288);
  EXPECT_EQ(KvCacheBytesPerToken(Llama2_7B(), base::NumericFormat::kFp8), 262'144);
  EXPECT_DOUBLE_EQ(KvCacheBytesPerTokenAtBits(Llama2_7B(), 16), 524'288);
  EXPECT_DOUBLE_EQ(KvCacheBytesPerTokenAtBits(Llama2_7B(), 4.5), 524'288 * 4.5 / 16);
}

TEST(ModelFiguresTest, TrainingFlopsFollowPalmFormula) {
  // One layer, h=2, ffn=4, vocab=3, seq=5, llama, MHA with 1 head.
  ModelSpec m{.family = "llama",
              .layers = 1,
              .hidden_size = 2,
              .attention_heads = 1,
              .kv_heads = 1,
              .ffn_size = 4,
              .vocab_size = 3,
              .sequence_length = 5};
  ModelFigures f = ComputeModelFigures(m);
  // Matmul weights: q,k,v,o 4*2*2 = 16; SwiGLU 3*2*4 = 24; LM head 3*2 = 6.
  EXPECT_EQ(f.matmul_parameters, 46);
  // 6*46 + 12*1*2*5 = 276 + 120.
  EXPECT_DOUBLE_EQ(TrainingFlopsPerToken(m, f), 396.0);
}

}  // namespace
}  // namespace seedance::plan
