#include "seedance/control/cache_traces.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

namespace seedance::control {

std::vector<CacheKey> ShuffledEpochsTrace(CacheKey n, int epochs, std::mt19937_64& rng) {
  std::vector<CacheKey> order(n), trace;
  std::iota(order.begin(), order.end(), 0);
  for (int e = 0; e < epochs; ++e) {
    std::shuffle(order.begin(), order.end(), rng);
    trace.insert(trace.end(), order.begin(), order.end());
  }
  return trace;
}

std::vector<CacheKey> ZipfTrace(size_t length, CacheKey n, double s, std::mt19937_64& rng) {
  std::vector<double> cdf(n);
  double sum = 0;
  for (CacheKey i = 0; i < n; ++i) cdf[i] = sum += 1.0 / std::pow(static_cast<double>(i + 1), s);
  std::uniform_real_distribution<double> u(0, sum);
  std::vector<CacheKey> t(length);
  for (auto& k : t) {
    k = static_cast<CacheKey>(std::lower_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin());
  }
  return t;
}

base::StatusOr<std::vector<CacheKey>> ParseLirsTrace(std::string_view text,
                                                     const std::string& file) {
  std::vector<CacheKey> keys;
  size_t line_no = 0;
  while (!text.empty()) {
    const size_t end = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    ++line_no;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
      line.remove_suffix(1);
    }
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (line.empty() || line == "*") continue;
    CacheKey k = 0;
    const auto r = std::from_chars(line.data(), line.data() + line.size(), k);
    if (r.ec != std::errc() || r.ptr != line.data() + line.size()) {
      return base::InvalidArgumentError(
          "line " + std::to_string(line_no) +
              ": expected a block number (a non-negative integer below 2^64) or \"*\", got \"" +
              std::string(line.substr(0, 40)) + "\"",
          file);
    }
    keys.push_back(k);
  }
  return keys;
}

base::StatusOr<std::vector<CacheKey>> ParseCache2kTrace(std::string_view bytes,
                                                        const std::string& file) {
  if (bytes.size() % 4 != 0) {
    return base::InvalidArgumentError(std::to_string(bytes.size()) +
                                          " bytes: expected 4-byte big-endian integers (a "
                                          "multiple of 4)",
                                      file);
  }
  std::vector<CacheKey> keys(bytes.size() / 4);
  for (size_t i = 0; i < keys.size(); ++i) {
    CacheKey k = 0;
    for (size_t b = 0; b < 4; ++b) k = (k << 8) | static_cast<unsigned char>(bytes[4 * i + b]);
    keys[i] = k;
  }
  return keys;
}

std::string RenderLirsTrace(const std::vector<CacheKey>& keys) {
  std::string out;
  for (CacheKey k : keys) out += std::to_string(k) + "\n";
  return out;
}

std::string RenderCache2kTrace(const std::vector<CacheKey>& keys) {
  std::string out(4 * keys.size(), '\0');
  for (size_t i = 0; i < keys.size(); ++i) {
    for (size_t b = 0; b < 4; ++b) {
      out[4 * i + b] = static_cast<char>((keys[i] >> (8 * (3 - b))) & 0xFF);
    }
  }
  return out;
}

}  // namespace seedance::control
