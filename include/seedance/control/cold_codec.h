// The cold tier's encoding of a checkpoint payload (feature CTRL-3): lossless byte shuffle, then
// zstd. Floating-point tensors compress poorly byte by byte — exponent and mantissa bytes
// interleave — but well once the bytes of equal significance are grouped (the shuffle filter of
// Blosc and HDF5): for elements of w bytes, byte j of element i moves to position j·n + i.
//
// A cold frame (little-endian), validated before anything is decoded:
//
//   offset  bytes  field
//   0       4      magic "SDCZ"
//   4       1      version (1)
//   5       1      element bytes w (1, 2, 4 or 8; 1: no shuffle)
//   6       8      original bytes N
//   14      4      CRC-32 of the original (checkpoint_store.h's Crc32)
//   18      ...    one zstd frame of the shuffled bytes (the N mod w tail bytes unshuffled last)
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "seedance/base/status.h"

namespace seedance::control {

struct ColdOptions {
  int element_bytes = 4;  // fp32 weights and optimizer moments
  int level = 3;          // zstd's default level
};

// The shuffle alone and its inverse (exposed for tests and benchmarks).
std::string ByteShuffle(std::string_view data, int element_bytes);
std::string ByteUnshuffle(std::string_view data, int element_bytes);

base::StatusOr<std::string> EncodeCold(std::string_view payload, const ColdOptions& options);
// The original bytes; an error names the field that failed (magic, version, element bytes,
// length, zstd frame, CRC) — a damaged frame never decodes to wrong bytes.
base::StatusOr<std::string> DecodeCold(std::string_view frame);

}  // namespace seedance::control
