#include "seedance/plan/recompute.h"

#include <algorithm>
#include <limits>
#include <memory>

namespace seedance::plan {
namespace {

struct Mask {
  uint32_t bits = 0;
  int64_t kept = 0;     // the layer's bytes kept with this choice (input included)
  int64_t dropped = 0;  // the layer's bytes dropped (live again while it is recomputed)
  double seconds = 0;
};

std::vector<Mask> MasksOf(const LayerActivations& layer) {
  const size_t n = layer.parts.size();
  std::vector<Mask> out;
  for (uint32_t bits = 0; bits < (1u << n); ++bits) {
    Mask m{.bits = bits, .kept = layer.kept_bytes};
    for (size_t p = 0; p < n; ++p) {
      if (bits & (1u << p)) {
        m.dropped += layer.parts[p].bytes;
        m.seconds += layer.parts[p].recompute_s;
      } else {
        m.kept += layer.parts[p].bytes;
      }
    }
    out.push_back(m);
  }
  return out;
}

// A state of the dynamic program: the layers so far kept `kept` bytes at `seconds` of
// recomputation; `parent` and `bits` rebuild the choice.
struct Node {
  int64_t kept;
  double seconds;
  std::shared_ptr<const Node> parent;
  uint32_t bits;
};
using State = std::shared_ptr<const Node>;

// The states no other state dominates (no more bytes and no more seconds), by bytes ascending.
std::vector<State> Staircase(std::vector<State> states) {
  std::sort(states.begin(), states.end(), [](const State& a, const State& b) {
    return a->kept != b->kept ? a->kept < b->kept : a->seconds < b->seconds;
  });
  std::vector<State> out;
  double best = std::numeric_limits<double>::infinity();
  for (State& s : states) {
    if (s->seconds < best) {
      best = s->seconds;
      out.push_back(std::move(s));
    }
  }
  return out;
}

}  // namespace

RecomputePlan CostOfChoice(const std::vector<LayerActivations>& layers,
                           const std::vector<std::vector<std::string>>& dropped) {
  RecomputePlan plan;
  plan.dropped = dropped;
  int64_t largest = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    int64_t drop = 0;
    plan.bytes += layers[i].kept_bytes;
    for (const DroppablePart& part : layers[i].parts) {
      const bool is_dropped = i < dropped.size() && std::find(dropped[i].begin(), dropped[i].end(),
                                                              part.name) != dropped[i].end();
      if (is_dropped) {
        drop += part.bytes;
        plan.recompute_s += part.recompute_s;
      } else {
        plan.bytes += part.bytes;
      }
    }
    largest = std::max(largest, drop);
  }
  plan.bytes += largest;
  return plan;
}

base::StatusOr<RecomputePlan> PlanRecompute(const std::vector<LayerActivations>& layers,
                                            int64_t budget_bytes) {
  std::vector<std::vector<Mask>> masks;
  std::vector<int64_t> caps = {0};  // candidate bounds on one layer's dropped bytes
  for (size_t i = 0; i < layers.size(); ++i) {
    if (layers[i].parts.size() > 16) {
      return base::InvalidArgumentError("at most 16 droppable parts per layer",
                                        "layers[" + std::to_string(i) + "].parts");
    }
    for (const DroppablePart& p : layers[i].parts) {
      if (p.bytes < 0 || p.recompute_s < 0) {
        return base::InvalidArgumentError("bytes and seconds must be >= 0",
                                          "layers[" + std::to_string(i) + "]." + p.name);
      }
    }
    masks.push_back(MasksOf(layers[i]));
    for (const Mask& m : masks.back()) caps.push_back(m.dropped);
  }
  std::sort(caps.begin(), caps.end());
  caps.erase(std::unique(caps.begin(), caps.end()), caps.end());

  // For each bound D on a layer's dropped bytes (the largest one the optimum drops is among
  // them), the (kept, seconds) staircase over layers whose choices drop at most D; memory is
  // kept + D. The fewest-bytes answer is kept for the does-not-fit report.
  bool found = false;
  double best_seconds = std::numeric_limits<double>::infinity();
  int64_t best_bytes = std::numeric_limits<int64_t>::max();
  State best_state;
  for (int64_t cap : caps) {
    std::vector<State> states = {std::make_shared<const Node>(Node{0, 0.0, nullptr, 0})};
    for (const auto& layer_masks : masks) {
      std::vector<State> next;
      for (const State& s : states) {
        for (const Mask& m : layer_masks) {
          if (m.dropped > cap) continue;
          next.push_back(std::make_shared<const Node>(
              Node{s->kept + m.kept, s->seconds + m.seconds, s, m.bits}));
        }
      }
      states = Staircase(std::move(next));
    }
    for (const State& s : states) {
      const int64_t bytes = s->kept + cap;
      const bool fits = bytes <= budget_bytes;
      const bool better = fits ? (!found || s->seconds < best_seconds ||
                                  (s->seconds == best_seconds && bytes < best_bytes))
                               : (!found && bytes < best_bytes);
      if (better) {
        found = found || fits;
        best_seconds = s->seconds;
        best_bytes = bytes;
        best_state = s;
      }
    }
  }
  std::vector<std::vector<std::string>> dropped(layers.size());
  State s = best_state;
  for (size_t i = layers.size(); i-- > 0 && s;) {
    for (size_t p = 0; p < layers[i].parts.size(); ++p) {
      if (s->bits & (1u << p)) dropped[i].push_back(layers[i].parts[p].name);
    }
    s = s->parent;
  }
  RecomputePlan plan = CostOfChoice(layers, dropped);
  plan.fits = plan.bytes <= budget_bytes;
  return plan;
}

base::Report RecomputePlanToReport(const RecomputePlan& plan) {
  base::Report r = base::Report::object();
  r["fits"] = plan.fits;
  r["activation_bytes"] = plan.bytes;
  r["recompute_s"] = plan.recompute_s;
  base::Report layers = base::Report::array();
  for (const auto& d : plan.dropped) layers.push_back(d);
  r["dropped_per_layer"] = layers;
  return r;
}

}  // namespace seedance::plan
