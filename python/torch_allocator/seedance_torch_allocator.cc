// The C ABI that torch.cuda.memory.CUDAPluggableAllocator loads: Seedance's
// caching allocator (policy seedance-stitch on the CUDA virtual-memory back
// end), one per device, one pool per stream. Built only with CUDA.
#include <sys/types.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>

#include "seedance/mem/caching_allocator.h"

namespace {

constexpr int kMaxDevices = 64;

seedance::mem::CachingAllocator* ForDevice(int device) {
  static std::array<std::unique_ptr<seedance::mem::CachingAllocator>, kMaxDevices> allocators;
  static std::array<std::once_flag, kMaxDevices> once;
  if (device < 0 || device >= kMaxDevices) return nullptr;
  std::call_once(once[device], [device] {
    auto backend = seedance::mem::NewCudaBackend(device);
    if (!backend.ok()) {
      std::fprintf(stderr, "seedance: no CUDA back end for device %d: %s\n", device,
                   backend.status().ToString().c_str());
      return;
    }
    allocators[device] = std::make_unique<seedance::mem::CachingAllocator>(
        seedance::mem::AllocatorPolicy::kSeedanceStitch, std::move(*backend));
  });
  return allocators[device].get();
}

}  // namespace

extern "C" {

void* seedance_torch_malloc(ssize_t size, int device, void* stream) {
  seedance::mem::CachingAllocator* a = ForDevice(device);
  if (a == nullptr || size < 0) return nullptr;
  auto p = a->Allocate(static_cast<size_t>(size), reinterpret_cast<int64_t>(stream));
  return p.ok() ? *p : nullptr;  // PyTorch turns nullptr into its out-of-memory error
}

void seedance_torch_free(void* ptr, ssize_t /*size*/, int device, void* /*stream*/) {
  seedance::mem::CachingAllocator* a = ForDevice(device);
  if (a != nullptr && ptr != nullptr) (void)a->Free(ptr);
}

// values[8]: allocated, reserved, allocated peak, reserved peak, segments,
// allocations, stitches, requested peak (bytes or counts).
void seedance_torch_stats(int device, int64_t* values) {
  seedance::mem::CachingAllocator* a = ForDevice(device);
  if (a == nullptr) return;
  const seedance::mem::AllocatorStats s = a->stats();
  const int64_t v[8] = {s.allocated_bytes,
                        s.reserved_bytes,
                        s.allocated_peak_bytes,
                        s.reserved_peak_bytes,
                        s.segments,
                        s.allocations,
                        s.stitches,
                        s.requested_peak_bytes};
  for (int i = 0; i < 8; ++i) values[i] = v[i];
}

}  // extern "C"
