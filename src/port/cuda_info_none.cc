// CUDA queries for a build without CUDA: nothing is compiled in.
#include "seedance/port/cuda_info.h"

namespace seedance::port {

CudaInfo QueryCuda() {
  CudaInfo info;
  info.error = "this build of Seedance was compiled without CUDA (no nvcc at configure time)";
  return info;
}

base::Status CudaSelfTest() { return base::UnavailableError(QueryCuda().error); }

}  // namespace seedance::port
