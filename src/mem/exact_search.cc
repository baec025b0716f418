#include "src/mem/exact_search.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <tuple>

namespace seedance::mem::internal {
namespace {

constexpr int64_t kInf = std::numeric_limits<int64_t>::max();

enum class Preorder { kWidthAreaTotal, kTotalAreaWidth, kTotalWidthArea };
constexpr Preorder kPreorders[] = {Preorder::kWidthAreaTotal, Preorder::kTotalAreaWidth,
                                   Preorder::kTotalWidthArea};

class Search {
 public:
  Search(std::span<const int64_t> lowers, std::span<const int64_t> uppers,
         std::span<const int64_t> sizes, int64_t capacity, base::Env* env, int64_t deadline)
      : sizes_(sizes), capacity_(capacity), env_(env), deadline_(deadline) {
    n_ = static_cast<int>(sizes.size());
    std::vector<int64_t> times;
    times.reserve(2 * n_);
    for (int i = 0; i < n_; ++i) {
      times.push_back(lowers[i]);
      times.push_back(uppers[i]);
    }
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    sections_ = static_cast<int>(times.size()) - 1;
    first_.resize(n_);
    last_.resize(n_);
    load_.assign(sections_, 0);
    for (int i = 0; i < n_; ++i) {
      first_[i] =
          static_cast<int>(std::lower_bound(times.begin(), times.end(), lowers[i]) - times.begin());
      last_[i] = static_cast<int>(std::lower_bound(times.begin(), times.end(), uppers[i]) -
                                  times.begin()) -
                 1;
      for (int s = first_[i]; s <= last_[i]; ++s) load_[s] += sizes[i];
    }
    // Buffers whose lifetimes intersect, per buffer: a placement raises the
    // canonical offsets of exactly these.
    overlaps_.assign(n_, {});
    for (int a = 0; a < n_; ++a) {
      for (int b = a + 1; b < n_; ++b) {
        if (first_[a] <= last_[b] && first_[b] <= last_[a]) {
          overlaps_[a].push_back(b);
          overlaps_[b].push_back(a);
        }
      }
    }
    total_.resize(n_);
    area_.resize(n_);
    for (int i = 0; i < n_; ++i) {
      total_[i] = *std::max_element(load_.begin() + first_[i], load_.begin() + last_[i] + 1);
      area_[i] = static_cast<double>(sizes[i]) * static_cast<double>(uppers[i] - lowers[i]);
    }
  }

  DecisionResult Run() {
    DecisionResult result;
    int64_t budget = n_;
    while (true) {
      budget *= 2;
      for (Preorder p : kPreorders) {
        Reset(p);
        nodes_left_ = budget;
        const Outcome o = Dfs(0, -1);
        result.nodes += budget - nodes_left_;
        if (o == Outcome::kFound) {
          result.decision = Decision::kFound;
          result.offsets = offsets_;
          for (int i = 0; i < n_; ++i) result.peak = std::max(result.peak, offsets_[i] + sizes_[i]);
          return result;
        }
        if (o == Outcome::kTimeout) return result;
        if (o == Outcome::kExhausted) {
          result.decision = Decision::kInfeasible;  // the whole space, under any preorder
          return result;
        }
      }
    }
  }

 private:
  enum class Outcome { kFound, kExhausted, kBudget, kTimeout };

  void Reset(Preorder p) {
    order_.resize(n_);
    std::iota(order_.begin(), order_.end(), 0);
    auto width = [&](int b) { return last_[b] - first_[b]; };
    std::stable_sort(order_.begin(), order_.end(), [&](int a, int b) {
      auto key = [&](int x) {
        switch (p) {
          case Preorder::kWidthAreaTotal:
            return std::make_tuple(static_cast<double>(width(x)), area_[x],
                                   static_cast<double>(total_[x]));
          case Preorder::kTotalAreaWidth:
            return std::make_tuple(static_cast<double>(total_[x]), area_[x],
                                   static_cast<double>(width(x)));
          case Preorder::kTotalWidthArea:
            return std::make_tuple(static_cast<double>(total_[x]), static_cast<double>(width(x)),
                                   area_[x]);
        }
        return std::make_tuple(0.0, 0.0, 0.0);
      };
      return key(a) > key(b);
    });
    rank_.resize(n_);
    for (int k = 0; k < n_; ++k) rank_[order_[k]] = k;
    floor_.assign(sections_, 0);
    rem_ = load_;
    count_.assign(sections_, 0);
    for (int i = 0; i < n_; ++i) {
      for (int s = first_[i]; s <= last_[i]; ++s) ++count_[s];
    }
    placed_.assign(n_, false);
    offsets_.assign(n_, 0);
    placed_count_ = 0;
    saved_.clear();
    candidates_.clear();
    canonical_.assign(n_, 0);
    canonical_log_.clear();
    canonical_marks_.clear();
    lowest_.assign(sections_, 0);
  }

