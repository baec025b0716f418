// AVX2 kernel of the offline planner's exact search (seedance::mem): the
// inner loop of its section inference.
//
// Thread safety: a pure function over a caller-owned array. Call only when
// port::UseAvx2() (simd.h).
#pragma once

#include <cstdint>

#include "seedance/port/simd.h"

namespace seedance::port {

// a[i] = min(a[i], y) for 0 <= i < n: four 64-bit lanes per compare and
// blend (AVX2 has no 64-bit min), the tail one by one.
void Avx2LowerTo(int64_t* a, int n, int64_t y);

}  // namespace seedance::port
