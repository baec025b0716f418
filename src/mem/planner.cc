#include "seedance/mem/planner.h"

#include <algorithm>
#include <numeric>

#include "seedance/base/enum_names.h"
#include "src/mem/exact_search.h"
#include "src/mem/greedy_planner.h"

namespace seedance::mem {

using base::StatusOr;

namespace {

constexpr base::EnumTable<PlanAlgo, 3> kAlgoNames = {
    {{PlanAlgo::kAuto, "auto"}, {PlanAlgo::kGreedy, "greedy"}, {PlanAlgo::kExact, "exact"}}};

}  // namespace

std::string_view PlanAlgoName(PlanAlgo algo) { return base::EnumName(kAlgoNames, algo); }

StatusOr<PlanAlgo> ParsePlanAlgo(std::string_view name) {
  return base::ParseEnum(kAlgoNames, name, "algo");
}

namespace {

int64_t AlignUp(int64_t value, int64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

// Groups of buffers whose lifetimes overlap transitively: consecutive runs
// in start-time order, split where a buffer starts after every earlier one ended.
std::vector<std::vector<size_t>> Components(std::span<const int64_t> lowers,
                                            std::span<const int64_t> uppers) {
  std::vector<size_t> order(lowers.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return lowers[a] < lowers[b]; });
  std::vector<std::vector<size_t>> groups;
  int64_t reach = 0;
  for (size_t i : order) {
    if (groups.empty() || lowers[i] >= reach) groups.emplace_back();
    groups.back().push_back(i);
    reach = std::max(reach, uppers[i]);
  }
  return groups;
}

int64_t Gcd(std::span<const int64_t> values) {
  int64_t g = 0;
  for (int64_t v : values) g = std::gcd(g, v);
  return std::max<int64_t>(g, 1);
}

}  // namespace

StatusOr<Plan> PlanOffsets(std::span<const Buffer> buffers, const PlanOptions& options,
                           base::Env* env) {
  if (options.alignment < 1 || options.alignment > kMaxPlanAlignment) {
    return base::InvalidArgumentError(
        "alignment must be between 1 and 2^30 bytes, got " + std::to_string(options.alignment),
        "alignment");
  }
  if (options.capacity_bytes < 0 || options.capacity_bytes > kMaxArenaBytes) {
    return base::InvalidArgumentError("capacity must be 0 (none) to " +
                                          std::to_string(kMaxArenaBytes) + " bytes, got " +
                                          std::to_string(options.capacity_bytes),
                                      "capacity");
  }
  // A time limit past a day (1e10 s) overflowed the deadline's nanoseconds and turned the exact
  // search off without a word; NaN compared false everywhere.
  if (!(options.time_limit_s >= 0 && options.time_limit_s <= kMaxPlanTimeLimitS)) {
    return base::InvalidArgumentError(
        "time limit must be 0 to 86400 s, got " + std::to_string(options.time_limit_s),
        "time_limit");
  }
  SEEDANCE_RETURN_IF_ERROR(ValidateBuffers(buffers, "plan input"));

  const int64_t t0 = env->NowMonotonicNanos();
  const size_t n = buffers.size();
  std::vector<int64_t> lowers(n), uppers(n), padded(n);
  for (size_t i = 0; i < n; ++i) {
    lowers[i] = buffers[i].lower;
    uppers[i] = buffers[i].upper;
    padded[i] = AlignUp(buffers[i].size, options.alignment);
  }
  auto real_peak = [&](std::span<const int64_t> offsets) {
    int64_t peak = 0;
    for (size_t i = 0; i < n; ++i) peak = std::max(peak, offsets[i] + buffers[i].size);
    return peak;
  };

  Plan plan;
  plan.lower_bound_bytes = MaxLiveBytes(buffers);

  // Greedy: every order; the first always completes, the others only while
  // the time limit lasts.
  // The limit bounds the whole call: keep 2% of it for finishing up.
  const int64_t deadline = t0 + static_cast<int64_t>(options.time_limit_s * 0.98e9);
  auto expired = [&] { return env->NowMonotonicNanos() > deadline; };
  internal::GreedyPlan best;
  int64_t best_peak = 0;  // real sizes
  int64_t best_nanos = t0;
  for (internal::GreedyOrder order : internal::kAllGreedyOrders) {
    // A plan at the lower bound cannot be beaten: stop there.
    if (!best.offsets.empty() && best_peak == plan.lower_bound_bytes) break;
    std::optional<internal::GreedyPlan> g;
    if (order == internal::GreedyOrder::kStart) {
      g = internal::PlaceByStartSweep(lowers, uppers, padded, options.alignment);
    } else {
      const bool first = order == internal::kAllGreedyOrders[0];
      if (!first && expired()) continue;
      g = internal::PlaceGreedy(lowers, uppers, padded, order, options.alignment,
                                first ? std::function<bool()>() : std::function<bool()>(expired));
      if (!g) continue;
    }
    const int64_t peak = real_peak(g->offsets);
    if (best.offsets.empty() || peak < best_peak) {
      best = std::move(*g);
      best_peak = peak;
      plan.algo = "greedy/" + std::string(internal::GreedyOrderName(order));
      best_nanos = env->NowMonotonicNanos();
    }
  }
  plan.offsets = std::move(best.offsets);
  plan.greedy_peak_bytes = best_peak;

  const int64_t arena = options.capacity_bytes;  // 0: minimise the peak
  bool proven = plan.greedy_peak_bytes == plan.lower_bound_bytes;
  const bool fits_already = arena > 0 && plan.greedy_peak_bytes <= arena;
  if (arena > 0 && plan.lower_bound_bytes > arena) plan.proven_impossible = true;
  if (options.algo != PlanAlgo::kGreedy && !proven && !fits_already && !plan.proven_impossible) {
    const int64_t granularity = Gcd(padded);
    struct Group {
      std::vector<size_t> members;
      int64_t peak = 0;         // padded
      bool proven_min = false;  // no plan of this group has a smaller peak
    };
    std::vector<Group> groups;
    for (auto& members : Components(lowers, uppers)) {
      Group g;
      for (size_t i : members) g.peak = std::max(g.peak, plan.offsets[i] + padded[i]);
      g.members = std::move(members);
      groups.push_back(std::move(g));
    }
    std::sort(groups.begin(), groups.end(),
              [](const Group& a, const Group& b) { return a.peak > b.peak; });

    // The global peak is the largest group peak: improve groups from the
    // largest down, never below what an earlier group already needs.
    std::vector<Buffer> padded_buffers(buffers.begin(), buffers.end());
    for (size_t i = 0; i < n; ++i) padded_buffers[i].size = padded[i];
    // With a capacity, any group peak up to it is good enough.
    int64_t target = std::max(MaxLiveBytes(padded_buffers), arena);
    for (Group& g : groups) {
      if (g.peak <= target) continue;  // another group or the bound forces this much
      if (options.algo == PlanAlgo::kAuto &&
          static_cast<int64_t>(g.members.size()) > options.exact_max_buffers) {
        target = std::max(target, g.peak);
        continue;
      }
      if (env->NowMonotonicNanos() >= deadline) break;
      // Input order: the search breaks its last ties by index.
      std::sort(g.members.begin(), g.members.end());
      std::vector<int64_t> lo, up, sz;
      std::vector<Buffer> member_buffers;
      for (size_t i : g.members) {
        lo.push_back(lowers[i]);
        up.push_back(uppers[i]);
        sz.push_back(padded[i]);
        member_buffers.push_back(padded_buffers[i]);
      }
      const int64_t group_bound = MaxLiveBytes(member_buffers);
      const int64_t stop_at = std::max(target, group_bound);
      // Capacities below `proven_lo` are proven infeasible; `soft_lo` also
      // skips those where the search ran out of its share of time.
      int64_t proven_lo = group_bound;
      int64_t soft_lo = stop_at;
      bool first = true;
      while (soft_lo <= g.peak - granularity) {
        const int64_t now = env->NowMonotonicNanos();
        if (now >= deadline) break;
        // First ask for the target itself; then bisect between what is known
        // to fail and the best plan so far.
        int64_t capacity =
            first ? soft_lo
                  : soft_lo + (g.peak - granularity - soft_lo) / 2 / granularity * granularity;
        capacity = std::max(capacity, soft_lo);
        // Most instances are feasible at their bound: give that question three
        // quarters of the time (all of it when it is the capacity question),
        // then bisect with what is left, a third of it per question
        // (docs/design/mem.md).
        const int64_t slice =
            first ? (arena > 0 ? deadline - now : (deadline - now) / 4 * 3) : (deadline - now) / 3;
        first = false;
        internal::DecisionResult r =
            internal::DecideCapacity(lo, up, sz, capacity, env, now + std::max<int64_t>(slice, 1),
                                     {.threads = options.threads});
        plan.search_nodes += r.nodes;
        if (r.decision == internal::Decision::kFound) {
          for (size_t k = 0; k < g.members.size(); ++k) plan.offsets[g.members[k]] = r.offsets[k];
          g.peak = r.peak;
          best_nanos = env->NowMonotonicNanos();
          plan.algo = "exact";
          if (g.peak <= stop_at) break;
        } else {
          if (r.decision == internal::Decision::kInfeasible) {
            proven_lo = std::max(proven_lo, capacity + granularity);
            // Without padding this is the arena question itself: no plan fits.
            if (capacity == arena && options.alignment == 1) {
              plan.proven_impossible = true;
              break;
            }
          }
          if (arena > 0) break;  // the arena question was all that was asked
          soft_lo = capacity + granularity;
        }
      }
      g.proven_min = g.peak <= proven_lo;
      target = std::max(target, g.peak);
    }
    // Optimal when a group that sets the final peak is proven minimal
    // (exact for alignment 1; with padding the search bounds a padded problem).
    int64_t final_peak = 0;
    for (const Group& g : groups) final_peak = std::max(final_peak, g.peak);
    for (const Group& g : groups) {
      if (g.peak == final_peak && g.proven_min && options.alignment == 1) proven = true;
    }
  }
  plan.peak_bytes = n ? real_peak(plan.offsets) : 0;
  plan.capacity_bytes = arena;
  plan.fits = arena == 0 || plan.peak_bytes <= arena;
  plan.optimal = proven || plan.peak_bytes == plan.lower_bound_bytes;
  const int64_t end = env->NowMonotonicNanos();
  plan.solve_ms = static_cast<double>(end - t0) / 1e6;
  plan.time_to_best_ms = static_cast<double>(best_nanos - t0) / 1e6;
  return plan;
}

}  // namespace seedance::mem
