#include "seedance/sched/html_report.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "seedance/base/html_chart.h"
#include "seedance/base/testing/text.h"

namespace seedance::sched {
namespace {

using base::testing::CountOccurrences;

HtmlReportInput TwoPolicies() {
  HtmlReportInput in;
  in.nodes_file = "nodes<1>.csv";
  in.pods_file = "pods.csv";
  in.seeds = 3;
  in.node_models = {"V100", "V100", "T4"};
  for (const char* name : {"fgd", "seedance"}) {
    PolicySeries p;
    p.policy = name;
    for (int k = 0; k < 9; ++k) {
      p.alloc_pct_at.push_back(50 + 5.0 * k);
      p.frag_pct_at.push_back(10 - 0.5 * k);
      // Node 0 full, node 1 half, node 2 idle at every mark.
      p.node_gpu_used_at.push_back({1.0F, 0.5F, 0.0F});
    }
    p.unallocated_pct_at_130 = 6.25;
    p.runtime_ms = 12;
    in.policies.push_back(p);
  }
  return in;
}

// The FGD page: a row per policy with the figures at the marks, a line per policy in each chart,
// and per policy a heat map whose cells are the node groups' mean use on the drawn scale.
TEST(SchedHtmlReportTest, FgdPageShowsEveryPolicysFigures) {
  const std::string html = RenderHtmlReport(TwoPolicies());
  EXPECT_EQ(CountOccurrences(html, "<tr>"), 3u);
  EXPECT_EQ(CountOccurrences(html, "<td>75.00</td>"), 2u);  // allocation at 100% arrived (mark 5)
  EXPECT_EQ(CountOccurrences(html, "<td>6.25</td>"), 2u);
  // The spread over seeds, allocation (all marks and from 90%), fragmentation, 2 heat maps.
  EXPECT_EQ(CountOccurrences(html, "<svg"), 6u);
  EXPECT_EQ(CountOccurrences(html, "class=\"series\""), 6u);
  EXPECT_NE(html.find("<code>nodes&lt;1&gt;.csv</code>"), std::string::npos);
  // Two node groups (T4 1-1, V100 1-2) x 9 marks per policy.
  EXPECT_EQ(CountOccurrences(html, "class=\"cell\""), 2u * 2u * 9u);
  base::ColourScale scale{0, 100, "", "#f7fbff", "#08306b", ""};
  const std::regex cell(R"re(fill="(#[0-9a-f]{6})"><title>(\w+) 1-\d at 50%: ([\d.]+)% used)re");
  size_t seen = 0;
  for (std::sregex_iterator it(html.begin(), html.end(), cell), end; it != end; ++it, ++seen) {
    const double used = (*it)[2] == "T4" ? 0.0 : 75.0;  // V100: (100 + 50) / 2
    EXPECT_DOUBLE_EQ(std::stod((*it)[3]), used);
    EXPECT_EQ((*it)[1], base::ScaleColour(scale, used));
  }
  EXPECT_EQ(seen, 4u);
  EXPECT_NE(html.find(">GPU in use</text>"), std::string::npos);  // the colour scale
}

TEST(SchedHtmlReportTest, EventPageHasTablesPerPolicyAndTier) {
  EventReportInput in;
  in.nodes_file = "n.csv";
  in.jobs_file = "j.csv";
  for (const char* name : {"bestfit", "random"}) {
    EventSeries p;
    p.policy = name;
    p.run.jobs = 10;
    p.run.completed = 10;
    p.run.gpu_used_pct_over_time.assign(100, 40.0);
    p.run.groups.push_back({});
    p.run.groups.back().group = "vc<a>";
    p.run.groups.back().jobs = 10;
    p.run.groups.back().slo_attainment_pct = -1;
    in.policies.push_back(p);
  }
  in.policies[1].run.tiers.push_back({});
  const std::string html = RenderEventHtmlReport(in);
  EXPECT_EQ(CountOccurrences(html, "<table"), 4u);  // figures, a group table each, one tier table
  EXPECT_EQ(CountOccurrences(html, "class=\"tiers\""), 1u);
  EXPECT_EQ(CountOccurrences(html, "class=\"series\""), 2u);
  EXPECT_EQ(CountOccurrences(html, "<td>vc&lt;a&gt;</td>"), 2u);
  EXPECT_NE(html.find("<td>-</td>"), std::string::npos);  // no SLO: a dash, not -1
}

}  // namespace
}  // namespace seedance::sched
