// AVX2 kernels of the quantized KV cache (see seedance/port/simd_kv.h).
#include "seedance/port/simd_kv.h"

#include <immintrin.h>

#define SEEDANCE_AVX2 __attribute__((target("avx2,fma")))

namespace seedance::port {

namespace {

// Sum and maximum of a vector's 8 lanes.
SEEDANCE_AVX2 inline float HorizontalSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}
SEEDANCE_AVX2 inline float HorizontalMax(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_max_ss(s, _mm_movehdup_ps(s)));
}

}  // namespace

SEEDANCE_AVX2 float Avx2DotF32(const float* a, const float* b, int n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  int i = 0;
  for (; i + 32 <= n; i += 32) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
    s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
    s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
  }
  for (; i + 8 <= n; i += 8) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
  }
  float sum = HorizontalSum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

SEEDANCE_AVX2 void Avx2AccumulateCodes8(const uint8_t* codes, int n, float a, float b, float* out) {
  const __m256 va = _mm256_set1_ps(a), vb = _mm256_set1_ps(b);
  int j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes + j));
    const __m256 x = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes));
    _mm256_storeu_ps(out + j, _mm256_add_ps(_mm256_loadu_ps(out + j), _mm256_fmadd_ps(va, x, vb)));
  }
  for (; j < n; ++j) out[j] += a * static_cast<float>(codes[j]) + b;
}

SEEDANCE_AVX2 void Avx2AccumulateCodes4(const uint8_t* codes, int n, float a, float b, float* out) {
  const __m256 va = _mm256_set1_ps(a), vb = _mm256_set1_ps(b);
  const __m128i low4 = _mm_set1_epi8(0x0F);
  int j = 0;
  for (; j + 16 <= n; j += 16) {
    // 8 bytes, 16 codes: the low and high nibbles interleaved back into code order.
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes + j / 2));
    const __m128i lo = _mm_and_si128(bytes, low4);
    const __m128i hi = _mm_and_si128(_mm_srli_epi16(bytes, 4), low4);
    const __m128i ordered = _mm_unpacklo_epi8(lo, hi);
    const __m256 x0 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(ordered));
    const __m256 x1 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(ordered, 8)));
    _mm256_storeu_ps(out + j, _mm256_add_ps(_mm256_loadu_ps(out + j), _mm256_fmadd_ps(va, x0, vb)));
    _mm256_storeu_ps(out + j + 8,
                     _mm256_add_ps(_mm256_loadu_ps(out + j + 8), _mm256_fmadd_ps(va, x1, vb)));
  }
  for (; j < n; ++j) {
    const int code = (codes[j / 2] >> (4 * (j % 2))) & 0xF;
    out[j] += a * static_cast<float>(code) + b;
  }
}

