// AVX2 kernels of the quantized KV cache (see seedance/port/simd_kv.h).
#include "seedance/port/simd_kv.h"

#include <immintrin.h>

#define SEEDANCE_AVX2 __attribute__((target("avx2,fma")))

namespace seedance::port {

SEEDANCE_AVX2 void Avx2Scores4BitGroup(const uint8_t* codes, int channels, const float* coef,
                                       float bias, float* out) {
  // Two channels per step: their 4 + 4 code words fill one register (lanes
  // 0-3: channel c, lanes 4-7: channel c + 1). Nibble j of word w is token
  // 8w + j, so a shift and a mask per j give 8 codes with no shuffles;
  // acc[j] lane w (+4) collects token 8w + j, summed and reordered once at the end.
  __m256 acc[8];
  for (auto& a : acc) a = _mm256_setzero_ps();
  const __m256i mask = _mm256_set1_epi32(0x0F);
  int c = 0;
  for (; c + 2 <= channels; c += 2) {
    const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes + 16 * c));
    const __m256 k = _mm256_insertf128_ps(_mm256_set1_ps(coef[c]), _mm_set1_ps(coef[c + 1]), 1);
    acc[0] = _mm256_fmadd_ps(k, _mm256_cvtepi32_ps(_mm256_and_si256(w, mask)), acc[0]);
    acc[1] = _mm256_fmadd_ps(k, _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(w, 4), mask)),
                             acc[1]);
    acc[2] = _mm256_fmadd_ps(k, _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(w, 8), mask)),
                             acc[2]);
    acc[3] = _mm256_fmadd_ps(
        k, _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(w, 12), mask)), acc[3]);
    acc[4] = _mm256_fmadd_ps(
        k, _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(w, 16), mask)), acc[4]);
    acc[5] = _mm256_fmadd_ps(
        k, _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(w, 20), mask)), acc[5]);
    acc[6] = _mm256_fmadd_ps(
        k, _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(w, 24), mask)), acc[6]);
    acc[7] = _mm256_fmadd_ps(k, _mm256_cvtepi32_ps(_mm256_srli_epi32(w, 28)), acc[7]);
  }
  alignas(32) float lanes[8][8];
  for (int j = 0; j < 8; ++j) _mm256_store_ps(lanes[j], acc[j]);
  for (int w = 0; w < 4; ++w) {
    for (int j = 0; j < 8; ++j) out[8 * w + j] += lanes[j][w] + lanes[j][w + 4] + bias;
  }
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
  // Per-group setup, 8 channels a step: coef = q x scale, bias = sum q x min.
  alignas(32) float coef[256];
  __m256 bias8 = _mm256_setzero_ps();
  for (int c = 0; c < channels; c += 8) {
    const __m256 qc = _mm256_loadu_ps(q + c);
    _mm256_store_ps(coef + c, _mm256_mul_ps(qc, _mm256_loadu_ps(scale + c)));
    bias8 = _mm256_fmadd_ps(qc, _mm256_loadu_ps(min + c), bias8);
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, bias8);
  float bias = 0;
  for (float x : lanes) bias += x;
  for (int i = 0; i < 32; ++i) out[i] = 0;
  Avx2Scores4BitGroup(codes, channels, coef, bias, out);
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
