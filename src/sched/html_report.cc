#include "seedance/sched/html_report.h"

#include <algorithm>
#include <map>

#include "seedance/base/html.h"
#include "seedance/base/html_chart.h"
#include "seedance/base/html_page.h"

namespace seedance::sched {
namespace {

using base::FixedNumber;

// The FGD protocol's arrival marks: 50%, 60%, ..., 130% of GPU capacity.
std::vector<double> Marks() {
  std::vector<double> x;
  for (int k = 50; k <= 130; k += 10) x.push_back(k);
  return x;
}

// One line per policy of `field` over the arrival marks from `first` (an index into Marks()).
base::LineChart MarkChart(const std::vector<PolicySeries>& ps,
                          std::vector<double> PolicySeries::*field, std::string title,
                          std::string y_label, size_t first = 0) {
  base::LineChart c;
  c.title = std::move(title);
  c.x = {"arrived GPU demand, % of capacity", {}, "%"};
  c.y = {std::move(y_label), {}, "%"};
  const std::vector<double> marks = Marks();
  for (const PolicySeries& p : ps) {
    const std::vector<double>& y = p.*field;
    c.series.push_back(
        {p.policy, std::vector<double>(marks.begin() + static_cast<int64_t>(first), marks.end()),
         std::vector<double>(y.begin() + static_cast<int64_t>(first), y.end())});
  }
  return c;
}

// Unallocated GPU at 130% arrived per policy: the mean over seeds with its 95% interval, and
// each seed's value beside it, so a difference between policies can be judged against the
// spread of the seeds.
base::ScatterChart SpreadChart(const std::vector<PolicySeries>& ps) {
  base::ScatterChart c;
  c.title = "Unallocated GPU at 130% arrived: mean over seeds, 95% interval, and each seed";
  c.x = {"policy (in the order run)", {0.5, static_cast<double>(ps.size()) + 0.5}, ""};
  c.y = {"unallocated, % of capacity", {}, "%"};
  base::PointGroup seeds{"each seed", "seed", "#9e9e9e", base::Marker::kHollow, 3, false, {}};
  base::PointGroup means{"mean, 95% interval", "mean", "", base::Marker::kFilled, 5, false, {}};
  for (size_t i = 0; i < ps.size(); ++i) {
    const double x = static_cast<double>(i + 1);
    for (double v : ps[i].unallocated_per_seed) {
      seeds.points.push_back({x + 0.15, v, std::nullopt, ps[i].policy + ": " + FixedNumber(v), ""});
    }
    means.points.push_back({x, ps[i].unallocated_pct_at_130, ps[i].unallocated_interval,
                            ps[i].policy + ": " + FixedNumber(ps[i].unallocated_pct_at_130),
                            ps[i].policy});
  }
  c.groups = {seeds, means};
  return c;
}

// Nodes grouped by GPU model, then in chunks of at most `per_row`: one row each.
struct NodeRow {
  std::string label;
  std::vector<size_t> nodes;
};

std::vector<NodeRow> NodeRows(const std::vector<std::string>& models, size_t per_row) {
  std::map<std::string, std::vector<size_t>> by_model;
  for (size_t n = 0; n < models.size(); ++n) by_model[models[n]].push_back(n);
  std::vector<NodeRow> rows;
  for (const auto& [model, nodes] : by_model) {
    for (size_t i = 0; i < nodes.size(); i += per_row) {
      NodeRow r;
      const size_t end = std::min(nodes.size(), i + per_row);
      r.label = (model.empty() ? std::string("CPU") : model) + " " + std::to_string(i + 1) + "-" +
                std::to_string(end);
      r.nodes.assign(nodes.begin() + static_cast<int64_t>(i),
                     nodes.begin() + static_cast<int64_t>(end));
      rows.push_back(std::move(r));
    }
  }
  return rows;
}

// The share of GPU in use per node group (rows) at each arrival mark (columns), first seed.
base::HeatMap UseMap(const PolicySeries& p, const std::vector<std::string>& models) {
  base::HeatMap m;
  m.title = p.policy + ": share of GPU in use per node group, first seed";
  m.row_title = "nodes (GPU model, group)";
  m.column_title = "arrived GPU demand, % of capacity";
  m.scale = {0, 100, "GPU in use", "#f7fbff", "#08306b", "%"};
  m.cell_height = 10;
  m.row_label_every = 4;
  const std::vector<double> marks = Marks();
  for (double mark : marks) m.columns.push_back(FixedNumber(mark, 0) + "%");
  for (const NodeRow& row : NodeRows(models, 32)) {
    m.rows.push_back(row.label);
    std::vector<base::HeatCell> cells;
    for (size_t k = 0; k < marks.size() && k < p.node_gpu_used_at.size(); ++k) {
      double sum = 0;
      for (size_t n : row.nodes) {
        if (n < p.node_gpu_used_at[k].size()) sum += p.node_gpu_used_at[k][n];
      }
      const double used = row.nodes.empty() ? 0 : 100 * sum / static_cast<double>(row.nodes.size());
      cells.push_back({used, "", "", "",
                       row.label + " at " + m.columns[k] + ": " + FixedNumber(used, 1) + "% used"});
    }
    m.cells.push_back(std::move(cells));
  }
  return m;
}

// An input's file name: the page is read on another machine than the paths were.
std::string PageFileName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string Dash(double v, int digits) { return v < 0 ? std::string("-") : FixedNumber(v, digits); }

}  // namespace

std::string RenderHtmlReport(const HtmlReportInput& in) {
  base::HtmlPage page(in.title);
  page.Paragraph({base::Plain("Nodes: "), base::Code(PageFileName(in.nodes_file)),
                  base::Plain("; pods: "), base::Code(PageFileName(in.pods_file)),
                  base::Plain("; " + std::to_string(in.seeds) +
                              " seed(s), FGD protocol (pods shuffled, topped up to 130% of GPU "
                              "capacity, no departures). Figures are means over the seeds.")});
  page.Heading("Figures");
  base::HtmlTable t{"summary",
                    "",
                    {"policy", "allocation % at 100% arrived", "allocation % at 130%",
                     "unallocated GPU % at 130%", "fragmented GPU % at 100%", "run time (ms)"},
                    {}};
  for (const PolicySeries& p : in.policies) {
    t.rows.push_back({p.policy, FixedNumber(p.alloc_pct_at.at(5)),
                      FixedNumber(p.alloc_pct_at.at(8)), FixedNumber(p.unallocated_pct_at_130),
                      FixedNumber(p.frag_pct_at.at(5)), FixedNumber(p.runtime_ms, 0)});
  }
  page.Table(t);
  page.Heading("Spread over seeds");
  page.Chart(base::RenderScatterChart(SpreadChart(in.policies)));
  page.Heading("Allocation");
  page.Chart(base::RenderLineChart(MarkChart(in.policies, &PolicySeries::alloc_pct_at,
                                             "GPU allocation vs arrived demand",
                                             "allocated, % of capacity")));
  // Where the policies part: from 90% arrived on, on its own scale.
  page.Chart(base::RenderLineChart(MarkChart(in.policies, &PolicySeries::alloc_pct_at,
                                             "GPU allocation from 90% arrived, where the policies "
                                             "differ",
                                             "allocated, % of capacity", 4)));
  page.Heading("Fragmentation");
  page.Chart(base::RenderLineChart(MarkChart(in.policies, &PolicySeries::frag_pct_at,
                                             "Fragmented GPU vs arrived demand (FGD's measure)",
                                             "fragmented, % of capacity")));
  page.Heading("GPU use over nodes and time");
  for (const PolicySeries& p : in.policies) {
    if (!p.node_gpu_used_at.empty()) page.Chart(base::RenderHeatMap(UseMap(p, in.node_models)));
  }
  return page.Render();
}

std::string RenderEventHtmlReport(const EventReportInput& in) {
  base::HtmlPage page(in.title);
  page.Paragraph(
      {base::Plain("Nodes: "), base::Code(PageFileName(in.nodes_file)), base::Plain("; jobs: "),
       base::Code(PageFileName(in.jobs_file)),
       base::Plain("; event mode (arrivals and departures at the trace's times). " + in.settings)});
  page.Heading("Figures");
  base::HtmlTable t{"summary",
                    "",
                    {"policy", "jobs", "completed", "JCT p50 (s)", "JCT p99 (s)",
                     "queue delay p50 (s)", "queue delay p99 (s)", "mean GPU use %", "GPU-hours",
                     "preemptions", "cost (on-demand GPU-hours)"},
                    {}};
  for (const EventSeries& p : in.policies) {
    const EventRun& r = p.run;
    t.rows.push_back({p.policy, std::to_string(r.jobs), std::to_string(r.completed),
                      FixedNumber(r.jct_s.p50, 0), FixedNumber(r.jct_s.p99, 0),
                      FixedNumber(r.queue_delay_s.p50, 0), FixedNumber(r.queue_delay_s.p99, 0),
                      FixedNumber(r.mean_gpu_used_pct, 1), FixedNumber(r.gpu_hours, 0),
                      std::to_string(r.preemptions), FixedNumber(r.cost_on_demand_gpu_hours, 0)});
  }
  page.Table(t);
  page.Heading("GPU use over time");
  base::LineChart use;
  use.title = "GPU in use (time-weighted, 100 slices)";
  use.x = {"% of the run", {0, 100}, "%"};
  use.y = {"GPU in use, % of capacity", {0}, "%"};
  for (const EventSeries& p : in.policies) {
    const auto& v = p.run.gpu_used_pct_over_time;
    std::vector<double> x;
    for (size_t i = 0; i < v.size(); ++i) {
      x.push_back(100 * (static_cast<double>(i) + 0.5) / static_cast<double>(v.size()));
    }
    use.series.push_back({p.policy, std::move(x), v});
  }
  page.Chart(base::RenderLineChart(use));
  for (const EventSeries& p : in.policies) {
    page.Heading("Groups: " + p.policy);
    base::HtmlTable groups{
        "",
        "",
        {"group", "jobs", "queue delay p50 (s)", "p90 (s)", "p99 (s)", "SLO attainment %"},
        {}};
    for (const auto& g : p.run.groups) {
      groups.rows.push_back({g.group, std::to_string(g.jobs), FixedNumber(g.queue_delay_s.p50, 0),
                             FixedNumber(g.queue_delay_s.p90, 0),
                             FixedNumber(g.queue_delay_s.p99, 0), Dash(g.slo_attainment_pct, 1)});
    }
    page.Table(groups);
    if (p.run.tiers.empty()) continue;
    page.Heading("QoS tiers: " + p.policy);
    base::HtmlTable tiers{"",
                          "tiers",
                          {"tier", "jobs", "started", "queue delay p50 (s)", "p90 (s)", "p99 (s)",
                           "preemptions", "SLO attainment %", "share time beyond margin %"},
                          {}};
    for (const auto& r : p.run.tiers) {
      tiers.rows.push_back(
          {std::string(TierName(r.tier)), std::to_string(r.jobs), std::to_string(r.started),
           FixedNumber(r.queue_delay_s.p50, 0), FixedNumber(r.queue_delay_s.p90, 0),
           FixedNumber(r.queue_delay_s.p99, 0), std::to_string(r.preemptions),
           Dash(r.slo_attainment_pct, 1),
           r.share_run_s > 0 ? FixedNumber(100 * r.above_margin_s / r.share_run_s, 1) : "-"});
    }
    page.Table(tiers);
  }
  return page.Render();
}

}  // namespace seedance::sched
