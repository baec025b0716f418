#include "src/mem/exact_search.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <string_view>
#include <thread>
#include <tuple>

#include "seedance/base/hash.h"
#include "seedance/port/simd_search.h"
#include "src/mem/lane_rounds.h"

namespace seedance::mem::internal {
namespace {

constexpr int64_t kInf = std::numeric_limits<int64_t>::max();

// Keys of the transposition table.
inline uint64_t Mix(uint64_t x) { return base::Mix64(x); }

// Static preorders that break ties between equal canonical offsets, searched
// side by side (one lane each). Each letter is a key, compared descending, in
// this order:
//   W  width: lifetime length in time units
//   A  area: size x width
//   T  total: the largest amount still to place in any section the buffer
//      lives in, when its partition is formed
//   S  the largest load at any time of the buffer's lifetime (all buffers)
//   C  the number of sections the buffer lives in
// The first three are MiniMalloc's defaults; "SCA" solves several of the
// challenging instances (F, H) in a few thousand nodes where those need
// millions (docs/design/mem.md).
constexpr std::string_view kPreorders[] = {"WAT", "TAW", "TWA", "SCA"};

// What every lane reads and none changes: sections, spans, overlaps and the
// preorder keys of one group.
struct Instance {
  Instance(std::span<const int64_t> lowers, std::span<const int64_t> uppers,
           std::span<const int64_t> buffer_sizes, int64_t arena)
      : sizes(buffer_sizes), capacity(arena), n(static_cast<int>(buffer_sizes.size())) {
    std::vector<int64_t> times;
    times.reserve(2 * static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      times.push_back(lowers[i]);
      times.push_back(uppers[i]);
    }
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    sections = static_cast<int>(times.size()) - 1;

    first.resize(n);
    last.resize(n);
    load.assign(sections, 0);
    for (int i = 0; i < n; ++i) {
      first[i] =
          static_cast<int>(std::lower_bound(times.begin(), times.end(), lowers[i]) - times.begin());
      last[i] = static_cast<int>(std::lower_bound(times.begin(), times.end(), uppers[i]) -
                                 times.begin()) -
                1;
      for (int s = first[i]; s <= last[i]; ++s) load[s] += sizes[i];
    }
    // Buffers whose lifetimes intersect, per buffer: a placement raises the
    // canonical offsets of exactly these.
    overlaps.assign(n, {});
    for (int a = 0; a < n; ++a) {
      for (int b = a + 1; b < n; ++b) {
        if (first[a] <= last[b] && first[b] <= last[a]) {
          overlaps[a].push_back(b);
          overlaps[b].push_back(a);
        }
      }
    }
    buffer_key.resize(n);
    for (int i = 0; i < n; ++i) buffer_key[i] = Mix(0xB0FFE5ULL + static_cast<uint64_t>(i));
    floor_mul.resize(sections);
    for (int s = 0; s < sections; ++s) floor_mul[s] = Mix(0x5EC7ULL + static_cast<uint64_t>(s)) | 1;
    width.resize(n);
    area.resize(n);
    max_load.resize(n);
    for (int i = 0; i < n; ++i) {
      max_load[i] = *std::max_element(load.begin() + first[i], load.begin() + last[i] + 1);
      width[i] = static_cast<double>(uppers[i] - lowers[i]);
      area[i] = static_cast<double>(sizes[i]) * width[i];
    }
  }

  std::span<const int64_t> sizes;
  int64_t capacity;
  int n;
  int sections = 0;
  std::vector<int> first, last;  // the sections each buffer lives in
  std::vector<int64_t> load, max_load;
  std::vector<double> width, area;
  std::vector<std::vector<int>> overlaps;
  // Random keys for the transposition table: one per buffer, and per section
  // an odd multiplier that turns its floor into a key (FloorKey).
  std::vector<uint64_t> buffer_key, floor_mul;
};

// Nodes a lane searches in round k: 2^(9 + k), at most 2^14 (a few
// milliseconds), so that an instance one lane settles in a few hundred nodes
// does not wait long for the others.
int64_t SliceNodes(int round) { return int64_t{1} << std::min(9 + round, 14); }

// The depth-first search under one preorder: one lane.
class Search {
 public:
  Search(const Instance& in, std::string_view preorder, SliceGate* gate, bool transpositions)
      : in_(in),
        sizes_(in.sizes),
        capacity_(in.capacity),
        n_(in.n),
        sections_(in.sections),
        first_(in.first),
        last_(in.last),
        overlaps_(in.overlaps),
        buffer_key_(in.buffer_key),
        floor_mul_(in.floor_mul),
        gate_(gate) {
    all_.resize(n_);
    std::iota(all_.begin(), all_.end(), 0);
    if (transpositions) failed_.resize(kFailedSize);
    Reset(preorder);
  }

