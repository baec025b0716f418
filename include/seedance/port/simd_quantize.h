// AVX2 kernels for the gradient quantizers of seedance::comm: absolute
// maximum, int8/int4 quantization with round-to-nearest-even, sign bits, and
// the matching decode-and-add loops. Each produces exactly what the scalar
// loops in src/comm produce (comm's tests compare them); each handles any n
// (tails in scalar code). Call only when port::UseAvx2() (simd.h).
//
// Thread safety: pure functions over caller-owned buffers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "seedance/port/simd.h"

namespace seedance::port {

// max |x[i]| over finite values (NaN ignored; inf counts).
float Avx2AbsMax(const float* x, size_t n);
// sum |x[i]| in double (NaN and inf skipped).
double Avx2AbsSum(const float* x, size_t n);
// q[i] = clamp(rne(x[i] * inv_scale), -levels, levels); NaN -> 0.
void Avx2QuantizeInt8(const float* x, size_t n, float inv_scale, int levels, int8_t* q);
// Packs n int8 values in [-8, 7] into (n + 1) / 2 bytes, low nibble first.
void Avx2PackInt4(const int8_t* q, size_t n, uint8_t* out);
// out[i] += scale * q[i].
void Avx2DequantAddInt8(const int8_t* q, size_t n, float scale, float* out);
// out[i] += scale * nibble(i) for packed int4 starting at element 0 of `packed`.
void Avx2DequantAddInt4(const uint8_t* packed, size_t n, float scale, float* out);
// bits: bit i%8 of byte i/8 = signbit(x[i]); writes (n + 7) / 8 bytes.
void Avx2SignBits(const float* x, size_t n, uint8_t* bits);
// out[i] += bit(i) ? -value : value.
void Avx2SignAdd(const uint8_t* bits, size_t n, float value, float* out);

}  // namespace seedance::port
