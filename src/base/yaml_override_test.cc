#include "seedance/base/yaml_override.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

namespace seedance::base {
namespace {

YAML::Node Apply(const std::string& text, std::vector<YamlOverride> overrides) {
  auto out = ApplyYamlOverrides(text, "job.yaml", overrides);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? YAML::Load(*out) : YAML::Node();
}

TEST(YamlOverrideTest, SetsReplacesAndMakesMappings) {
  const std::string job = "model:\n  layers: 32\nhardware:\n  gpu: H100-SXM\n  count: 16\n";
  YAML::Node doc = Apply(job, {{"hardware.gpu", "H200"},
                               {"hardware.count", "8"},
                               {"training.seq_len", "4096"},
                               {"a.b.c", "[1, 2]"},
                               {"model.name", "\"8\""}});
  EXPECT_EQ(doc["hardware"]["gpu"].as<std::string>(), "H200");
  EXPECT_EQ(doc["hardware"]["count"].as<int>(), 8);
  EXPECT_EQ(doc["model"]["layers"].as<int>(), 32);  // untouched
  EXPECT_EQ(doc["training"]["seq_len"].as<int>(), 4096);
  ASSERT_TRUE(doc["a"]["b"]["c"].IsSequence());
  EXPECT_EQ(doc["a"]["b"]["c"][1].as<int>(), 2);
  EXPECT_EQ(doc["model"]["name"].as<std::string>(), "8");
  // Order of the original keys is kept.
  EXPECT_EQ(doc.begin()->first.as<std::string>(), "model");
}

// A quoted number stays quoted in the document written back (a strict reader refuses "8192"
// where a number belongs, with or without --set), and an unquoted one stays a plain scalar.
TEST(YamlOverrideTest, QuotedScalarsStayQuoted) {
  auto out = ApplyYamlOverrides("a: \"8192\"\nb: 8192\nc: [\"x\", 1]\n", "job.yaml",
                                {{"d", "\"true\""}, {"e", "true"}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  YAML::Node doc = YAML::Load(*out);
  EXPECT_EQ(doc["a"].Tag(), "!") << *out;
  EXPECT_EQ(doc["b"].Tag(), "?") << *out;
  EXPECT_EQ(doc["c"][0].Tag(), "!") << *out;
  EXPECT_EQ(doc["d"].Tag(), "!") << *out;
  EXPECT_EQ(doc["e"].Tag(), "?") << *out;
  EXPECT_EQ(doc["a"].as<std::string>(), "8192");
}

TEST(YamlOverrideTest, LaterOverridesWinAndEmptyIsNull) {
  YAML::Node doc = Apply("x: 1\n", {{"x", "2"}, {"x", "3"}, {"y", ""}});
  EXPECT_EQ(doc["x"].as<int>(), 3);
  EXPECT_TRUE(doc["y"].IsNull());
}

TEST(YamlOverrideTest, ErrorsNameTheOverride) {
  auto through_scalar =
      ApplyYamlOverrides("model:\n  layers: 32\n", "job.yaml", {{"model.layers.count", "2"}});
  ASSERT_FALSE(through_scalar.ok());
  EXPECT_EQ(through_scalar.status().where(), "--set model.layers.count");
  EXPECT_NE(through_scalar.status().message().find("'model.layers' is not a mapping"),
            std::string::npos);
  auto empty_part = ApplyYamlOverrides("x: 1\n", "job.yaml", {{"x..y", "2"}});
  ASSERT_FALSE(empty_part.ok());
  EXPECT_EQ(empty_part.status().where(), "--set x..y");
  auto bad_value = ApplyYamlOverrides("x: 1\n", "job.yaml", {{"x", "[1, 2"}});
  ASSERT_FALSE(bad_value.ok());
  EXPECT_NE(bad_value.status().message().find("not YAML"), std::string::npos);
  auto bad_doc = ApplyYamlOverrides("x: [1\n", "job.yaml", {{"x", "2"}});
  ASSERT_FALSE(bad_doc.ok());
  EXPECT_EQ(bad_doc.status().where().rfind("job.yaml:", 0), 0u);
}

TEST(YamlOverrideTest, ParsesKeyEqualsValue) {
  auto o = ParseYamlOverride("hardware.gpu=H200");
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->key, "hardware.gpu");
  EXPECT_EQ(o->value, "H200");
  auto with_eq = ParseYamlOverride("name=a=b");
  ASSERT_TRUE(with_eq.ok());
  EXPECT_EQ(with_eq->value, "a=b");
  EXPECT_FALSE(ParseYamlOverride("hardware.gpu").ok());
  EXPECT_FALSE(ParseYamlOverride("=H200").ok());
}

}  // namespace
}  // namespace seedance::base