  Outcome Dfs(int64_t low, int last_rank) {
    if (--nodes_left_ < 0) return Outcome::kBudget;
    if ((nodes_left_ & 1023) == 0 && env_->NowMonotonicNanos() > deadline_) {
      return Outcome::kTimeout;
    }
    if (placed_count_ == n_) return Outcome::kFound;

    // Per section, the lowest canonical offset of the buffers still to place
    // there (none of them can start lower). canonical_ is kept up to date by
    // Place/Unplace: the highest top among placed buffers that overlap.
    std::fill(lowest_.begin(), lowest_.end(), kInf);
    int64_t min_top = kInf;
    for (int b = 0; b < n_; ++b) {
      if (placed_[b]) continue;
      const int64_t y = canonical_[b];
      min_top = std::min(min_top, y + sizes_[b]);
      for (int s = first_[b]; s <= last_[b]; ++s) lowest_[s] = std::min(lowest_[s], y);
    }
    for (int s = 0; s < sections_; ++s) {
      if (count_[s] == 0) continue;
      const int64_t floor = std::max({floor_[s], lowest_[s], low});
      if (floor + rem_[s] > capacity_) return Outcome::kExhausted;
    }

    const size_t base = candidates_.size();
    for (int b : order_) {
      if (placed_[b]) continue;
      const int64_t y = canonical_[b];
      if (y < low || (y == low && rank_[b] < last_rank)) continue;  // canonical order
      if (y >= min_top) continue;                                   // dominance
      if (y + sizes_[b] > capacity_) continue;
      candidates_.push_back({y, rank_[b], b});
    }
    std::sort(candidates_.begin() + base, candidates_.end(),
              [](const Candidate& a, const Candidate& b) {
                return a.offset != b.offset ? a.offset < b.offset : a.rank < b.rank;
              });
    const size_t end = candidates_.size();
    Outcome result = Outcome::kExhausted;
    for (size_t k = base; k < end; ++k) {
      const Candidate c = candidates_[k];
      Place(c.buffer, c.offset);
      const Outcome o = Dfs(c.offset, c.rank);
      if (o == Outcome::kFound) return o;  // keep the placement: offsets_ holds it
      Unplace(c.buffer);
      if (o != Outcome::kExhausted) {
        result = o;
        break;
      }
    }
    candidates_.resize(base);
    return result;
  }

  void Place(int b, int64_t offset) {
    placed_[b] = true;
    offsets_[b] = offset;
    ++placed_count_;
    const int64_t top = offset + sizes_[b];
    canonical_marks_.push_back(canonical_log_.size());
    for (int c : overlaps_[b]) {
      if (!placed_[c] && canonical_[c] < top) {
        canonical_log_.emplace_back(c, canonical_[c]);
        canonical_[c] = top;
      }
    }
    for (int s = first_[b]; s <= last_[b]; ++s) {
      saved_.push_back(floor_[s]);
      floor_[s] = offset + sizes_[b];
      rem_[s] -= sizes_[b];
      --count_[s];
    }
  }

  void Unplace(int b) {
    const size_t mark = canonical_marks_.back();
    canonical_marks_.pop_back();
    while (canonical_log_.size() > mark) {
      canonical_[canonical_log_.back().first] = canonical_log_.back().second;
      canonical_log_.pop_back();
    }
    for (int s = last_[b]; s >= first_[b]; --s) {
      floor_[s] = saved_.back();
      saved_.pop_back();
      rem_[s] += sizes_[b];
      ++count_[s];
    }
    placed_[b] = false;
    --placed_count_;
  }

  struct Candidate {
    int64_t offset;
    int rank;
    int buffer;
  };

  std::span<const int64_t> sizes_;
  int64_t capacity_;
  base::Env* env_;
  int64_t deadline_;
  int n_ = 0;
  int sections_ = 0;
  std::vector<int> first_, last_, order_, rank_;
  std::vector<int64_t> load_, total_;
  std::vector<double> area_;
  std::vector<int64_t> floor_, rem_, canonical_, lowest_;
  std::vector<std::vector<int>> overlaps_;
  std::vector<std::pair<int, int64_t>> canonical_log_;  // (buffer, previous canonical offset)
  std::vector<size_t> canonical_marks_;                 // log size before each placement
  std::vector<int> count_;
  std::vector<bool> placed_;
  std::vector<int64_t> offsets_;
  int placed_count_ = 0;
  int64_t nodes_left_ = 0;
  std::vector<int64_t> saved_;
  std::vector<Candidate> candidates_;
};

}  // namespace

DecisionResult DecideCapacity(std::span<const int64_t> lowers, std::span<const int64_t> uppers,
                              std::span<const int64_t> sizes, int64_t capacity, base::Env* env,
                              int64_t deadline_nanos) {
  Search search(lowers, uppers, sizes, capacity, env, deadline_nanos);
  return search.Run();
}

}  // namespace seedance::mem::internal
