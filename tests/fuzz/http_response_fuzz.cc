// Fuzz target (libFuzzer): the response reader of net::HttpClient (http_response_reader.h), what
// every client of Seedance reads a server's answer with. The first byte picks the request's method
// (GET or HEAD); the rest is the server's bytes. Checks, on every input:
//  - ParseResponseHead: a complete head lies within the input and the limit, parses the same with
//    anything appended, and has a status of 100-999; an incomplete one is shorter than the limit;
//    an error has a reason.
//  - ChunkedDecoder, on the bytes after a complete head (or on all of them): fed whole and fed in
//    pieces cut where the input says, it gives the same data, the same end and the same verdict,
//    and never more data than it was given.
// Built by the `asan` preset; .ci/run runs it from the seeds in tests/fuzz/corpus/http_response/.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "seedance/net/http_response_reader.h"

namespace {

struct Decoded {
  bool ok = true;
  bool done = false;
  std::string data;
  size_t used = 0;
};

Decoded Decode(std::string_view body, size_t piece) {
  seedance::net::ChunkedDecoder d(64, 4);  // small limits, so that the fuzzer reaches them
  Decoded out;
  size_t at = 0;
  while (at < body.size() && !d.done()) {
    std::string_view in = body.substr(at, piece);
    const size_t before = in.size();
    if (!d.Feed(in, &out.data).ok()) {
      out.ok = false;
      break;
    }
    at += before - in.size();
    if (!in.empty() && !d.done()) __builtin_trap();  // it stops early only at the end
  }
  out.done = d.done();
  out.used = at;
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using seedance::net::HttpParse;
  if (size == 0) return 0;
  const std::string_view method = (data[0] & 1) != 0 ? "HEAD" : "GET";
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  seedance::net::HttpResponseLimits limits;
  limits.max_head_bytes = 1024;
  limits.max_headers = 8;
  const auto r = seedance::net::ParseResponseHead(text, limits, method);
  std::string_view body = text;
  switch (r.state) {
    case HttpParse::kIncomplete:
      if (text.size() >= limits.max_head_bytes) __builtin_trap();
      break;
    case HttpParse::kComplete: {
      if (r.head.head_bytes == 0 || r.head.head_bytes > text.size() ||
          r.head.head_bytes > limits.max_head_bytes || r.head.status < 100 || r.head.status > 999 ||
          r.head.fields.size() > limits.max_headers) {
        __builtin_trap();
      }
      const std::string longer = std::string(text) + "X: y\r\n\r\n";
      const auto again = seedance::net::ParseResponseHead(longer, limits, method);
      if (again.state != HttpParse::kComplete || again.head.head_bytes != r.head.head_bytes ||
          again.head.status != r.head.status || again.head.body != r.head.body) {
        __builtin_trap();
      }
      if (method == "HEAD" && r.head.body != seedance::net::BodyKind::kNone) __builtin_trap();
      body = text.substr(r.head.head_bytes);
      break;
    }
    case HttpParse::kError:
      if (r.reason.empty()) __builtin_trap();
      break;
  }
  const Decoded whole = Decode(body, body.size() + 1);
  const Decoded pieces = Decode(body, 1 + data[0] % 7);
  if (whole.ok != pieces.ok) __builtin_trap();
  if (whole.ok &&
      (whole.done != pieces.done || whole.data != pieces.data || whole.used != pieces.used)) {
    __builtin_trap();
  }
  if (whole.data.size() > body.size()) __builtin_trap();
  return 0;
}
