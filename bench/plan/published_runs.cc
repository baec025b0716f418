// The planner against published, measured training runs (issue 20 item 6).
//
//   build/bench/published_runs [bench/plan/published_runs.csv]
//
// Each `run` row is a published configuration with its measured time per iteration; the
// planner evaluates the same layout (Evaluate) and searches the same GPUs (Search, the prod
// profile), and the program reports the error of the predicted step time and the rank of the
// published layout among the layouts the search returns. Each `model_states` row is a published
// per-GPU model-state figure, predicted with ModelStateBytes. Targets (the issue's): model
// states within 0.1 GB; step time within 15% on at least 90% of the rows; the published layout
// among the top 3. Prints one JSON document; the constants are not tuned to any row
// (docs/design/plan.md).
#include <cmath>
#include <cstdio>
#include <string>

#include "seedance/base/csv.h"
#include "seedance/base/env.h"
#include "seedance/base/report.h"
#include "seedance/cost/gpu_catalog.h"
#include "seedance/plan/job_spec.h"
#include "seedance/plan/memory_model.h"
#include "seedance/plan/optimize.h"
#include "seedance/plan/search.h"

namespace {

using seedance::base::CsvRecord;
using seedance::base::CsvTable;
using seedance::base::Report;

std::string Field(const CsvTable& t, const CsvRecord& r, const char* column) {
  return r.fields[*t.Column(column)];
}

// The row as a job spec, so the spec's own parser validates it.
std::string JobYaml(const CsvTable& t, const CsvRecord& r) {
  auto f = [&](const char* c) { return Field(t, r, c); };
  return "name: " + f("id") + "\nmodel:\n  family: " + f("family") + "\n  layers: " + f("layers") +
         "\n  hidden_size: " + f("hidden_size") + "\n  attention_heads: " + f("attention_heads") +
         "\n  kv_heads: " + f("attention_heads") + "\n  ffn_size: " + f("ffn_size") +
         "\n  vocab_size: " + f("vocab_size") + "\n  sequence_length: " + f("sequence_length") +
         "\ntraining:\n  global_batch: " + f("global_batch") +
         "\n  micro_batch: " + f("micro_batch") + "\n  precision: " + f("precision") +
         "\n  optimizer: " + f("optimizer") + "\n  attention: " + f("attention") +
         "\nhardware:\n  gpu: " + f("gpu") + "\n  gpus_per_node: " + f("gpus_per_node") +
         "\n  nodes: " + f("nodes") +
         "\n  interconnect:\n    intra_node: nvlink\n    inter_node: infiniband\n"
         "    inter_node_gbytes_per_s: " +
         f("inter_node_gbytes_per_s") + "\nparallelism:\n  tensor: " + f("tensor") +
         "\n  pipeline: " + f("pipeline") + "\n  virtual_stages: " + f("virtual_stages") +
         "\n  sequence_parallel: " + f("sequence_parallel") + "\n  zero_stage: " + f("zero_stage") +
         "\n  recompute: " + f("recompute") + "\n";
}

int Fail(const seedance::base::Status& s) {
  std::fprintf(stderr, "error: %s\n", s.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  namespace plan = seedance::plan;
  const std::string path = argc > 1 ? argv[1] : "bench/plan/published_runs.csv";
  auto text = seedance::base::Env::Default()->ReadFile(path);
  if (!text.ok()) return Fail(text.status());
  auto table = CsvTable::Parse(*text, path);
  if (!table.ok()) return Fail(table.status());
  const auto& catalog = seedance::cost::GpuCatalog::BuiltIn();
  plan::PlanSettings settings;
  settings.space = plan::SettingsFor(plan::Profile::kProd).space;

  Report rows = Report::array();
  int states = 0, states_ok = 0, runs = 0, runs_ok = 0, top3 = 0;
  for (const CsvRecord& r : table->records()) {
    Report row = Report::object();
    row["id"] = Field(*table, r, "id");
    if (Field(*table, r, "kind") == "model_states") {
      seedance::plan::TrainingSpec t;
      t.precision = *seedance::base::ParseNumericFormat(Field(*table, r, "precision"));
      t.optimizer = Field(*table, r, "optimizer");
      const auto params = table->Int(r, *table->Column("parameters"));
      const auto d = table->Int(r, *table->Column("data_parallel"));
      const auto stage = table->Int(r, *table->Column("zero_stage"));
      for (const auto* field : {&params, &d, &stage}) {
        if (!field->ok()) return Fail(field->status());
      }
      const double gb = static_cast<double>(plan::ModelStateBytes(*params, plan::StateBytesFor(t),
                                                                  static_cast<int>(*stage), *d)) /
                        1e9;
      const double published = std::stod(Field(*table, r, "published_gb_per_gpu"));
      row["predicted_gb"] = gb;
      row["published_gb"] = published;
      row["within_0.1_gb"] = std::fabs(gb - published) <= 0.1;
      ++states;
      states_ok += std::fabs(gb - published) <= 0.1 ? 1 : 0;
    } else {
      auto spec =
          plan::ParseJobSpec(JobYaml(*table, r), path + ":" + std::to_string(r.line), catalog);
      if (!spec.ok()) return Fail(spec.status());
      const auto* gpu = *catalog.Get(spec->hardware.gpu);
      const plan::Evaluation e = plan::Evaluate(*spec, *gpu, spec->parallelism, settings);
      const double published = std::stod(Field(*table, r, "published_step_s"));
      const double error = (e.time.step_s - published) / published * 100;
      const plan::SearchResult found = plan::Search(*spec, *gpu, settings);
      int rank = 0;
      for (size_t i = 0; i < found.fitting.size(); ++i) {
        if (found.fitting[i].config == spec->parallelism) rank = static_cast<int>(i) + 1;
      }
      row["predicted_step_s"] = e.time.step_s;
      row["published_step_s"] = published;
      row["error_pct"] = error;
      row["within_15_pct"] = std::fabs(error) <= 15;
      row["predicted_fits"] = e.memory.fits;
      row["predicted_memory_gb"] = static_cast<double>(e.memory.total_bytes) / 1e9;
      row["rank_of_published_layout"] = rank;  // 0: not among the fitting layouts
      row["layouts_that_fit"] = found.fitting.size();
      row["search_best"] = plan::ParallelismToReport(
          found.fitting.front().config, spec->hardware.total_gpus(), spec->training.global_batch);
      ++runs;
      runs_ok += std::fabs(error) <= 15 ? 1 : 0;
      top3 += rank >= 1 && rank <= 3 ? 1 : 0;
    }
    rows.push_back(row);
  }
  Report out = Report::object();
  out["rows"] = rows;
  out["model_states_within_0.1_gb"] = std::to_string(states_ok) + " of " + std::to_string(states);
  out["step_time_within_15_pct"] = std::to_string(runs_ok) + " of " + std::to_string(runs);
  out["published_layout_in_top_3"] = std::to_string(top3) + " of " + std::to_string(runs);
  std::printf("%s\n", out.dump(1).c_str());
  return 0;
}
