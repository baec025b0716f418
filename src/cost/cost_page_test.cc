#include "seedance/cost/cost_page.h"

#include <gtest/gtest.h>

#include "seedance/base/fake_env.h"
#include "seedance/base/html.h"
#include "seedance/base/testing/text.h"
#include "seedance/cost/html_report.h"
#include "seedance/cost/model_reports.h"
#include "seedance/cost/reports.h"
#include "seedance/cost/roi.h"
#include "seedance/cost/tco.h"

namespace seedance::cost {
namespace {

using base::testing::CountOccurrences;

constexpr char kPoints[] = "config,throughput,memory\na,10,5\nb,8,3\nc,7,6\nd,12,9\n";

// The page is the verbs' typed results rendered: built here from the same inputs by the verbs'
// functions, it is byte for byte what BuildCostPage returns.
TEST(CostPageTest, IsTheVerbsResultsRendered) {
  base::FakeEnv env;
  env.SetFile("tco.yaml", "{}\n");
  env.SetFile("points.csv", kPoints);
  CostPageRequest q;
  q.tco = "tco.yaml";
  q.pareto = "points.csv";
  q.objectives = "throughput:max,memory:min";
  auto page = BuildCostPage(env, q, GpuCatalog::BuiltIn());
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(page->sections, (std::vector<std::string>{"tco", "pareto"}));

  CostPageInput input;
  TcoView tco;
  tco.spec = *ParseTcoSpec("{}\n", "tco.yaml", GpuCatalog::BuiltIn());
  tco.result = *ComputeTco(tco.spec, GpuCatalog::BuiltIn());
  input.tco = tco;
  ParetoView pareto;
  pareto.objectives = *ParseObjectives(q.objectives, "objectives");
  pareto.points = *ParetoCsvValues(kPoints, "points.csv", pareto.objectives);
  pareto.front = {0, 1, 3};  // a (10, 5), b (8, 3), d (12, 9); c (7, 6) is dominated by a
  input.pareto = pareto;
  input.price_basis =
      "Every cost on this page prices a H100-SXM GPU-hour at $6.88 (the TCO's "
      "rented total).";
  EXPECT_EQ(page->html, RenderCostHtml(input));
}

// Every figure on the page is the one the verbs print (their JSON reports, an independent path
// from the same inputs).
TEST(CostPageTest, AgreesWithTheVerbsReports) {
  const GpuCatalog& catalog = GpuCatalog::BuiltIn();
  base::FakeEnv env;
  const std::string tco = "gpu: H100-SXM\ngpus: 16\nutilization: 0.4\n";
  const std::string roi = "optimization: {one_off_cost_usd: 30000, saving_fraction: 0.2}\n";
  const std::string breakdown =
      "gpus: 16\nrun: {steps: 1000, step_time_s: 2}\n"
      "scheduling: {restarts: 1, lost_s_per_restart: 600}\n";
  env.SetFile("tco.yaml", tco);
  env.SetFile("roi.yaml", roi);
  env.SetFile("bd.yaml", breakdown);
  env.SetFile("points.csv", kPoints);
  CostPageRequest q{
      "tco.yaml",        "bd.yaml", "roi.yaml", "points.csv", "throughput:max,memory:min",
      Dominance::kPareto};
  auto page = BuildCostPage(env, q, catalog);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  const std::string& html = page->html;
  EXPECT_EQ(CountOccurrences(html, "<svg"), 4u);

  const base::Report t = *TcoYamlReport(tco, "tco.yaml", catalog);
  const double per_hour = t["per_gpu_hour"]["total_usd"].get<double>();
  EXPECT_NE(html.find("<b>$" + base::FixedNumber(per_hour, 2) + "</b> per GPU-hour"),
            std::string::npos);

  const base::Report b = *BreakdownYamlReport(breakdown, "bd.yaml", catalog);
  for (const auto& item : b["items"]) {
    const double v = item["usd"].get<double>();  // the page's money: cents under $100
    const std::string usd = v == 0 ? "0" : base::FixedNumber(v, v >= 100 ? 0 : v >= 1 ? 2 : 4);
    EXPECT_NE(html.find("$" + usd + " (" + base::FixedNumber(100 * item["share"].get<double>(), 1) +
                        "%)"),
              std::string::npos)
        << item.dump();
  }

  const base::Report r = *RoiYamlReport(roi, "roi.yaml", catalog);
  EXPECT_EQ(CountOccurrences(html, "class=\"cell\""), r["sensitivity"].size());
  for (const auto& cell : r["sensitivity"]) {
    const std::string where = "scale-out " + base::FixedNumber(cell["scale_out"].get<double>(), 2) +
                              ", utilization " +
                              base::FixedNumber(cell["utilization"].get<double>(), 2) + ": " +
                              cell["decision"].get<std::string>() + "</title>";
    EXPECT_NE(html.find(where), std::string::npos) << where;
  }

  const auto objectives = *ParseObjectives(q.objectives, "objectives");
  const base::Report p =
      *ParetoCsvReport(kPoints, "points.csv", objectives, Dominance::kPareto, false);
  EXPECT_EQ(CountOccurrences(html, "class=\"front\""), p["front_size"].get<size_t>());
  EXPECT_EQ(CountOccurrences(html, "class=\"point\""), 4u);
  for (const auto& row : p["front"]) {
    EXPECT_NE(html.find("row " + std::to_string(row["row"].get<int>()) + ": throughput"),
              std::string::npos);
  }
}

TEST(CostPageTest, ErrorsNameTheRequestsFields) {
  base::FakeEnv env;
  env.SetFile("points.csv", kPoints);
  const GpuCatalog& catalog = GpuCatalog::BuiltIn();
  auto with = [](std::string CostPageRequest::*field, std::string value,
                 std::string CostPageRequest::*other = nullptr, std::string other_value = "") {
    CostPageRequest q;
    q.*field = std::move(value);
    if (other != nullptr) q.*other = std::move(other_value);
    return q;
  };
  EXPECT_EQ(BuildCostPage(env, CostPageRequest(), catalog).status().where(), "request");
  EXPECT_EQ(
      BuildCostPage(env, with(&CostPageRequest::pareto, "points.csv"), catalog).status().where(),
      "objectives");
  EXPECT_EQ(BuildCostPage(env, with(&CostPageRequest::objectives, "throughput:max"), catalog)
                .status()
                .where(),
            "pareto");
  const auto bad = BuildCostPage(
      env, with(&CostPageRequest::pareto, "points.csv", &CostPageRequest::objectives, "speed:max"),
      catalog);
  ASSERT_FALSE(bad.ok());
  const auto missing = BuildCostPage(env, with(&CostPageRequest::roi, "absent.yaml"), catalog);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().ToString().find("cannot read the input"), std::string::npos);
}

}  // namespace
}  // namespace seedance::cost
