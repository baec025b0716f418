#include "seedance/base/html_page.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "seedance/base/html_chart.h"

namespace seedance::base {
namespace {

TEST(HtmlPageTest, EscapesTextAndBalancesItsTags) {
  HtmlPage page("Plan <b>&</b>");
  page.Heading("Figures & more");
  page.Paragraph({Plain("run on "), Code("nodes<1>.csv"), Plain(": "), Strong("fits")});
  page.Table({"summary", "", {"policy", "p99"}, {{{"fgd"}, {"1.00", "(0.9-1.1)"}}}});
  page.List({"one <", "two"});
  page.Chart(RenderLineChart({}));
  const std::string html = page.Render();
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<title>Plan &lt;b&gt;&amp;&lt;/b&gt;</title>"), std::string::npos);
  EXPECT_NE(html.find("<code>nodes&lt;1&gt;.csv</code>"), std::string::npos);
  EXPECT_NE(html.find("<span class=\"aside\">(0.9-1.1)</span>"), std::string::npos);
  EXPECT_NE(html.find(">no data</text>"), std::string::npos);
  for (const char* forbidden : {"<script", "<link", "src=", "url(", "https://", "@import"}) {
    EXPECT_EQ(html.find(forbidden), std::string::npos) << forbidden;
  }
  // Every element the kit opens is closed, in order (void elements aside).
  std::vector<std::string> open;
  const std::regex tag(R"re(<(/?)([a-z][a-z0-9]*)[^>]*?(/?)>)re");
  for (std::sregex_iterator it(html.begin(), html.end(), tag), end; it != end; ++it) {
    const std::string name = (*it)[2];
    if (name == "meta" || (*it)[3] == "/") continue;
    if ((*it)[1] == "/") {
      ASSERT_FALSE(open.empty()) << "</" << name << "> closes nothing";
      ASSERT_EQ(open.back(), name);
      open.pop_back();
    } else {
      open.push_back(name);
    }
  }
  EXPECT_TRUE(open.empty());
}

}  // namespace
}  // namespace seedance::base
