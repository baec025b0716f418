// Conversion kernels for a build without CUDA: every call is Unavailable.
#include "seedance/port/cuda_convert.h"

namespace seedance::port {
namespace {
base::Status NoCuda() {
  return base::UnavailableError("this build of Seedance was compiled without CUDA");
}
}  // namespace

base::Status CudaFloatToCodes(const float*, void*, size_t, base::Encoding, bool, void*) {
  return NoCuda();
}
base::Status CudaCodesToFloat(const void*, float*, size_t, base::Encoding, void*) {
  return NoCuda();
}
base::Status CudaFloatToCodesHost(const float*, void*, size_t, base::Encoding, bool) {
  return NoCuda();
}

}  // namespace seedance::port
