// The cost model (TCO, ROI, power, breakdown, the power fit) against hand-computed arithmetic,
// and its inputs' errors.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "seedance/cost/breakdown.h"
#include "seedance/cost/model_reports.h"
#include "seedance/cost/power.h"
#include "seedance/cost/roi.h"
#include "seedance/cost/tco.h"

namespace seedance::cost {
namespace {

const GpuCatalog& Catalog() { return GpuCatalog::BuiltIn(); }

TEST(TcoTest, RentedAtTheCatalogPrice) {
  auto spec = ParseTcoSpec("gpu: H100-SXM\ngpus: 8\nutilization: 0.5\n", "t.yaml", Catalog());
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  auto t = ComputeTco(*spec, Catalog());
  ASSERT_TRUE(t.ok());
  // $6.88 per GPU-hour; bf16 dense peak 989.5 TFLOPS at 50%: 0.49475 PFLOPS.
  EXPECT_DOUBLE_EQ(t->total_usd_per_gpu_hour, 6.88);
  EXPECT_NEAR(t->usd_per_pflop_hour, 6.88 / 0.49475, 1e-9);
  EXPECT_EQ(t->power_usd_per_gpu_hour, 0);  // in the rent
  // Power: 700 W TDP (idle fraction 1), no other load, PUE 1.28: 896 W per GPU.
  EXPECT_NEAR(t->facility_watts_per_gpu, 896, 1e-9);
  auto report = TcoReport(*spec, Catalog());
  EXPECT_EQ((*report)["inputs"]["price_kind"], "on-demand");
  EXPECT_EQ((*report)["inputs"]["price_date"], "2026-08-01");
}

// Inputs inside their ranges that divide past a double (subnormal, tiny): an error naming the
// cost, never inf or null.
TEST(TcoTest, TinyInputsThatOverflowACostAreErrors) {
  for (const std::string extra :
       {"utilization: 4.9e-324\n", "utilization: 1e-310\n",
        "utilization: 0.5\ntokens_per_s_per_gpu: 1e-320\ntokens_per_request: 100\n"}) {
    auto spec = ParseTcoSpec("gpu: H100-SXM\ngpus: 8\n" + extra, "t.yaml", Catalog());
    if (!spec.ok()) continue;  // refused by its range: also fine
    auto t = ComputeTco(*spec, Catalog());
    ASSERT_FALSE(t.ok()) << extra << " gave " << t->usd_per_pflop_hour;
    EXPECT_NE(t.status().message().find("not a finite number"), std::string::npos)
        << t.status().ToString();
    EXPECT_FALSE(TcoReport(*spec, Catalog()).ok());
  }
}

TEST(TcoTest, OwnedDepreciationPowerAndServing) {
  const std::string yaml =
      "gpu: H100-SXM\n"
      "ownership: owned\n"
      "owned: {purchase_price_usd: 35040, life_years: 4, residual_fraction: 0.2}\n"
      "power: {busy_fraction: 0.5, price_per_kwh_usd: 0.1,\n"
      "        coefficients: {gpu_idle_fraction: 0.2, base_watts: 800, pue: 1.5}}\n"
      "other_usd_per_gpu_hour: {network: 0.1, storage: 0.05, operations: 0.25}\n"
      "serving: {tokens_per_request: 500, tokens_per_s_per_gpu: 1000}\n";
  auto spec = ParseTcoSpec(yaml, "t.yaml", Catalog());
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  auto t = ComputeTco(*spec, Catalog());
  ASSERT_TRUE(t.ok());
  // Depreciation: 35040 * 0.8 / (4 * 8760) = 0.8 USD per GPU-hour.
  EXPECT_NEAR(t->compute_usd_per_gpu_hour, 0.8, 1e-12);
  // Power per GPU: (800 W base + 8 * 700 * (0.2 + 0.8 * 0.5) W) / 8 * 1.5 = (800 + 3360) / 8 * 1.5
  // = 780 W; 0.78 kWh per hour at $0.1: 0.078 USD.
  EXPECT_NEAR(t->facility_watts_per_gpu, 780, 1e-9);
  EXPECT_NEAR(t->power_usd_per_gpu_hour, 0.078, 1e-12);
  // The host: 0.40 of the GPU's price, depreciated alike: 0.32. Colocation: 780 W / 1.5 PUE =
  // 0.52 kW of IT load at $184.06 per kW-month, 12 months over 8760 hours.
  EXPECT_NEAR(t->host_usd_per_gpu_hour, 0.32, 1e-12);
  EXPECT_NEAR(t->colocation_usd_per_gpu_hour, 0.52 * 184.06 * 12 / 8760, 1e-12);
  // Network and storage given per hour replace their capex shares.
  EXPECT_NEAR(t->network_usd_per_gpu_hour, 0.1, 1e-12);
  EXPECT_NEAR(t->total_usd_per_gpu_hour,
              0.8 + 0.32 + 0.52 * 184.06 * 12 / 8760 + 0.078 + 0.1 + 0.05 + 0.25, 1e-12);
  // 1000 tokens/s = 3.6M tokens/h = 7200 requests/h: per 1000 requests total / 7.2.
  EXPECT_NEAR(*t->usd_per_1k_requests, t->total_usd_per_gpu_hour / 7.2, 1e-12);
  EXPECT_NEAR(*t->usd_per_million_tokens, t->total_usd_per_gpu_hour / 3.6, 1e-12);
}

// Owned without network or storage per hour: their shares of the server's price, depreciated;
// without operations: an error, never a silent 0.
TEST(TcoTest, OwnedNetworkAndStorageFromTheirShares) {
  auto spec = ParseTcoSpec(
      "ownership: owned\nowned: {purchase_price_usd: 30000, life_years: 5}\n"
      "other_usd_per_gpu_hour: {operations: 0.1}\n",
      "t.yaml", Catalog());
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  auto t = ComputeTco(*spec, Catalog());
  ASSERT_TRUE(t.ok());
  const double per_hour = 1.0 / (5 * 8760);
  EXPECT_NEAR(t->network_usd_per_gpu_hour, 30000 * 1.4 * 0.235 * per_hour, 1e-12);
  EXPECT_NEAR(t->storage_usd_per_gpu_hour, 30000 * 1.4 * 0.015 * per_hour, 1e-12);
  auto no_ops = ParseTcoSpec(
      "ownership: owned\nowned: {purchase_price_usd: 30000, life_years: 5}\n", "t.yaml", Catalog());
  ASSERT_FALSE(no_ops.ok());
  EXPECT_NE(no_ops.status().message().find("other_usd_per_gpu_hour.operations"), std::string::npos);
  EXPECT_EQ(no_ops.status().where(), "t.yaml:1: ownership");
}

struct BadCase {
  const char* yaml;
  const char* where;
};

TEST(TcoTest, BadInputsNameFileLineAndKey) {
  const BadCase cases[] = {
      {"price_per_gpu_hour_usd: -1\n", "t.yaml:1: price_per_gpu_hour_usd"},
      {"ownership: owned\nowned: {purchase_price_usd: 1000, life_years: 0}\n",
       "t.yaml:2: owned.life_years"},
      {"power: {coefficients: {pue: 0.9}}\n", "t.yaml:1: power.coefficients.pue"},
      {"gpu: B300\n", "t.yaml:1: gpu"},
      {"gpu: V100\nprecision: fp8\n", "t.yaml:2: precision"},
      {"ownership: owned\n", "t.yaml:1: ownership"},
      {"ownership: owned\nowned: {purchase_price_usd: 1, life_years: 1}\nprice_per_gpu_hour_usd: "
       "2\n",
       "t.yaml:3: price_per_gpu_hour_usd"},
      {"utilization: 0\n", "t.yaml:1: utilization"},
      {"gpus: [1\n", "t.yaml:2:1"},
      {"colour: red\n", "t.yaml:1: colour"},
  };
  for (const BadCase& c : cases) {
    auto spec = ParseTcoSpec(c.yaml, "t.yaml", Catalog());
    ASSERT_FALSE(spec.ok()) << c.yaml;
    EXPECT_EQ(spec.status().where(), c.where) << c.yaml << spec.status().ToString();
  }
}

TEST(RoiTest, OptimizationAndSensitivityArithmetic) {
  const std::string yaml =
      "optimization: {one_off_cost_usd: 10000, running_cost_per_month_usd: 1000,\n"
      "               saving_fraction: 0.1}\n"
      "baseline: {gpus: 10, usd_per_gpu_hour: 2}\n"
      "horizon_months: 12\n"
      "sensitivity: {utilization: {from: 0.3, to: 0.6, steps: 2},\n"
      "              scale_out: {from: 1, to: 2, steps: 2}, scale_out_efficiency: 1,\n"
      "              max_utilization: 0.9}\n";
  auto spec = ParseRoiSpec(yaml, "r.yaml", Catalog());
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  const base::Report r = RoiReport(*spec);
  // Baseline 10 GPUs * $2 * 730 h = $14,600 a month; 10% saved: $1,460; cost 10,000 + 12,000.
  EXPECT_NEAR(r["optimization"]["saving_usd_per_month"].get<double>(), 1460, 1e-9);
  EXPECT_NEAR(r["optimization"]["roi"].get<double>(), (1460 * 12 - 22000) / 22000.0, 1e-12);
  EXPECT_NEAR(r["optimization"]["payback_months"].get<double>(), 10000 / 460.0, 1e-9);
  const auto& cells = r["sensitivity"];
  ASSERT_EQ(cells.size(), 4u);
  EXPECT_EQ(cells[0]["decision"], "no-change");
  // s = 2, gamma = 1: u 0.3 needs 0.6 (reachable), u 0.6 needs 1.2 (not). Avoided: 10 GPUs *
  // $2 * 730 h * 12 = $175,200 against $22,000.
  EXPECT_NEAR(cells[2]["roi"].get<double>(), (175200 - 22000) / 22000.0, 1e-9);
  EXPECT_EQ(cells[2]["decision"], "repair");
  EXPECT_TRUE(cells[3]["roi"].is_null());
  EXPECT_EQ(cells[3]["decision"], "scale-out");
  // Below min_utilization_for_scale_out and unreachable: repair first.
  auto low = ParseRoiSpec(
      "optimization: {one_off_cost_usd: 1}\nsensitivity: {utilization: {from: 0.3, to: 0.3, "
      "steps: 1}, scale_out: {from: 4, to: 4, steps: 1}, scale_out_efficiency: 1}\n",
      "r.yaml", Catalog());
  ASSERT_TRUE(low.ok()) << low.status().ToString();
  EXPECT_EQ(RoiReport(*low)["sensitivity"][0]["decision"], "repair-first");
}

TEST(RoiTest, BadInputs) {
  EXPECT_EQ(ParseRoiSpec("horizon_months: 6\n", "r.yaml", Catalog()).status().where(), "r.yaml");
  EXPECT_EQ(
      ParseRoiSpec("optimization: {one_off_cost_usd: -5}\n", "r.yaml", Catalog()).status().where(),
      "r.yaml:1: optimization.one_off_cost_usd");
  EXPECT_EQ(ParseRoiSpec("optimization: {one_off_cost_usd: 5}\nsensitivity: {utilization: "
                         "{from: 0.8, to: 0.2}}\n",
                         "r.yaml", Catalog())
                .status()
                .where(),
            "r.yaml:2: sensitivity.utilization.to");
}

TEST(PowerTest, ModelTermsAndEnergyPerToken) {
  auto spec = ParsePowerSpec(
      "gpu_tdp_watts: 400\ngpus: 4\n"
      "load: {gpu_utilization: 0.5, cpu_utilization_pct: 50, memory_bandwidth_gbytes_per_s: 100,\n"
      "       nvme_kiops: 1000, inlet_above_setpoint_k: 2}\n"
      "coefficients: {base_watts: 200, gpu_idle_fraction: 0.25, cooling_watts_per_kelvin: 10,\n"
      "               pue: 1.5}\n"
      "step: {step_time_s: 2, tokens_per_step: 1000}\n",
      "p.yaml", Catalog());
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  const PowerBreakdown p = NodePower(spec->coefficients, spec->load);
  // GPUs 4 * 400 * (0.25 + 0.75 * 0.5) = 1000; CPU 0.82 * 50 = 41; memory 0.15 * 100 = 15;
  // NVMe 0.003 * 1000 = 3; cooling 10 * 2 = 20; base 200: IT 1279 W, facility 1918.5 W.
  EXPECT_NEAR(p.gpu_watts, 1000, 1e-9);
  EXPECT_NEAR(p.it_watts, 1279, 1e-9);
  EXPECT_NEAR(p.facility_watts, 1918.5, 1e-9);
  const base::Report r = PowerReport(*spec);
  EXPECT_NEAR(r["energy"]["energy_per_step_j"].get<double>(), 3837, 1e-9);
  EXPECT_NEAR(r["energy"]["energy_per_token_j"].get<double>(), 3.837, 1e-12);
  EXPECT_EQ(ParsePowerSpec("coefficients: {gpu_idle_fraction: 1.5}\n", "p.yaml", Catalog())
                .status()
                .where(),
            "p.yaml:1: coefficients.gpu_idle_fraction");
}

TEST(PowerFitTest, RecoversKnownCoefficientsWithinTheNoise) {
  // Samples made from known coefficients plus N(0, 5 W) noise; each fitted coefficient must lie
  // within 4 of its standard errors of the truth, and the standard errors must be small.
  const double base = 350, cpu = 0.82, mem = 0.15, nvme = 0.003, idle = 0.3, tdp = 8 * 700;
  std::mt19937_64 gen(17);
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> noise(0, 5);
  std::vector<PowerSample> samples;
  for (int i = 0; i < 400; ++i) {
    PowerSample s;
    s.cpu_utilization_pct = 100 * u(gen);
    s.memory_bandwidth_gbytes_per_s = 300 * u(gen);
    s.nvme_kiops = 2000 * u(gen);
    const double gpu_util = u(gen);
    s.gpu_tdp_watts = tdp;
    s.gpu_busy_tdp_watts = tdp * gpu_util;
    s.watts = base + tdp * (idle + (1 - idle) * gpu_util) + cpu * s.cpu_utilization_pct +
              mem * s.memory_bandwidth_gbytes_per_s + nvme * s.nvme_kiops + noise(gen);
    samples.push_back(s);
  }
  auto fit = FitPower(samples);
  ASSERT_TRUE(fit.ok()) << fit.status().ToString();
  const std::map<std::string, double> truth = {{"base_watts", base},
                                               {"cpu_watts_per_pct", cpu},
                                               {"memory_watts_per_gbytes_per_s", mem},
                                               {"nvme_watts_per_kiops", nvme},
                                               {"gpu_idle_fraction", idle}};
  ASSERT_EQ(fit->terms.size(), truth.size());
  for (size_t k = 0; k < fit->terms.size(); ++k) {
    const double want = truth.at(fit->terms[k]);
    EXPECT_NEAR(fit->coefficients[k], want, 4 * fit->standard_errors[k]) << fit->terms[k];
  }
  EXPECT_GT(fit->r_squared, 0.999);
  EXPECT_NEAR(fit->residual_watts_rms, 5, 1);
}

TEST(PowerFitTest, TooFewSamplesAndDependentColumns) {
  std::vector<PowerSample> two(2);
  two[0].cpu_utilization_pct = 1;
  EXPECT_FALSE(FitPower(two).ok());
  std::vector<PowerSample> dependent;
  for (int i = 0; i < 10; ++i) {
    PowerSample s;
    s.cpu_utilization_pct = i;
    s.memory_bandwidth_gbytes_per_s = 2.0 * i;  // proportional to the CPU column
    s.watts = 100 + i;
    dependent.push_back(s);
  }
  auto fit = FitPower(dependent);
  ASSERT_FALSE(fit.ok());
  EXPECT_NE(fit.status().message().find("linearly dependent"), std::string::npos);
  auto csv = PowerFitCsvReport("watts,cpu_utilization_pct\n100,1\n101,x\n", "s.csv");
  EXPECT_EQ(csv.status().where(), "s.csv:3: cpu_utilization_pct");
}

TEST(BreakdownTest, ItemsAndShares) {
  auto spec = ParseBreakdownSpec(
      "gpu: H100-SXM\ngpus: 10\nusd_per_gpu_hour: 2\n"
      "run: {steps: 3600, step_time_s: 10}\n"
      "storage: {checkpoints: 10, checkpoint_gb: 100, usd_per_gb_written: 0.01}\n"
      "network: {egress_gb: 1000, usd_per_gb_egress: 0.05}\n"
      "scheduling: {restarts: 2, lost_s_per_restart: 1800, startup_s: 0, queue_gpu_hours: 5}\n",
      "b.yaml", Catalog());
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  const base::Report r = BreakdownReport(*spec, Catalog());
  // Compute: 10 GPUs * 10 h * $2 = 200. Storage: 10 * 100 GB * 0.01 = 10. Network: 50.
  // Scheduling: 10 GPUs * 1 h * $2 + 5 GPU-h * $2 = 30. Total 290.
  EXPECT_NEAR(r["items"][0]["usd"].get<double>(), 200, 1e-9);
  EXPECT_NEAR(r["items"][1]["usd"].get<double>(), 10, 1e-9);
  EXPECT_NEAR(r["items"][2]["usd"].get<double>(), 50, 1e-9);
  EXPECT_NEAR(r["items"][3]["usd"].get<double>(), 30, 1e-9);
  EXPECT_NEAR(r["total_usd"].get<double>(), 290, 1e-9);
  EXPECT_NEAR(r["items"][0]["share"].get<double>(), 200 / 290.0, 1e-12);
  EXPECT_EQ(ParseBreakdownSpec("gpus: 2\n", "b.yaml", Catalog()).status().where(), "b.yaml:1");
}

}  // namespace
}  // namespace seedance::cost
