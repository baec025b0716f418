#include "seedance/kv/estimate.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace seedance::kv {
namespace {

TEST(Estimate, PcieLineRates) {
  // 128b/130b encoding: gen4 x16 = 16 GT/s * 16 * 128/130 / 8 = 31.5 GB/s.
  EXPECT_NEAR(*PcieLineRateGbps({4, 16}), 31.508, 1e-3);
  EXPECT_NEAR(*PcieLineRateGbps({5, 16}), 63.015, 1e-3);
  EXPECT_NEAR(*PcieLineRateGbps({3, 8}), 7.877, 1e-3);
  EXPECT_NEAR(*PcieLineRateGbps({6, 16}), 121.0, 1e-3);  // FLIT 242/256
  EXPECT_FALSE(PcieLineRateGbps({7, 16}).ok());
  EXPECT_FALSE(PcieLineRateGbps({5, 3}).ok());
}

TEST(Estimate, TheNotesFormula) {
  EstimateInput in;
  in.values = 1 << 20;  // 1 Mi values at 4 bits: 512 KiB
  in.bits_per_value = 4;
  in.pcie_gbytes_per_s = 32.0;  // measured
  in.hbm = "hbm2e";
  auto r = EstimateDecompression(in);
  ASSERT_TRUE(r.ok());
  const double c = 524288;
  EXPECT_EQ((*r)["compressed_bytes"].get<int64_t>(), 524288);  // counts are JSON integers
  EXPECT_TRUE((*r)["compressed_bytes"].is_number_integer());
  EXPECT_EQ((*r)["decompressed_bytes"].get<int64_t>(), 4 << 20);
  EXPECT_EQ((*r)["n_access"].get<int64_t>(), 524288 / 32);
  EXPECT_TRUE((*r)["n_access"].is_number_integer());
  const double t = c / 32e9 * 1e6 + c / 32 * 12.8 / 1e3;
  EXPECT_NEAR((*r)["t_decomp_us"].get<double>(), t, 1e-9);
  // The lead figure: the transfer, then 512 KiB read and 4 MiB written at 5 stacks of HBM2e.
  const double plan = c / 32e9 * 1e6 + (c + (4 << 20)) / (3.6 * 1024 / 8 * 5 * 1e9) * 1e6;
  EXPECT_EQ(r->begin().key(), "t_plan_us");
  EXPECT_NEAR((*r)["t_plan_us"].get<double>(), plan, 1e-9);
  const std::string note = (*r)["notes"][0].get<std::string>();
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.0fx the plan figure", t / plan);
  EXPECT_NE(note.find(ratio), std::string::npos) << note;
  EXPECT_DOUBLE_EQ((*r)["compression_ratio"].get<double>(), 8.0);
  in.hbm = "hbm4";
  EXPECT_EQ(EstimateDecompression(in).status().where(), "hbm");
  in.hbm = "hbm2e";
  in.values = (int64_t{1} << 50) + 1;  // past where byte counts stay exact in a double
  EXPECT_EQ(EstimateDecompression(in).status().where(), "values");
}

TEST(Estimate, CpuMeasurementIsPositive) { EXPECT_GT(MeasureCpuDequant(4, 1 << 16), 0.0); }

}  // namespace
}  // namespace seedance::kv
