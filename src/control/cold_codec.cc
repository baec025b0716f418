#include "seedance/control/cold_codec.h"

#include <zstd.h>

#include "seedance/control/checkpoint_store.h"
#include "src/control/little_endian.h"

namespace seedance::control {
namespace {

using internal::GetLe;
using internal::PutLe;

constexpr std::string_view kColdMagic = "SDCZ";
constexpr int kColdVersion = 1;
constexpr size_t kColdHeader = 18;

bool ValidWidth(int w) { return w == 1 || w == 2 || w == 4 || w == 8; }

}  // namespace

std::string ByteShuffle(std::string_view data, int element_bytes) {
  const auto w = static_cast<size_t>(element_bytes);
  std::string out(data.size(), '\0');
  if (w <= 1) return std::string(data);
  const size_t n = data.size() / w;
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < w; ++j) out[j * n + i] = data[i * w + j];
  }
  for (size_t k = n * w; k < data.size(); ++k) out[k] = data[k];  // the tail as it is
  return out;
}

std::string ByteUnshuffle(std::string_view data, int element_bytes) {
  const auto w = static_cast<size_t>(element_bytes);
  std::string out(data.size(), '\0');
  if (w <= 1) return std::string(data);
  const size_t n = data.size() / w;
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < w; ++j) out[i * w + j] = data[j * n + i];
  }
  for (size_t k = n * w; k < data.size(); ++k) out[k] = data[k];
  return out;
}

base::StatusOr<std::string> EncodeCold(std::string_view payload, const ColdOptions& options) {
  if (!ValidWidth(options.element_bytes)) {
    return base::InvalidArgumentError("must be 1, 2, 4 or 8", "element_bytes");
  }
  if (options.level < 1 || options.level > ZSTD_maxCLevel()) {
    return base::InvalidArgumentError("must be in 1.." + std::to_string(ZSTD_maxCLevel()), "level");
  }
  const std::string shuffled = ByteShuffle(payload, options.element_bytes);
  std::string out;
  out.reserve(kColdHeader + ZSTD_compressBound(shuffled.size()));
  out.append(kColdMagic);
  PutLe(out, kColdVersion, 1);
  PutLe(out, static_cast<uint64_t>(options.element_bytes), 1);
  PutLe(out, payload.size(), 8);
  PutLe(out, Crc32(payload), 4);
  out.resize(kColdHeader + ZSTD_compressBound(shuffled.size()));
  const size_t written = ZSTD_compress(out.data() + kColdHeader, out.size() - kColdHeader,
                                       shuffled.data(), shuffled.size(), options.level);
  if (ZSTD_isError(written)) {
    return base::InternalError(std::string("zstd: ") + ZSTD_getErrorName(written));
  }
  out.resize(kColdHeader + written);
  return out;
}

base::StatusOr<std::string> DecodeCold(std::string_view frame) {
  if (frame.size() < kColdHeader) {
    return base::InvalidArgumentError(
        "a cold frame has an 18-byte header, got " + std::to_string(frame.size()) + " bytes",
        "length");
  }
  if (frame.substr(0, 4) != kColdMagic) return base::InvalidArgumentError("not SDCZ", "magic");
  if (GetLe(frame, 4, 1) != kColdVersion) {
    return base::InvalidArgumentError("unsupported " + std::to_string(GetLe(frame, 4, 1)),
                                      "version");
  }
  const int w = static_cast<int>(GetLe(frame, 5, 1));
  if (!ValidWidth(w)) return base::InvalidArgumentError("must be 1, 2, 4 or 8", "element bytes");
  const uint64_t n = GetLe(frame, 6, 8);
  const std::string_view body = frame.substr(kColdHeader);
  const unsigned long long content = ZSTD_getFrameContentSize(body.data(), body.size());
  if (content == ZSTD_CONTENTSIZE_ERROR || content == ZSTD_CONTENTSIZE_UNKNOWN) {
    return base::InvalidArgumentError("not a zstd frame with its size", "zstd frame");
  }
  if (content != n) {
    return base::InvalidArgumentError("the zstd frame holds " + std::to_string(content) +
                                          " bytes, the header says " + std::to_string(n),
                                      "length");
  }
  // zstd's densest block is an RLE block: 4 bytes for 128 KiB. A header claiming more than
  // that ratio allows is damaged (and would make us allocate for nothing).
  if (n > body.size() * 32768 + (128U << 10)) {
    return base::InvalidArgumentError("more than a zstd frame of this size can hold", "length");
  }
  std::string shuffled(n, '\0');
  const size_t got = ZSTD_decompress(shuffled.data(), shuffled.size(), body.data(), body.size());
  if (ZSTD_isError(got) || got != n) {
    return base::InvalidArgumentError(
        std::string("cannot decompress: ") + (ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short"),
        "zstd frame");
  }
  std::string original = ByteUnshuffle(shuffled, w);
  if (Crc32(original) != static_cast<uint32_t>(GetLe(frame, 14, 4))) {
    return base::InvalidArgumentError("the decoded bytes do not match the CRC-32", "CRC");
  }
  return original;
}

}  // namespace seedance::control
