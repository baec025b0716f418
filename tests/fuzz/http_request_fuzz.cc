// Fuzz target (libFuzzer): the HTTP request-head parser of the /metrics endpoint (http_request.h).
// Checks its contract on every input: a complete head lies within the input and the limit and
// parses the same with anything appended; an incomplete one is shorter than the limit; an error
// carries one of the documented statuses. Built by the `asan` preset; .ci/run runs it from the
// seeds in tests/fuzz/corpus/http_request/.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "seedance/net/http_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using seedance::net::HttpParse;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  seedance::net::HttpLimits limits;
  limits.max_head_bytes = 1024;  // small, so that the fuzzer reaches the limits
  limits.max_target_bytes = 128;
  limits.max_headers = 8;
  const auto r = seedance::net::ParseRequestHead(text, limits);
  switch (r.state) {
    case HttpParse::kIncomplete:
      if (size >= limits.max_head_bytes) __builtin_trap();
      break;
    case HttpParse::kComplete: {
      if (r.head.head_bytes == 0 || r.head.head_bytes > size ||
          r.head.head_bytes > limits.max_head_bytes ||
          r.head.target.size() > limits.max_target_bytes || r.head.path.empty()) {
        __builtin_trap();
      }
      const std::string longer = std::string(text) + "GET / HTTP/1.1\r\n";
      const auto again = seedance::net::ParseRequestHead(longer, limits);
      if (again.state != HttpParse::kComplete || again.head.head_bytes != r.head.head_bytes ||
          again.head.target != r.head.target) {
        __builtin_trap();
      }
      break;
    }
    case HttpParse::kError:
      switch (r.status) {
        case 400:
        case 414:
        case 431:
        case 501:
        case 505:
          break;
        default:
          __builtin_trap();
      }
      if (r.reason.empty()) __builtin_trap();
      break;
  }
  return 0;
}
