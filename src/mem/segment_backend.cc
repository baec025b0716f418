#include "seedance/mem/segment_backend.h"

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "seedance/port/cuda_vmm.h"

namespace seedance::mem {
namespace {

std::string Errno() { return std::strerror(errno); }

class HostBackend final : public SegmentBackend {
 public:
  std::string_view name() const override { return "host"; }
  size_t page_size() const override { return page_; }

  base::StatusOr<uintptr_t> ReserveAddressSpace(size_t bytes) override {
    void* p = ::mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return base::ResourceExhaustedError("mmap failed: " + Errno());
    return reinterpret_cast<uintptr_t>(p);
  }
  base::Status Map(uintptr_t addr, size_t bytes) override {
    if (::mprotect(reinterpret_cast<void*>(addr), bytes, PROT_READ | PROT_WRITE) != 0) {
      return base::ResourceExhaustedError("mprotect failed: " + Errno());
    }
    return base::OkStatus();
  }
  base::Status Unmap(uintptr_t addr, size_t bytes) override {
    void* p = reinterpret_cast<void*>(addr);
    if (::madvise(p, bytes, MADV_DONTNEED) != 0 || ::mprotect(p, bytes, PROT_NONE) != 0) {
      return base::InternalError("unmap failed: " + Errno());
    }
    return base::OkStatus();
  }
  bool CanRemap() const override { return true; }
  base::Status Remap(uintptr_t from, uintptr_t to, size_t bytes) override {
    // mremap moves the pages and leaves nothing at `from`; put an inaccessible
    // reservation back there so the allocator's address space stays whole.
    void* moved = ::mremap(reinterpret_cast<void*>(from), bytes, bytes,
                           MREMAP_MAYMOVE | MREMAP_FIXED, reinterpret_cast<void*>(to));
    if (moved == MAP_FAILED) return base::InternalError("mremap failed: " + Errno());
    void* hole = ::mmap(reinterpret_cast<void*>(from), bytes, PROT_NONE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    if (hole == MAP_FAILED) return base::InternalError("re-reserving failed: " + Errno());
    return base::OkStatus();
  }
  void ReleaseAddressSpace(uintptr_t addr, size_t bytes) override {
    ::munmap(reinterpret_cast<void*>(addr), bytes);
  }

 private:
  size_t page_ = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
};

class VirtualBackend final : public SegmentBackend {
 public:
  explicit VirtualBackend(size_t page) : page_(page) {}
  std::string_view name() const override { return "virtual"; }
  size_t page_size() const override { return page_; }
  base::StatusOr<uintptr_t> ReserveAddressSpace(size_t bytes) override {
    const uintptr_t addr = next_;
    next_ += bytes + page_;  // a guard page between reservations
    return addr;
  }
  base::Status Map(uintptr_t, size_t) override { return base::OkStatus(); }
  base::Status Unmap(uintptr_t, size_t) override { return base::OkStatus(); }
  bool CanRemap() const override { return true; }
  base::Status Remap(uintptr_t, uintptr_t, size_t) override { return base::OkStatus(); }
  void ReleaseAddressSpace(uintptr_t, size_t) override {}

 private:
  size_t page_;
  uintptr_t next_ = uintptr_t{1} << 40;  // looks like an address, is never dereferenced
};

class CudaBackend final : public SegmentBackend {
 public:
  explicit CudaBackend(std::unique_ptr<port::CudaVmm> vmm) : vmm_(std::move(vmm)) {}
  std::string_view name() const override { return "cuda"; }
  size_t page_size() const override { return vmm_->page_size(); }
  base::StatusOr<uintptr_t> ReserveAddressSpace(size_t bytes) override {
    return vmm_->Reserve(bytes);
  }
  base::Status Map(uintptr_t addr, size_t bytes) override { return vmm_->Map(addr, bytes); }
  base::Status Unmap(uintptr_t addr, size_t bytes) override { return vmm_->Unmap(addr, bytes); }
  bool CanRemap() const override { return true; }
  base::Status Remap(uintptr_t from, uintptr_t to, size_t bytes) override {
    return vmm_->Remap(from, to, bytes);
  }
  void ReleaseAddressSpace(uintptr_t addr, size_t bytes) override { vmm_->Free(addr, bytes); }

 private:
  std::unique_ptr<port::CudaVmm> vmm_;
};

}  // namespace

base::StatusOr<std::unique_ptr<SegmentBackend>> NewCudaBackend(int device) {
  SEEDANCE_ASSIGN_OR_RETURN(std::unique_ptr<port::CudaVmm> vmm, port::NewCudaVmm(device));
  return std::unique_ptr<SegmentBackend>(new CudaBackend(std::move(vmm)));
}

std::unique_ptr<SegmentBackend> NewHostBackend() { return std::make_unique<HostBackend>(); }
std::unique_ptr<SegmentBackend> NewVirtualBackend(size_t page_size) {
  return std::make_unique<VirtualBackend>(page_size);
}

}  // namespace seedance::mem
