// Conversion kernels (see seedance/port/cuda_convert.h): one thread per
// element, grid-stride loops, NVIDIA's intrinsics for the rounding.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <string>

#include "seedance/port/cuda_convert.h"

namespace seedance::port {
namespace {

constexpr float kFp16Max = 65504.0f;
constexpr float kBf16Max = 3.38953139e38f;  // 0x7F7F0000

__device__ float ClampFinite(float x, float limit) { return fminf(fmaxf(x, -limit), limit); }

using base::Encoding;

__global__ void ToCodes(const float* in, void* out, size_t n, Encoding target, bool saturate) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{blockDim.x} * gridDim.x) {
    const float x = in[i];
    switch (target) {
      case Encoding::kFp16: {  // NaN canonical like the host conversion
        const float y = saturate && !isnan(x) ? ClampFinite(x, kFp16Max) : x;
        __half_raw h = __half_raw(__float2half_rn(y));
        static_cast<unsigned short*>(out)[i] = isnan(x) ? 0x7FFF : h.x;
        break;
      }
      case Encoding::kBf16: {
        const float y = saturate && !isnan(x) ? ClampFinite(x, kBf16Max) : x;
        __nv_bfloat16_raw b = __nv_bfloat16_raw(__float2bfloat16_rn(y));
        static_cast<unsigned short*>(out)[i] = isnan(x) ? 0x7FFF : b.x;
        break;
      }
      default: {  // kE4M3, kE5M2 (the host functions refuse kFp32)
        const __nv_fp8_interpretation_t kind = target == Encoding::kE4M3 ? __NV_E4M3 : __NV_E5M2;
        static_cast<unsigned char*>(out)[i] =
            __nv_cvt_float_to_fp8(x, saturate ? __NV_SATFINITE : __NV_NOSAT, kind);
      }
    }
  }
}

__global__ void ToFloat(const void* in, float* out, size_t n, Encoding target) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{blockDim.x} * gridDim.x) {
    if (target == Encoding::kFp16) {
      __half_raw h;
      h.x = static_cast<const unsigned short*>(in)[i];
      out[i] = __half2float(__half(h));
    } else if (target == Encoding::kBf16) {
      out[i] = __uint_as_float(unsigned{static_cast<const unsigned short*>(in)[i]} << 16);
    } else {
      const __nv_fp8_interpretation_t kind = target == Encoding::kE4M3 ? __NV_E4M3 : __NV_E5M2;
      __half_raw h = __nv_cvt_fp8_to_halfraw(static_cast<const unsigned char*>(in)[i], kind);
      out[i] = __half2float(__half(h));
    }
  }
}

unsigned Blocks(size_t n) {
  const size_t b = (n + 255) / 256;
  return static_cast<unsigned>(b > 65535 ? 65535 : (b == 0 ? 1 : b));
}

base::Status Check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return base::OkStatus();
  return base::UnavailableError(std::string(what) + ": " + cudaGetErrorString(e));
}

size_t CodeBytes(Encoding t) { return t == Encoding::kFp16 || t == Encoding::kBf16 ? 2 : 1; }

base::Status CheckNarrow(Encoding target) {
  if (target != Encoding::kFp32) return base::OkStatus();
  return base::InvalidArgumentError("a CUDA conversion needs a narrow encoding, not fp32",
                                    "target");
}

}  // namespace

base::Status CudaFloatToCodes(const float* in, void* out, size_t n, base::Encoding target,
                              bool saturate, void* stream) {
  SEEDANCE_RETURN_IF_ERROR(CheckNarrow(target));
  ToCodes<<<Blocks(n), 256, 0, static_cast<cudaStream_t>(stream)>>>(in, out, n, target, saturate);
  return Check(cudaGetLastError(), "conversion kernel launch");
}

base::Status CudaCodesToFloat(const void* in, float* out, size_t n, base::Encoding target,
                              void* stream) {
  SEEDANCE_RETURN_IF_ERROR(CheckNarrow(target));
  ToFloat<<<Blocks(n), 256, 0, static_cast<cudaStream_t>(stream)>>>(in, out, n, target);
  return Check(cudaGetLastError(), "conversion kernel launch");
}

base::Status CudaFloatToCodesHost(const float* in, void* out, size_t n, base::Encoding target,
                                  bool saturate) {
  SEEDANCE_RETURN_IF_ERROR(CheckNarrow(target));
  struct Buffers {
    float* in = nullptr;
    void* out = nullptr;
    ~Buffers() {
      cudaFree(in);
      cudaFree(out);
    }
  } d;
  SEEDANCE_RETURN_IF_ERROR(Check(cudaMalloc(&d.in, n * sizeof(float)), "cudaMalloc"));
  SEEDANCE_RETURN_IF_ERROR(Check(cudaMalloc(&d.out, n * CodeBytes(target)), "cudaMalloc"));
  SEEDANCE_RETURN_IF_ERROR(
      Check(cudaMemcpy(d.in, in, n * sizeof(float), cudaMemcpyHostToDevice), "copy in"));
  SEEDANCE_RETURN_IF_ERROR(CudaFloatToCodes(d.in, d.out, n, target, saturate));
  return Check(cudaMemcpy(out, d.out, n * CodeBytes(target), cudaMemcpyDeviceToHost), "copy out");
}

}  // namespace seedance::port
