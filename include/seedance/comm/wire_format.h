// The wire format of compressed gradients (feature COMM-2): one self-describing,
// versioned payload per compressed tensor shard. Little-endian throughout;
// docs/design/comm.md gives the layout byte by byte.
//
//   header (24 bytes)
//     0  u8[4] magic "SDGC"        8  u64 n, the element count
//     4  u8    version (1)         16 u32 count: k (sparse kinds), chunk (quantizers),
//     5  u8    kind                       residual entries (fp16+int4), 0 (sign)
//     6  u8    flags               20 u32 body bytes (exactly what follows)
//     7  u8    reserved (0)
//   body, by kind:
//     sparse (top-k, random-k): index section, then k values (FP16 or FP32)
//     int8 / int4:  ceil(n/chunk) FP32 scales, then n int8 or ceil(n/2) bytes of int4 pairs
//     sign:         FP32 scale, then ceil(n/8) bytes of sign bits (1 = negative)
//     fp16+int4:    n FP16 values, FP32 residual scale, index section of the
//                   residual entries, ceil(count/2) bytes of int4 pairs
//   index section: flag bit 0 clear: u32 byte length L, then L bytes of LEB128
//                  varints: the first index, then each gap minus one (indices
//                  strictly increase); set: a bitmap of ceil(n/8) bytes.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "seedance/base/status.h"

namespace seedance::comm {

inline constexpr uint8_t kWireVersion = 1;
inline constexpr size_t kHeaderBytes = 24;

enum class PayloadKind : uint8_t {
  kSparse = 1,  // top-k (exact or sampled) and random-k
  kInt8 = 2,
  kInt4 = 3,
  kSign = 4,
  kFp16Int4 = 5,  // dense FP16 plus a sparse INT4 residual
};

// Header flags.
inline constexpr uint8_t kFlagBitmap = 1;      // index section is a bitmap
inline constexpr uint8_t kFlagFp16Values = 2;  // sparse values are FP16
inline constexpr uint8_t kKnownFlags = kFlagBitmap | kFlagFp16Values;

struct PayloadHeader {
  PayloadKind kind = PayloadKind::kSparse;
  uint8_t flags = 0;
  uint64_t n = 0;
  uint32_t count = 0;
  uint32_t body_bytes = 0;
};

// Reads and checks the header (magic, version, kind, flags, body length).
base::StatusOr<PayloadHeader> ReadHeader(std::span<const uint8_t> payload);

// Decodes `payload` and adds weight * value to out[i] for every element it
// carries. out.size() must equal the payload's n. Every length, index and
// scale is checked before anything is written: a truncated or corrupt
// payload is an error and leaves `out` untouched.
base::Status DecodeAdd(std::span<const uint8_t> payload, std::span<float> out, float weight = 1.0f);

// --- building blocks for the encoders (compressor.cc) -------------------

// Appends the header with body_bytes = 0; FinishPayload fills it in.
void BeginPayload(std::vector<uint8_t>& out, PayloadKind kind, uint8_t flags, uint64_t n,
                  uint32_t count);
void FinishPayload(std::vector<uint8_t>& out);

// Appends the index section for strictly increasing `indices` < n, as varints
// or as a bitmap, whichever is smaller; returns the flag bit to set.
uint8_t AppendIndices(std::vector<uint8_t>& out, std::span<const uint32_t> indices, uint64_t n);
void SetFlags(std::vector<uint8_t>& out, uint8_t flags);

void AppendU32(std::vector<uint8_t>& out, uint32_t v);
void AppendF32(std::vector<uint8_t>& out, float v);
void AppendF16(std::vector<uint8_t>& out, float v);

}  // namespace seedance::comm
