// Bulk conversions between FP32 and the narrow formats (feature PREC-1), and
// INT8 quantization with a per-tensor or per-channel scale.
//
// ConvertFromFloat / ConvertToFloat produce exactly the codes and values of
// the scalar reference in formats.h. The kernel is the process's SIMD choice
// (port/simd.h: the AVX2/F16C kernels when the CPU has them, unless
// SEEDANCE_SIMD says otherwise); a call may ask for kScalar or kAvx2 itself
// (tests and benchmarks compare the two).
//
// Thread safety: pure functions over caller-owned buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "seedance/base/status.h"
#include "seedance/port/simd.h"
#include "seedance/precision/formats.h"

namespace seedance::precision {

// Bytes per value: 4, 2 or 1.
size_t CodeBytes(Format format);

// The 256 decoded values of an FP8 format's codes (kE4M3 or kE5M2), indexed by code: the
// decoders' lookup table, for callers that decode FP8 codes one at a time.
const float* Fp8DecodeTable(Format format);

// Writes in.size() codes to `out` (CodeBytes(to) bytes each). kAvx2 on a CPU
// without AVX2 is an error; so is an unknown pairing.
base::Status ConvertFromFloat(Format to, std::span<const float> in, void* out, bool saturate,
                              port::SimdKernel kernel = port::SimdKernel::kAuto);
// Decodes out.size() codes from `in`.
base::Status ConvertToFloat(Format from, const void* in, std::span<float> out,
                            port::SimdKernel kernel = port::SimdKernel::kAuto);

// Symmetric INT8: q = clamp(round_half_even(x * (1 / scale)), -128, 127) with
// scale = amax / 127 over the tensor or over each channel (a row of a
// row-major [channels, n / channels] matrix); an all-zero group gets scale 1.
// This is the rule of torch.quantize_per_tensor / quantize_per_channel with
// zero point 0 and the scale computed from amax, which the Python tests check.
struct Int8Tensor {
  std::vector<int8_t> values;
  std::vector<float> scales;  // one, or one per channel
  size_t channels = 1;
};

// `channels` = 1 is per-tensor. in.size() must be a multiple of `channels`.
base::StatusOr<Int8Tensor> QuantizeInt8(std::span<const float> in, size_t channels = 1);
// The same with caller-chosen scales (one per channel); scales must be finite and > 0.
base::StatusOr<Int8Tensor> QuantizeInt8WithScales(std::span<const float> in,
                                                  std::span<const float> scales);
std::vector<float> DequantizeInt8(const Int8Tensor& q);

}  // namespace seedance::precision
