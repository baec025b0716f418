// AVX2 kernels of the quantized KV cache (see seedance/port/simd_kv.h).
#include "seedance/port/simd_kv.h"

#include <immintrin.h>

#define SEEDANCE_AVX2 __attribute__((target("avx2,fma")))

namespace seedance::port {

namespace {

// Eight accumulators, one per nibble position j of a code word. Lane w of
// acc[j] (w < 4) collects token 8w + j of the first channel of a pair, lane
// w + 4 the same token of the second channel.
struct Acc8 {
  __m256 a[8];
};

// Adds k x code for the 64 codes of two channels' 8 words (lanes 0-3: channel
// c, lanes 4-7: channel c + 1; k holds coef[c] in lanes 0-3, coef[c + 1] in
// 4-7). Nibble j is masked in place, not shifted down: converted to float it is
// code x 2^(4j), exact (4 significant bits), so a[j] collects 2^(4j) x the
// sum, undone in Store4BitScores by a power of two -- the same result as
// shifted codes, one integer operation fewer per 8 codes. Nibble 7 (the sign
// bit's) is shifted.
SEEDANCE_AVX2 inline void AddChannelPair(__m256i w, __m256 k, Acc8& acc) {
  acc.a[0] =
      _mm256_fmadd_ps(k, _mm256_cvtepi32_ps(_mm256_and_si256(w, _mm256_set1_epi32(0xF))), acc.a[0]);
  acc.a[1] = _mm256_fmadd_ps(k, _mm256_cvtepi32_ps(_mm256_and_si256(w, _mm256_set1_epi32(0xF0))),
                             acc.a[1]);
  acc.a[2] = _mm256_fmadd_ps(k, _mm256_cvtepi32_ps(_mm256_and_si256(w, _mm256_set1_epi32(0xF00))),
                             acc.a[2]);
  acc.a[3] = _mm256_fmadd_ps(k, _mm256_cvtepi32_ps(_mm256_and_si256(w, _mm256_set1_epi32(0xF000))),
                             acc.a[3]);
  acc.a[4] = _mm256_fmadd_ps(k, _mm256_cvtepi32_ps(_mm256_and_si256(w, _mm256_set1_epi32(0xF0000))),
                             acc.a[4]);
  acc.a[5] = _mm256_fmadd_ps(
      k, _mm256_cvtepi32_ps(_mm256_and_si256(w, _mm256_set1_epi32(0xF00000))), acc.a[5]);
  acc.a[6] = _mm256_fmadd_ps(
      k, _mm256_cvtepi32_ps(_mm256_and_si256(w, _mm256_set1_epi32(0xF000000))), acc.a[6]);
  acc.a[7] = _mm256_fmadd_ps(k, _mm256_cvtepi32_ps(_mm256_srli_epi32(w, 28)), acc.a[7]);
}

// Sum of a vector's 8 lanes.
SEEDANCE_AVX2 inline float HorizontalSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

// out[8w + j] (+)= bias + the two channel halves of acc[j] lane w, unscaled by
// 2^(-4j): two 4x4 transposes turn nibble-major sums into token order.
SEEDANCE_AVX2 inline void Store4BitScores(const Acc8& acc, float bias, bool add, float* out) {
  __m128 h[8];
  for (int j = 0; j < 8; ++j) {
    const float unscale = j < 7 ? 1.0f / static_cast<float>(1 << (4 * j)) : 1.0f;
    h[j] =
        _mm_mul_ps(_mm_add_ps(_mm256_castps256_ps128(acc.a[j]), _mm256_extractf128_ps(acc.a[j], 1)),
                   _mm_set1_ps(unscale));
  }
  _MM_TRANSPOSE4_PS(h[0], h[1], h[2], h[3]);  // h[w]: tokens 8w .. 8w + 3
  _MM_TRANSPOSE4_PS(h[4], h[5], h[6], h[7]);  // h[4 + w]: tokens 8w + 4 .. 8w + 7
  const __m256 b = _mm256_set1_ps(bias);
  for (int w = 0; w < 4; ++w) {
    __m256 v = _mm256_add_ps(_mm256_set_m128(h[4 + w], h[w]), b);
    if (add) v = _mm256_add_ps(v, _mm256_loadu_ps(out + 8 * w));
    _mm256_storeu_ps(out + 8 * w, v);
  }
}

}  // namespace

SEEDANCE_AVX2 void Avx2Scores4BitGroup(const uint8_t* codes, int channels, const float* coef,
                                       float bias, float* out) {
  // Two channels per step: their 4 + 4 code words fill one register. Nibble j
  // of word w is token 8w + j, so no shuffles are needed until the end.
  Acc8 acc;
  for (auto& a : acc.a) a = _mm256_setzero_ps();
  int c = 0;
  for (; c + 2 <= channels; c += 2) {
    const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes + 16 * c));
    AddChannelPair(w, _mm256_insertf128_ps(_mm256_set1_ps(coef[c]), _mm_set1_ps(coef[c + 1]), 1),
                   acc);
  }
  Store4BitScores(acc, bias, /*add=*/true, out);
  // An odd channel count leaves one channel for a scalar pass.
  for (; c < channels; ++c) {
    for (int i = 0; i < 32; ++i) {
      const int code = (codes[16 * c + i / 2] >> (i % 2 ? 4 : 0)) & 0x0F;
      out[i] += coef[c] * static_cast<float>(code);
    }
  }
}

SEEDANCE_AVX2 void Avx2Scores4BitGroupParams(const uint8_t* codes, int channels, const float* q,
                                             const float* scale, const float* min, float* out) {
  // Setup first, 8 channels a step: coef = q x scale, bias = sum q x min. As
  // its own tight loop it has every scale and min line in flight at once
  // before the codes are read; folded into the main loop it was slower on
  // codes streamed from memory, though faster on cached ones.
  alignas(32) float coef[256];
  __m256 bias8 = _mm256_setzero_ps();
  for (int c = 0; c < channels; c += 8) {
    const __m256 qc = _mm256_loadu_ps(q + c);
    _mm256_store_ps(coef + c, _mm256_mul_ps(qc, _mm256_loadu_ps(scale + c)));
    bias8 = _mm256_fmadd_ps(qc, _mm256_loadu_ps(min + c), bias8);
  }
  // Then 8 channels a step, each pair's two coefficients spread to the
  // halves of k by one permute.
  Acc8 acc;
  for (auto& a : acc.a) a = _mm256_setzero_ps();
  for (int c = 0; c < channels; c += 8) {
    const __m256 coef8 = _mm256_load_ps(coef + c);
#pragma GCC unroll 4
    for (int p = 0; p < 4; ++p) {
      const __m256i pair =
          _mm256_setr_epi32(2 * p, 2 * p, 2 * p, 2 * p, 2 * p + 1, 2 * p + 1, 2 * p + 1, 2 * p + 1);
      const __m256i w =
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes + 16 * (c + 2 * p)));
      AddChannelPair(w, _mm256_permutevar8x32_ps(coef8, pair), acc);
    }
  }
  Store4BitScores(acc, HorizontalSum(bias8), /*add=*/false, out);
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
