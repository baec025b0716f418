// AVX2 kernels of the quantized KV cache (see seedance/port/simd_kv.h).
#include "seedance/port/simd_kv.h"

#include <immintrin.h>

#include <algorithm>

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

SEEDANCE_AVX2 void Avx2Scores4BitGroupInt16(const uint8_t* codes, int channels, const float* q,
                                            const float* scale, const float* min, float* out) {
  // Per-group setup, 8 channels a step: coef = q x scale, bias = sum q x min,
  // and the largest |coef|, which sets the int16 step.
  __m256 bias8 = _mm256_setzero_ps(), max8 = _mm256_setzero_ps();
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  alignas(32) float coef[256];
  for (int c = 0; c < channels; c += 8) {
    const __m256 qc = _mm256_loadu_ps(q + c);
    const __m256 k = _mm256_mul_ps(qc, _mm256_loadu_ps(scale + c));
    _mm256_store_ps(coef + c, k);
    bias8 = _mm256_fmadd_ps(qc, _mm256_loadu_ps(min + c), bias8);
    max8 = _mm256_max_ps(max8, _mm256_and_ps(k, abs_mask));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, bias8);
  float bias = 0, largest = 0;
  for (float x : lanes) bias += x;
  _mm256_store_ps(lanes, max8);
  for (float x : lanes) largest = std::max(largest, x);
  if (largest == 0) {  // every coefficient is zero: only the bias is left
    for (int i = 0; i < 32; ++i) out[i] = bias;
    return;
  }
  const float step = largest / 32767.0f;  // coef ~ step x k16, |k16| <= 32767
  alignas(32) int16_t k16[256];
  const __m256 inv = _mm256_set1_ps(1.0f / step);
  for (int c = 0; c < channels; c += 16) {
    const __m256i a = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_load_ps(coef + c), inv));
    const __m256i b = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_load_ps(coef + c + 8), inv));
    // packs works per 128-bit lane: restore channel order with a permute.
    _mm256_store_si256(reinterpret_cast<__m256i*>(k16 + c),
                       _mm256_permute4x64_epi64(_mm256_packs_epi32(a, b), 0xD8));
  }

  // Four channels a step. A = [c | c+1], B = [c+2 | c+3] (16 bytes each);
  // interleaving their bytes pairs channel c with c+2 in the low lane and
  // c+1 with c+3 in the high lane, token by token; widened to int16 pairs,
  // one madd per 4 tokens adds both channels' code x coefficient.
  const __m256i nib = _mm256_set1_epi8(0x0F), zero = _mm256_setzero_si256();
  __m256i acc[8];
  for (auto& a : acc) a = _mm256_setzero_si256();
  // Per 4 channels, the int32 pairs (k16[c], k16[c+2]) and (k16[c+1],
  // k16[c+3]): a shuffle of each 4 coefficients puts them side by side.
  alignas(32) int32_t pairs[128];
  const __m256i to_pairs = _mm256_setr_epi8(0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15, 0,
                                            1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15);
  for (int c = 0; c < channels; c += 16) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(pairs + c / 2),
                       _mm256_shuffle_epi8(
                           _mm256_load_si256(reinterpret_cast<const __m256i*>(k16 + c)), to_pairs));
  }
  for (int c = 0; c < channels; c += 4) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes + 16 * c));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes + 16 * c + 32));
    const __m256i k = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_set1_epi32(pairs[c / 2])),
                                              _mm_set1_epi32(pairs[c / 2 + 1]), 1);
    const __m256i even_a = _mm256_and_si256(a, nib), even_b = _mm256_and_si256(b, nib);
    const __m256i odd_a = _mm256_and_si256(_mm256_srli_epi16(a, 4), nib);
    const __m256i odd_b = _mm256_and_si256(_mm256_srli_epi16(b, 4), nib);
    const __m256i x[4] = {_mm256_unpacklo_epi8(even_a, even_b),  // tokens 0, 2, ..., 14
                          _mm256_unpackhi_epi8(even_a, even_b),  // 16, ..., 30
                          _mm256_unpacklo_epi8(odd_a, odd_b),    // 1, ..., 15
                          _mm256_unpackhi_epi8(odd_a, odd_b)};   // 17, ..., 31
    for (int j = 0; j < 4; ++j) {
      acc[2 * j] =
          _mm256_add_epi32(acc[2 * j], _mm256_madd_epi16(_mm256_unpacklo_epi8(x[j], zero), k));
      acc[2 * j + 1] =
          _mm256_add_epi32(acc[2 * j + 1], _mm256_madd_epi16(_mm256_unpackhi_epi8(x[j], zero), k));
    }
  }
  // acc[2j + h], lane 0 and lane 1 (both halves of the channels), int32 k:
  // token = first token of x[j] + 2 x (4h + k).
  static constexpr int kFirst[4] = {0, 16, 1, 17};
  alignas(32) int32_t v[8];
  for (int j = 0; j < 4; ++j) {
    for (int h = 0; h < 2; ++h) {
      _mm256_store_si256(reinterpret_cast<__m256i*>(v), acc[2 * j + h]);
      for (int k = 0; k < 4; ++k) {
        out[kFirst[j] + 2 * (4 * h + k)] = bias + step * static_cast<float>(v[k] + v[k + 4]);
      }
    }
  }
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
