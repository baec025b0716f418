// AVX2 kernel of the exact search (see seedance/port/simd_search.h).
#include "seedance/port/simd_search.h"

#include <immintrin.h>

#define SEEDANCE_AVX2 __attribute__((target("avx2")))

namespace seedance::port {

SEEDANCE_AVX2 void Avx2LowerTo(int64_t* a, int n, int64_t y) {
  const __m256i y4 = _mm256_set1_epi64x(y);
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    auto* p = reinterpret_cast<__m256i*>(a + i);
    const __m256i v = _mm256_loadu_si256(p);
    _mm256_storeu_si256(p, _mm256_blendv_epi8(v, y4, _mm256_cmpgt_epi64(v, y4)));
  }
  for (; i < n; ++i) a[i] = a[i] < y ? a[i] : y;
}

}  // namespace seedance::port
