#include "seedance/cost/gpu_catalog.h"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <set>

namespace seedance::cost {
namespace {

using base::NumericFormat;

// Headline figures as printed on each datasheet's first page, typed in again
// here independently of gpu_catalog_data.cc: memory (GB), bandwidth (GB/s),
// dense BF16-or-FP16 tensor peak (TFLOPS), TDP (W).
struct Headline {
  const char* id;
  double memory_gb, bandwidth_gbytes_per_s, fp16_dense, tdp;
};
constexpr Headline kHeadlines[] = {
    {"V100", 16, 900, 125, 300},        {"A100-40GB", 40, 1555, 312, 400},
    {"A100-80GB", 80, 2039, 312, 400},  {"H100-SXM", 80, 3350, 989.5, 700},
    {"H200", 141, 4800, 989.5, 700},    {"L40S", 48, 864, 362.05, 350},
    {"L4", 24, 300, 121, 72},           {"A10", 24, 600, 125, 150},
    {"MI300X", 192, 5300, 1307.4, 750},
};

TEST(GpuCatalogTest, BuiltInHasEveryRequiredGpuWithItsHeadlineFigures) {
  const GpuCatalog& c = GpuCatalog::BuiltIn();
  EXPECT_EQ(c.gpus().size(), std::size(kHeadlines));
  for (const Headline& h : kHeadlines) {
    const GpuSpec* g = c.Find(h.id);
    ASSERT_NE(g, nullptr) << h.id;
    EXPECT_DOUBLE_EQ(g->memory_gb, h.memory_gb) << h.id;
    EXPECT_DOUBLE_EQ(g->memory_bandwidth_gbytes_per_s, h.bandwidth_gbytes_per_s) << h.id;
    EXPECT_DOUBLE_EQ(*g->DenseTflops(NumericFormat::kFp16), h.fp16_dense) << h.id;
    EXPECT_DOUBLE_EQ(g->tdp_watts, h.tdp) << h.id;
  }
}

TEST(GpuCatalogTest, EntriesAreInternallyConsistent) {
  const std::regex iso_date(R"(\d{4}-\d{2}-\d{2})");
  std::set<std::string> ids;
  for (const GpuSpec& g : GpuCatalog::BuiltIn().gpus()) {
    SCOPED_TRACE(g.id);
    EXPECT_TRUE(ids.insert(g.id).second) << "duplicate id";
    EXPECT_FALSE(g.name.empty());
    EXPECT_FALSE(g.datasheet.empty());
    EXPECT_FALSE(g.price_source.empty());
    EXPECT_TRUE(std::regex_match(g.price_date, iso_date)) << g.price_date;
    EXPECT_GT(g.price_per_hour_usd, 0);
    // Every GPU has an FP32 figure and a half-precision tensor figure.
    ASSERT_TRUE(g.DenseTflops(NumericFormat::kFp32).has_value());
    ASSERT_TRUE(g.DenseTflops(NumericFormat::kFp16).has_value());
    for (NumericFormat f : base::kAllNumericFormats) {
      const auto& dense = g.dense_tflops[static_cast<size_t>(f)];
      const auto& sparse = g.sparse_tflops[static_cast<size_t>(f)];
      if (!sparse) continue;
      // 2:4 structured sparsity doubles the tensor peak on every GPU listed.
      // The datasheets round, and the L40S sheet prints BF16/FP16 as
      // "362.05 | 733" (a ratio of 2.025), so allow 1.5%.
      ASSERT_TRUE(dense.has_value()) << base::NumericFormatName(f);
      EXPECT_NEAR(*sparse / *dense, 2.0, 0.03) << base::NumericFormatName(f);
    }
    // Narrower formats are never slower on the tensor cores.
    auto peak = [&](NumericFormat f) { return g.DenseTflops(f).value_or(0); };
    if (g.DenseTflops(NumericFormat::kFp8)) {
      EXPECT_GE(peak(NumericFormat::kFp8), peak(NumericFormat::kFp16));
    }
    if (g.DenseTflops(NumericFormat::kBf16)) {
      EXPECT_DOUBLE_EQ(peak(NumericFormat::kBf16), peak(NumericFormat::kFp16));
    }
    EXPECT_GE(peak(NumericFormat::kFp16), peak(NumericFormat::kFp32));
  }
}

TEST(GpuCatalogTest, LookupIsCaseInsensitiveAndUnknownListsKnownIds) {
  const GpuCatalog& c = GpuCatalog::BuiltIn();
  EXPECT_EQ(c.Find("h100-sxm"), c.Find("H100-SXM"));
  auto missing = c.Get("B300");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), base::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("V100, A100-40GB"), std::string_view::npos);
}

