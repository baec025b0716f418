// Access streams for the cache policies' tests and benchmark (feature CTRL-7): synthetic ones
// (shuffled epochs, as a DataLoader with shuffle=True reads; Zipf draws) and readers of two
// public trace formats:
//   LIRS     Jiang & Zhang's traces (2_pools, cpp, cs, gli, loop, multi1-3, ps, sprite, ...):
//            text, one non-negative block number per line; a line "*" is the LIRS simulator's
//            checkpoint marker and blank lines are skipped.
//   cache2k  Jens Wilke's traces (web07, web12, orm-busy, orm-night; CC BY 4.0): one 32-bit
//            big-endian unsigned integer per access, nothing else.
//
// Thread safety: pure functions of their arguments and the generator.
#pragma once

#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/status.h"
#include "seedance/control/cache_policy.h"

namespace seedance::control {

// `epochs` epochs over keys 0..n-1, each epoch a new random order.
std::vector<CacheKey> ShuffledEpochsTrace(CacheKey n, int epochs, std::mt19937_64& rng);

// `length` draws from Zipf(s) over keys 0..n-1 (key i has weight 1 / (i + 1)^s).
std::vector<CacheKey> ZipfTrace(size_t length, CacheKey n, double s, std::mt19937_64& rng);

// Errors name `file`, the line (LIRS) or the byte count (cache2k) and what was expected.
base::StatusOr<std::vector<CacheKey>> ParseLirsTrace(std::string_view text,
                                                     const std::string& file);
base::StatusOr<std::vector<CacheKey>> ParseCache2kTrace(std::string_view bytes,
                                                        const std::string& file);
// The canonical encodings (one number and "\n" per access; 4 big-endian bytes per access).
std::string RenderLirsTrace(const std::vector<CacheKey>& keys);
std::string RenderCache2kTrace(const std::vector<CacheKey>& keys);  // keys < 2^32

}  // namespace seedance::control
