#include "seedance/kv/server.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "seedance/base/testing/data.h"
#include "seedance/base/testing/wait.h"
#include "seedance/net/abuse.h"

namespace seedance::kv {
namespace {

using Json = nlohmann::json;

using base::testing::WaitUntil;

std::unique_ptr<KvServer> StartTiny(EngineOptions engine = {}, KvServerOptions options = {}) {
  const std::string dir = (base::testing::DataDir() / "tiny-llama").string();
  auto model = LlamaModel::Load(*base::Env::Default(), dir + "/aidreams260K.bin");
  if (!model.ok()) return nullptr;
  auto tok =
      Tokenizer::Load(*base::Env::Default(), dir + "/tok512.bin", model->config().vocab_size);
  if (!tok.ok()) return nullptr;
  options.model_name = "tiny";
  auto s = KvServer::Start(std::move(*model), std::make_unique<Tokenizer>(std::move(*tok)), engine,
                           options);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(*s) : nullptr;
}

#define REQUIRE_SERVER(s, ...)                                               \
  SEEDANCE_REQUIRE_DATA((base::testing::DataDir() / "tiny-llama").string()); \
  auto s = StartTiny(__VA_ARGS__);                                           \
  ASSERT_NE(s, nullptr)

httplib::Result Post(KvServer& s, const std::string& body) {
  httplib::Client c("127.0.0.1", s.port());
  c.set_read_timeout(30, 0);
  return c.Post("/v1/completions", body, "application/json");
}

TEST(KvServer, CompletesStreamsAndListsTheModel) {
  REQUIRE_SERVER(s);
  auto plain = Post(*s, R"({"model":"tiny","prompt":"I dream","max_tokens":12,"temperature":0})");
  ASSERT_TRUE(plain);
  ASSERT_EQ(plain->status, 200) << plain->body;
  const Json j = Json::parse(plain->body);
  const std::string text = j["choices"][0]["text"];
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(j["usage"]["completion_tokens"], 12);
  // The stream's chunks put together are the same text.
  auto streamed =
      Post(*s, R"({"model":"tiny","prompt":"I dream","max_tokens":12,)"
               R"("temperature":0,"stream":true,"stream_options":{"include_usage":true}})");
  ASSERT_TRUE(streamed);
  ASSERT_EQ(streamed->status, 200);
  EXPECT_EQ(streamed->get_header_value("Content-Type"), "text/event-stream");
  std::string joined, finish;
  int usage_events = 0;
  bool done = false;
  std::string body = streamed->body;
  for (size_t at = 0; at < body.size();) {
    const size_t end = body.find("\n\n", at);
    ASSERT_NE(end, std::string::npos);
    const std::string event = body.substr(at, end - at);
    ASSERT_EQ(event.rfind("data: ", 0), 0u) << event;
    const std::string data = event.substr(6);
    at = end + 2;
    if (data == "[DONE]") {
      done = true;
      EXPECT_EQ(at, body.size());
      continue;
    }
    const Json c = Json::parse(data);
    if (c["choices"].empty()) {
      ++usage_events;
      EXPECT_EQ(c["usage"]["completion_tokens"], 12);
      continue;
    }
    joined += c["choices"][0]["text"].get<std::string>();
    if (!c["choices"][0]["finish_reason"].is_null()) finish = c["choices"][0]["finish_reason"];
  }
  EXPECT_TRUE(done);
  EXPECT_EQ(usage_events, 1);
  EXPECT_EQ(joined, text);
  EXPECT_EQ(finish, "length");
  httplib::Client c("127.0.0.1", s->port());
  auto models = c.Get("/v1/models");
  ASSERT_TRUE(models);
  EXPECT_EQ(Json::parse(models->body)["data"][0]["id"], "tiny");
  auto health = c.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

// Each option out of its range is refused at Start, naming it.
TEST(KvServer, BadOptionsAreRefusedWithTheirName) {
  const std::string dir = (base::testing::DataDir() / "tiny-llama").string();
  SEEDANCE_REQUIRE_DATA(dir);
  const auto start = [&](const KvServerOptions& options) -> base::Status {
    auto model = LlamaModel::Load(*base::Env::Default(), dir + "/aidreams260K.bin");
    if (!model.ok()) return model.status();
    auto tok =
        Tokenizer::Load(*base::Env::Default(), dir + "/tok512.bin", model->config().vocab_size);
    if (!tok.ok()) return tok.status();
    return KvServer::Start(std::move(*model), std::make_unique<Tokenizer>(std::move(*tok)),
                           EngineOptions{}, options)
        .status();
  };
  const std::vector<std::pair<std::string, std::function<void(KvServerOptions&)>>> cases = {
      {"max_prompt_tokens", [](KvServerOptions& o) { o.max_prompt_tokens = -1; }},
      {"max_prompt_tokens", [](KvServerOptions& o) { o.max_prompt_tokens = 100000; }},
      {"default_max_tokens", [](KvServerOptions& o) { o.default_max_tokens = 0; }},
      {"workers", [](KvServerOptions& o) { o.http.workers = 0; }},
      {"drain_timeout",
       [](KvServerOptions& o) { o.drain_timeout = std::chrono::milliseconds(-1); }},
      {"cancel_grace", [](KvServerOptions& o) { o.cancel_grace = std::chrono::milliseconds(-1); }},
  };
  for (const auto& [field, spoil] : cases) {
    KvServerOptions o;
    spoil(o);
    const base::Status st = start(o);
    EXPECT_EQ(st.code(), base::StatusCode::kInvalidArgument) << field << ": " << st.ToString();
    EXPECT_NE(st.ToString().find(field), std::string::npos) << st.ToString();
  }
  EXPECT_TRUE(start(KvServerOptions{}).ok());
}

TEST(KvServer, BadRequestsGetTheirStatusAndAReason) {
  KvServerOptions small;
  small.http.max_body_bytes = 2048;
  REQUIRE_SERVER(s, EngineOptions{}, small);
  const std::vector<std::tuple<std::string, int, std::string>> cases = {
      {"{not json", 400, "not valid JSON"},
      {R"({"model":"tiny","prompt":"x","max_tokens":"many"})", 400, "'max_tokens' must be"},
      {R"({"model":"other","prompt":"x"})", 404, "not served here"},
      {R"({"model":"tiny","prompt":"x","max_tokens":127})", 400, "context is 128 tokens"},
      {R"({"model":"tiny","prompt":")" + std::string(300, 'z') + R"("})", 400,
       "this server takes at most 127"},
      {R"({"model":"tiny","prompt":")" + std::string(4000, 'a') + R"("})", 413, "larger"},
  };
  for (const auto& [body, status, words] : cases) {
    auto r = Post(*s, body);
    ASSERT_TRUE(r) << body.substr(0, 60);
    EXPECT_EQ(r->status, status) << body.substr(0, 60) << " -> " << r->body;
    const Json j = Json::parse(r->body);
    EXPECT_NE(j["error"]["message"].get<std::string>().find(words), std::string::npos) << r->body;
  }
  httplib::Client c("127.0.0.1", s->port());
  auto nowhere = c.Get("/v2/nothing");
  ASSERT_TRUE(nowhere);
  EXPECT_EQ(nowhere->status, 404);
  // A known path with the wrong method: 405 and the methods it takes, for each route.
  for (const auto& [path, allow] : std::vector<std::pair<std::string, std::string>>{
           {"/v1/completions", "POST"}, {"/v1/models", "GET, HEAD"}, {"/metrics", "GET, HEAD"}}) {
    auto wrong = allow == "POST" ? c.Get(path) : c.Delete(path);
    ASSERT_TRUE(wrong) << path;
    EXPECT_EQ(wrong->status, 405) << path;
    EXPECT_EQ(wrong->get_header_value("Allow"), allow) << path;
    EXPECT_NE(Json::parse(wrong->body)["error"]["message"].get<std::string>().find("not allowed"),
              std::string::npos);
  }
  // The server counts a response when it queues it, before the client reads it.
  KvServerStats st = s->stats();
  EXPECT_EQ(st.responses[400], 4u);
  EXPECT_EQ(st.responses[404], 2u);
  EXPECT_EQ(st.responses[405], 3u);
  EXPECT_EQ(st.responses[413], 1u);
}

// One request at a time fits the budget; a second at the same time is refused with 429 (nothing
// waits), one that could never fit with 400; the drain lets the running one finish. The tiny model
// may finish the first request before the second arrives (then the second is served: also
// correct), so fresh servers are started until the second finds the first running.
TEST(KvServer, OverBudgetIs429AndDrainFinishesWhatRuns) {
  EngineOptions tight;
  tight.max_queue = 0;  // nothing waits: what the budget cannot hold now is refused
  tight.kv_budget_bytes = int64_t{250} * 1024;
  KvServerOptions o;
  o.drain_timeout = std::chrono::milliseconds(20000);
  SEEDANCE_REQUIRE_DATA((base::testing::DataDir() / "tiny-llama").string());
  for (int attempt = 0;; ++attempt) {
    ASSERT_LT(attempt, 50) << "in 50 servers the first request always ended before the second";
    auto s = StartTiny(tight, o);
    ASSERT_NE(s, nullptr);
    // 1 + 120 tokens of FP32 cache (4 layers x 64 x 2 x 4 bytes = 2 KiB a token, 242 KiB) fit;
    // a second one at the same time does not.
    int first_status = 0;
    std::thread first([&] {
      auto r = Post(*s, R"({"model":"tiny","prompt":"","max_tokens":120,"temperature":0})");
      if (r) first_status = r->status;
    });
    ASSERT_TRUE(WaitUntil([&] {
      const EngineStats e = s->engine_stats();
      return e.running > 0 || e.finished_length > 0;
    }));
    auto refused = Post(*s, R"({"model":"tiny","prompt":"","max_tokens":120})");
    ASSERT_TRUE(refused);
    if (refused->status == 200) {  // the first had ended: try again
      first.join();
      EXPECT_EQ(first_status, 200);
      continue;
    }
    EXPECT_EQ(refused->status, 429) << refused->body;
    EXPECT_EQ(refused->get_header_value("Retry-After"), "1");
    EXPECT_EQ(Json::parse(refused->body)["error"]["code"], "queue_full");
    auto huge = Post(*s, R"({"model":"tiny","prompt":"","max_tokens":127})");
    ASSERT_TRUE(huge);
    EXPECT_EQ(huge->status, 400) << huge->body;  // never servable: nothing to retry
    EXPECT_FALSE(huge->has_header("Retry-After"));
    EXPECT_EQ(Json::parse(huge->body)["error"]["code"], "kv_budget_exceeded");
    const base::Report drained = s->Drain();
    first.join();
    EXPECT_EQ(first_status, 200);  // finished, whether before the drain began or during it
    EXPECT_LE(drained["finished"].get<int>(), 1) << drained.dump();
    EXPECT_EQ(drained["cancelled"], 0);
    break;
  }
}

// The tiny model generates 120 tokens in a few milliseconds, so a drain may come after the stream
// has ended (finished, not cancelled: also correct); the test starts fresh servers until one
// drain catches its stream running, and checks what that stream's client got. The handler gets a
// long grace to send its error event (the drain goes on as soon as it has): on a loaded machine a
// starved handler missed the default second and its client read a cut stream.
TEST(KvServer, ADrainPastItsTimeoutCancelsAndSaysSo) {
  KvServerOptions o;
  o.drain_timeout = std::chrono::milliseconds(0);
  o.cancel_grace = std::chrono::milliseconds(60000);
  SEEDANCE_REQUIRE_DATA((base::testing::DataDir() / "tiny-llama").string());
  std::string stream_body;
  base::Report drained;
  for (int attempt = 0; attempt < 50; ++attempt) {
    auto s = StartTiny(EngineOptions{}, o);
    ASSERT_NE(s, nullptr);
    stream_body.clear();
    std::thread client([&] {
      auto r = Post(*s, R"({"model":"tiny","prompt":"","max_tokens":120,"stream":true})");
      stream_body = r ? r->body : "no response: " + httplib::to_string(r.error());
    });
    ASSERT_TRUE(WaitUntil([&] { return s->engine_stats().generation_tokens > 0; }));
    drained = s->Drain();
    client.join();
    // The stream was in flight when the drain began (then it finished or was cancelled in it), or
    // it had ended before.
    EXPECT_LE(drained["in_flight"].get<int>(), 1) << drained.dump();
    EXPECT_EQ(drained["cancelled"].get<int>() + drained["finished"].get<int>(),
              drained["in_flight"].get<int>())
        << drained.dump();
    if (drained["cancelled"] == 1) break;
  }
  ASSERT_EQ(drained["cancelled"], 1) << "no drain in 50 caught its stream running";
  EXPECT_EQ(drained["clients_cut"], 0) << drained.dump();
  EXPECT_NE(stream_body.find("\"error\""), std::string::npos) << stream_body;
  EXPECT_NE(stream_body.find("drain timeout"), std::string::npos);
  EXPECT_EQ(stream_body.find("[DONE]"), std::string::npos);
}

// Clients that never read their streams cannot hold a drain past its timeout (the sockets are
// opened before the streams are generated).
TEST(KvServer, ADrainEndsAtItsTimeoutWhateverTheClientsDo) {
  KvServerOptions o;
  o.drain_timeout = std::chrono::milliseconds(300);
  EngineOptions one;
  one.max_batch = 1;
  REQUIRE_SERVER(s, one, o);
  const std::string body =
      R"({"model":"tiny","prompt":"","max_tokens":120,"temperature":0,"stream":true})";
  const std::string request =
      "POST /v1/completions HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\n\r\n" + body;
  std::vector<int> fds;
  for (int i = 0; i < 3; ++i) {
    const int fd = net::abuse::Connect(s->port());
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(net::abuse::SendAll(fd, request));
    fds.push_back(fd);
  }
  // Every request admitted or queued (or already done) before the drain begins.
  ASSERT_TRUE(WaitUntil([&] {
    const EngineStats e = s->engine_stats();
    return e.running + e.waiting + static_cast<int64_t>(e.finished_length + e.finished_stop) >= 3;
  }));
  const base::Report drained = s->Drain();
  for (int fd : fds) ::close(fd);
  // The tiny model finishes in milliseconds, so this holds the bound, not the cancellation
  // (ADrainPastItsTimeoutCancelsAndSaysSo does that).
  EXPECT_LT(drained["seconds"].get<double>(), 0.3 + 1.0 + 1.0) << drained.dump();
  // What was in flight when the drain began ended in it (the rest had finished before).
  EXPECT_EQ(drained["finished"].get<int>() + drained["cancelled"].get<int>(),
            drained["in_flight"].get<int>())
      << drained.dump();
  const EngineStats all = s->engine_stats();
  EXPECT_EQ(all.finished_length + all.finished_stop + all.cancelled, 3u) << drained.dump();
}

TEST(KvServer, HoldsTheHttpServersGuaranteesAgainstAbusiveClients) {
  KvServerOptions o;
  o.http.request_timeout = std::chrono::milliseconds(300);
  REQUIRE_SERVER(s, EngineOptions{}, o);
  const int port = s->port();
  for (const base::Status& check :
       {net::abuse::Slowloris(port, "/v1/models", o.http.request_timeout),
        net::abuse::IdleSockets(port, "/v1/models", 50, o.http.request_timeout),
        net::abuse::HugeHeaders(port, "/v1/models"), net::abuse::Pipelining(port, "/healthz", 500),
        net::abuse::ManyConnections(port, "/v1/models", 1000)}) {
    EXPECT_TRUE(check.ok()) << check.ToString();
  }
}

// The client reads one event and hangs up; the generation is cancelled and the stream counted as
// cut. The tiny model may finish all 120 tokens before the server sees the socket close (then the
// stream ended normally, also correct), so fresh servers are started until a hang-up catches the
// generation running.
TEST(KvServer, AStreamWhoseClientLeavesIsCancelled) {
  SEEDANCE_REQUIRE_DATA((base::testing::DataDir() / "tiny-llama").string());
  for (int attempt = 0;; ++attempt) {
    ASSERT_LT(attempt, 50) << "in 50 servers no hang-up came before the generation ended";
    auto s = StartTiny();
    ASSERT_NE(s, nullptr);
    httplib::Client c("127.0.0.1", s->port());
    std::string first;
    // The content receiver stops after the first event: the client closes the connection.
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/completions";
    req.body = R"({"model":"tiny","prompt":"","max_tokens":120,"temperature":0,"stream":true})";
    req.set_header("Content-Type", "application/json");
    req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
      first.append(data, n);
      return false;
    };
    c.send(req);
    EXPECT_NE(first.find("data: "), std::string::npos);
    ASSERT_TRUE(WaitUntil([&] {
      const EngineStats e = s->engine_stats();
      return e.cancelled + e.finished_length + e.finished_stop == 1;
    }));
    if (s->engine_stats().cancelled == 0) continue;  // it ended before the hang-up was seen
    EXPECT_TRUE(WaitUntil([&] { return s->stats().streams_cut == 1; }));
    EXPECT_LT(s->engine_stats().generation_tokens, 120u);
    break;
  }
}

}  // namespace
}  // namespace seedance::kv
