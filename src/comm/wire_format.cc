// Encoding helpers and the validating decoder of the payload format (see
// wire_format.h). The decoder works in two phases: Parse() checks the whole
// payload and records where each section starts; only then does Apply() touch
// the output. So a bad payload never writes anything, let alone out of bounds.
#include "seedance/comm/wire_format.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>

#include "seedance/port/simd_quantize.h"
#include "seedance/precision/convert.h"
#include "seedance/precision/formats.h"

namespace seedance::comm {
namespace {

constexpr uint8_t kMagic[4] = {'S', 'D', 'G', 'C'};

uint32_t LoadU32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // the format is little-endian, as every platform Seedance builds for
}

uint64_t LoadU64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

float LoadF32(const uint8_t* p) {
  float v;
  std::memcpy(&v, p, 4);
  return v;
}

float LoadF16(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return precision::HalfToFloat(h);
}

base::Status Corrupt(const std::string& what, size_t offset) {
  return base::InvalidArgumentError("corrupt payload: " + what, "byte " + std::to_string(offset));
}

// A bounded reader over the body.
class Reader {
 public:
  Reader(std::span<const uint8_t> bytes, size_t base) : bytes_(bytes), base_(base) {}
  size_t offset() const { return pos_; }
  size_t left() const { return bytes_.size() - pos_; }
  const uint8_t* Take(size_t n) {
    if (n > left()) return nullptr;
    const uint8_t* p = bytes_.data() + pos_;
    pos_ += n;
    return p;
  }
  size_t where() const { return base_ + pos_; }

 private:
  std::span<const uint8_t> bytes_;
  size_t base_;
  size_t pos_ = 0;
};

// The index section, checked: `count` strictly increasing indices below n.
struct IndexSection {
  bool bitmap = false;
  const uint8_t* data = nullptr;
  size_t bytes = 0;
};

base::StatusOr<IndexSection> ParseIndices(Reader& r, bool bitmap, uint64_t n, uint64_t count) {
  IndexSection s;
  s.bitmap = bitmap;
  if (bitmap) {
    s.bytes = static_cast<size_t>((n + 7) / 8);
    s.data = r.Take(s.bytes);
    if (!s.data) return Corrupt("bitmap truncated", r.where());
    uint64_t ones = 0;
    for (size_t i = 0; i < s.bytes; ++i) ones += static_cast<uint64_t>(std::popcount(s.data[i]));
    if (n % 8 != 0 && (s.data[s.bytes - 1] >> (n % 8)) != 0) {
      return Corrupt("bitmap has bits past n", r.where());
    }
    if (ones != count)
      return Corrupt(
          "bitmap holds " + std::to_string(ones) + " indices, header says " + std::to_string(count),
          r.where());
    return s;
  }
  const uint8_t* len = r.Take(4);
  if (!len) return Corrupt("index length truncated", r.where());
  s.bytes = LoadU32(len);
  s.data = r.Take(s.bytes);
  if (!s.data) return Corrupt("index varints truncated", r.where());
  // Walk the varints once to check them.
  uint64_t seen = 0, next_min = 0;
  size_t i = 0;
  while (i < s.bytes) {
    uint64_t v = 0;
    int shift = 0;
    while (true) {
      if (i >= s.bytes) return Corrupt("varint runs past its section", r.where());
      const uint8_t byte = s.data[i++];
      if (shift == 63 && (byte & 0x7E) != 0) return Corrupt("varint overflows 64 bits", r.where());
      v |= static_cast<uint64_t>(byte & 0x7F) << shift;
      if (!(byte & 0x80)) break;
      shift += 7;
      if (shift > 63) return Corrupt("varint too long", r.where());
    }
    if (v > n) return Corrupt("index gap past n", r.where());
    const uint64_t index = next_min + v;
    if (index >= n) return Corrupt("index " + std::to_string(index) + " >= n", r.where());
    next_min = index + 1;
    if (++seen > count) return Corrupt("more indices than the header's count", r.where());
  }
  if (seen != count) return Corrupt("fewer indices than the header's count", r.where());
  return s;
}

// Calls f(index) for each index of a checked section, in order.
template <typename F>
void ForEachIndex(const IndexSection& s, uint64_t n, F f) {
  if (s.bitmap) {
    for (size_t byte = 0; byte < s.bytes; ++byte) {
      uint8_t bits = s.data[byte];
      while (bits) {
        const int b = std::countr_zero(bits);
        f(static_cast<uint64_t>(byte) * 8 + static_cast<uint64_t>(b));
        bits &= static_cast<uint8_t>(bits - 1);
      }
    }
    return;
  }
  uint64_t next_min = 0;
  size_t i = 0;
  while (i < s.bytes) {
    uint64_t v = 0;
    int shift = 0;
    uint8_t byte;
    do {
      byte = s.data[i++];
      v |= static_cast<uint64_t>(byte & 0x7F) << shift;
      shift += 7;
    } while (byte & 0x80);
    const uint64_t index = next_min + v;
    f(index);
    next_min = index + 1;
  }
  (void)n;
}

int Int4(uint8_t packed, bool high) {
  const int v = high ? (packed >> 4) : (packed & 0x0F);
  return v >= 8 ? v - 16 : v;  // two's complement nibble
}

base::Status CheckScale(float s, size_t where) {
  if (!std::isfinite(s) || s < 0) return Corrupt("scale not finite and >= 0", where);
  return base::OkStatus();
}

}  // namespace

