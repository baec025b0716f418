#include "seedance/base/csv.h"

#include <gtest/gtest.h>

#include <random>

#include "seedance/base/testing/text_mutator.h"

namespace seedance::base {
namespace {

TEST(CsvTest, ParsesHeaderRecordsQuotesAndCrlf) {
  auto t = CsvTable::Parse("id,name\r\n1,\"a, \"\"b\"\"\"\r\n\n2,c\n", "t.csv");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->header(), (std::vector<std::string>{"id", "name"}));
  ASSERT_EQ(t->records().size(), 2u);
  EXPECT_EQ(t->records()[0].fields[1], "a, \"b\"");
  EXPECT_EQ(t->records()[1].line, 4);
  EXPECT_EQ(*t->Column("name"), 1u);
  EXPECT_FALSE(t->Column("size").has_value());
}

TEST(CsvTest, FieldCountAndQuoteErrorsHaveLines) {
  auto short_row = CsvTable::Parse("a,b,c\n1,2,3\n4,5\n", "s.csv");
  EXPECT_EQ(short_row.status().where(), "s.csv:3");
  EXPECT_NE(short_row.status().message().find("expected 3 fields (a,b,c), got 2"),
            std::string_view::npos);
  EXPECT_EQ(CsvTable::Parse("a\n\"open\n", "q.csv").status().where(), "q.csv:2");
  EXPECT_EQ(CsvTable::Parse("a\nx\"y\n", "q.csv").status().where(), "q.csv:2");
  EXPECT_EQ(CsvTable::Parse("\n\n", "e.csv").status().message(), "no header row");
}

TEST(CsvTest, ColumnsAndIntegers) {
  auto t = CsvTable::Parse("id,size\n1,99999999999999999999\n2,12x\n3,-4\n", "i.csv");
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->CheckColumns({"id", "size"}, {"id", "size", "kind"}).ok());
  EXPECT_EQ(t->CheckColumns({"id", "lower"}, {"id", "size", "lower"}).message(),
            "missing column 'lower'");
  EXPECT_NE(t->CheckColumns({"id"}, {"id"}).message().find("unknown column 'size'"),
            std::string_view::npos);
  auto big = t->Int(t->records()[0], 1);
  EXPECT_EQ(big.status().message(),
            "'size' must be an integer that fits in 64 bits, got '99999999999999999999'");
  EXPECT_EQ(big.status().where(), "i.csv:2: size");
  EXPECT_EQ(t->Int(t->records()[1], 1).status().where(), "i.csv:3: size");
  EXPECT_EQ(*t->Int(t->records()[2], 1), -4);
}

TEST(CsvTest, MutatedFilesNeverCrash) {
  std::mt19937 rng(99);
  const std::string original = "id,lower,upper,size\n0,0,3,4\n1,3,9,\"4\"\n2,0,9,4\n";
  for (int i = 0; i < 3000; ++i) {
    auto t = CsvTable::Parse(testing::MutateText(original, rng), "m.csv");
    if (!t.ok()) {
      EXPECT_EQ(t.status().where().rfind("m.csv:", 0), 0u);
      continue;
    }
    for (const auto& r : t->records()) {
      for (size_t c = 0; c < r.fields.size(); ++c) (void)t->Int(r, c);
    }
  }
}

}  // namespace
}  // namespace seedance::base
