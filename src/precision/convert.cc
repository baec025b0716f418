// Bulk conversion dispatch and INT8 quantization (see convert.h).
#include "seedance/precision/convert.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>

#include "seedance/port/simd_convert.h"

namespace seedance::precision {
namespace {

template <typename Code>
void ScalarEncode(Format to, const float* in, Code* out, size_t n, bool saturate) {
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<Code>(Encode(to, in[i], saturate));
}

template <typename Code>
void ScalarDecode(Format from, const Code* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = Decode(from, in[i]);
}

}  // namespace

size_t CodeBytes(Format format) { return static_cast<size_t>(Info(format).bits / 8); }

// The FP8 decoders are a lookup in a 256-entry table built from the reference.
const float* Fp8DecodeTable(Format f) {
  static const auto tables = [] {
    std::array<std::array<float, 256>, 2> t{};
    for (uint32_t c = 0; c < 256; ++c) {
      t[0][c] = Decode(Format::kE4M3, c);
      t[1][c] = Decode(Format::kE5M2, c);
    }
    return t;
  }();
  return f == Format::kE4M3 ? tables[0].data() : tables[1].data();
}

base::Status ConvertFromFloat(Format to, std::span<const float> in, void* out, bool saturate,
                              port::SimdKernel kernel) {
  SEEDANCE_RETURN_IF_ERROR(port::CheckSimdKernel(kernel));
  const size_t n = in.size();
  const bool avx2 = port::UseAvx2(kernel);
  size_t done = 0;
  switch (to) {
    case Format::kFp32:
      std::memcpy(out, in.data(), n * sizeof(float));
      return base::OkStatus();
    case Format::kFp16:
    case Format::kBf16: {
      auto* o = static_cast<uint16_t*>(out);
      if (avx2) {
        done = to == Format::kFp16 ? port::Avx2FloatToHalf(in.data(), o, n, saturate)
                                   : port::Avx2FloatToBf16(in.data(), o, n, saturate);
      }
      ScalarEncode(to, in.data() + done, o + done, n - done, saturate);
      return base::OkStatus();
    }
    case Format::kE4M3:
    case Format::kE5M2: {
      auto* o = static_cast<uint8_t*>(out);
      if (avx2) {
        done = port::Avx2FloatToFp8(in.data(), o, n, to, saturate);
      }
      ScalarEncode(to, in.data() + done, o + done, n - done, saturate);
      return base::OkStatus();
    }
  }
  return base::InvalidArgumentError("unknown target format");
}

base::Status ConvertToFloat(Format from, const void* in, std::span<float> out,
                            port::SimdKernel kernel) {
  SEEDANCE_RETURN_IF_ERROR(port::CheckSimdKernel(kernel));
  const size_t n = out.size();
  const bool avx2 = port::UseAvx2(kernel);
  size_t done = 0;
  switch (from) {
    case Format::kFp32:
      std::memcpy(out.data(), in, n * sizeof(float));
      return base::OkStatus();
    case Format::kFp16:
    case Format::kBf16: {
      const auto* c = static_cast<const uint16_t*>(in);
      if (avx2) {
        done = from == Format::kFp16 ? port::Avx2HalfToFloat(c, out.data(), n)
                                     : port::Avx2Bf16ToFloat(c, out.data(), n);
      }
      ScalarDecode(from, c + done, out.data() + done, n - done);
      return base::OkStatus();
    }
    case Format::kE4M3:
    case Format::kE5M2: {
      const auto* c = static_cast<const uint8_t*>(in);
      if (kernel == port::SimdKernel::kScalar) {
        ScalarDecode(from, c, out.data(), n);
      } else {
        const float* table = Fp8DecodeTable(from);
        for (size_t i = 0; i < n; ++i) out[i] = table[c[i]];
      }
      return base::OkStatus();
    }
  }
  return base::InvalidArgumentError("unknown source format");
}

base::StatusOr<Int8Tensor> QuantizeInt8WithScales(std::span<const float> in,
                                                  std::span<const float> scales) {
  const size_t channels = scales.size();
  if (channels == 0 || in.size() % channels != 0) {
    return base::InvalidArgumentError("INT8: " + std::to_string(in.size()) +
                                      " values do not split into " + std::to_string(channels) +
                                      " channels");
  }
  for (size_t c = 0; c < channels; ++c) {
    if (!(std::isfinite(scales[c]) && scales[c] > 0)) {
      return base::InvalidArgumentError("INT8: scale must be finite and positive",
                                        "scales[" + std::to_string(c) + "]");
    }
  }
  Int8Tensor q;
  q.channels = channels;
  q.scales.assign(scales.begin(), scales.end());
  q.values.resize(in.size());
  const size_t per = in.size() / channels;
  for (size_t c = 0; c < channels; ++c) {
    const float inv = 1.0f / scales[c];
    for (size_t i = c * per; i < (c + 1) * per; ++i) {
      // nearbyint rounds half to even in the default rounding mode; NaN maps to 0.
      const float r = std::nearbyint(in[i] * inv);
      const float clamped = std::isnan(r) ? 0.0f : std::clamp(r, -128.0f, 127.0f);
      q.values[i] = static_cast<int8_t>(clamped);
    }
  }
  return q;
}

base::StatusOr<Int8Tensor> QuantizeInt8(std::span<const float> in, size_t channels) {
  if (channels == 0 || in.size() % channels != 0) {
    return base::InvalidArgumentError("INT8: " + std::to_string(in.size()) +
                                      " values do not split into " + std::to_string(channels) +
                                      " channels");
  }
  const size_t per = in.size() / channels;
  std::vector<float> scales(channels, 1.0f);
  for (size_t c = 0; c < channels; ++c) {
    float amax = 0;
    for (size_t i = c * per; i < (c + 1) * per; ++i) {
      if (!std::isfinite(in[i])) {
        return base::InvalidArgumentError("INT8: non-finite value", "index " + std::to_string(i));
      }
      amax = std::max(amax, std::fabs(in[i]));
    }
    if (amax > 0) scales[c] = amax / 127.0f;
  }
  return QuantizeInt8WithScales(in, scales);
}

std::vector<float> DequantizeInt8(const Int8Tensor& q) {
  std::vector<float> out(q.values.size());
  const size_t per = q.channels == 0 ? 0 : q.values.size() / q.channels;
  if (per == 0) return out;  // no whole channel (values empty, or fewer than channels)
  for (size_t i = 0; i < out.size(); ++i) out[i] = q.values[i] * q.scales[i / per];
  return out;
}

}  // namespace seedance::precision