  enum class Outcome { kFound, kExhausted, kStopped };

  // Searches every group of sections, a slice (SliceNodes) per round.
  Outcome Run() {
    nodes_left_ = SliceNodes(slice_);
    // Independent groups from the start: boundaries no buffer crosses.
    std::vector<int> starts = {0};
    for (int b = 0; b + 1 < sections_; ++b) {
      if (cuts_[b] == 0) starts.push_back(b + 1);
    }
    return SolveRanges(all_, starts, sections_);
  }

  const std::vector<int64_t>& offsets() const { return offsets_; }
  int64_t nodes() const { return nodes_; }
  int64_t transposition_hits() const { return transposition_hits_; }

 private:
  void Reset(std::string_view preorder) {
    preorder_ = preorder;
    floor_.assign(sections_, 0);
    rem_ = in_.load;
    count_.assign(sections_, 0);
    for (int i = 0; i < n_; ++i) {
      for (int s = first_[i]; s <= last_[i]; ++s) ++count_[s];
    }
    placed_.assign(n_, 0);
    offsets_.assign(n_, 0);
    saved_.clear();
    candidates_.clear();
    canonical_.assign(n_, 0);
    canonical_log_.clear();
    canonical_marks_.clear();
    lowest_.assign(sections_, 0);
    stack_.clear();
    cuts_.assign(std::max(sections_ - 1, 0), 0);
    for (int i = 0; i < n_; ++i) {
      for (int s = first_[i]; s < last_[i]; ++s) ++cuts_[s];
    }
  }

  // Dynamic decomposition (as MiniMalloc does): once every buffer that
  // crosses the boundary between two sections is placed, the buffers still
  // to place on either side never meet, so each side is searched on its own
  // and a failure on one side is not retried with other placements of the
  // other. `pool` holds every buffer still to place in these ranges;
  // `starts` the first section of each range, in order; the last range ends
  // at `end`. On success the placements stay; otherwise everything placed
  // here is undone.
  Outcome SolveRanges(const std::vector<int>& pool, const std::vector<int>& starts, int end) {
    const size_t mark = stack_.size();
    for (size_t k = 0; k < starts.size(); ++k) {
      const int lo = starts[k];
      const int hi = k + 1 < starts.size() ? starts[k + 1] : end;
      std::vector<int> members;
      for (int b : pool) {
        if (!placed_[b] && first_[b] < hi && last_[b] >= lo) members.push_back(b);
      }
      if (members.empty()) continue;
      SortByPreorder(members);
      const Outcome o = Dfs(members, lo, hi, 0, -1, false);
      if (o != Outcome::kFound) {
        while (stack_.size() > mark) Unplace(stack_.back());
        return o;
      }
    }
    return Outcome::kFound;
  }

  // Sorts a partition's buffers into the round's preorder (kPreorders), as
  // MiniMalloc does for each partition it forms; ties by buffer index.
  void SortByPreorder(std::vector<int>& members) const {
    std::vector<std::tuple<double, double, double, int>> keys;
    keys.reserve(members.size());
    for (int b : members) {
      const double total = static_cast<double>(
          *std::max_element(rem_.begin() + first_[b], rem_.begin() + last_[b] + 1));
      double k[3] = {0, 0, 0};
      for (int j = 0; j < 3; ++j) {
        switch (preorder_[j]) {
          case 'W':
            k[j] = in_.width[b];
            break;
          case 'A':
            k[j] = in_.area[b];
            break;
          case 'T':
            k[j] = total;
            break;
          case 'S':
            k[j] = static_cast<double>(in_.max_load[b]);
            break;
          case 'C':
            k[j] = last_[b] - first_[b] + 1;
            break;
        }
      }
      keys.emplace_back(k[0], k[1], k[2], b);
    }
    std::sort(keys.begin(), keys.end(), [](const auto& a, const auto& b) {
      if (std::get<0>(a) != std::get<0>(b)) return std::get<0>(a) > std::get<0>(b);
      if (std::get<1>(a) != std::get<1>(b)) return std::get<1>(a) > std::get<1>(b);
      if (std::get<2>(a) != std::get<2>(b)) return std::get<2>(a) > std::get<2>(b);
      return std::get<3>(a) < std::get<3>(b);
    });
    for (size_t k = 0; k < members.size(); ++k) members[k] = std::get<3>(keys[k]);
  }

