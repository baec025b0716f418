// ggml's block formats, dequantized (ggml-quants.c's layouts; tested against the gguf package's
// dequantizer in tests/python/test_gguf.py and against hand-built blocks in gguf_test.cc).
#include <cstring>

#include "seedance/kv/gguf.h"
#include "seedance/precision/formats.h"

namespace seedance::kv {
namespace {

uint16_t U16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

float Half(const uint8_t* p) { return precision::HalfToFloat(U16(p)); }

}  // namespace

bool DequantizeGgml(uint32_t type, std::span<const uint8_t> data, int64_t count, float* out) {
  const uint64_t need = GgmlBytes(type, count);
  if (need == 0 && count != 0) return false;
  if (data.size() < need) return false;
  const uint8_t* p = data.data();
  switch (static_cast<GgmlType>(type)) {
    case GgmlType::kF32:
      std::memcpy(out, p, static_cast<size_t>(count) * 4);
      return true;
    case GgmlType::kF16:
      for (int64_t i = 0; i < count; ++i) out[i] = Half(p + 2 * i);
      return true;
    case GgmlType::kBF16:
      for (int64_t i = 0; i < count; ++i) out[i] = precision::Bf16ToFloat(U16(p + 2 * i));
      return true;
    case GgmlType::kQ8_0:  // {fp16 d; int8 q[32]}: x = d * q
      for (int64_t b = 0; b < count / 32; ++b, p += 34) {
        const float d = Half(p);
        for (int j = 0; j < 32; ++j)
          out[b * 32 + j] = d * static_cast<float>(static_cast<int8_t>(p[2 + j]));
      }
      return true;
    case GgmlType::kQ4_0:  // {fp16 d; uint8 q[16]}: low nibbles are values 0..15, high 16..31
      for (int64_t b = 0; b < count / 32; ++b, p += 18) {
        const float d = Half(p);
        for (int j = 0; j < 16; ++j) {
          out[b * 32 + j] = d * static_cast<float>((p[2 + j] & 0x0F) - 8);
          out[b * 32 + j + 16] = d * static_cast<float>((p[2 + j] >> 4) - 8);
        }
      }
      return true;
    case GgmlType::kQ4_1:  // {fp16 d; fp16 m; uint8 q[16]}: x = d * q + m
      for (int64_t b = 0; b < count / 32; ++b, p += 20) {
        const float d = Half(p), m = Half(p + 2);
        for (int j = 0; j < 16; ++j) {
          out[b * 32 + j] = d * static_cast<float>(p[4 + j] & 0x0F) + m;
          out[b * 32 + j + 16] = d * static_cast<float>(p[4 + j] >> 4) + m;
        }
      }
      return true;
  }
  return false;
}

}  // namespace seedance::kv
