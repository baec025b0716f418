#include "seedance/cost/cost_page.h"

#include <gtest/gtest.h>

#include "seedance/base/fake_env.h"
#include "seedance/cost/html_report.h"
#include "seedance/cost/model_reports.h"
#include "seedance/cost/reports.h"

namespace seedance::cost {
namespace {

constexpr char kPoints[] = "config,throughput,memory\na,10,5\nb,8,3\nc,7,6\nd,12,9\n";

// The page is the verbs' reports rendered: built here from the same inputs by the verbs'
// functions, it is byte for byte what BuildCostPage returns.
TEST(CostPageTest, IsTheVerbsReportsRendered) {
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
  input.tco = *TcoYamlReport("{}\n", "tco.yaml", GpuCatalog::BuiltIn());
  const auto objectives = *ParseObjectives(q.objectives, "objectives");
  input.pareto = *ParetoCsvReport(kPoints, "points.csv", objectives, Dominance::kPareto, false);
  input.pareto_points = *ParetoCsvValues(kPoints, "points.csv", objectives);
  EXPECT_EQ(page->html, RenderCostHtml(input));
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