  // Searches the partition `members` (buffers in preorder, some of them
  // placed deeper in the search), which lives in sections [lo, hi). A
  // buffer's rank is its index in `members`.
  // `entry_checked`: the caller has already made sure that the first test
  // below passes.
  Outcome Dfs(const std::vector<int>& members, int lo, int hi, int64_t low, int last_rank,
              bool entry_checked) {
    ++nodes_;
    if (--nodes_left_ < 0) {
      if (!gate_->NextSlice()) return Outcome::kStopped;
      nodes_left_ = SliceNodes(++slice_);
    }

    // Section inference, first without the unplaced buffers' canonical
    // offsets: what is left to place in a section goes above its highest
    // top and above the last offset placed. On the challenging instances
    // this alone ends most nodes, at a fraction of
    // the cost of the full test below; the parent usually runs it for its
    // children (see the candidate loop). An empty section has nothing left,
    // and no top or offset above the capacity.
    if (!entry_checked) {
      for (int s = lo; s < hi; ++s) {
        if (std::max(floor_[s], low) + rem_[s] > capacity_) return Outcome::kExhausted;
      }
    }

    // Per section, the lowest canonical offset of the buffers still to place
    // there (none of them can start lower). canonical_ is kept up to date by
    // Place/Unplace: the highest top among placed buffers that overlap.
    std::fill(lowest_.begin() + lo, lowest_.begin() + hi, kInf);
    int64_t min_top = kInf;
    bool any = false;
    uint64_t key = Mix((static_cast<uint64_t>(lo) << 32) ^ static_cast<uint64_t>(hi));
    for (int b : members) {
      if (placed_[b]) continue;
      any = true;
      key ^= buffer_key_[b];
      const int64_t y = canonical_[b];
      if (y + sizes_[b] > capacity_) return Outcome::kExhausted;  // nowhere left for b
      min_top = std::min(min_top, y + sizes_[b]);
      if (avx2_) {
        port::Avx2LowerTo(lowest_.data() + first_[b], last_[b] - first_[b] + 1, y);
      } else {
        for (int s = first_[b]; s <= last_[b]; ++s) lowest_[s] = std::min(lowest_[s], y);
      }
    }
    if (!any) return Outcome::kFound;
    int64_t max_rem = 0;  // the most left to place in any section
    for (int s = lo; s < hi; ++s) {
      if (count_[s] == 0) continue;
      const int64_t floor = std::max({floor_[s], lowest_[s], low});
      if (floor + rem_[s] > capacity_) return Outcome::kExhausted;
      max_rem = std::max(max_rem, rem_[s]);
      key ^= FloorKey(s, floor_[s]);
    }

    // Transpositions. What is left of this partition depends only on which
    // of its buffers are still to place and on the floors of its sections
    // (canonical offsets, what is left and the tests above all follow from
    // them), plus two constraints: offsets from `low` on, and at `low` only
    // ranks from `last_rank` on. Different orders of placement reach the
    // same state, e.g. two buffers of one lifetime stacked either way round
    // leave the same tops. A state that failed under some constraints fails
    // again under the same or tighter ones: a higher `low`, or the same
    // `low` when the failure had no rank bound there. bound = 2 low + (rank
    // bound at low ? 1 : 0) orders that; a smaller bound is looser.
    const int64_t bound = 2 * low + (last_rank >= 0 ? 1 : 0);
    Failed* memo = failed_.empty() ? nullptr : &failed_[key & (kFailedSize - 1)];
    if (memo != nullptr && memo->key == key && 2 * low + 1 > memo->bound) {
      ++transposition_hits_;
      return Outcome::kExhausted;
    }

    const size_t base = candidates_.size();
    for (int rank = 0; rank < static_cast<int>(members.size()); ++rank) {
      const int b = members[rank];
      if (placed_[b]) continue;
      const int64_t y = canonical_[b];
      if (y < low || (y == low && rank < last_rank)) continue;  // canonical order
      if (y >= min_top) continue;                               // dominance
      candidates_.push_back({y, rank, b});
    }
    std::sort(candidates_.begin() + base, candidates_.end(),
              [](const Candidate& a, const Candidate& b) {
                return a.offset != b.offset ? a.offset < b.offset : a.rank < b.rank;
              });
    const size_t end = candidates_.size();
    Outcome result = Outcome::kExhausted;
    for (size_t k = base; k < end; ++k) {
      const Candidate c = candidates_[k];
      // A buffer that no unplaced buffer overlaps constrains nobody: when
      // placing it at its canonical offset fails, no other choice here can
      // succeed (MiniMalloc's "hatless" pruning).
      bool hatless = true;
      for (int other : overlaps_[c.buffer]) {
        if (!placed_[other]) {
          hatless = false;
          break;
        }
      }
      // The child's first inference test, done here: after c goes to
      // c.offset, a section in c's span has its top at c.offset + size(c)
      // and size(c) less left, one outside has its top and what is left
      // unchanged (and passed above), and the last offset is c.offset; so
      // the test fails exactly when c.offset + max_rem > capacity. Unless c
      // closes a boundary: then the sides are new partitions, searched from
      // offset 0, and run the test themselves.
      const bool closes = ClosesBoundary(c.buffer);
      if (!closes && c.offset + max_rem > capacity_) {
        if (hatless) break;
        continue;
      }
      Place(c.buffer, c.offset);
      // Boundaries inside c's lifetime that no unplaced buffer crosses any more.
      std::vector<int> starts;
      for (int s = first_[c.buffer]; s < last_[c.buffer]; ++s) {
        if (cuts_[s] == 0) {
          if (starts.empty()) starts.push_back(lo);
          starts.push_back(s + 1);
        }
      }
      const Outcome o = starts.empty() ? Dfs(members, lo, hi, c.offset, c.rank, true)
                                       : SolveRanges(members, starts, hi);
      if (o == Outcome::kFound) {
        candidates_.resize(base);
        return o;  // keep the placements: offsets_ holds them
      }
      Unplace(c.buffer);
      if (o != Outcome::kExhausted) {
        result = o;
        break;
      }
      if (hatless) break;
    }
    candidates_.resize(base);
    if (memo != nullptr && result == Outcome::kExhausted &&
        (memo->key != key || bound < memo->bound)) {
      *memo = {key, bound};
    }
    return result;
  }

