// PlanOffsetsForInput (plan_checker.h): lines a plan file up with the input it was made for.
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "seedance/mem/plan_checker.h"

namespace seedance::mem {

namespace {

std::string At(const std::string& file, const LifetimeFile& f, size_t i) {
  return i < f.lines.size() ? file + ":" + std::to_string(f.lines[i]) : file;
}

}  // namespace

base::StatusOr<std::vector<int64_t>> PlanOffsetsForInput(const LifetimeFile& input,
                                                         const std::string& input_file,
                                                         const LifetimeFile& plan,
                                                         const std::string& plan_file) {
  if (!plan.has_offsets)
    return base::InvalidArgumentError("the plan has no 'offset' column", plan_file);
  std::unordered_map<std::string_view, size_t> in_plan;
  in_plan.reserve(plan.buffers.size());
  for (size_t i = 0; i < plan.buffers.size(); ++i) in_plan.emplace(plan.buffers[i].id, i);
  std::vector<int64_t> offsets(input.buffers.size(), 0);
  std::vector<bool> used(plan.buffers.size(), false);
  for (size_t i = 0; i < input.buffers.size(); ++i) {
    const Buffer& b = input.buffers[i];
    auto it = in_plan.find(b.id);
    if (it == in_plan.end()) {
      return base::InvalidArgumentError(
          "the plan has no row for buffer '" + b.id + "' of " + At(input_file, input, i),
          plan_file);
    }
    const size_t j = it->second;
    const Buffer& p = plan.buffers[j];
    for (auto [name, here, there] :
         {std::tuple{"lower", p.lower, b.lower}, std::tuple{"upper", p.upper, b.upper},
          std::tuple{"size", p.size, b.size}}) {
      if (here != there) {
        return base::InvalidArgumentError(
            "buffer '" + b.id + "' has " + name + " " + std::to_string(here) + " here but " +
                std::to_string(there) + " in " + At(input_file, input, i),
            At(plan_file, plan, j));
      }
    }
    offsets[i] = plan.offsets[j];
    used[j] = true;
  }
  for (size_t j = 0; j < plan.buffers.size(); ++j) {
    if (!used[j]) {
      return base::InvalidArgumentError(
          "buffer '" + plan.buffers[j].id + "' is not in the input " + input_file,
          At(plan_file, plan, j));
    }
  }
  return offsets;
}

}  // namespace seedance::mem