SEEDANCE_AVX2 void Avx2Scores4BitPairs(const uint8_t* codes, int channels, const float* q,
                                       const float* scale, const float* min, float* out) {
  // Setup, 8 channels a step: coef = q x scale, its largest magnitude, and
  // bias = sum q x min. A tight loop of its own, so that every scale and min
  // line is in flight before the codes are read.
  alignas(32) float coef[256];
  __m256 bias8 = _mm256_setzero_ps(), max8 = _mm256_setzero_ps();
  const __m256 sign = _mm256_set1_ps(-0.0f);
  for (int c = 0; c < channels; c += 8) {
    const __m256 qc = _mm256_loadu_ps(q + c);
    const __m256 k = _mm256_mul_ps(qc, _mm256_loadu_ps(scale + c));
    _mm256_store_ps(coef + c, k);
    max8 = _mm256_max_ps(max8, _mm256_andnot_ps(sign, k));
    bias8 = _mm256_fmadd_ps(qc, _mm256_loadu_ps(min + c), bias8);
  }
  // coef16_c = rne(coef_c / s), s = max |coef| / 32767; the pair (c, c + 1)
  // as one 32-bit word, low half c -- the order vpmaddwd pairs them in.
  const float max_coef = HorizontalMax(max8);
  const float s = max_coef > 0 ? max_coef / 32767.0f : 0.0f;
  const __m256 inv = _mm256_set1_ps(max_coef > 0 ? 32767.0f / max_coef : 0.0f);
  alignas(32) int32_t pairs[128];
  for (int c = 0; c < channels; c += 8) {
    const __m256i v = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_load_ps(coef + c), inv));
    _mm_store_si128(reinterpret_cast<__m128i*>(pairs + c / 2),
                    _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
  }
  // Main loop, one channel pair (8 words, 64 codes) a step. In each 16-bit
  // half (one channel's tokens 4i .. 4i + 3) let n_k be nibble k. Four views,
  // each one integer operation, go through vpmaddwd (both channels' coef16 x
  // view into lane i):
  //   lo  = half & 0x00FF  = n0 + 16 n1      hi  = half >> 8  = n2 + 16 n3
  //   n1x = half & 0x00F0  = 16 n1           n3  = half >> 12
  // and the four token sums come out exactly in integers at the end:
  // S0 = lo - n1x, S1 = n1x / 16, S2 = hi - 16 S3, S3. A view is at most
  // 255, so |sum| <= 128 pairs x 2 x 255 x 32767 < 2^31.
  __m256i acc_lo = _mm256_setzero_si256(), acc_n1x = acc_lo, acc_hi = acc_lo, acc_n3 = acc_lo;
  const __m256i lo_mask = _mm256_set1_epi32(0x00FF00FF), n1_mask = _mm256_set1_epi32(0x00F000F0);
  for (int p = 0; p < channels / 2; ++p) {
    const __m256i w = _mm256_loadu_si256(
        reinterpret_cast<const __m256i*>(codes + 32 * static_cast<ptrdiff_t>(p)));
    // pairs[0, channels / 2) was written above (channels is a multiple of 8).
    const __m256i k = _mm256_set1_epi32(pairs[p]);  // NOLINT(clang-analyzer-core.CallAndMessage)
    acc_lo = _mm256_add_epi32(acc_lo, _mm256_madd_epi16(_mm256_and_si256(w, lo_mask), k));
    acc_n1x = _mm256_add_epi32(acc_n1x, _mm256_madd_epi16(_mm256_and_si256(w, n1_mask), k));
    acc_hi = _mm256_add_epi32(acc_hi, _mm256_madd_epi16(_mm256_srli_epi16(w, 8), k));
    acc_n3 = _mm256_add_epi32(acc_n3, _mm256_madd_epi16(_mm256_srli_epi16(w, 12), k));
  }
  const __m256i acc0 = _mm256_sub_epi32(acc_lo, acc_n1x);
  const __m256i acc1 = _mm256_srai_epi32(acc_n1x, 4);
  const __m256i acc2 = _mm256_sub_epi32(acc_hi, _mm256_slli_epi32(acc_n3, 4));
  const __m256i acc3 = acc_n3;
  // out[4i + k] = s acc[k][i] + bias: scale, then a 4 x 8 transpose.
  const __m256 sv = _mm256_set1_ps(s), b = _mm256_set1_ps(HorizontalSum(bias8));
  const __m256 f0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc0), sv, b);
  const __m256 f1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc1), sv, b);
  const __m256 f2 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc2), sv, b);
  const __m256 f3 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc3), sv, b);
  const __m256 t0 = _mm256_unpacklo_ps(f0, f1), t1 = _mm256_unpackhi_ps(f0, f1);
  const __m256 t2 = _mm256_unpacklo_ps(f2, f3), t3 = _mm256_unpackhi_ps(f2, f3);
  // u0: tokens 0-3 | 16-19, u1: 4-7 | 20-23, u2: 8-11 | 24-27, u3: 12-15 | 28-31.
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  _mm256_storeu_ps(out, _mm256_permute2f128_ps(u0, u1, 0x20));
  _mm256_storeu_ps(out + 8, _mm256_permute2f128_ps(u2, u3, 0x20));
  _mm256_storeu_ps(out + 16, _mm256_permute2f128_ps(u0, u1, 0x31));
  _mm256_storeu_ps(out + 24, _mm256_permute2f128_ps(u2, u3, 0x31));
}

SEEDANCE_AVX2 uint64_t Avx2ReadBytes(const uint8_t* p, size_t n) {
  __m256i a = _mm256_setzero_si256(), b = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    a = _mm256_add_epi64(a, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)));
    b = _mm256_add_epi64(b, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 32)));
  }
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), _mm256_add_epi64(a, b));
  uint64_t sum = lanes[0] + lanes[1] + lanes[2] + lanes[3];
  for (; i < n; ++i) sum += p[i];
  return sum;
}

}  // namespace seedance::port
