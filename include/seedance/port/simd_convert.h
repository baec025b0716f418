// AVX2/F16C kernels for the bulk number-format conversions of
// seedance::precision. They produce exactly the codes of the scalar reference
// in precision/formats.h (round to nearest even, canonical NaN, optional
// saturation); precision's tests check that on every code and on random data.
//
// Each kernel converts the largest prefix of whole vectors it can and returns
// how many elements it converted; the caller finishes the tail. Call them only
// when port::UseAvx2() says so (simd.h).
//
// Thread safety: pure functions over caller-owned buffers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "seedance/base/numeric_format.h"
#include "seedance/port/simd.h"

namespace seedance::port {

size_t Avx2FloatToHalf(const float* in, uint16_t* out, size_t n, bool saturate);
size_t Avx2FloatToBf16(const float* in, uint16_t* out, size_t n, bool saturate);
// `kind`: base::Encoding::kE4M3 or kE5M2 (any other encoding converts nothing: returns 0).
size_t Avx2FloatToFp8(const float* in, uint8_t* out, size_t n, base::Encoding kind, bool saturate);
size_t Avx2HalfToFloat(const uint16_t* in, float* out, size_t n);
size_t Avx2Bf16ToFloat(const uint16_t* in, float* out, size_t n);

}  // namespace seedance::port
