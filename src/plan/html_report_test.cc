#include "seedance/plan/html_report.h"

#include <gtest/gtest.h>

#include <string>

#include "seedance/base/html.h"
#include "seedance/base/testing/text.h"
#include "seedance/plan/job_spec.h"
#include "seedance/plan/optimize.h"

namespace seedance::plan {
namespace {

using base::testing::CountOccurrences;

// The page of the default job shows what the plan's JSON report says: the step times and their
// intervals, the front's size, the reasons; and it is given only for a full training plan.
TEST(PlanHtmlReportTest, ShowsTheReportsFigures) {
  std::optional<PlanPageInput> page;
  auto r = OptimizeYaml(DefaultJobYaml(), "default", cost::GpuCatalog::BuiltIn(), {}, &page);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(page.has_value());
  const std::string html = RenderPlanHtml(*page);
  const base::Report& report = *r;
  for (const char* side : {"before", "after"}) {
    const base::Report& e = report[side];
    const base::Report& span = e["interval"]["step_time_s"];
    EXPECT_NE(html.find("<td>" + base::FixedNumber(e["step_time_s"].get<double>(), 3) +
                        "<span class=\"aside\">(" + base::FixedNumber(span[0].get<double>(), 3) +
                        "\u2013" + base::FixedNumber(span[1].get<double>(), 3) + ")</span></td>"),
              std::string::npos)
        << side;
    EXPECT_NE(html.find(base::FixedNumber(e["memory_bytes_per_gpu"].get<double>() / 1e9, 1) +
                        " GB</text>"),
              std::string::npos)
        << side;  // the memory bar's total
  }
  const size_t front = report["pareto_front"]["size"].get<size_t>();
  EXPECT_EQ(page->front.size(), front);
  EXPECT_EQ(CountOccurrences(html, "class=\"front\""), front);
  EXPECT_EQ(CountOccurrences(html, "class=\"interval\""), front + 2);
  EXPECT_EQ(CountOccurrences(html, "<li>"), report["reasons"].size());
  for (const auto& line : report["reasons"]) {
    EXPECT_NE(html.find(base::HtmlEscape(line.get<std::string>())), std::string::npos);
  }
  EXPECT_NE(html.find(report["recommendation"].get<std::string>()), std::string::npos);
  EXPECT_EQ(CountOccurrences(html, "<svg"), 3u);

  OptimizeOptions evaluate;
  evaluate.evaluate_only = true;
  ASSERT_TRUE(
      OptimizeYaml(DefaultJobYaml(), "default", cost::GpuCatalog::BuiltIn(), evaluate, &page).ok());
  EXPECT_FALSE(page.has_value());
}

// A job that fits nowhere: the verdict and no charts.
TEST(PlanHtmlReportTest, SaysWhenNoLayoutFits) {
  PlanPageInput in;
  in.job_name = "huge";
  in.model_family = "llama";
  in.gpu = "H100-SXM";
  in.parameters = 400'000'000'000;
  in.gpus = 8;
  in.does_not_fit = "no layout fits in 85899345920 bytes per GPU";
  const std::string html = RenderPlanHtml(in);
  EXPECT_NE(html.find("<span class=\"bad\">No layout fits.</span>"), std::string::npos);
  EXPECT_NE(html.find("no layout fits in 85899345920 bytes"), std::string::npos);
  EXPECT_EQ(CountOccurrences(html, "<svg"), 0u);
}

}  // namespace
}  // namespace seedance::plan
