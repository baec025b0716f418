#include "seedance/cost/pareto.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>

#include "seedance/base/enum_names.h"

namespace seedance::cost {
namespace {

constexpr base::EnumTable<Direction, 2> kDirectionNames = {
    {{Direction::kMax, "max"}, {Direction::kMin, "min"}}};
constexpr base::EnumTable<Dominance, 2> kDominanceNames = {
    {{Dominance::kPareto, "pareto"}, {Dominance::kStrict, "strict"}}};

// A point with every objective turned into "larger is better".
struct Point {
  double v[3] = {0, 0, 0};
  size_t index = 0;
};

// Marks, among `group` (points that tie on every objective before `first`), those dominated
// inside the group on objectives first and first + 1 (the 2-objective sweep). Only kPareto needs
// it: a tie on an objective rules strict dominance out.
void MarkDominatedInGroup2(std::vector<Point>& group, int first, std::vector<char>& dominated) {
  std::sort(group.begin(), group.end(),
            [first](const Point& a, const Point& b) { return a.v[first] > b.v[first]; });
  bool have_prev = false;
  double best_prev = 0;  // the best second objective among points with a larger first
  for (size_t i = 0; i < group.size();) {
    size_t j = i;
    double group_best = group[i].v[first + 1];
    while (j + 1 < group.size() && group[j + 1].v[first] == group[i].v[first]) {
      ++j;
      group_best = std::max(group_best, group[j].v[first + 1]);
    }
    for (size_t k = i; k <= j; ++k) {
      const double b = group[k].v[first + 1];
      if ((have_prev && best_prev >= b) || b < group_best) dominated[group[k].index] = 1;
    }
    best_prev = have_prev ? std::max(best_prev, group_best) : group_best;
    have_prev = true;
    i = j + 1;
  }
}

// The staircase of the points seen so far in (second, third): keys ascending, values strictly
// descending; no entry is weakly dominated by another.
class Staircase {
 public:
  // Some point with second >= a and third >= b (or_equal) / second > a and third > b.
  bool Covers(double a, double b, bool or_equal) const {
    auto it = or_equal ? steps_.lower_bound(a) : steps_.upper_bound(a);
    if (it == steps_.end()) return false;
    return or_equal ? it->second >= b : it->second > b;
  }
  void Insert(double a, double b) {
    if (Covers(a, b, /*or_equal=*/true)) return;
    auto it = steps_.lower_bound(a);  // the first key >= a; its value is < b
    if (it != steps_.end() && it->first == a) it = steps_.erase(it);
    while (it != steps_.begin()) {
      auto prev = std::prev(it);
      if (prev->second > b) break;
      steps_.erase(prev);
    }
    steps_.emplace_hint(it, a, b);
  }

 private:
  std::map<double, double> steps_;
};

base::Status Validate(std::span<const double> points, std::span<const Direction> directions) {
  const size_t d = directions.size();
  if (d < 1 || d > 3) {
    return base::InvalidArgumentError("expected 1, 2 or 3 objectives, got " + std::to_string(d),
                                      "directions");
  }
  if (points.size() % d != 0) {
    return base::InvalidArgumentError("expected " + std::to_string(d) + " values per point, got " +
                                          std::to_string(points.size()) + " values in all",
                                      "points");
  }
  for (size_t i = 0; i < points.size(); ++i) {
    if (std::isnan(points[i])) {
      return base::InvalidArgumentError(
          "expected a number, got NaN",
          "points[" + std::to_string(i / d) + "][" + std::to_string(i % d) + "]");
    }
  }
  return base::OkStatus();
}

std::vector<Point> Normalised(std::span<const double> points,
                              std::span<const Direction> directions) {
  const size_t d = directions.size();
  std::vector<Point> out(points.size() / d);
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].index = i;
    for (size_t k = 0; k < d; ++k) {
      const double v = points[i * d + k];
      out[i].v[k] = directions[k] == Direction::kMax ? v : -v;
    }
  }
  return out;
}

}  // namespace

std::string_view DirectionName(Direction d) { return base::EnumName(kDirectionNames, d); }
base::StatusOr<Direction> ParseDirection(std::string_view text, std::string_view where) {
  return base::ParseEnum(kDirectionNames, text, where);
}
std::string_view DominanceName(Dominance d) { return base::EnumName(kDominanceNames, d); }
base::StatusOr<Dominance> ParseDominance(std::string_view text, std::string_view where) {
  return base::ParseEnum(kDominanceNames, text, where);
}

