// AVX2 quantizer kernels (see seedance/port/simd_quantize.h).
#include "seedance/port/simd_quantize.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

#define SEEDANCE_AVX2 __attribute__((target("avx2,f16c")))

namespace seedance::port {
namespace {

int8_t QuantizeOne(float x, float inv, int levels) {
  const float r = std::nearbyint(x * inv);
  if (std::isnan(r)) return 0;
  return static_cast<int8_t>(
      std::clamp(r, static_cast<float>(-levels), static_cast<float>(levels)));
}

SEEDANCE_AVX2 inline float HorizontalMax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
}

// Eight int32 codes: rne(x * inv) clamped to [lo, hi], NaN -> 0.
SEEDANCE_AVX2 inline __m256i Codes(const float* p, __m256 inv, __m256 lo, __m256 hi) {
  const __m256 y = _mm256_mul_ps(_mm256_loadu_ps(p), inv);
  __m256 r = _mm256_round_ps(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  r = _mm256_min_ps(_mm256_max_ps(r, lo), hi);
  r = _mm256_and_ps(r, _mm256_cmp_ps(y, y, _CMP_ORD_Q));
  return _mm256_cvtps_epi32(r);
}

}  // namespace

SEEDANCE_AVX2 float Avx2AbsMax(const float* x, size_t n) {
  const __m256 mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  __m256 m0 = _mm256_setzero_ps(), m1 = _mm256_setzero_ps();
  size_t i = 0;
  // max_ps(a, NaN) returns NaN's partner? No: it returns the second operand
  // when either is NaN, so keep the running max second to drop NaNs.
  for (; i + 16 <= n; i += 16) {
    m0 = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(x + i), mask), m0);
    m1 = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(x + i + 8), mask), m1);
  }
  float m = HorizontalMax(_mm256_max_ps(m0, m1));
  for (; i < n; ++i) {
    const float a = std::fabs(x[i]);
    if (a > m) m = a;
  }
  return m;
}

SEEDANCE_AVX2 double Avx2AbsSum(const float* x, size_t n) {
  const __m256 mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  const __m256 inf = _mm256_set1_ps(INFINITY);
  double total = 0;
  size_t i = 0;
  // Float partial sums over blocks of 1024 values, added up in double.
  while (i + 8 <= n) {
    __m256 acc = _mm256_setzero_ps();
    const size_t end = std::min(n - n % 8, i + 1024);
    for (; i < end; i += 8) {
      const __m256 a = _mm256_and_ps(_mm256_loadu_ps(x + i), mask);
      acc = _mm256_add_ps(acc, _mm256_and_ps(a, _mm256_cmp_ps(a, inf, _CMP_LT_OQ)));
    }
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, acc);
    for (float v : lanes) total += v;
  }
  for (; i < n; ++i) {
    if (std::isfinite(x[i])) total += std::fabs(x[i]);
  }
  return total;
}

SEEDANCE_AVX2 void Avx2QuantizeInt8(const float* x, size_t n, float inv_scale, int levels,
                                    int8_t* q) {
  const __m256 inv = _mm256_set1_ps(inv_scale);
  const __m256 hi = _mm256_set1_ps(static_cast<float>(levels));
  const __m256 lo = _mm256_set1_ps(static_cast<float>(-levels));
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i a = Codes(x + i, inv, lo, hi), b = Codes(x + i + 8, inv, lo, hi);
    const __m256i c = Codes(x + i + 16, inv, lo, hi), d = Codes(x + i + 24, inv, lo, hi);
    const __m256i ab = _mm256_packs_epi32(a, b);
    const __m256i cd = _mm256_packs_epi32(c, d);
    const __m256i abcd = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(ab, cd), order);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + i), abcd);
  }
  for (; i < n; ++i) q[i] = QuantizeOne(x[i], inv_scale, levels);
}

