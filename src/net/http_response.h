// Private to seedance::net: how responses become bytes on the wire (RFC 9112 4, 6, 7.1).
#pragma once

#include <string>
#include <string_view>

#include "seedance/net/http_server.h"

namespace seedance::net::internal {

enum class BodyFraming {
  kLength,      // Content-Length and the body (nothing for HEAD)
  kChunked,     // Transfer-Encoding: chunked; the body follows as chunks
  kUntilClose,  // HTTP/1.0 stream: no length, "Connection: close", the body until the close
};

// The status line and fields, and for kLength the body; `req` decides keep-alive and HEAD.
std::string RenderResponse(const HttpRequestHead& req, const HttpResponse& res,
                           BodyFraming framing = BodyFraming::kLength);

// One chunk of a chunked body ("" for an empty piece: a zero-size chunk would end the body).
std::string EncodeChunk(std::string_view data);

inline constexpr std::string_view kLastChunk = "0\r\n\r\n";

}  // namespace seedance::net::internal