base::StatusOr<std::vector<size_t>> ParetoFront(std::span<const double> points,
                                                std::span<const Direction> directions,
                                                Dominance dominance) {
  SEEDANCE_RETURN_IF_ERROR(Validate(points, directions));
  const size_t d = directions.size();
  std::vector<Point> p = Normalised(points, directions);
  std::vector<char> dominated(p.size(), 0);
  const bool pareto = dominance == Dominance::kPareto;

  if (d == 1) {
    double best = -std::numeric_limits<double>::infinity();
    for (const Point& q : p) best = std::max(best, q.v[0]);
    for (const Point& q : p) dominated[q.index] = q.v[0] < best;
  } else {
    std::sort(p.begin(), p.end(), [](const Point& a, const Point& b) { return a.v[0] > b.v[0]; });
    Staircase stairs;        // d == 3: earlier groups
    bool have_prev = false;  // d == 2: earlier groups
    double best_prev = 0;
    std::vector<Point> group;
    for (size_t i = 0; i < p.size();) {
      size_t j = i;
      while (j + 1 < p.size() && p[j + 1].v[0] == p[i].v[0]) ++j;
      // Against the earlier groups (a strictly better first objective).
      for (size_t k = i; k <= j; ++k) {
        const Point& q = p[k];
        const bool beaten = d == 2
                                ? have_prev && (pareto ? best_prev >= q.v[1] : best_prev > q.v[1])
                                : stairs.Covers(q.v[1], q.v[2], pareto);
        if (beaten) dominated[q.index] = 1;
      }
      // Inside the group (an equal first objective): the sweep one dimension down.
      if (pareto && j > i) {
        group.assign(p.begin() + static_cast<ptrdiff_t>(i),
                     p.begin() + static_cast<ptrdiff_t>(j) + 1);
        if (d == 2) {
          double group_best = group[0].v[1];
          for (const Point& q : group) group_best = std::max(group_best, q.v[1]);
          for (const Point& q : group) {
            if (q.v[1] < group_best) dominated[q.index] = 1;
          }
        } else {
          MarkDominatedInGroup2(group, 1, dominated);
        }
      }
      for (size_t k = i; k <= j; ++k) {
        if (d == 2) {
          best_prev = have_prev ? std::max(best_prev, p[k].v[1]) : p[k].v[1];
          have_prev = true;
        } else {
          stairs.Insert(p[k].v[1], p[k].v[2]);
        }
      }
      i = j + 1;
    }
  }
  std::vector<size_t> front;
  for (size_t i = 0; i < dominated.size(); ++i) {
    if (!dominated[i]) front.push_back(i);
  }
  return front;
}

base::StatusOr<std::vector<size_t>> UniqueFront(std::span<const double> points,
                                                std::span<const Direction> directions,
                                                Dominance dominance) {
  SEEDANCE_ASSIGN_OR_RETURN(std::vector<size_t> front, ParetoFront(points, directions, dominance));
  const size_t d = directions.size();
  auto row = [&](size_t i) { return points.subspan(i * d, d); };
  std::vector<size_t> order = front;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::lexicographical_compare(row(a).begin(), row(a).end(), row(b).begin(), row(b).end());
  });
  std::vector<size_t> unique;
  for (size_t k = 0; k < order.size(); ++k) {
    if (k > 0 &&
        std::equal(row(order[k]).begin(), row(order[k]).end(), row(order[k - 1]).begin())) {
      continue;  // the stable sort keeps the first index of equal rows first
    }
    unique.push_back(order[k]);
  }
  std::sort(unique.begin(), unique.end());
  return unique;
}

std::vector<size_t> ParetoFrontQuadratic(std::span<const double> points,
                                         std::span<const Direction> directions,
                                         Dominance dominance) {
  const size_t d = directions.size();
  const size_t n = d == 0 ? 0 : points.size() / d;
  auto value = [&](size_t i, size_t k) {
    const double v = points[i * d + k];
    return directions[k] == Direction::kMax ? v : -v;
  };
  std::vector<size_t> front;
  for (size_t i = 0; i < n; ++i) {
    bool beaten = false;
    for (size_t j = 0; j < n && !beaten; ++j) {
      if (j == i) continue;
      bool all_ge = true, all_gt = true, some_gt = false;
      for (size_t k = 0; k < d; ++k) {
        const double a = value(j, k), b = value(i, k);
        all_ge = all_ge && a >= b;
        all_gt = all_gt && a > b;
        some_gt = some_gt || a > b;
      }
      beaten = dominance == Dominance::kPareto ? all_ge && some_gt : all_gt;
    }
    if (!beaten) front.push_back(i);
  }
  return front;
}

}  // namespace seedance::cost
