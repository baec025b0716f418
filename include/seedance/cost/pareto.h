// Pareto fronts (feature COST-4): the points of a set that no other point beats, for 1, 2 or 3
// objectives, each maximised or minimised.
//
// Definitions (with every objective turned into "larger is better" by negating minimised ones):
//   q dominates p        (Dominance::kPareto)  iff  q_k >= p_k for every k, and q != p
//   q strictly dominates p (Dominance::kStrict) iff  q_k >  p_k for every k
// The front is the set of points no other point dominates (kPareto: the Pareto-optimal points;
// kStrict: the weakly Pareto-optimal points, a superset). Exact ties: two equal points never
// dominate each other, so every copy of a front point is on the front (keep one with
// UniqueFront); a point equal to another in some objectives is judged by the rest.
//
// Algorithm (Kung, Luccio and Preparata 1975): sort by the first objective, best first, and sweep
// the points in groups of equal first value. Two objectives: the best second value seen in
// earlier groups decides. Three: the earlier groups' (second, third) values are kept as a
// staircase in a balanced tree (std::map: second ascending, third descending), so "is some
// earlier point at least as good in both" is one lower_bound, and inserting a point removes the
// staircase steps it covers (each point enters and leaves once). Inside a group of equal first
// values the same test runs in one dimension less. O(n log n) time, O(n) memory.
// pareto_test.cc checks it against the O(n^2) definition on random sets with many ties;
// bench/cost/pareto_bench.cc times it at 10^6 points.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "seedance/base/status.h"

namespace seedance::cost {

enum class Direction { kMax, kMin };
enum class Dominance { kPareto, kStrict };
// "max" / "min"; "pareto" / "strict".
std::string_view DirectionName(Direction d);
base::StatusOr<Direction> ParseDirection(std::string_view text, std::string_view where);
std::string_view DominanceName(Dominance d);
base::StatusOr<Dominance> ParseDominance(std::string_view text, std::string_view where);

// Indices (ascending) of the front of `points`: point i has objectives
// points[i * d .. i * d + d), d = directions.size() in 1..3.
// Errors: d outside 1..3, points.size() not a multiple of d, a NaN (where: "points[i][k]").
// Infinities are ordinary values (+inf is the best a maximised objective can be).
base::StatusOr<std::vector<size_t>> ParetoFront(std::span<const double> points,
                                                std::span<const Direction> directions,
                                                Dominance dominance = Dominance::kPareto);

// The front with exact duplicates reduced to their first index.
base::StatusOr<std::vector<size_t>> UniqueFront(std::span<const double> points,
                                                std::span<const Direction> directions,
                                                Dominance dominance = Dominance::kPareto);

// The O(n^2 d) definition, any d >= 1: the reference the tests and the benchmark compare with.
std::vector<size_t> ParetoFrontQuadratic(std::span<const double> points,
                                         std::span<const Direction> directions,
                                         Dominance dominance = Dominance::kPareto);

}  // namespace seedance::cost
