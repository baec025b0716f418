#include "seedance/precision/policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "seedance/base/testing/text_mutator.h"

namespace seedance::precision {
namespace {

TEST(Policy, Glob) {
  EXPECT_TRUE(GlobMatch("*", "a.b.c"));
  EXPECT_TRUE(GlobMatch("layers.*.attn.q_proj", "layers.11.attn.q_proj"));
  EXPECT_FALSE(GlobMatch("layers.*.attn.q_proj", "layers.11.attn.k_proj"));
  EXPECT_TRUE(GlobMatch("*.fc?", "mlp.fc1"));
  EXPECT_FALSE(GlobMatch("*.fc?", "mlp.fc12"));
  EXPECT_TRUE(GlobMatch("a*b*c", "aXbYbZc"));
  EXPECT_FALSE(GlobMatch("a*b*c", "aXbYbZ"));
  EXPECT_TRUE(GlobMatch("", ""));
  EXPECT_FALSE(GlobMatch("", "x"));
}

TEST(Policy, ClassifiesCommonModelNames) {
  struct Case {
    const char* name;
    const char* type;
    ModuleClass want;
  };
  const Case cases[] = {
      {"model.layers.0.self_attn.q_proj", "Linear", ModuleClass::kQkv},       // Llama
      {"transformer.h.3.attn.c_attn", "Conv1D", ModuleClass::kQkv},           // GPT-2
      {"encoder.layer.2.attention.self.query", "Linear", ModuleClass::kQkv},  // BERT
      {"layers.1.self_attn", "MultiheadAttention", ModuleClass::kOther},      // fused: no class
      {"model.layers.0.mlp.gate_proj", "Linear", ModuleClass::kFfn},
      {"transformer.h.3.mlp.c_fc", "Conv1D", ModuleClass::kFfn},
      {"layers.0.linear1", "Linear", ModuleClass::kOther},
      {"model.layers.0.input_layernorm", "LlamaRMSNorm", ModuleClass::kNorm},
      {"transformer.h.0.ln_1", "LayerNorm", ModuleClass::kNorm},
      {"bn1", "BatchNorm2d", ModuleClass::kNorm},
      {"model.embed_tokens", "Embedding", ModuleClass::kIo},
      {"lm_head", "Linear", ModuleClass::kIo},
      {"conv1", "Conv2d", ModuleClass::kOther},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ClassifyModule(c.name, c.type), c.want) << c.name;
  }
}

TEST(Policy, DefaultOrderingAndSmallBatchRule) {
  PrecisionPolicy p;
  const std::vector<ModuleRef> mods = {{"l.0.attn.q_proj", "Linear"},
                                       {"l.0.mlp.fc1", "Linear"},
                                       {"l.0.norm1", "LayerNorm"},
                                       {"embed", "Embedding"},
                                       {"conv", "Conv2d"}};
  auto d = DecidePrecisions(p, mods, 32);
  EXPECT_EQ(d[0].precision, Precision::kBf16);
  EXPECT_EQ(d[1].precision, Precision::kFp16);  // fp8 not allowed
  EXPECT_EQ(d[2].precision, Precision::kFp32);
  EXPECT_EQ(d[3].precision, Precision::kBf16);
  EXPECT_EQ(d[4].precision, Precision::kBf16);
  EXPECT_EQ(d[4].rule, "default");
  EXPECT_EQ(d[0].rule, "sensitivity");
  p.allow_fp8 = true;
  EXPECT_EQ(DecidePrecisions(p, mods, 32)[1].precision, Precision::kFp8);
  for (int64_t mb : {1, 8}) {
    for (const auto& x : DecidePrecisions(p, mods, mb)) {
      EXPECT_EQ(x.precision, Precision::kFp32);
      EXPECT_EQ(x.rule, "small-batch");
    }
  }
  EXPECT_EQ(DecidePrecisions(p, mods, 9)[1].precision, Precision::kFp8);
  EXPECT_EQ(DecidePrecisions(p, mods, 0)[1].precision, Precision::kFp8);  // unknown batch
  // Sensitivity ordering: qkv never gets less precision than ffn.
  for (bool fp8 : {false, true}) {
    p.allow_fp8 = fp8;
    const auto r = DecidePrecisions(p, mods, 64);
    // Rank on the ladder fp8 < fp16 < bf16 < fp32.
    auto rank = [](Precision x) {
      return std::find(kPolicyPrecisions.begin(), kPolicyPrecisions.end(), x) -
             kPolicyPrecisions.begin();
    };
    EXPECT_GT(rank(r[0].precision), rank(r[1].precision));
  }
}

TEST(Policy, YamlRulesComeFirstInFileOrder) {
  const char* yaml = R"(precision_policy:
  default: fp32
  small_batch_fp32: 4
  fp8: true
  rules:
    - {name: "enc.*.q_proj", precision: fp32}
    - {type: Linear, class: ffn, precision: fp8}
    - {type: Linear, precision: fp16}
)";
  auto p = ParsePolicyYaml(yaml, "policy.yaml");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const std::vector<ModuleRef> mods = {{"enc.0.q_proj", "Linear"},
                                       {"enc.0.mlp.fc2", "Linear"},
                                       {"enc.0.out", "Linear"},
                                       {"enc.0.conv", "Conv1d"}};
  auto d = DecidePrecisions(*p, mods, 8);
  EXPECT_EQ(d[0].precision, Precision::kFp32);
  EXPECT_EQ(d[0].rule, "rule 1 (policy.yaml:6: precision_policy.rules[0])");
  EXPECT_EQ(d[1].precision, Precision::kFp8);
  EXPECT_EQ(d[2].precision, Precision::kFp16);
  EXPECT_EQ(d[3].precision, Precision::kFp32);  // the file's default
  EXPECT_EQ(DecidePrecisions(*p, mods, 4)[1].rule, "small-batch");
}