base::StatusOr<PayloadHeader> ReadHeader(std::span<const uint8_t> p) {
  if (p.size() < kHeaderBytes) return Corrupt("shorter than the 24-byte header", p.size());
  if (std::memcmp(p.data(), kMagic, 4) != 0) return Corrupt("bad magic", 0);
  if (p[4] != kWireVersion) {
    return Corrupt("unsupported version " + std::to_string(p[4]) + " (this build reads 1)", 4);
  }
  PayloadHeader h;
  if (p[5] < 1 || p[5] > 5) return Corrupt("unknown kind " + std::to_string(p[5]), 5);
  h.kind = static_cast<PayloadKind>(p[5]);
  h.flags = p[6];
  if (h.flags & ~kKnownFlags) return Corrupt("unknown flags", 6);
  if (p[7] != 0) return Corrupt("reserved byte not zero", 7);
  h.n = LoadU64(p.data() + 8);
  h.count = LoadU32(p.data() + 16);
  h.body_bytes = LoadU32(p.data() + 20);
  if (h.body_bytes != p.size() - kHeaderBytes) {
    return Corrupt("body length " + std::to_string(h.body_bytes) + " but " +
                       std::to_string(p.size() - kHeaderBytes) + " bytes follow the header",
                   20);
  }
  return h;
}

