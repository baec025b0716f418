#include "seedance/base/yaml_map.h"

#include <gtest/gtest.h>

#include <cctype>
#include <random>
#include <string_view>

#include "seedance/base/testing/text_mutator.h"

namespace seedance::base {
namespace {

StatusOr<YamlMap> Load(std::string_view text) {
  SEEDANCE_ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, "t.yaml"));
  return YamlMap::FromNode(root, "t.yaml", "");
}

constexpr std::string_view kDoc =
    "name: demo\n"       // line 1
    "model:\n"           // line 2
    "  layers: 32\n"     // line 3
    "  ratio: 0.5\n"     // line 4
    "  quoted: \"8\"\n"  // line 5
    "  flag: true\n"     // line 6
    "  kind: llama\n"    // line 7
    "items:\n"           // line 8
    "  - a: 1\n"         // line 9
    "  - a: 2\n";        // line 10

TEST(YamlMapTest, TypedGetters) {
  auto root = Load(kDoc);
  ASSERT_TRUE(root.ok()) << root.status().ToString();
  EXPECT_EQ(*root->GetString("name"), "demo");
  auto model = root->GetMap("model");
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(model->path(), "model");
  EXPECT_EQ(*model->GetInt("layers", std::nullopt, 1), 32);
  EXPECT_DOUBLE_EQ(*model->GetNumber("ratio"), 0.5);
  EXPECT_EQ(*model->GetBool("flag"), true);
  const std::string_view kinds[] = {"llama", "gpt"};
  EXPECT_EQ(*model->GetChoice("kind", kinds), "llama");
  EXPECT_EQ(*model->GetInt("absent", 7), 7);
  auto items = root->GetMapList("items");
  ASSERT_TRUE(items.ok());
  ASSERT_EQ(items->size(), 2u);
  EXPECT_EQ(*(*items)[1].GetInt("a"), 2);
  EXPECT_EQ((*items)[1].path(), "items[1]");
}

TEST(YamlMapTest, ErrorsNameFileLineAndKey) {
  auto model = Load(kDoc)->GetMap("model");
  ASSERT_TRUE(model.ok());

  Status quoted = model->GetInt("quoted").status();
  EXPECT_EQ(quoted.where(), "t.yaml:5: model.quoted");
  EXPECT_NE(quoted.message().find("must be an integer"), std::string_view::npos);

  Status fractional = model->GetInt("ratio").status();
  EXPECT_EQ(fractional.where(), "t.yaml:4: model.ratio");

  Status range = model->GetInt("layers", std::nullopt, 1, 16).status();
  EXPECT_EQ(range.message(), "'model.layers' must be between 1 and 16, got 32");

  Status missing = model->GetInt("heads").status();
  EXPECT_EQ(missing.message(), "missing required key 'model.heads'");
  EXPECT_EQ(missing.where(), "t.yaml:3: model.heads");  // the mapping's first line

  const std::string_view kinds[] = {"gpt"};
  Status choice = model->GetChoice("kind", kinds).status();
  EXPECT_EQ(choice.message(), "'model.kind' must be one of: gpt; got 'llama'");

  Status unknown = model->CheckKeys({"layers", "ratio", "quoted", "flag"});
  EXPECT_EQ(unknown.where(), "t.yaml:7: model.kind");
  EXPECT_NE(unknown.message().find("unknown key 'model.kind'"), std::string_view::npos);

  Status not_map = Load(kDoc)->GetMap("name").status();
  EXPECT_EQ(not_map.where(), "t.yaml:1: name");
}

TEST(YamlMapTest, ChoiceLists) {
  auto root = Load(
      "a: [bf16, fp8]\n"  // line 1
      "b:\n"              // line 2
      "  - fp32\n"        // line 3
      "  - int3\n"        // line 4
      "c: [bf16, bf16]\n"
      "d: []\n"
      "e: bf16\n"
      "f: [[bf16]]\n");
  ASSERT_TRUE(root.ok()) << root.status().ToString();
  const std::string_view formats[] = {"fp32", "bf16", "fp8"};
  EXPECT_EQ(*root->GetChoiceList("a", formats), (std::vector<std::string>{"bf16", "fp8"}));
  EXPECT_TRUE(root->GetChoiceList("absent", formats)->empty());
  auto b = root->GetChoiceList("b", formats);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().where(), "t.yaml:4: b[1]");
  EXPECT_NE(b.status().message().find("int3"), std::string::npos);
  EXPECT_NE(root->GetChoiceList("c", formats).status().message().find("repeats"),
            std::string::npos);
  EXPECT_EQ(root->GetChoiceList("d", formats).status().where(), "t.yaml:6: d");
  EXPECT_EQ(root->GetChoiceList("e", formats).status().where(), "t.yaml:7: e");
  EXPECT_FALSE(root->GetChoiceList("f", formats).ok());
}

// A choice is an identifier: its case carries no meaning, and the choice's own spelling comes
// back. Every casing of every choice, checked against the lower-cased reference.
TEST(YamlMapTest, ChoicesIgnoreCase) {
  const std::string_view formats[] = {"fp32", "bf16", "fp8", "op-selective"};
  for (std::string_view c : formats) {
    for (unsigned mask = 0; mask < (1u << c.size()); ++mask) {
      std::string spelled(c);
      for (size_t i = 0; i < spelled.size(); ++i) {
        if ((mask >> i & 1u) != 0) spelled[i] = static_cast<char>(std::toupper(spelled[i]));
      }
      auto root = Load("v: " + spelled + "\nl: [" + spelled + "]\n");
      ASSERT_TRUE(root.ok()) << root.status().ToString();
      auto one = root->GetChoice("v", formats);
      ASSERT_TRUE(one.ok()) << spelled << ": " << one.status().ToString();
      EXPECT_EQ(*one, c);
      auto list = root->GetChoiceList("l", formats);
      ASSERT_TRUE(list.ok()) << spelled << ": " << list.status().ToString();
      EXPECT_EQ(*list, std::vector<std::string>{std::string(c)});
    }
  }
  auto root = Load("a: [BF16, bf16]\nb: bf 16\n");
  ASSERT_TRUE(root.ok());
  EXPECT_NE(root->GetChoiceList("a", formats).status().message().find("repeats 'bf16'"),
            std::string::npos);
  EXPECT_FALSE(root->GetChoice("b", formats).ok());
}

