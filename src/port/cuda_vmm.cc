// The CUDA virtual-memory API through driver entry points fetched at run time.
#include "seedance/port/cuda_vmm.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <map>
#include <string>

namespace seedance::port {
namespace {

struct Driver {
  decltype(&cuMemAddressReserve) reserve = nullptr;
  decltype(&cuMemAddressFree) address_free = nullptr;
  decltype(&cuMemCreate) create = nullptr;
  decltype(&cuMemRelease) release = nullptr;
  decltype(&cuMemMap) map = nullptr;
  decltype(&cuMemUnmap) unmap = nullptr;
  decltype(&cuMemSetAccess) set_access = nullptr;
  decltype(&cuMemGetAllocationGranularity) granularity = nullptr;
};

template <typename F>
bool Lookup(const char* name, F* out) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status{};
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &status) !=
          cudaSuccess ||
      status != cudaDriverEntryPointSuccess || fn == nullptr) {
    return false;
  }
  *out = reinterpret_cast<F>(fn);
  return true;
}

base::Status Check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return base::OkStatus();
  return base::ResourceExhaustedError(std::string(what) + " failed with CUresult " +
                                      std::to_string(static_cast<int>(r)));
}

class Vmm final : public CudaVmm {
 public:
  Vmm(Driver d, int device, size_t page) : d_(d), device_(device), page_(page) {}
  ~Vmm() override {
    for (auto& [addr, handle] : pages_) {
      d_.unmap(addr, page_);
      d_.release(handle);
    }
  }

  size_t page_size() const override { return page_; }

  base::StatusOr<uintptr_t> Reserve(size_t bytes) override {
    CUdeviceptr ptr = 0;
    SEEDANCE_RETURN_IF_ERROR(Check(d_.reserve(&ptr, bytes, page_, 0, 0), "cuMemAddressReserve"));
    return static_cast<uintptr_t>(ptr);
  }

  base::Status Map(uintptr_t addr, size_t bytes) override {
    for (size_t off = 0; off < bytes; off += page_) {
      CUmemGenericAllocationHandle handle;
      const CUmemAllocationProp prop = Prop();
      SEEDANCE_RETURN_IF_ERROR(Check(d_.create(&handle, page_, &prop, 0), "cuMemCreate"));
      SEEDANCE_RETURN_IF_ERROR(MapPage(addr + off, handle));
    }
    return base::OkStatus();
  }

  base::Status Unmap(uintptr_t addr, size_t bytes) override {
    for (size_t off = 0; off < bytes; off += page_) {
      auto it = pages_.find(addr + off);
      if (it == pages_.end()) continue;
      SEEDANCE_RETURN_IF_ERROR(Check(d_.unmap(it->first, page_), "cuMemUnmap"));
      SEEDANCE_RETURN_IF_ERROR(Check(d_.release(it->second), "cuMemRelease"));
      pages_.erase(it);
    }
    return base::OkStatus();
  }

  base::Status Remap(uintptr_t from, uintptr_t to, size_t bytes) override {
    for (size_t off = 0; off < bytes; off += page_) {
      auto it = pages_.find(from + off);
      if (it == pages_.end()) return base::InternalError("remap of an unmapped page");
      const CUmemGenericAllocationHandle handle = it->second;
      SEEDANCE_RETURN_IF_ERROR(Check(d_.unmap(it->first, page_), "cuMemUnmap"));
      pages_.erase(it);
      SEEDANCE_RETURN_IF_ERROR(MapPage(to + off, handle));
    }
    return base::OkStatus();
  }

  void Free(uintptr_t addr, size_t bytes) override {
    (void)Unmap(addr, bytes);
    d_.address_free(addr, bytes);
  }

 private:
  CUmemAllocationProp Prop() const {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device_;
    return prop;
  }

  base::Status MapPage(uintptr_t addr, CUmemGenericAllocationHandle handle) {
    SEEDANCE_RETURN_IF_ERROR(Check(d_.map(addr, page_, 0, handle, 0), "cuMemMap"));
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = device_;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    SEEDANCE_RETURN_IF_ERROR(Check(d_.set_access(addr, page_, &access, 1), "cuMemSetAccess"));
    pages_[addr] = handle;
    return base::OkStatus();
  }

  Driver d_;
  int device_;
  size_t page_;
  std::map<uintptr_t, CUmemGenericAllocationHandle> pages_;  // page address -> physical page
};

}  // namespace

base::StatusOr<std::unique_ptr<CudaVmm>> NewCudaVmm(int device) {
  Driver d;
  const bool found = Lookup("cuMemAddressReserve", &d.reserve) &&
                     Lookup("cuMemAddressFree", &d.address_free) &&
                     Lookup("cuMemCreate", &d.create) && Lookup("cuMemRelease", &d.release) &&
                     Lookup("cuMemMap", &d.map) && Lookup("cuMemUnmap", &d.unmap) &&
                     Lookup("cuMemSetAccess", &d.set_access) &&
                     Lookup("cuMemGetAllocationGranularity", &d.granularity);
  if (!found)
    return base::UnavailableError("the CUDA driver's virtual-memory API is not available");
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  size_t page = 0;
  SEEDANCE_RETURN_IF_ERROR(Check(d.granularity(&page, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
                                 "granularity query"));
  return std::unique_ptr<CudaVmm>(new Vmm(d, device, page));
}

}  // namespace seedance::port
