// The CUDA virtual-memory API (cuMemAddressReserve / cuMemCreate / cuMemMap),
// page by page, for the caching allocator's CUDA back end. The driver's
// functions are looked up at run time through the CUDA runtime
// (cudaGetDriverEntryPointByVersion), so nothing links libcuda and a machine
// without a driver still runs every other part of Seedance.
//
// Each mapped page is its own physical allocation, so pages can be moved to
// another address (Remap) without copying: that is what stitching needs.
//
// Thread safety: a CudaVmm is used under its owner's lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "seedance/base/status.h"

namespace seedance::port {

class CudaVmm {
 public:
  virtual ~CudaVmm() = default;
  virtual size_t page_size() const = 0;
  virtual base::StatusOr<uintptr_t> Reserve(size_t bytes) = 0;
  virtual base::Status Map(uintptr_t addr, size_t bytes) = 0;
  virtual base::Status Unmap(uintptr_t addr, size_t bytes) = 0;
  virtual base::Status Remap(uintptr_t from, uintptr_t to, size_t bytes) = 0;
  virtual void Free(uintptr_t addr, size_t bytes) = 0;
};

// Unavailable when the build has no CUDA, the driver is missing, or the
// device does not support virtual memory management.
base::StatusOr<std::unique_ptr<CudaVmm>> NewCudaVmm(int device);

}  // namespace seedance::port