TEST(YamlMapTest, DuplicateKeysAreRejected) {
  auto root = Load("a: 1\nb: 2\na: 3\n");
  ASSERT_TRUE(root.ok());
  Status s = root->CheckKeys({"a", "b"});
  EXPECT_EQ(s.where(), "t.yaml:3: a");
  EXPECT_NE(s.message().find("given twice"), std::string_view::npos);
}

// A second document is an error at its first line, never silently ignored; one document with
// or without markers still loads.
TEST(YamlMapTest, ASecondDocumentIsRefusedWithItsLine) {
  struct Case {
    std::string text;
    int line;
  };
  const std::vector<Case> two = {
      {"a: 1\n---\nb: 2\n", 2},
      {"---\na: 1\n---\nb: 2\n", 3},
      {"a: 1\n---\n", 2},             // an empty second document
      {"# c\na: 1\n...\nb: 2\n", 4},  // after an end marker
      {"a: 1\n--- {b: 2}\n", 2},
      {"a: |\n  ---\n  x\n---\nc: 3\n", 4},  // "---" inside a block scalar is text
  };
  for (const Case& c : two) {
    auto r = ParseYaml(c.text, "f.yaml");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().where(), "f.yaml:" + std::to_string(c.line)) << c.text;
    EXPECT_NE(r.status().message().find("second YAML document"), std::string::npos);
  }
  for (const std::string one :
       {"a: 1\n", "---\na: 1\n", "---\na: 1\n...\n", "%YAML 1.2\n---\na: 1\n",
        "  # an indented comment\n---\na: 1\n", "\xEF\xBB\xBF# c\n---\na: 1\n",
        "\xEF\xBB\xBF%YAML 1.2\n---\na: 1\n", "---\r\na: 1\r\n"}) {
    EXPECT_TRUE(ParseYaml(one, "f.yaml").ok()) << one;
  }
}

TEST(YamlMapTest, OverflowAndNonFiniteAreRejected) {
  auto root = Load("big: 99999999999999999999999\nnan: .nan\nneg: -3\n");
  ASSERT_TRUE(root.ok());
  EXPECT_FALSE(root->GetInt("big").ok());
  EXPECT_FALSE(root->GetNumber("nan").ok());
  EXPECT_EQ(root->GetInt("neg", std::nullopt, 0).status().message(),
            "'neg' must be at least 0, got -3");
}

TEST(YamlMapTest, SyntaxErrorHasLineAndColumn) {
  auto r = ParseYaml("a: 1\nb: [1, 2\n", "bad.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().where().substr(0, 9), "bad.yaml:");
  EXPECT_NE(r.status().message().find("YAML syntax error"), std::string_view::npos);
  EXPECT_FALSE(ParseYaml("", "empty.yaml").ok());
  EXPECT_FALSE(Load("- 1\n- 2\n").ok());  // a list is not a mapping
}

// Hardening finding 9: nesting past yaml-cpp's depth guard says so, with the place.
TEST(YamlMapTest, DeepNestingIsNamedAsSuch) {
  std::string deep = "job:\n";
  for (int i = 0; i < 500; ++i) deep += std::string(2 * (i + 1), ' ') + "a:\n";
  auto r = ParseYaml(deep, "deep.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("YAML nesting too deep"), std::string_view::npos)
      << r.status().message();
  EXPECT_EQ(r.status().where().substr(0, 10), "deep.yaml:");
  const std::string flow = "a: " + std::string(1000, '[') + std::string(1000, ']') + "\n";
  EXPECT_NE(ParseYaml(flow, "f.yaml").status().message().find("too deep"), std::string_view::npos);
}

// Property test: any byte-level mutation of a valid document either loads or
// fails with an InvalidArgument whose `where` starts with the file name and a
// line number. It never crashes and never throws.
TEST(YamlMapTest, MutatedDocumentsFailCleanly) {
  std::mt19937 rng(12345);
  for (int iter = 0; iter < 3000; ++iter) {
    const std::string doc = testing::MutateText(std::string(kDoc), rng, 4);
    auto root = Load(doc);
    if (!root.ok()) {
      EXPECT_EQ(root.status().code(), StatusCode::kInvalidArgument);
      EXPECT_EQ(root.status().where().rfind("t.yaml:", 0), 0u) << doc;
      continue;
    }
    // Exercise the getters on whatever survived.
    (void)root->CheckKeys({"name", "model", "items"});
    auto model = root->GetMap("model");
    if (model.ok()) {
      auto layers = model->GetInt("layers", std::nullopt, 1);
      if (!layers.ok()) {
        EXPECT_EQ(layers.status().where().rfind("t.yaml:", 0), 0u);
      }
      (void)model->GetNumber("ratio");
      (void)model->GetBool("flag");
    }
    (void)root->GetMapList("items");
  }
}

}  // namespace
}  // namespace seedance::base
