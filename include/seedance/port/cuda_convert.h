// CUDA kernels for the bulk number-format conversions of seedance::precision,
// on device buffers. They use NVIDIA's own conversion intrinsics
// (cuda_fp16.h, cuda_bf16.h, cuda_fp8.h), which are the reference the scalar
// code is tested against, so host and device agree code for code.
//
// Every call takes device pointers and an optional CUDA stream (nullptr: the
// default stream), enqueues one kernel and returns; Unavailable when the build
// has no CUDA. `target`: one of base::Encoding's narrow encodings (FP16, BF16,
// FP8 E4M3, FP8 E5M2); FP32 is InvalidArgument.
//
// Thread safety: as the CUDA runtime (any thread; order set by the stream).
#pragma once

#include <cstddef>
#include <cstdint>

#include "seedance/base/numeric_format.h"
#include "seedance/base/status.h"

namespace seedance::port {

// Converts n floats at `in` into codes at `out` (2 bytes each for FP16/BF16, 1 for FP8).
base::Status CudaFloatToCodes(const float* in, void* out, size_t n, base::Encoding target,
                              bool saturate, void* stream = nullptr);
// Decodes n codes at `in` into floats at `out`.
base::Status CudaCodesToFloat(const void* in, float* out, size_t n, base::Encoding target,
                              void* stream = nullptr);

// Host helpers for tests and benchmarks: copy in, convert, copy out, synchronise.
base::Status CudaFloatToCodesHost(const float* in, void* out, size_t n, base::Encoding target,
                                  bool saturate);

}  // namespace seedance::port