TEST(GpuCatalogTest, OverrideChangesOnlyGivenFields) {
  auto c = GpuCatalog::WithOverrides(GpuCatalog::BuiltIn(),
                                     "gpus:\n"
                                     "  - id: h100-sxm\n"
                                     "    price_per_hour_usd: 2.5\n"
                                     "    price_date: 2026-11-01\n"
                                     "    price_source: contract\n"
                                     "    dense_tflops: {fp8: 1900}\n",
                                     "cat.yaml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const GpuSpec* g = c->Find("H100-SXM");
  EXPECT_DOUBLE_EQ(g->price_per_hour_usd, 2.5);
  EXPECT_EQ(g->price_source, "contract");
  EXPECT_DOUBLE_EQ(*g->DenseTflops(NumericFormat::kFp8), 1900);
  EXPECT_DOUBLE_EQ(*g->DenseTflops(NumericFormat::kBf16), 989.5);  // untouched
  EXPECT_DOUBLE_EQ(g->memory_gb, 80);
  // The built-in table itself is unchanged.
  EXPECT_DOUBLE_EQ(GpuCatalog::BuiltIn().Find("H100-SXM")->price_per_hour_usd, 6.88);
}

// Every price says what kind it is; a price given without its kind is the user's own.
TEST(GpuCatalogTest, PriceKinds) {
  const GpuCatalog& built_in = GpuCatalog::BuiltIn();
  EXPECT_EQ(built_in.Find("H200")->price_kind, PriceKind::kOnDemand);
  EXPECT_EQ(built_in.Find("H100-SXM")->price_kind, PriceKind::kOnDemand);
  EXPECT_EQ(PriceKinds(built_in.gpus()).size(), 1u);  // one kind: every row on-demand
  auto own = GpuCatalog::WithOverrides(built_in, "gpus:\n  - id: H200\n    price_per_hour_usd: 3\n",
                                       "cat.yaml");
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  EXPECT_EQ(own->Find("H200")->price_kind, PriceKind::kOwn);
  auto spot = GpuCatalog::WithOverrides(
      built_in, "gpus:\n  - id: L4\n    price_per_hour_usd: 0.3\n    price_kind: spot\n",
      "cat.yaml");
  ASSERT_TRUE(spot.ok());
  EXPECT_EQ(spot->Find("L4")->price_kind, PriceKind::kSpot);
  EXPECT_EQ(GpuSpecToReport(*spot->Find("L4"))["price_kind"], "spot");
  auto bad =
      GpuCatalog::WithOverrides(built_in, "gpus:\n  - id: L4\n    price_kind: cheap\n", "cat.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().where(), "cat.yaml:3: gpus[0].price_kind");
  EXPECT_NE(bad.status().message().find("on-demand, reserved"), std::string::npos);
}

// Ids are unique regardless of case; many entries all land (the look-ups are hashed now).
TEST(GpuCatalogTest, DuplicateIdsInAnyCaseAndManyEntries) {
  const std::string price =
      "    price_per_hour_usd: 2.5\n    price_date: 2026-11-01\n    price_source: contract\n";
  auto twice = GpuCatalog::WithOverrides(
      GpuCatalog::BuiltIn(), "gpus:\n  - id: H100-SXM\n" + price + "  - id: h100-sxm\n" + price,
      "cat.yaml");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("appears twice"), std::string_view::npos);
  EXPECT_EQ(twice.status().where(), "cat.yaml:6: gpus[1].id");
  std::string many = "gpus:\n";
  for (int i = 0; i < 3000; ++i) {
    many += "  - {id: G" + std::to_string(i) +
            ", name: G, vendor: nvidia, form_factor: sxm, memory_gb: 80, memory_type: HBM3, "
            "memory_bandwidth_gbytes_per_s: 3350, dense_tflops: {bf16: 989}, tdp_watts: 700, "
            "price_per_hour_usd: 2, price_date: 2026-11-01, price_source: list, datasheet: x}\n";
  }
  // The old spelling of the bandwidth is refused with the new one named.
  auto old_key = GpuCatalog::WithOverrides(
      GpuCatalog::BuiltIn(), "gpus:\n  - id: H100-SXM\n    memory_bandwidth_gbps: 3350\n",
      "o.yaml");
  ASSERT_FALSE(old_key.ok());
  EXPECT_NE(old_key.status().message().find("memory_bandwidth_gbytes_per_s"),
            std::string_view::npos);
  EXPECT_EQ(old_key.status().where(), "o.yaml:3: gpus[0].memory_bandwidth_gbps");
  auto c = GpuCatalog::WithOverrides(GpuCatalog::BuiltIn(), many, "many.yaml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->gpus().size(), GpuCatalog::BuiltIn().gpus().size() + 3000);
  EXPECT_NE(c->Find("g2999"), nullptr);
}

TEST(GpuCatalogTest, NewGpuNeedsEveryField) {
  const std::string full =
      "gpus:\n"
      "  - id: X1\n"
      "    name: Example X1\n"
      "    vendor: example\n"
      "    form_factor: PCIe\n"
      "    memory_gb: 32\n"
      "    memory_type: HBM3\n"
      "    memory_bandwidth_gbytes_per_s: 2000\n"
      "    tdp_watts: 300\n"
      "    price_per_hour_usd: 1.0\n"
      "    price_date: 2026-01-02\n"
      "    price_source: test\n"
      "    datasheet: none\n"
      "    dense_tflops: {fp32: 50, bf16: 400}\n";
  auto c = GpuCatalog::WithOverrides(GpuCatalog::BuiltIn(), full, "cat.yaml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->gpus().size(), GpuCatalog::BuiltIn().gpus().size() + 1);
  EXPECT_FALSE(c->Find("X1")->DenseTflops(NumericFormat::kFp8).has_value());

  std::string no_tdp = full;
  no_tdp.erase(no_tdp.find("    tdp_watts: 300\n"), 19);
  auto bad = GpuCatalog::WithOverrides(GpuCatalog::BuiltIn(), no_tdp, "cat.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "missing required key 'gpus[0].tdp_watts'");
}

TEST(GpuCatalogTest, BadOverridesNameFileLineAndKey) {
  struct Case {
    const char* yaml;
    const char* where;
  };
  const Case cases[] = {
      {"gpus:\n  - id: L4\n    memory_gb: -1\n", "c.yaml:3: gpus[0].memory_gb"},
      {"gpus:\n  - id: L4\n    colour: red\n", "c.yaml:3: gpus[0].colour"},
      {"gpus:\n  - id: L4\n    price_date: 26/11/2026\n", "c.yaml:3: gpus[0].price_date"},
      {"gpus:\n  - id: L4\n    dense_tflops: {fp4: 9}\n", "c.yaml:3: gpus[0].dense_tflops.fp4"},
      {"gpus:\n  - id: L4\n  - id: l4\n", "c.yaml:3: gpus[1].id"},
      {"gpu:\n  - id: L4\n", "c.yaml:1: gpu"},
  };
  for (const Case& tc : cases) {
    auto r = GpuCatalog::WithOverrides(GpuCatalog::BuiltIn(), tc.yaml, "c.yaml");
    ASSERT_FALSE(r.ok()) << tc.yaml;
    EXPECT_EQ(r.status().where(), tc.where) << r.status().ToString();
  }
}

TEST(GpuCatalogTest, ReportHasEveryFormat) {
  base::Report r = GpuSpecToReport(*GpuCatalog::BuiltIn().Find("A100-80GB"));
  EXPECT_EQ(r["dense_tflops"].size(), base::kAllNumericFormats.size());
  EXPECT_TRUE(r["dense_tflops"]["fp8"].is_null());
  EXPECT_EQ(r["dense_tflops"]["bf16"].get<double>(), 312);
}

}  // namespace
}  // namespace seedance::cost
