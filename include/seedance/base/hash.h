// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014; the
// form Vigna publishes beside xoshiro): the one 64-bit mixer and the one small generator of
// Seedance. Mix64 is its output function applied to x + the golden-ratio increment, a bijection
// on 64-bit keys whose output bits each depend on every input bit; it keys hash tables and
// sketches. SplitMix64 is the generator: state += increment, output Mix of the new state. It is
// fast and passes BigCrush, enough for sampling and rounding noise; it is not cryptographic.
#pragma once

#include <cstdint>

namespace seedance::base {

inline constexpr uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ULL;

// SplitMix64's finaliser of x + kGoldenGamma: Mix64(0) is the generator's first output from 0.
constexpr uint64_t Mix64(uint64_t x) {
  uint64_t z = x + kGoldenGamma;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// The generator: the n-th output from seed s is Mix64(s + (n - 1) kGoldenGamma).
class SplitMix64 {
 public:
  explicit constexpr SplitMix64(uint64_t seed) : state_(seed) {}
  constexpr uint64_t Next() {
    const uint64_t out = Mix64(state_);
    state_ += kGoldenGamma;
    return out;
  }

 private:
  uint64_t state_;
};

}  // namespace seedance::base