  // Placing b would leave some boundary inside its lifetime crossed by no
  // unplaced buffer (b is the last one crossing it).
  bool ClosesBoundary(int b) const {
    for (int s = first_[b]; s < last_[b]; ++s) {
      if (cuts_[s] == 1) return true;
    }
    return false;
  }

  void Place(int b, int64_t offset) {
    placed_[b] = 1;
    offsets_[b] = offset;
    stack_.push_back(b);
    for (int s = first_[b]; s < last_[b]; ++s) --cuts_[s];
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
    stack_.pop_back();
    for (int s = first_[b]; s < last_[b]; ++s) ++cuts_[s];
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
    placed_[b] = 0;
  }

  // The section's floor as a key: scaled by its odd multiplier and folded.
  uint64_t FloorKey(int s, int64_t floor) const {
    const uint64_t x = (static_cast<uint64_t>(floor) ^ 0x5851F42D4C957F2DULL) * floor_mul_[s];
    return x ^ (x >> 29);
  }

  // A failed state of the transposition table: its key and its constraint
  // bound (see Dfs). Direct-mapped, newest wins.
  struct Failed {
    uint64_t key = 0;
    int64_t bound = 0;
  };
  static constexpr size_t kFailedSize = size_t{1} << 16;  // 1 MiB per lane

  struct Candidate {
    int64_t offset;
    int rank;
    int buffer;
  };

