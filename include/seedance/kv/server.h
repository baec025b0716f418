// `seedancectl kv serve` (feature KV-5): an OpenAI-compatible HTTP endpoint over the serving
// engine (engine.h). Routes:
//   POST /v1/completions  openai_api.h's request; `stream: true` answers text/event-stream, one
//                         "data: {chunk}" event per piece of text, then "data: [DONE]"
//   GET  /v1/models       the one model served
//   GET  /healthz         200 "ok"; 503 "draining" once a drain has begun
//   GET  /metrics         Prometheus text: requests by outcome, tokens, steps, running and
//                         waiting requests, KV bytes reserved, used and budgeted, histograms of
//                         batch size, time to first token, time per output token, request
//                         duration and queue time; then the HTTP server's own families
//                         (seedance_kv_http_*: responses by code, latency, connections, streams
//                         cut short)
// Status codes: 400 a bad request (openai_api.h; a prompt or prompt + max_tokens beyond the
// context, code "context_length_exceeded"), 404 an unknown model or path, 405 a known path with
// another method (with Allow), 413 a body over max_body_bytes, 429 the KV budget or the queue
// refuses (with the reason and Retry-After), 503 draining; every error body is OpenAI's
// {"error": {...}}. Served by net::HttpServer (its limits on connections, slow and idle clients
// and output hold here too): each request's handler runs on one of http.workers threads, and a
// streamed request whose client goes away is cancelled at once, queued or running.
//
// Drain (SIGTERM in the CLI): new completions get 503, queued and running ones go on for up to
// `drain_timeout`, then whatever is left is cancelled (a stream ends with an error event, a plain
// request gets 503), the last bytes go out, the HTTP server stops and the engine joins its
// worker. Responses not wholly handed to the kernel at the deadline (`cancel_grace` later after a
// cancellation) are cut: a slow client cannot hold the drain past its timeout.
//
// Thread safety: Start, Drain and Stop from one thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/kv/chat_template.h"
#include "seedance/kv/engine.h"
#include "seedance/kv/llama.h"
#include "seedance/net/http_server.h"

namespace seedance::kv {

// kv serve's HTTP settings: 64 KiB bodies, 128 workers (requests in progress; more wait for a
// worker), 1,024 connections, 5 s request, idle and write deadlines.
net::HttpServerOptions KvHttpDefaults();

struct KvServerOptions {
  // The address, limits, deadlines and workers (>= 1: streams run on them); the server sets
  // error_page, health, metrics and metrics_prefix itself.
  net::HttpServerOptions http = KvHttpDefaults();
  std::string model_name;     // what clients put in "model"
  int max_prompt_tokens = 0;  // 0: the context minus one (room for one generated token)
  int default_max_tokens = 16;
  std::chrono::milliseconds drain_timeout{30000};
  // After the drain cancels what is left, how long the handlers have to hand their error events to
  // the kernel (the drain goes on as soon as they have; it waits this long only for a handler
  // that is starved of CPU or a client that does not read).
  std::chrono::milliseconds cancel_grace{1000};
  // /v1/chat/completions renders messages with this template; without one it answers 400 with
  // `no_chat_template` as the reason.
  std::optional<ChatTemplate> chat_template;
  std::string no_chat_template = "the model has no chat template";
};

// HTTP responses by status code, for tests.
struct KvServerStats {
  std::map<int, uint64_t> responses;
  uint64_t streams_cut = 0;  // streams whose client went away before the end
};

// The engine's part of the /metrics page, for tests (promtool) and the server itself.
std::string RenderServingMetrics(const EngineStats& engine, const EngineOptions& options,
                                 const std::string& model_name);

class KvServer {
 public:
  // Starts the engine on `model` and `tokenizer` (which move in) and serves HTTP. Errors name
  // the option (`workers`, `max_prompt_tokens`, ...; `listen` for an address that cannot be bound).
  static base::StatusOr<std::unique_ptr<KvServer>> Start(LlamaModel model,
                                                         std::unique_ptr<TextTokenizer> tokenizer,
                                                         EngineOptions engine,
                                                         KvServerOptions options);
  ~KvServer();  // Stop()s
  KvServer(const KvServer&) = delete;
  KvServer& operator=(const KvServer&) = delete;

  int port() const;
  // {"in_flight": requests running or waiting when the drain began, "finished": those that
  //  finished while draining, "cancelled": those cut at the timeout,
  //  "clients_cut": responses not wholly sent at the end, "timed_out": either happened,
  //  "seconds": how long it took}; then the server is stopped.
  base::Report Drain();
  void Stop();  // without draining; idempotent
  KvServerStats stats() const;
  EngineStats engine_stats() const;

  class Impl;

 private:
  explicit KvServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace seedance::kv
