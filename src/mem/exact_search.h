// Private to src/mem: the exact search of the offline planner over one group
// of buffers whose lifetimes overlap transitively.
//
// Decision form: "is there a placement with peak <= capacity?" The search
// follows MiniMalloc (Moffitt, ASPLOS 2023): time is cut into sections at the
// lifetime endpoints; buffers are placed in non-decreasing offset order, each
// at its canonical offset (the highest top of the placed buffers it overlaps),
// ties broken by a static preorder so that each placement is reached once.
// Pruning, all valid for this canonical order:
//   - section inference: in every section, what is left to place must fit
//     above the section's floor, where the floor is the highest of (a) the
//     tops placed there, (b) the last offset placed (offsets never decrease),
//     (c) the lowest canonical offset of any buffer still to place there;
//   - dominance: no buffer is placed at or above the lowest top that some
//     other unplaced buffer could reach (that buffer would fit in the gap);
//   - dynamic decomposition: once no unplaced buffer crosses a section
//     boundary, each side is searched on its own;
//   - hatless pruning: a failed placement of a buffer that overlaps no
//     unplaced buffer ends the node;
//   - transpositions: a state (the unplaced buffers of a partition and the
//     floors of its sections) that failed before, under the same or looser
//     ordering constraints, fails at once.
// The section inference runs in two stages, the cheap one (without the
// canonical offsets) done by the parent for each child in one comparison.
// Several preorders are searched side by side, one lane each, in lockstep
// rounds of a fixed number of nodes (lane_rounds.h): the question is settled
// by the first round in which some lane finishes, and among the lanes that
// found a plan in that round the first preorder's wins, so the answer does
// not depend on the thread count. (MiniMalloc instead restarts each preorder
// with a node budget that doubles every round; a restarted search repeats
// all the work of the last one.)
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "seedance/base/env.h"

namespace seedance::mem::internal {

enum class Decision { kFound, kInfeasible, kUnknown };

struct DecisionResult {
  Decision decision = Decision::kUnknown;
  std::vector<int64_t> offsets;  // when found
  int64_t peak = 0;              // when found
  int64_t nodes = 0;
  int64_t transposition_hits = 0;  // nodes ended by a remembered failure
};

struct SearchOptions {
  // The lanes run on up to this many threads at once (<= 0: one per
  // hardware thread).
  int threads = 0;
  // Remember failed states and end the nodes that reach them again (the
  // transposition table); off only to test it against the plain search.
  bool transpositions = true;
};

// Searches for offsets with every offset + size <= capacity until found,
// proven impossible, or `deadline_nanos` passes on env's monotonic clock
// (read between rounds, on the calling thread only).
DecisionResult DecideCapacity(std::span<const int64_t> lowers, std::span<const int64_t> uppers,
                              std::span<const int64_t> sizes, int64_t capacity, base::Env* env,
                              int64_t deadline_nanos, const SearchOptions& options);

}  // namespace seedance::mem::internal
