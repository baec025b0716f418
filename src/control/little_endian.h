// Little-endian integer fields of control/'s file formats (checkpoint_store.h, cold_codec.h).
// Internal to src/control.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace seedance::control::internal {

// Appends the low `bytes` bytes of v, least significant first.
inline void PutLe(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

// Reads `bytes` bytes at `at` (the caller has checked the length).
inline uint64_t GetLe(std::string_view in, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    v |= static_cast<uint64_t>(static_cast<unsigned char>(in[at + static_cast<size_t>(i)]))
         << (8 * i);
  }
  return v;
}

}  // namespace seedance::control::internal