base::Status DecodeAdd(std::span<const uint8_t> payload, std::span<float> out, float weight) {
  SEEDANCE_ASSIGN_OR_RETURN(PayloadHeader h, ReadHeader(payload));
  if (h.n != out.size()) {
    return base::InvalidArgumentError("payload holds " + std::to_string(h.n) +
                                      " elements, the output " + std::to_string(out.size()));
  }
  Reader r(payload.subspan(kHeaderBytes), kHeaderBytes);
  const uint64_t n = h.n;
  const bool bitmap = h.flags & kFlagBitmap;
  auto done = [&]() -> base::Status {
    if (r.left() != 0) return Corrupt(std::to_string(r.left()) + " trailing bytes", r.where());
    return base::OkStatus();
  };

  switch (h.kind) {
    case PayloadKind::kSparse: {
      if (h.count > n) return Corrupt("k > n", 16);
      SEEDANCE_ASSIGN_OR_RETURN(IndexSection idx, ParseIndices(r, bitmap, n, h.count));
      const size_t width = (h.flags & kFlagFp16Values) ? 2 : 4;
      const uint8_t* values = r.Take(size_t{h.count} * width);
      if (!values) return Corrupt("values truncated", r.where());
      SEEDANCE_RETURN_IF_ERROR(done());
      size_t k = 0;
      ForEachIndex(idx, n, [&](uint64_t i) {
        const uint8_t* v = values + k++ * width;
        out[i] += weight * (width == 2 ? LoadF16(v) : LoadF32(v));
      });
      return base::OkStatus();
    }
    case PayloadKind::kInt8:
    case PayloadKind::kInt4: {
      if (h.flags != 0) return Corrupt("flags must be 0 for a quantized payload", 6);
      if (h.count == 0) return Corrupt("chunk size 0", 16);
      const uint64_t chunks = (n + h.count - 1) / h.count;
      const uint8_t* scales = r.Take(chunks * 4);
      if (!scales) return Corrupt("scales truncated", r.where());
      for (uint64_t c = 0; c < chunks; ++c) {
        SEEDANCE_RETURN_IF_ERROR(CheckScale(LoadF32(scales + 4 * c), kHeaderBytes + 4 * c));
      }
      const bool four = h.kind == PayloadKind::kInt4;
      const uint8_t* q = r.Take(four ? (n + 1) / 2 : n);
      if (!q) return Corrupt("quantized values truncated", r.where());
      SEEDANCE_RETURN_IF_ERROR(done());
      const bool simd = port::UseAvx2();
      for (uint64_t c = 0; c < chunks; ++c) {
        const uint64_t begin = c * h.count, len = std::min<uint64_t>(h.count, n - begin);
        const float ws = weight * LoadF32(scales + 4 * c);
        float* o = out.data() + begin;
        if (simd && !four) {
          port::Avx2DequantAddInt8(reinterpret_cast<const int8_t*>(q) + begin, len, ws, o);
        } else if (simd && begin % 2 == 0) {
          port::Avx2DequantAddInt4(q + begin / 2, len, ws, o);
        } else {
          for (uint64_t i = 0; i < len; ++i) {
            const uint64_t at = begin + i;
            const int v = four ? Int4(q[at / 2], at % 2) : static_cast<int8_t>(q[at]);
            o[i] += ws * static_cast<float>(v);
          }
        }
      }
      return base::OkStatus();
    }
    case PayloadKind::kSign: {
      if (h.flags != 0 || h.count != 0) return Corrupt("flags and count must be 0 for sign", 6);
      const uint8_t* s = r.Take(4);
      if (!s) return Corrupt("scale truncated", r.where());
      const float scale = LoadF32(s);
      SEEDANCE_RETURN_IF_ERROR(CheckScale(scale, kHeaderBytes));
      const uint8_t* bits = r.Take((n + 7) / 8);
      if (!bits) return Corrupt("sign bits truncated", r.where());
      SEEDANCE_RETURN_IF_ERROR(done());
      const float value = weight * scale;
      if (port::UseAvx2()) {
        port::Avx2SignAdd(bits, n, value, out.data());
      } else {
        for (uint64_t i = 0; i < n; ++i) out[i] += ((bits[i / 8] >> (i % 8)) & 1) ? -value : value;
      }
      return base::OkStatus();
    }
    case PayloadKind::kFp16Int4: {
      if (h.flags & kFlagFp16Values) return Corrupt("fp16 flag not used by this kind", 6);
      if (h.count > n) return Corrupt("residual count > n", 16);
      const uint8_t* dense = r.Take(n * 2);
      if (!dense) return Corrupt("fp16 values truncated", r.where());
      const uint8_t* s = r.Take(4);
      if (!s) return Corrupt("residual scale truncated", r.where());
      const float scale = LoadF32(s);
      SEEDANCE_RETURN_IF_ERROR(CheckScale(scale, r.where() - 4));
      SEEDANCE_ASSIGN_OR_RETURN(IndexSection idx, ParseIndices(r, bitmap, n, h.count));
      const uint8_t* q = r.Take((size_t{h.count} + 1) / 2);
      if (!q) return Corrupt("residual values truncated", r.where());
      SEEDANCE_RETURN_IF_ERROR(done());
      // Dense part: bulk FP16 decode in cache-sized blocks, then add.
      constexpr uint64_t kBlock = 4096;
      float block[kBlock];
      for (uint64_t b = 0; b < n; b += kBlock) {
        const uint64_t len = std::min(kBlock, n - b);
        (void)precision::ConvertToFloat(precision::Format::kFp16, dense + 2 * b, {block, len});
        for (uint64_t i = 0; i < len; ++i) out[b + i] += weight * block[i];
      }
      size_t k = 0;
      ForEachIndex(idx, n, [&](uint64_t i) {
        out[i] += weight * scale * static_cast<float>(Int4(q[k / 2], k % 2));
        ++k;
      });
      return base::OkStatus();
    }
  }
  return Corrupt("unknown kind", 5);
}

