#include "seedance/net/http_request.h"

#include <gtest/gtest.h>

#include <string>

namespace seedance::net {
namespace {

struct Case {
  const char* name;
  std::string input;
  HttpParse state;
  int status;  // kError only
};

// Each row is one rule of RFC 9112/9110 as the parser applies it.
TEST(HttpRequestTest, TableOfHeads) {
  const std::string ok = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  const Case cases[] = {
      {"minimal 1.1", ok, HttpParse::kComplete, 0},
      {"bare LF lines", "GET / HTTP/1.1\nHost: x\n\n", HttpParse::kComplete, 0},
      {"1.0 without Host", "GET / HTTP/1.0\r\n\r\n", HttpParse::kComplete, 0},
      {"leading empty lines", "\r\n\r\n" + ok, HttpParse::kComplete, 0},
      {"too many empty lines", std::string(20, '\n') + ok, HttpParse::kError, 400},
      {"prefix", ok.substr(0, 20), HttpParse::kIncomplete, 0},
      {"prefix ending in CR", "GET / HTTP/1.1\r", HttpParse::kIncomplete, 0},
      {"empty", "", HttpParse::kIncomplete, 0},
      {"bare CR", "GET / HTTP/1.1\rHost: x\r\n\r\n", HttpParse::kError, 400},
      {"two spaces", "GET  / HTTP/1.1\r\nHost: x\r\n\r\n", HttpParse::kError, 400},
      {"no version", "GET /\r\nHost: x\r\n\r\n", HttpParse::kError, 400},
      {"lower-case version", "GET / http/1.1\r\nHost: x\r\n\r\n", HttpParse::kError, 400},
      {"HTTP/2.0", "GET / HTTP/2.0\r\nHost: x\r\n\r\n", HttpParse::kError, 505},
      {"HTTP/1.2", "GET / HTTP/1.2\r\nHost: x\r\n\r\n", HttpParse::kError, 505},
      {"method not a token", "G(T / HTTP/1.1\r\nHost: x\r\n\r\n", HttpParse::kError, 400},
      {"target not a path", "GET metrics HTTP/1.1\r\nHost: x\r\n\r\n", HttpParse::kError, 400},
      {"NUL in target", std::string("GET /\0 HTTP/1.1\r\nHost: x\r\n\r\n", 28), HttpParse::kError,
       400},
      {"missing Host", "GET / HTTP/1.1\r\n\r\n", HttpParse::kError, 400},
      {"two Hosts", "GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", HttpParse::kError, 400},
      {"space before colon", "GET / HTTP/1.1\r\nHost : x\r\n\r\n", HttpParse::kError, 400},
      {"obs-fold", "GET / HTTP/1.1\r\nHost: x\r\n y\r\n\r\n", HttpParse::kError, 400},
      {"no colon", "GET / HTTP/1.1\r\nHost\r\n\r\n", HttpParse::kError, 400},
      {"control byte in value", "GET / HTTP/1.1\r\nHost: a\x01\r\n\r\n", HttpParse::kError, 400},
      {"obs-text in value", "GET / HTTP/1.1\r\nHost: x\r\nX: \xc3\xa9\r\n\r\n",
       HttpParse::kComplete, 0},
      {"chunked body", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
       HttpParse::kError, 501},
      {"chunked and a length",
       "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
       HttpParse::kError, 400},
      {"a length and chunked",
       "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
       HttpParse::kError, 400},
      {"bad Content-Length", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n",
       HttpParse::kError, 400},
      {"negative Content-Length", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
       HttpParse::kError, 400},
      {"conflicting Content-Length",
       "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
       HttpParse::kError, 400},
      {"identical Content-Length list",
       "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 3\r\n\r\n", HttpParse::kComplete, 0},
      {"Content-Length of 2^64",
       "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 18446744073709551616\r\n\r\n",
       HttpParse::kError, 400},
  };
  for (const Case& c : cases) {
    const HttpParseResult r = ParseRequestHead(c.input, HttpLimits{});
    EXPECT_EQ(r.state, c.state) << c.name << ": " << r.reason;
    if (c.state == HttpParse::kError) {
      EXPECT_EQ(r.status, c.status) << c.name;
      EXPECT_FALSE(r.reason.empty()) << c.name;
    }
  }
}

TEST(HttpRequestTest, FieldsOfACompleteHead) {
  const std::string head =
      "GET /metrics?name=x HTTP/1.1\r\nHost: h\r\nConnection: Keep-Alive, close\r\n"
      "Content-Length: 3\r\n\r\nabcGET";
  const HttpParseResult r = ParseRequestHead(head, HttpLimits{});
  ASSERT_EQ(r.state, HttpParse::kComplete) << r.reason;
  EXPECT_EQ(r.head.method, "GET");
  EXPECT_EQ(r.head.target, "/metrics?name=x");
  EXPECT_EQ(r.head.path, "/metrics");
  EXPECT_EQ(r.head.minor_version, 1);
  EXPECT_FALSE(r.head.keep_alive);  // close wins
  EXPECT_EQ(r.head.content_length, 3u);
  EXPECT_EQ(r.head.head_bytes, head.size() - 6);  // the body and the next request stay
}

TEST(HttpRequestTest, AuthorizationIsKeptAndMayAppearOnce) {
  auto r = ParseRequestHead(
      "PUT /config HTTP/1.1\r\nHost: x\r\nauthorization:  Bearer abc \r\n\r\n", {});
  ASSERT_EQ(r.state, HttpParse::kComplete);
  EXPECT_EQ(r.head.authorization, "Bearer abc");
  EXPECT_EQ(ParseRequestHead("GET / HTTP/1.1\r\nHost: x\r\n\r\n", {}).head.authorization, "");
  r = ParseRequestHead(
      "GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\n\r\n",
      {});
  EXPECT_EQ(r.state, HttpParse::kError);
  EXPECT_EQ(r.status, 400);
}

TEST(HttpRequestTest, KeepAliveDefaultsByVersion) {
  EXPECT_TRUE(ParseRequestHead("GET / HTTP/1.1\r\nHost: x\r\n\r\n", {}).head.keep_alive);
  EXPECT_FALSE(ParseRequestHead("GET / HTTP/1.0\r\n\r\n", {}).head.keep_alive);
  EXPECT_TRUE(
      ParseRequestHead("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", {}).head.keep_alive);
}

TEST(HttpRequestTest, AbsoluteFormTargetsHaveTheirPath) {
  const auto r = ParseRequestHead("GET http://h:9464/metrics HTTP/1.1\r\nHost: h\r\n\r\n", {});
  ASSERT_EQ(r.state, HttpParse::kComplete) << r.reason;
  EXPECT_EQ(r.head.path, "/metrics");
  EXPECT_EQ(ParseRequestHead("GET http://h HTTP/1.1\r\nHost: h\r\n\r\n", {}).head.path, "/");
}

TEST(HttpRequestTest, LimitsAreEnforcedWithoutReadingPastThem) {
  HttpLimits limits;
  limits.max_head_bytes = 256;
  limits.max_headers = 4;
  limits.max_target_bytes = 32;
  // A head that never ends: refused as soon as the limit is reached, never "incomplete".
  std::string endless = "GET / HTTP/1.1\r\nHost: x\r\nX: " + std::string(1000, 'a');
  for (size_t n = 256; n <= endless.size(); n += 97) {
    EXPECT_EQ(ParseRequestHead(endless.substr(0, n), limits).status, 431) << n;
  }
  EXPECT_EQ(ParseRequestHead(endless.substr(0, 255), limits).state, HttpParse::kIncomplete);
  // Field count.
  std::string many = "GET / HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 4; ++i) many += "A: b\r\n";
  EXPECT_EQ(ParseRequestHead(many + "\r\n", limits).status, 431);
  // Target length: a complete line and a request line that never ends.
  EXPECT_EQ(
      ParseRequestHead("GET /" + std::string(40, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n", limits)
          .status,
      414);
  EXPECT_EQ(ParseRequestHead("GET /" + std::string(400, 'a'), limits).status, 414);
}

// Property: a complete head parses the same whatever follows it, and every proper prefix of it
// is incomplete (a server reading one byte at a time sees the same request).
TEST(HttpRequestTest, PrefixesAreIncompleteAndSuffixesDoNotMatter) {
  const std::string head =
      "HEAD /metrics HTTP/1.1\r\nHost: 127.0.0.1:9464\r\nUser-Agent: Prometheus/2.45.0\r\n"
      "Accept: text/plain;version=0.0.4;q=1,*/*;q=0.1\r\nAccept-Encoding: gzip\r\n\r\n";
  for (size_t n = 0; n < head.size(); ++n) {
    EXPECT_EQ(ParseRequestHead(head.substr(0, n), {}).state, HttpParse::kIncomplete) << n;
  }
  const std::string tails[] = {"", "GET", "\r\n", std::string("\x00\xff garbage", 10)};
  for (const std::string& tail : tails) {
    const auto r = ParseRequestHead(head + tail, {});
    ASSERT_EQ(r.state, HttpParse::kComplete) << r.reason;
    EXPECT_EQ(r.head.head_bytes, head.size());
    EXPECT_EQ(r.head.method, "HEAD");
  }
}

}  // namespace
}  // namespace seedance::net
