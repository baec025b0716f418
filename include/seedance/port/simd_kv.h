// AVX2 kernels for seedance::kv: attention scores straight from 4-bit packed keys, without a
// dequantized copy (feature KV-3), and the FP32 dot product of the engine's matrix products.
//
// Layout (the cache's 4-bit key groups of 32 tokens, channel-pair form):
// channels 2p and 2p + 1 of a group share 8 little-endian 32-bit words at
// codes + 32 * p; word i holds tokens 4i .. 4i + 3, the code of token 4i + k
// of channel 2p in bits 4k .. 4k + 3 and of channel 2p + 1 in bits
// 16 + 4k .. 16 + 4k + 3. Each 16-bit half of a word is thus one channel's
// four tokens, which is what vpmaddwd multiplies pairwise.
//
// Thread safety: pure functions over caller-owned buffers. Call only when
// port::UseAvx2() (simd.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "seedance/port/simd.h"

namespace seedance::port {

// out[t] = sum_c q[c] (min[c] + scale[c] code(c, t)) for the 32 tokens t of a
// group, channels a multiple of 8 and at most 256.
//
// The code products are integer: per group, coef_c = q_c scale_c is rounded
// to a 16-bit integer on the scale s = max_c |coef_c| / 32767, and the
// kernel sums coef16_c x code in 32-bit integers (vpmaddwd, two channels per
// 32-bit lane). The rounding adds at most s/2 per channel and code unit:
// |out - exact| <= 15 channels s / 2, about 2.3e-4 channels max|coef| --
// three orders of magnitude below the 4-bit quantization error of the keys
// themselves (scale_c / 2 per value). bias = sum_c q_c min_c stays FP32.
void Avx2Scores4BitPairs(const uint8_t* codes, int channels, const float* q, const float* scale,
                         const float* min, float* out);

// out[j] += a code(j) + b for n codes of 8 bits (bytes) or of 4 bits (two a byte, the low nibble
// first), starting at `codes`: the quantized cache's value sums and the scores of its widths
// without a kernel of their own (kv/cache.h). Within rounding of the scalar loop (a code x a is
// fused with b).
void Avx2AccumulateCodes8(const uint8_t* codes, int n, float a, float b, float* out);
void Avx2AccumulateCodes4(const uint8_t* codes, int n, float a, float b, float* out);

// sum_i a[i] b[i] over n floats (FMA into four 8-lane accumulators, summed at the end): the
// engine's FP32 matrix-vector products (kv/llama.h). Within rounding of the sequential sum.
float Avx2DotF32(const float* a, const float* b, int n);

// Reads n bytes with 32-byte loads and returns a checksum: the read-bandwidth reference.
uint64_t Avx2ReadBytes(const uint8_t* p, size_t n);

}  // namespace seedance::port
