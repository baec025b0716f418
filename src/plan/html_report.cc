#include "seedance/plan/html_report.h"

#include <string_view>
#include <utility>

#include "seedance/base/html.h"
#include "seedance/base/html_chart.h"
#include "seedance/base/html_page.h"

namespace seedance::plan {
namespace {

using base::FixedNumber;

std::string Layout(const ParallelConfig& c, int64_t gpus) {
  return "TP " + std::to_string(c.tensor) + ", PP " + std::to_string(c.pipeline) +
         (c.virtual_stages > 1 ? " x" + std::to_string(c.virtual_stages) : "") +
         (c.sequence_parallel ? " + SP" : "") +
         (c.context_parallel > 1 ? ", CP " + std::to_string(c.context_parallel) : "") + ", DP " +
         std::to_string(DataParallel(c, gpus)) + ", ZeRO " + std::to_string(c.zero_stage) +
         ", recompute " + std::string(RecomputeName(c.recompute)) + ", micro-batch " +
         std::to_string(c.micro_batch);
}

std::string Span(const Interval& i, double scale, int digits) {
  return "(" + FixedNumber(i.low / scale, digits) + "\u2013" + FixedNumber(i.high / scale, digits) +
         ")";
}

// One row of the before/after table: a figure, its 90% interval beside it.
struct Figure {
  const char* title;
  double Evaluation::*value;
  Interval EvaluationIntervals::*interval;  // nullptr: none
  double scale;
  int digits;
};

void Summary(base::HtmlPage& page, const PlanPageInput& in) {
  const std::string job = in.model_family + ", " + std::to_string(in.parameters / 1'000'000) +
                          "M parameters on " + std::to_string(in.gpus) + " x " + in.gpu + ". ";
  if (!in.fits) {
    page.Paragraph({base::Plain(job), base::Plain("No layout fits.", "bad"),
                    base::Plain(" " + in.does_not_fit +
                                " (the smallest change that would fit: `does_not_fit` in the "
                                "plan's JSON).")});
    return;
  }
  page.Paragraph({base::Plain(job + "Recommended: "),
                  base::Strong(Layout(in.after.config, in.gpus)), base::Plain(".")});
  base::HtmlTable t{"", "", {"", "before (as stated)", "after (recommended)"}, {}};
  t.rows.push_back(
      {std::string("fits (by the memory interval)"), in.before_memory_fit, in.after_memory_fit});
  const Evaluation* both[] = {&in.before, &in.after};
  {
    std::vector<base::TableCell> row{{"memory per GPU (GB)"}};
    for (const Evaluation* e : both) {
      row.emplace_back(FixedNumber(static_cast<double>(e->memory.total_bytes) / 1e9, 1),
                       Span(e->intervals.memory_bytes_per_gpu, 1e9, 1));
    }
    t.rows.push_back(std::move(row));
  }
  {
    std::vector<base::TableCell> row{{"step time (s)"}};
    for (const Evaluation* e : both) {
      row.emplace_back(FixedNumber(e->time.step_s, 3), Span(e->intervals.step_s, 1, 3));
    }
    t.rows.push_back(std::move(row));
  }
  const Figure figures[] = {
      {"tokens/s per GPU", &Evaluation::tokens_per_s_per_gpu,
       &EvaluationIntervals::tokens_per_s_per_gpu, 1, 1},
      {"MFU", &Evaluation::mfu, &EvaluationIntervals::mfu, 1, 3},
      {"HFU", &Evaluation::hfu, &EvaluationIntervals::hfu, 1, 3},
      {"cost per step (USD)", &Evaluation::cost_per_step_usd, nullptr, 1, 4},
      {"energy per step (kJ)", &Evaluation::energy_per_step_j, nullptr, 1e3, 1}};
  for (const Figure& f : figures) {
    std::vector<base::TableCell> row{{f.title}};
    for (const Evaluation* e : both) {
      row.emplace_back(FixedNumber(e->*f.value / f.scale, f.digits),
                       f.interval ? Span(e->intervals.*f.interval, f.scale, f.digits) : "");
    }
    t.rows.push_back(std::move(row));
  }
  page.Table(t);
  page.Paragraph("Layout before: " + Layout(in.before.config, in.gpus) +
                 ". Figures in brackets: the 90% prediction interval.");
  if (in.saving) {
    const PlanSaving& s = *in.saving;
    page.Paragraph({base::Plain("Saving: " + FixedNumber(s.step_time_pct, 1) +
                                    "% of the step time (90% interval " +
                                    FixedNumber(s.step_time_pct_interval.low, 1) + "\u2013" +
                                    FixedNumber(s.step_time_pct_interval.high, 1) + "%" +
                                    (s.significant ? "" : "; not significant") + "), " +
                                    FixedNumber(s.cost_per_step_usd, 4) + " USD and " +
                                    FixedNumber(s.energy_per_step_j / 1e3, 1) + " kJ per step.",
                                "saving")});
    if (!in.recommendation.empty()) {
      page.Paragraph(
          {base::Plain("Recommendation: "), base::Strong(in.recommendation), base::Plain(".")});
    }
  } else {
    page.Paragraph(in.saving_note);
  }
}

base::BarChart MemoryBars(const PlanPageInput& in) {
  base::BarChart c;
  c.title = "Memory per GPU by term";
  c.css_class = "term";
  c.segment_names = {"model states",         "activations",     "logits",           "temporaries",
                     "fragmentation margin", "runtime reserve", "measured overhead"};
  c.unit_scale = 1e9;
  c.unit = "GB";
  c.digits = 1;
  c.limit = base::ReferenceLine{static_cast<double>(in.gpu_memory_bytes),
                                "capacity " + FixedNumber(in.gpu_memory_bytes / 1e9, 1) + " GB"};
  for (auto [name, e] : {std::pair{"before", &in.before}, std::pair{"after", &in.after}}) {
    const MemoryEstimate& m = e->memory;
    c.rows.push_back(
        {name,
         {static_cast<double>(m.model_state_bytes), static_cast<double>(m.activation_bytes),
          static_cast<double>(m.logits_bytes), static_cast<double>(m.temporary_bytes),
          static_cast<double>(m.fragmentation_bytes), static_cast<double>(m.reserve_bytes),
          static_cast<double>(m.measured_overhead_bytes)},
         ""});
  }
  return c;
}

base::BarChart TimeBars(const PlanPageInput& in) {
  base::BarChart c;
  c.title = "Step time by term";
  c.css_class = "term";
  c.segment_names = {"compute (recompute included)",
                     "tensor-parallel collectives",
                     "pipeline bubble",
                     "pipeline transfers",
                     "data-parallel traffic (exposed)",
                     "optimizer",
                     "optimizer offload (exposed)",
                     "fixed per step"};
  c.unit = "s";
  c.digits = 3;
  for (auto [name, e] : {std::pair{"before", &in.before}, std::pair{"after", &in.after}}) {
    const StepTime& t = e->time;
    c.rows.push_back({name,
                      {t.compute_s, t.tp_comm_s, t.pp_bubble_s, t.pp_p2p_s, t.dp_exposed_s,
                       t.optimizer_s, t.offload_s, t.fixed_s},
                      ""});
  }
  return c;
}

base::ChartPoint PointOf(const Evaluation& e, std::string tooltip, std::string label = {}) {
  return {static_cast<double>(e.memory.total_bytes) / 1e9, e.tokens_per_s_per_gpu,
          std::pair{e.intervals.tokens_per_s_per_gpu.low, e.intervals.tokens_per_s_per_gpu.high},
          std::move(tooltip), std::move(label)};
}

base::ScatterChart Front(const PlanPageInput& in) {
  base::ScatterChart c;
  c.title = "Fitting layouts on the Pareto front";
  c.x = {"memory per GPU (GB)", {0}, ""};
  c.y = {"tokens/s per GPU", {0}, ""};
  c.references.push_back({in.gpu_memory_bytes / 1e9, "GPU memory"});
  base::PointGroup front{"front", "front", "#1f77b4", base::Marker::kFilled, 5, false, {}};
  for (const Evaluation& e : in.front)
    front.points.push_back(PointOf(e, Layout(e.config, in.gpus)));
  base::PointGroup before{"before", "before", "#ff7f0e", base::Marker::kRing, 8, false, {}};
  before.points.push_back(
      PointOf(in.before, "before: " + Layout(in.before.config, in.gpus), "before"));
  base::PointGroup after{"after", "after", "#2ca02c", base::Marker::kRing, 8, false, {}};
  after.points.push_back(PointOf(in.after, "after: " + Layout(in.after.config, in.gpus), "after"));
  c.groups = {std::move(front), std::move(before), std::move(after)};
  return c;
}

}  // namespace

std::string RenderPlanHtml(const PlanPageInput& in) {
  base::HtmlPage page("Seedance plan: " + in.job_name);
  Summary(page, in);
  if (in.fits) {
    page.Heading("Memory per GPU");
    page.Chart(base::RenderBarChart(MemoryBars(in)));
    page.Heading("Step time");
    page.Chart(base::RenderBarChart(TimeBars(in)));
    page.Heading("Pareto front");
    page.Paragraph(std::to_string(in.front.size()) +
                   " fitting layouts are on the front of tokens/s, memory and power (drawn: memory "
                   "against tokens/s, each with its 90% interval of tokens/s; the dashed line is "
                   "the GPU's memory).");
    page.Chart(base::RenderScatterChart(Front(in)));
    page.Heading("Reasons");
    page.List(in.reasons);
  }
  return page.Render();
}

}  // namespace seedance::plan
