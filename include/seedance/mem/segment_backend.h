// Where the caching allocator gets its memory. A back end hands out address
// space, backs parts of it with memory (page-granular), and — when it can —
// moves the memory behind pages to another address ("remap"), which the
// allocator's stitching mode uses to reuse free pages of a fragmented region.
//
//   host:    mmap'ed address space; Map/Unmap with mprotect/madvise; Remap with
//            mremap(MREMAP_FIXED), which moves the pages themselves;
//   virtual: bookkeeping only, no memory at all, for replaying traces;
//   CUDA:    the virtual-memory API (cuMemAddressReserve/cuMemCreate/cuMemMap)
//            through port::CudaVmm; Remap moves physical pages between addresses.
//
// Thread safety: a back end is used under the allocator's lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "seedance/base/status.h"

namespace seedance::mem {

class SegmentBackend {
 public:
  virtual ~SegmentBackend() = default;
  virtual std::string_view name() const = 0;
  // Mapping granularity in bytes (a power of two).
  virtual size_t page_size() const = 0;
  // Address space of `bytes` (a multiple of page_size) with no memory behind it.
  virtual base::StatusOr<uintptr_t> ReserveAddressSpace(size_t bytes) = 0;
  // Backs [addr, addr + bytes) with memory; page-aligned.
  virtual base::Status Map(uintptr_t addr, size_t bytes) = 0;
  // Returns the memory behind [addr, addr + bytes).
  virtual base::Status Unmap(uintptr_t addr, size_t bytes) = 0;
  virtual bool CanRemap() const = 0;
  // Moves the memory behind [from, from + bytes) to [to, to + bytes); the old
  // range is left without memory. Both page-aligned, `to` reserved and unmapped.
  virtual base::Status Remap(uintptr_t from, uintptr_t to, size_t bytes) = 0;
  // Gives reserved address space back.
  virtual void ReleaseAddressSpace(uintptr_t addr, size_t bytes) = 0;
};

std::unique_ptr<SegmentBackend> NewHostBackend();
// Unavailable without CUDA, a driver, or virtual-memory support on `device`.
base::StatusOr<std::unique_ptr<SegmentBackend>> NewCudaBackend(int device);
// `page_size` defaults to 2 MiB, the CUDA virtual-memory granularity.
std::unique_ptr<SegmentBackend> NewVirtualBackend(size_t page_size = size_t{2} << 20);

}  // namespace seedance::mem
