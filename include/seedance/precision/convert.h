// Bulk conversions between FP32 and the narrow formats (SPEC PREC-1), and
// INT8 quantization with a per-tensor or per-channel scale.
//
// ConvertFromFloat / ConvertToFloat produce exactly the codes and values of
// the scalar reference in formats.h. With Kernel::kAuto they use the AVX2/F16C
// kernels of seedance::port when the CPU has them and the scalar code
// otherwise; kScalar forces the reference (tests and benchmarks compare the two).
//
// Thread safety: pure functions over caller-owned buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "seedance/base/status.h"
#include "seedance/precision/formats.h"

namespace seedance::precision {

enum class Kernel { kAuto, kScalar, kAvx2 };

// "avx2+f16c" or "scalar": what kAuto uses on this CPU.
std::string_view AutoKernelName();

// Bytes per value: 4, 2 or 1.
size_t CodeBytes(Format format);

// Writes in.size() codes to `out` (CodeBytes(to) bytes each). kAvx2 on a CPU
// without AVX2 is an error; so is an unknown pairing.
base::Status ConvertFromFloat(Format to, std::span<const float> in, void* out, bool saturate,
                              Kernel kernel = Kernel::kAuto);
// Decodes out.size() codes from `in`.
base::Status ConvertToFloat(Format from, const void* in, std::span<float> out,
                            Kernel kernel = Kernel::kAuto);

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
