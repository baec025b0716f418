// AVX2 kernels for the quantized KV cache of seedance::kv: attention scores
// straight from 4-bit packed keys, without a dequantized copy (SPEC KV-3).
//
// Layout (the cache's 4-bit key groups of 32 tokens): channel c of a group
// holds 32 codes in 16 bytes at codes + 16 * c, token i in the low nibble of
// byte i / 2 when i is even, the high nibble when odd.
//
// Thread safety: pure functions over caller-owned buffers. Call only when
// CpuHasAvx2F16c() (simd_convert.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace seedance::port {

// out[i] += bias + sum_c coef[c] * code(c, i) for the 32 tokens i of a group.
void Avx2Scores4BitGroup(const uint8_t* codes, int channels, const float* coef, float bias,
                         float* out);

// out[i] = sum_c q[c] (min[c] + scale[c] code(c, i)) for the 32 tokens i of a
// group, from plain arrays of the group's per-channel scale and min: the
// coefficients and the bias are computed 8 channels at a time inside the
// main loop (channels: a multiple of 8).
void Avx2Scores4BitGroupParams(const uint8_t* codes, int channels, const float* q,
                               const float* scale, const float* min, float* out);

// Reads n bytes with 32-byte loads and returns a checksum: the read-bandwidth reference.
uint64_t Avx2ReadBytes(const uint8_t* p, size_t n);

}  // namespace seedance::port
