// CUDA kernels for the bulk number-format conversions of seedance::precision,
// on device buffers. They use NVIDIA's own conversion intrinsics
// (cuda_fp16.h, cuda_bf16.h, cuda_fp8.h), which are the reference the scalar
// code is tested against, so host and device agree code for code.
//
// Every call takes device pointers and an optional CUDA stream (nullptr: the
// default stream), enqueues one kernel and returns; Unavailable when the build
// has no CUDA. `target`: 0 FP16, 1 BF16, 2 FP8 E4M3, 3 FP8 E5M2.
//
// Thread safety: as the CUDA runtime (any thread; order set by the stream).
#pragma once

#include <cstddef>
#include <cstdint>

#include "seedance/base/status.h"

namespace seedance::port {

enum class CudaTarget { kFp16 = 0, kBf16 = 1, kE4M3 = 2, kE5M2 = 3 };

// Converts n floats at `in` into codes at `out` (2 bytes each for FP16/BF16, 1 for FP8).
base::Status CudaFloatToCodes(const float* in, void* out, size_t n, CudaTarget target,
                              bool saturate, void* stream = nullptr);
// Decodes n codes at `in` into floats at `out`.
base::Status CudaCodesToFloat(const void* in, float* out, size_t n, CudaTarget target,
                              void* stream = nullptr);

// Host helpers for tests and benchmarks: copy in, convert, copy out, synchronise.
base::Status CudaFloatToCodesHost(const float* in, void* out, size_t n, CudaTarget target,
                                  bool saturate);

}  // namespace seedance::port
