// Spot capacity (feature SCHED-6; event_sim.h gives the model) as a filter plugin and an event
// source (private to seedance::sched).
//
//   SpotCapacity  which nodes are spot and which are reclaimed now; the reclaim times, a
//                 Poisson process of `interruptions_per_day` per spot node on a generator of
//                 its own (seeded), and the recovery time of a reclaimed node.
//   SpotFilter    passes no reclaimed node, and, while a job tries spot capacity first
//                 (set_spot_only), no on-demand node.
//
// Thread safety: one scheduling loop.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "seedance/sched/framework.h"
#include "seedance/sched/model.h"

namespace seedance::sched {

struct SpotOptions {
  double interruptions_per_day = 0;  // per spot node; 0: never reclaimed
  double recovery_s = 600;           // a reclaimed node is away this long
  uint64_t seed = 42;
};

class SpotCapacity {
 public:
  SpotCapacity(const std::vector<Node>& nodes, const SpotOptions& options);

  bool any() const { return any_; }
  bool reclaims() const { return options_.interruptions_per_day > 0; }
  bool is_spot(size_t node) const { return spot_[node] != 0; }
  bool down(size_t node) const { return down_[node] != 0; }
  void set_down(size_t node, bool down) { down_[node] = down; }
  bool spot_only() const { return spot_only_; }
  void set_spot_only(bool on) { spot_only_ = on; }

  // The time from now to a node's next reclaim (one draw of the spot generator).
  double NextGap();
  double recovery_s() const { return options_.recovery_s; }

 private:
  SpotOptions options_;
  std::vector<char> spot_, down_;
  bool any_ = false;
  bool spot_only_ = false;
  std::mt19937_64 rng_;
  std::exponential_distribution<double> gap_;
};

std::unique_ptr<FilterPlugin> MakeSpotFilter(const SpotCapacity* spot);

}  // namespace seedance::sched
