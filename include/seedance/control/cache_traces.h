// Synthetic access streams for the cache policies' tests and benchmark (feature CTRL-7):
// shuffled epochs (a DataLoader with shuffle=True) and Zipf draws.
//
// Thread safety: pure functions of their arguments and the generator.
#pragma once

#include <random>
#include <vector>

#include "seedance/control/cache_policy.h"

namespace seedance::control {

// `epochs` epochs over keys 0..n-1, each epoch a new random order.
std::vector<CacheKey> ShuffledEpochsTrace(CacheKey n, int epochs, std::mt19937_64& rng);

// `length` draws from Zipf(s) over keys 0..n-1 (key i has weight 1 / (i + 1)^s).
std::vector<CacheKey> ZipfTrace(size_t length, CacheKey n, double s, std::mt19937_64& rng);

}  // namespace seedance::control