SEEDANCE_AVX2 void Avx2PackInt4(const int8_t* q, size_t n, uint8_t* out) {
  const __m256i nibble = _mm256_set1_epi8(0x0F);
  const __m256i weights = _mm256_set1_epi16(0x1001);  // bytes (1, 16): lo + 16 * hi
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m256i a =
        _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + i)), nibble);
    const __m256i b =
        _mm256_and_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + i + 32)), nibble);
    // maddubs: unsigned nibble bytes times signed weights (1, 16), summed in pairs.
    const __m256i pa = _mm256_maddubs_epi16(a, weights);
    const __m256i pb = _mm256_maddubs_epi16(b, weights);
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi16(pa, pb), 0xD8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i / 2), packed);
  }
  for (; i < n; i += 2) {
    const uint8_t lo = static_cast<uint8_t>(q[i]) & 0x0F;
    const uint8_t hi = i + 1 < n ? static_cast<uint8_t>(q[i + 1]) & 0x0F : 0;
    out[i / 2] = static_cast<uint8_t>(lo | (hi << 4));
  }
}

SEEDANCE_AVX2 void Avx2DequantAddInt8(const int8_t* q, size_t n, float scale, float* out) {
  const __m256 s = _mm256_set1_ps(scale);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(q + i));
    const __m256 v = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b));
    _mm256_storeu_ps(out + i, _mm256_add_ps(_mm256_loadu_ps(out + i), _mm256_mul_ps(s, v)));
  }
  for (; i < n; ++i) out[i] += scale * static_cast<float>(q[i]);
}

SEEDANCE_AVX2 void Avx2DequantAddInt4(const uint8_t* packed, size_t n, float scale, float* out) {
  const __m256 s = _mm256_set1_ps(scale);
  const __m128i low = _mm_set1_epi8(0x0F);
  const __m128i eight = _mm_set1_epi8(8);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(packed + i / 2));
    const __m128i lo = _mm_and_si128(b, low);
    const __m128i hi = _mm_and_si128(_mm_srli_epi16(b, 4), low);
    // Interleave to element order, then sign-extend the nibbles: (v ^ 8) - 8.
    __m128i v = _mm_unpacklo_epi8(lo, hi);
    v = _mm_sub_epi8(_mm_xor_si128(v, eight), eight);
    const __m256 f0 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(v));
    const __m256 f1 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(v, 8)));
    _mm256_storeu_ps(out + i, _mm256_add_ps(_mm256_loadu_ps(out + i), _mm256_mul_ps(s, f0)));
    _mm256_storeu_ps(out + i + 8,
                     _mm256_add_ps(_mm256_loadu_ps(out + i + 8), _mm256_mul_ps(s, f1)));
  }
  for (; i < n; ++i) {
    const int v = (packed[i / 2] >> (i % 2 ? 4 : 0)) & 0x0F;
    out[i] += scale * static_cast<float>(v >= 8 ? v - 16 : v);
  }
}

SEEDANCE_AVX2 void Avx2SignBits(const float* x, size_t n, uint8_t* bits) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    bits[i / 8] = static_cast<uint8_t>(_mm256_movemask_ps(_mm256_loadu_ps(x + i)));
  if (i < n) {
    uint8_t b = 0;
    for (size_t j = i; j < n; ++j)
      b |= static_cast<uint8_t>(std::signbit(x[j]) ? 1u << (j - i) : 0);
    bits[i / 8] = b;
  }
}

SEEDANCE_AVX2 void Avx2SignAdd(const uint8_t* bits, size_t n, float value, float* out) {
  const __m256i select = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  const __m256 pos = _mm256_set1_ps(value);
  const __m256 neg = _mm256_set1_ps(-value);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i b = _mm256_set1_epi32(bits[i / 8]);
    const __m256i set = _mm256_cmpeq_epi32(_mm256_and_si256(b, select), select);
    const __m256 v = _mm256_blendv_ps(pos, neg, _mm256_castsi256_ps(set));
    _mm256_storeu_ps(out + i, _mm256_add_ps(_mm256_loadu_ps(out + i), v));
  }
  for (; i < n; ++i) out[i] += ((bits[i / 8] >> (i % 8)) & 1) ? -value : value;
}

}  // namespace seedance::port
