// The CUDA virtual-memory API in a build without CUDA: not available.
#include "seedance/port/cuda_vmm.h"

namespace seedance::port {

base::StatusOr<std::unique_ptr<CudaVmm>> NewCudaVmm(int) {
  return base::UnavailableError("this build of Seedance was compiled without CUDA");
}

}  // namespace seedance::port