  const Instance& in_;  // the preorder keys and loads, read when a partition forms
  std::span<const int64_t> sizes_;
  int64_t capacity_;
  int n_ = 0;
  int sections_ = 0;
  // Copies of the buffers' section spans, which the search reads on every
  // node: its own copies keep them next to its other state.
  std::vector<int> first_, last_;
  const std::vector<std::vector<int>>& overlaps_;
  const std::vector<uint64_t>& buffer_key_;
  const std::vector<uint64_t>& floor_mul_;
  SliceGate* gate_;
  std::string_view preorder_ = kPreorders[0];
  // The span loop of the inference in AVX2 (a large share of the search time).
  const bool avx2_ = port::UseAvx2();

  std::vector<int> all_;  // 0 .. n - 1: the pool of the first partitions
  std::vector<int64_t> floor_, rem_, canonical_, lowest_;
  std::vector<std::pair<int, int64_t>> canonical_log_;  // (buffer, previous canonical offset)
  std::vector<size_t> canonical_marks_;                 // log size before each placement
  std::vector<int> count_;
  std::vector<uint8_t> placed_;  // bytes, not vector<bool>: read on every node
  std::vector<int64_t> offsets_;
  std::vector<int> cuts_;       // per boundary s|s+1: unplaced buffers live on both sides
  std::vector<int> stack_;      // placed buffers, in placement order
  int64_t nodes_left_ = 0;      // in this slice
  int64_t nodes_ = 0;           // in all
  int slice_ = 0;               // slices used up: the round this lane is in
  std::vector<Failed> failed_;  // empty when the table is off
  int64_t transposition_hits_ = 0;
  std::vector<int64_t> saved_;
  std::vector<Candidate> candidates_;
};

}  // namespace

DecisionResult DecideCapacity(std::span<const int64_t> lowers, std::span<const int64_t> uppers,
                              std::span<const int64_t> sizes, int64_t capacity, base::Env* env,
                              int64_t deadline_nanos, const SearchOptions& options) {
  const Instance instance(lowers, uppers, sizes, capacity);
  constexpr size_t kLanes = std::size(kPreorders);
  std::vector<std::vector<int64_t>> offsets(kLanes);
  std::vector<int64_t> nodes(kLanes, 0), hits(kLanes, 0);
  std::vector<LaneJob> jobs;
  for (size_t i = 0; i < kLanes; ++i) {
    jobs.emplace_back([&, i](SliceGate& gate) {
      Search search(instance, kPreorders[i], &gate, options.transpositions);
      const Search::Outcome o = search.Run();
      nodes[i] = search.nodes();
      hits[i] = search.transposition_hits();
      if (o == Search::Outcome::kFound) offsets[i] = search.offsets();
      return static_cast<int>(o);
    });
  }
  const int found = static_cast<int>(Search::Outcome::kFound);
  const int exhausted = static_cast<int>(Search::Outcome::kExhausted);
  const int threads = options.threads > 0
                          ? options.threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // A lane that finishes either found a plan or searched the whole space of
  // its preorder, which settles the question for all of them.
  const auto results = RunInRounds(
      jobs, threads,
      [&](std::span<const std::optional<int>> r) {
        return std::any_of(r.begin(), r.end(), [&](const std::optional<int>& x) {
          // Two different outcomes; the check misreads the optional's comparisons.
          return x == found || x == exhausted;  // NOLINT(misc-redundant-expression)
        });
      },
      [&] { return env->NowMonotonicNanos() > deadline_nanos; });

  DecisionResult result;
  for (int64_t k : nodes) result.nodes += k;
  for (int64_t k : hits) result.transposition_hits += k;
  // The first lane, in preorder order, that found a plan in the deciding round.
  for (size_t i = 0; i < kLanes; ++i) {
    if (results[i] == found) {
      result.decision = Decision::kFound;
      result.offsets = offsets[i];
      for (int b = 0; b < instance.n; ++b) {
        result.peak = std::max(result.peak, result.offsets[b] + sizes[b]);
      }
      return result;
    }
  }
  for (const auto& r : results) {
    if (r == exhausted) result.decision = Decision::kInfeasible;
  }
  return result;
}

}  // namespace seedance::mem::internal
