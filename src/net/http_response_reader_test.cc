#include "seedance/net/http_response_reader.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace seedance::net {
namespace {

struct ResponseCase {
  const char* name;
  std::string input;
  HttpParse state;
  BodyKind body;
};

// Each row is one rule of RFC 9112 6.3 or 4-5 as the reader applies it.
TEST(HttpResponseReaderTest, TableOfHeads) {
  const ResponseCase cases[] = {
      {"length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", HttpParse::kComplete,
       BodyKind::kLength},
      {"no reason phrase", "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", HttpParse::kComplete,
       BodyKind::kLength},
      {"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
       HttpParse::kComplete, BodyKind::kChunked},
      {"until close", "HTTP/1.1 200 OK\r\n\r\n", HttpParse::kComplete, BodyKind::kUntilClose},
      {"204 has no body", "HTTP/1.1 204 No Content\r\nContent-Length: 9\r\n\r\n",
       HttpParse::kComplete, BodyKind::kNone},
      {"304 has no body", "HTTP/1.1 304 Not Modified\r\n\r\n", HttpParse::kComplete,
       BodyKind::kNone},
      {"1xx has no body", "HTTP/1.1 100 Continue\r\n\r\n", HttpParse::kComplete, BodyKind::kNone},
      {"bare LF", "HTTP/1.1 200 OK\nContent-Length: 1\n\n", HttpParse::kComplete,
       BodyKind::kLength},
      {"prefix", "HTTP/1.1 200 OK\r\nContent-Le", HttpParse::kIncomplete, BodyKind::kNone},
      {"empty", "", HttpParse::kIncomplete, BodyKind::kNone},
      {"HTTP/2", "HTTP/2 200 OK\r\n\r\n", HttpParse::kError, BodyKind::kNone},
      {"two-digit status", "HTTP/1.1 20 OK\r\n\r\n", HttpParse::kError, BodyKind::kNone},
      {"status 099", "HTTP/1.1 099 X\r\n\r\n", HttpParse::kError, BodyKind::kNone},
      {"four-digit status", "HTTP/1.1 2000 OK\r\n\r\n", HttpParse::kError, BodyKind::kNone},
      {"conflicting lengths", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
       HttpParse::kError, BodyKind::kNone},
      {"equal lengths", "HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\n", HttpParse::kComplete,
       BodyKind::kLength},
      {"length and chunked",
       "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
       HttpParse::kError, BodyKind::kNone},
      {"gzip last", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
       HttpParse::kError, BodyKind::kNone},
      {"negative length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", HttpParse::kError,
       BodyKind::kNone},
      {"folded field", "HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", HttpParse::kError, BodyKind::kNone},
      {"field without colon", "HTTP/1.1 200 OK\r\nX a\r\n\r\n", HttpParse::kError, BodyKind::kNone},
      {"NUL in a value", std::string("HTTP/1.1 200 OK\r\nX: a\0b\r\n\r\n", 27), HttpParse::kError,
       BodyKind::kNone},
      {"bare CR", "HTTP/1.1 200 OK\rX: 1\r\n\r\n", HttpParse::kError, BodyKind::kNone},
  };
  for (const ResponseCase& c : cases) {
    const HttpResponseParse r = ParseResponseHead(c.input, HttpResponseLimits{});
    EXPECT_EQ(r.state, c.state) << c.name << ": " << r.reason;
    if (r.state == HttpParse::kComplete) {
      EXPECT_EQ(r.head.body, c.body) << c.name;
    }
    if (r.state == HttpParse::kError) {
      EXPECT_FALSE(r.reason.empty()) << c.name;
    }
  }
}

TEST(HttpResponseReaderTest, HeadRequestsAndKeepAlive) {
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\nX-A: b\r\n\r\n";
  HttpResponseParse r = ParseResponseHead(head, HttpResponseLimits{}, "HEAD");
  ASSERT_EQ(r.state, HttpParse::kComplete);
  EXPECT_EQ(r.head.body, BodyKind::kNone);
  EXPECT_EQ(r.head.Field("x-a"), "b");
  EXPECT_EQ(r.head.head_bytes, head.size());
  EXPECT_TRUE(r.head.keep_alive);
  r = ParseResponseHead("HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\n\r\n", {});
  EXPECT_FALSE(r.head.keep_alive);
  r = ParseResponseHead("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", {});
  EXPECT_FALSE(r.head.keep_alive);
  r = ParseResponseHead("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n",
                        {});
  EXPECT_TRUE(r.head.keep_alive);
}

TEST(HttpResponseReaderTest, LimitsOnTheHeadAndItsFields) {
  HttpResponseLimits limits;
  limits.max_head_bytes = 1024;
  limits.max_headers = 4;
  std::string endless = "HTTP/1.1 200 OK\r\n";
  while (endless.size() < 5000) endless += "X: y\r\n";
  HttpResponseParse r = ParseResponseHead(endless, limits);
  EXPECT_EQ(r.state, HttpParse::kError);
  r = ParseResponseHead(endless.substr(0, 1024), limits);
  EXPECT_EQ(r.state, HttpParse::kError);  // at the limit it can no longer be a prefix
  r = ParseResponseHead("HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: 5\r\n\r\n", limits);
  EXPECT_EQ(r.state, HttpParse::kError);
  EXPECT_NE(r.reason.find("more than 4"), std::string::npos);
}

// The decoder's output does not depend on how the body is cut into pieces: fed whole, byte by
// byte and in random pieces, a body gives the same data, and the bytes after it stay unread.
TEST(HttpResponseReaderTest, ChunkedBodiesDecodeTheSameWhateverThePieces) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::string body, expected;
    const int chunks = static_cast<int>(rng() % 6);
    for (int i = 0; i < chunks; ++i) {
      std::string data(rng() % 40 + 1, 'a');
      for (char& c : data) c = static_cast<char>('a' + rng() % 26);
      char size[16];
      std::snprintf(size, sizeof(size), rng() % 2 ? "%zx" : "%zX", data.size());
      body += std::string(size) + (rng() % 3 == 0 ? ";ext=1" : "") + "\r\n" + data + "\r\n";
      expected += data;
    }
    body += "0\r\n" + std::string(rng() % 2 ? "Trailer: x\r\n" : "") + "\r\n";
    const std::string after = "HTTP/1.1 200 OK\r\n";
    const std::string wire = body + after;
    for (int mode = 0; mode < 3; ++mode) {
      ChunkedDecoder d;
      std::string out;
      size_t at = 0;
      while (!d.done() && at < wire.size()) {
        const size_t n = mode == 0 ? wire.size() : mode == 1 ? 1 : rng() % 7 + 1;
        std::string_view in = std::string_view(wire).substr(at, n);
        const size_t before = in.size();
        ASSERT_TRUE(d.Feed(in, &out).ok());
        at += before - in.size();
        if (!in.empty()) break;  // done, with bytes left over
      }
      EXPECT_TRUE(d.done());
      EXPECT_EQ(out, expected);
      EXPECT_EQ(wire.substr(at), after);
    }
  }
}

TEST(HttpResponseReaderTest, MalformedChunkedBodiesAreRefused) {
  for (const std::string& bad :
       std::vector<std::string>{"g\r\n", "\r\n", "5\r\nhelloX\r\n", "5\rhello\r\n",
                                "1000000000000000000\r\n", std::string(5000, '1') + "\r\n"}) {
    ChunkedDecoder d;
    std::string_view in = bad;
    std::string out;
    EXPECT_FALSE(d.Feed(in, &out).ok()) << bad.substr(0, 30);
  }
  ChunkedDecoder trailers(4096, 3);
  const std::string many = "0\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n";
  std::string_view in = many;
  std::string out;
  EXPECT_FALSE(trailers.Feed(in, &out).ok());
}

}  // namespace
}  // namespace seedance::net