TEST(Policy, YamlErrorsNameFileLineAndKey) {
  struct Case {
    const char* yaml;
    const char* where;
  };
  const Case cases[] = {
      {"precision_policy:\n  default: fp4\n", "p.yaml:2: precision_policy.default"},
      {"precision_policy:\n  rules:\n    - {precision: fp16}\n",
       "p.yaml:3: precision_policy.rules[0]"},
      {"precision_policy:\n  rules:\n    - {type: Linear, precision: fp8}\n",
       "p.yaml:3: precision_policy.rules[0].precision"},
      {"precision_policy:\n  rules:\n    - {class: attention, precision: fp16}\n",
       "p.yaml:3: precision_policy.rules[0].class"},
      {"precision_policy:\n  small_batch_fp32: -1\n",
       "p.yaml:2: precision_policy.small_batch_fp32"},
      {"precision_policy:\n  colour: red\n", "p.yaml:2: precision_policy.colour"},
  };
  for (const Case& c : cases) {
    auto p = ParsePolicyYaml(c.yaml, "p.yaml");
    ASSERT_FALSE(p.ok()) << c.yaml;
    EXPECT_EQ(p.status().where(), c.where) << p.status().ToString();
  }
}

TEST(Policy, RaiseLadder) {
  EXPECT_EQ(RaisePrecision(Precision::kFp8), Precision::kFp16);
  EXPECT_EQ(RaisePrecision(Precision::kFp16), Precision::kBf16);
  EXPECT_EQ(RaisePrecision(Precision::kBf16), Precision::kFp32);
  EXPECT_EQ(RaisePrecision(Precision::kFp32), Precision::kFp32);
  EXPECT_EQ(RaisePrecision(Precision::kTf32), Precision::kTf32);  // off the ladder: unchanged
  auto bad = ParseModuleClass("attention", "rules[0].class");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("qkv, ffn, norm, io or other"), std::string::npos);
  EXPECT_EQ(*ParseModuleClass(ModuleClassName(ModuleClass::kNorm), "x"), ModuleClass::kNorm);
}

}  // namespace
}  // namespace seedance::precision

namespace seedance::precision {
namespace {

// Property: any edit of a valid policy either parses, or fails with an error
// that names this file; it never crashes, and a parsed policy decides.
TEST(Policy, FuzzedPolicyFilesParseOrFailCleanly) {
  const std::string original = R"(precision_policy:
  default: bf16
  small_batch_fp32: 8
  fp8: true
  rules:
    - {name: "enc.*.q_proj", precision: fp32}
    - {type: Linear, class: ffn, precision: fp8}
    - name: "*.norm*"
      precision: fp16
)";
  std::mt19937 rng(42);
  int parsed = 0;
  for (int i = 0; i < 3000; ++i) {
    const std::string doc = base::testing::MutateText(original, rng);
    auto p = ParsePolicyYaml(doc, "fuzz.yaml");
    if (p.ok()) {
      ++parsed;
      const auto d =
          DecidePrecisions(*p, {{"enc.0.q_proj", "Linear"}, {"x.norm1", "LayerNorm"}}, 32);
      EXPECT_EQ(d.size(), 2u);
    } else {
      EXPECT_TRUE(std::string(p.status().where()).starts_with("fuzz.yaml"))
          << p.status().ToString() << "\n"
          << doc;
    }
  }
  EXPECT_GT(parsed, 100);  // the edits must not all be fatal, or the test tests little
}

}  // namespace
}  // namespace seedance::precision