void BeginPayload(std::vector<uint8_t>& out, PayloadKind kind, uint8_t flags, uint64_t n,
                  uint32_t count) {
  uint8_t header[kHeaderBytes] = {};
  std::memcpy(header, kMagic, 4);
  header[4] = kWireVersion;
  header[5] = static_cast<uint8_t>(kind);
  header[6] = flags;
  std::memcpy(header + 8, &n, 8);
  std::memcpy(header + 16, &count, 4);  // body length (20..23) stays 0 until FinishPayload
  out.assign(header, header + kHeaderBytes);
}

void FinishPayload(std::vector<uint8_t>& out) {
  const uint32_t body = static_cast<uint32_t>(out.size() - kHeaderBytes);
  std::memcpy(out.data() + 20, &body, 4);
}

void SetFlags(std::vector<uint8_t>& out, uint8_t flags) { out[6] = flags; }

uint8_t AppendIndices(std::vector<uint8_t>& out, std::span<const uint32_t> indices, uint64_t n) {
  // Size of the varint form, computed before choosing.
  size_t varint_bytes = 0;
  uint64_t prev_next = 0;
  for (uint32_t i : indices) {
    uint64_t gap = i - prev_next;
    do {
      ++varint_bytes;
      gap >>= 7;
    } while (gap);
    prev_next = uint64_t{i} + 1;
  }
  const size_t bitmap_bytes = static_cast<size_t>((n + 7) / 8);
  if (bitmap_bytes < varint_bytes + 4) {
    const size_t start = out.size();
    out.resize(start + bitmap_bytes, 0);
    for (uint32_t i : indices) out[start + i / 8] |= static_cast<uint8_t>(1u << (i % 8));
    return kFlagBitmap;
  }
  AppendU32(out, static_cast<uint32_t>(varint_bytes));
  prev_next = 0;
  for (uint32_t i : indices) {
    uint64_t gap = i - prev_next;
    do {
      uint8_t byte = gap & 0x7F;
      gap >>= 7;
      if (gap) byte |= 0x80;
      out.push_back(byte);
    } while (gap);
    prev_next = uint64_t{i} + 1;
  }
  return 0;
}

void AppendU32(std::vector<uint8_t>& out, uint32_t v) {
  uint8_t b[4];
  std::memcpy(b, &v, 4);
  out.insert(out.end(), b, b + 4);
}

void AppendF32(std::vector<uint8_t>& out, float v) { AppendU32(out, std::bit_cast<uint32_t>(v)); }

void AppendF16(std::vector<uint8_t>& out, float v) {
  const uint16_t h = precision::FloatToHalf(v);
  out.push_back(static_cast<uint8_t>(h & 0xFF));
  out.push_back(static_cast<uint8_t>(h >> 8));
}

}  // namespace seedance::comm
