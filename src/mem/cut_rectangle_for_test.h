// Test instances for the offline planner: a rectangle [0, horizon) x
// [0, height) cut at random into pieces, each piece a buffer. The pieces
// pack into exactly `height` bytes with no waste, so the optimum is known
// for instances far beyond brute force.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "seedance/mem/lifetime.h"

namespace seedance::mem::testing {

// Up to `pieces` pieces, from at most `tries_per_piece` x `pieces` cuts; one
// cut in `time_one_in` splits a piece in time, the others across (two
// pieces of one lifetime). Pieces are shuffled.
inline std::vector<Buffer> CutRectangle(std::mt19937& rng, int64_t horizon, int64_t height,
                                        int pieces, int time_one_in, int tries_per_piece) {
  struct Piece {
    int64_t t0, t1, y0, y1;
  };
  std::vector<Piece> done = {{0, horizon, 0, height}};
  for (int cut = 0; cut < tries_per_piece * pieces && static_cast<int>(done.size()) < pieces;
       ++cut) {
    const size_t k = rng() % done.size();
    const Piece p = done[k];
    const bool in_time = rng() % static_cast<unsigned>(time_one_in) == 0;
    if (in_time && p.t1 - p.t0 > 1) {
      const int64_t m = p.t0 + 1 + static_cast<int64_t>(rng() % (p.t1 - p.t0 - 1));
      done[k] = {p.t0, m, p.y0, p.y1};
      done.push_back({m, p.t1, p.y0, p.y1});
    } else if (!in_time && p.y1 - p.y0 > 1) {
      const int64_t m = p.y0 + 1 + static_cast<int64_t>(rng() % (p.y1 - p.y0 - 1));
      done[k] = {p.t0, p.t1, p.y0, m};
      done.push_back({p.t0, p.t1, m, p.y1});
    }
  }
  std::shuffle(done.begin(), done.end(), rng);
  std::vector<Buffer> buffers;
  for (const Piece& p : done) {
    buffers.push_back({std::to_string(buffers.size()), p.t0, p.t1, p.y1 - p.y0});
  }
  return buffers;
}

}  // namespace seedance::mem::testing
