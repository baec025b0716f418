// `seedancectl kv serve` (feature KV-5): an OpenAI-compatible HTTP endpoint over the serving
// engine (engine.h). Routes:
//   POST /v1/completions  openai_api.h's request; `stream: true` answers text/event-stream, one
//                         "data: {chunk}" event per piece of text, then "data: [DONE]"
//   GET  /v1/models       the one model served
//   GET  /healthz         200 "ok"; 503 "draining" once a drain has begun
//   GET  /metrics         Prometheus text: requests by outcome, HTTP responses by code, tokens,
//                         steps, running and waiting requests, KV bytes reserved, used and
//                         budgeted, and histograms of batch size, time to first token, time per
//                         output token, request duration and queue time
// Status codes: 400 a bad request (openai_api.h; a prompt or prompt + max_tokens beyond the
// context, code "context_length_exceeded"), 404 an unknown model or path, 413 a body over
// max_body_bytes, 429 the KV budget or the queue refuses (with the reason and Retry-After),
// 503 draining. Each request is served on one of http_threads threads; a streamed request whose
// client goes away is cancelled at the engine's next step.
//
// Drain (SIGTERM in the CLI): new completions get 503, queued and running ones go on for up to
// `drain_timeout`, then whatever is left is cancelled (a stream ends with an error event, a plain
// request gets 503), the HTTP server stops and the engine joins its worker.
//
// Thread safety: Start, Drain and Stop from one thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/kv/engine.h"
#include "seedance/kv/llama.h"

namespace seedance::kv {

struct KvServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;            // 0 picks a free port
  std::string model_name;  // what clients put in "model"
  size_t max_body_bytes = size_t{64} * 1024;
  int max_prompt_tokens = 0;  // 0: the context minus one (room for one generated token)
  int default_max_tokens = 16;
  int http_threads = 128;
  std::chrono::milliseconds drain_timeout{30000};
};

// HTTP responses by status code, for /metrics and tests.
struct KvServerStats {
  int64_t responses_2xx = 0, responses_400 = 0, responses_404 = 0, responses_413 = 0,
          responses_429 = 0, responses_503 = 0, responses_other = 0;
  int64_t streams_cut = 0;  // streams whose client went away before the end
};

// The /metrics page of an engine and server, for tests (promtool) and the server itself.
std::string RenderServingMetrics(const EngineStats& engine, const KvServerStats& server,
                                 const EngineOptions& options, const std::string& model_name);

class KvServer {
 public:
  // Starts the engine on `model` and `tokenizer` (which move in) and serves HTTP on a thread pool.
  static base::StatusOr<std::unique_ptr<KvServer>> Start(LlamaModel model, Tokenizer tokenizer,
                                                         EngineOptions engine,
                                                         KvServerOptions options);
  ~KvServer();  // Stop()s
  KvServer(const KvServer&) = delete;
  KvServer& operator=(const KvServer&) = delete;

  int port() const;
  // {"finished": requests that finished while draining, "cancelled": those cut at the timeout,
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
