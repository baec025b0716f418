// CUDA queries for a build with CUDA: the runtime API, and one small kernel
// used as a smoke test of the device path.
#include <cuda_runtime.h>

#include <cmath>
#include <string>
#include <vector>

#include "seedance/port/cuda_info.h"

namespace seedance::port {
namespace {

__global__ void Saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

std::string ErrorText(cudaError_t err) {
  return std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
}

}  // namespace

CudaInfo QueryCuda() {
  CudaInfo info;
  info.compiled = true;
  info.compiled_version = CUDART_VERSION;
  if (cudaDriverGetVersion(&info.driver_version) != cudaSuccess) info.driver_version = 0;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    info.error = ErrorText(err);
    return info;
  }
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) continue;
    info.devices.push_back(CudaDevice{d, prop.name, static_cast<int64_t>(prop.totalGlobalMem),
                                      prop.major, prop.minor});
  }
  if (info.devices.empty()) info.error = "no CUDA device found";
  return info;
}

base::Status CudaSelfTest() {
  CudaInfo info = QueryCuda();
  if (info.devices.empty()) return base::UnavailableError(info.error);
  constexpr int kN = 1 << 20;
  constexpr float kA = 2.5f;
  std::vector<float> x(kN), y(kN), expected(kN);
  for (int i = 0; i < kN; ++i) {
    x[i] = static_cast<float>(i % 1000) * 0.001f;
    y[i] = static_cast<float>(i % 7);
    expected[i] = kA * x[i] + y[i];
  }
  float* dx = nullptr;
  float* dy = nullptr;
  auto fail = [&](cudaError_t err, const char* what) {
    cudaFree(dx);
    cudaFree(dy);
    return base::UnavailableError(std::string(what) + " failed: " + ErrorText(err));
  };
  cudaError_t err = cudaMalloc(&dx, kN * sizeof(float));
  if (err != cudaSuccess) return fail(err, "cudaMalloc");
  err = cudaMalloc(&dy, kN * sizeof(float));
  if (err != cudaSuccess) return fail(err, "cudaMalloc");
  cudaMemcpy(dx, x.data(), kN * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(dy, y.data(), kN * sizeof(float), cudaMemcpyHostToDevice);
  Saxpy<<<(kN + 255) / 256, 256>>>(kN, kA, dx, dy);
  err = cudaGetLastError();
  if (err != cudaSuccess) return fail(err, "kernel launch");
  err = cudaMemcpy(y.data(), dy, kN * sizeof(float), cudaMemcpyDeviceToHost);
  if (err != cudaSuccess) return fail(err, "cudaMemcpy");
  cudaFree(dx);
  cudaFree(dy);
  for (int i = 0; i < kN; ++i) {
    // The device may fuse a*x+y into one FMA: allow one rounding of difference.
    if (std::fabs(y[i] - expected[i]) > 1e-6f * (1.0f + std::fabs(expected[i]))) {
      return base::InternalError("device result differs from host at element " + std::to_string(i));
    }
  }
  return base::OkStatus();
}

}  // namespace seedance::port
