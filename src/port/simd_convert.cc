// AVX2/F16C number-format conversions (see seedance/port/simd_convert.h).
// Functions carry target attributes instead of the whole file being compiled
// with -mavx2, so the library still runs on CPUs without AVX2: the caller
// checks port::UseAvx2() first.
#include "seedance/port/simd_convert.h"

#include <immintrin.h>

#include <cstring>

#define SEEDANCE_AVX2 __attribute__((target("avx2,f16c")))

namespace seedance::port {

namespace {

// 0xFFFF in each 16-bit lane whose float in `x` is NaN.
SEEDANCE_AVX2 inline __m128i NanMask16(__m256 x) {
  const __m256i m = _mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  return _mm_packs_epi32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
}

// Clamps to [-limit, limit]; NaN lanes come out as garbage and are fixed by the caller.
SEEDANCE_AVX2 inline __m256 Clamp(__m256 x, __m256 limit) {
  const __m256 neg = _mm256_sub_ps(_mm256_setzero_ps(), limit);
  return _mm256_max_ps(_mm256_min_ps(x, limit), neg);
}

// Eight FP8 codes (one per 32-bit lane, low byte) for eight floats.
// Normal results: integer round-to-nearest-even on the float's bits, then a
// rebias. Subnormal results: adding 2^(emin - M + 23) makes the FPU round the
// value to a multiple of the subnormal step (RNE is the default rounding
// mode), and the integer difference of the bit patterns is the code.
template <int kMan, int kBias, uint32_t kMaxCode, uint32_t kOverflowCode>
SEEDANCE_AVX2 inline __m256i Fp8Codes(__m256 x, bool saturate) {
  constexpr int kShift = 23 - kMan;
  constexpr int kEmin = 1 - kBias;
  const __m256i bits = _mm256_castps_si256(x);
  const __m256i abs = _mm256_and_si256(bits, _mm256_set1_epi32(0x7FFFFFFF));
  const __m256i sign = _mm256_srli_epi32(_mm256_andnot_si256(abs, bits), 24);  // 0x80 or 0

  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(abs, kShift), _mm256_set1_epi32(1));
  __m256i normal = _mm256_add_epi32(abs, _mm256_set1_epi32((1 << (kShift - 1)) - 1));
  normal = _mm256_srli_epi32(_mm256_add_epi32(normal, lsb), kShift);
  normal = _mm256_sub_epi32(normal, _mm256_set1_epi32((127 - kBias) << kMan));

  const uint32_t magic_bits = static_cast<uint32_t>(kEmin - kMan + 23 + 127) << 23;
  float magic_f;
  std::memcpy(&magic_f, &magic_bits, 4);
  const __m256 magic = _mm256_set1_ps(magic_f);
  const __m256i sub =
      _mm256_sub_epi32(_mm256_castps_si256(_mm256_add_ps(_mm256_castsi256_ps(abs), magic)),
                       _mm256_castps_si256(magic));

  const __m256i min_normal = _mm256_set1_epi32((kEmin + 127) << 23);
  const __m256i is_sub = _mm256_cmpgt_epi32(min_normal, abs);
  __m256i code = _mm256_blendv_epi8(normal, sub, is_sub);

  const __m256i over = _mm256_cmpgt_epi32(code, _mm256_set1_epi32(static_cast<int>(kMaxCode)));
  const __m256i over_code =
      _mm256_set1_epi32(static_cast<int>(saturate ? kMaxCode : kOverflowCode));
  code = _mm256_or_si256(_mm256_blendv_epi8(code, over_code, over), sign);

  const __m256i is_nan = _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(0x7F800000));
  return _mm256_blendv_epi8(code, _mm256_set1_epi32(0x7F), is_nan);
}

template <int kMan, int kBias, uint32_t kMaxCode, uint32_t kOverflowCode>
SEEDANCE_AVX2 size_t Fp8Loop(const float* in, uint8_t* out, size_t n, bool saturate) {
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i a =
        Fp8Codes<kMan, kBias, kMaxCode, kOverflowCode>(_mm256_loadu_ps(in + i), saturate);
    const __m256i b =
        Fp8Codes<kMan, kBias, kMaxCode, kOverflowCode>(_mm256_loadu_ps(in + i + 8), saturate);
    const __m256i c =
        Fp8Codes<kMan, kBias, kMaxCode, kOverflowCode>(_mm256_loadu_ps(in + i + 16), saturate);
    const __m256i d =
        Fp8Codes<kMan, kBias, kMaxCode, kOverflowCode>(_mm256_loadu_ps(in + i + 24), saturate);
    // packus keeps 128-bit lanes apart; the permute puts the dwords back in order.
    const __m256i ab = _mm256_packus_epi32(a, b);
    const __m256i cd = _mm256_packus_epi32(c, d);
    const __m256i abcd = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(ab, cd), order);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), abcd);
  }
  return i;
}

// Eight BF16 codes (one per 32-bit lane): integer round-to-nearest-even on
// the top 16 bits, canonical NaN, optional clamp to the largest finite value.
SEEDANCE_AVX2 inline __m256i Bf16Codes(__m256 x, bool saturate) {
  const __m256 y = saturate ? Clamp(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x7F7F0000))) : x;
  const __m256i b = _mm256_castps_si256(y);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(1));
  const __m256i sum = _mm256_add_epi32(_mm256_add_epi32(b, _mm256_set1_epi32(0x7FFF)), lsb);
  const __m256i is_nan = _mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  return _mm256_blendv_epi8(_mm256_srli_epi32(sum, 16), _mm256_set1_epi32(0x7FFF), is_nan);
}

}  // namespace

SEEDANCE_AVX2 size_t Avx2FloatToHalf(const float* in, uint16_t* out, size_t n, bool saturate) {
  const __m256 limit = _mm256_set1_ps(65504.0f);
  const __m128i nan = _mm_set1_epi16(0x7FFF);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(in + i);
    const __m256 y = saturate ? Clamp(x, limit) : x;
    __m128i h = _mm256_cvtps_ph(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    h = _mm_blendv_epi8(h, nan, NanMask16(x));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  return i;
}

SEEDANCE_AVX2 size_t Avx2FloatToBf16(const float* in, uint16_t* out, size_t n, bool saturate) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i a = Bf16Codes(_mm256_loadu_ps(in + i), saturate);
    const __m256i b = Bf16Codes(_mm256_loadu_ps(in + i + 8), saturate);
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xD8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), packed);
  }
  return i;
}

size_t Avx2FloatToFp8(const float* in, uint8_t* out, size_t n, base::Encoding kind, bool saturate) {
  if (kind == base::Encoding::kE4M3) return Fp8Loop<3, 7, 0x7E, 0x7F>(in, out, n, saturate);
  if (kind != base::Encoding::kE5M2) return 0;
  return Fp8Loop<2, 15, 0x7B, 0x7C>(in, out, n, saturate);
}

SEEDANCE_AVX2 size_t Avx2HalfToFloat(const uint16_t* in, float* out, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
  return i;
}

SEEDANCE_AVX2 size_t Avx2Bf16ToFloat(const uint16_t* in, float* out, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    const __m256i w = _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16);
    _mm256_storeu_ps(out + i, _mm256_castsi256_ps(w));
  }
  return i;
}

}  // namespace seedance::port
