// `seedancectl optimize --report PAGE.html` (feature CLI-4 for the planner): one self-contained
// page (the page kit, base/html_page.h) drawn from the plan's own typed figures — the
// evaluations its report is written from — so the page and `-o json` never disagree.
//
// Sections: the verdict and before/after side by side (memory, step time, tokens/s, MFU, cost
// and energy per step, each with its 90% interval; the saving); the memory per GPU of before and
// after as stacked bars by term against the GPU's capacity; the step time as stacked bars by
// term (the terms add up to the step time); the Pareto front of the fitting layouts (memory per
// GPU against tokens/s per GPU, each point with its interval of tokens/s; before and after
// marked; the GPU's memory as a line); the reasons.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "seedance/plan/search.h"

namespace seedance::plan {

// The saving of `after` over `before`.
struct PlanSaving {
  double step_time_pct = 0;
  Interval step_time_pct_interval;  // 90%
  bool significant = false;
  double cost_per_step_usd = 0;
  double energy_per_step_j = 0;
};

// What the page shows of a training job's full plan (Optimize fills it).
struct PlanPageInput {
  std::string job_name, model_family, gpu;
  int64_t parameters = 0;
  int64_t gpus = 0;
  int64_t gpu_memory_bytes = 0;
  Evaluation before;
  std::string before_memory_fit;  // MemoryFitName's
  bool fits = false;              // some layout fits
  std::string does_not_fit;       // why not, when none does
  Evaluation after;               // the recommended layout (with fits)
  std::string after_memory_fit;
  std::string recommendation;
  std::optional<PlanSaving> saving;  // none when the stated layout does not run
  std::string saving_note;           // why there is none
  std::vector<Evaluation> front;     // the Pareto front of the fitting layouts
  std::vector<std::string> reasons;
};

std::string RenderPlanHtml(const PlanPageInput& input);

}  // namespace seedance::plan
