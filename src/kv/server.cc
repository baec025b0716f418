#include "seedance/kv/server.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <thread>

#include "seedance/base/env.h"
#include "seedance/base/prometheus_text.h"
#include "seedance/kv/openai_api.h"
#include "seedance/net/router.h"

namespace seedance::kv {
namespace {

net::HttpResponse Send(const ApiError& e) {
  net::HttpResponse res;
  res.status = e.status;
  if (e.status == 429 || e.status == 503) res.headers.emplace_back("Retry-After", "1");
  res.content_type = "application/json";
  res.body = ErrorJson(e);
  return res;
}

// The OpenAI error body for the errors no handler writes (404, 405, 413, a malformed request).
net::HttpResponse ErrorPage(int status, const std::string& message) {
  ApiError e;
  e.status = status;
  e.message = message;
  if (status >= 500) e.type = "server_error";
  return Send(e);
}

net::HttpResponse JsonResponse(std::string body) {
  net::HttpResponse res;
  res.content_type = "application/json";
  res.body = std::move(body);
  return res;
}

ApiError FromStatus(const base::Status& s) {
  ApiError e;
  e.message = s.message();
  e.param = s.where();
  switch (s.code()) {
    case base::StatusCode::kResourceExhausted:
      e.status = 429;
      e.type = "server_overloaded";
      e.code = "queue_full";
      e.param.clear();
      break;
    case base::StatusCode::kUnavailable:
      e.status = 503;
      e.type = "server_shutting_down";
      break;
    case base::StatusCode::kInvalidArgument:
      e.status = 400;
      if (s.where() == "max_tokens") e.code = "context_length_exceeded";
      if (s.where() == "kv_budget") {  // larger than the whole budget: no retry can serve it
        e.code = "kv_budget_exceeded";
        e.param = "max_tokens";
      }
      break;
    default:
      e.status = 500;
      e.type = "server_error";
  }
  return e;
}

void HistogramFamily(base::PrometheusWriter& w, std::string_view name, std::string_view help,
                     std::span<const double> bounds, const EngineStats::Histogram& h) {
  w.Family(name, "histogram", help);
  std::vector<uint64_t> cumulative = h.cumulative;
  cumulative.resize(bounds.size() + 1, 0);
  w.Histogram({}, bounds, cumulative, h.sum);
}

}  // namespace

net::HttpServerOptions KvHttpDefaults() {
  net::HttpServerOptions o;
  o.max_body_bytes = size_t{64} * 1024;
  o.workers = 128;
  o.max_connections = 1024;
  o.request_timeout = std::chrono::milliseconds(5000);
  o.idle_timeout = std::chrono::milliseconds(5000);
  o.write_timeout = std::chrono::milliseconds(5000);
  return o;
}

std::string RenderServingMetrics(const EngineStats& e, const EngineOptions& o,
                                 const std::string& model_name) {
  base::PrometheusWriter w;
  w.Family("seedance_kv_server_info", "gauge", "The model, batching policy and KV-cache width");
  w.Sample({{"model", model_name},
            {"policy", std::string(BatchPolicyName(o.policy))},
            {"kv_bits", std::string(KvWidthName(o.kv_width))}},
           1);
  w.Family("seedance_kv_requests_total", "counter", "Completion requests by outcome");
  const std::pair<const char*, uint64_t> outcomes[] = {{"length", e.finished_length},
                                                       {"stop", e.finished_stop},
                                                       {"cancelled", e.cancelled},
                                                       {"rejected_kv_budget", e.rejected_budget},
                                                       {"rejected_queue_full", e.rejected_queue},
                                                       {"rejected_draining", e.rejected_draining}};
  for (const auto& [outcome, n] : outcomes) {
    w.Sample({{"outcome", outcome}}, static_cast<double>(n));
  }
  w.Family("seedance_kv_prompt_tokens_total", "counter", "Prompt tokens admitted, BOS included");
  w.Sample({}, static_cast<double>(e.prompt_tokens));
  w.Family("seedance_kv_generation_tokens_total", "counter", "Tokens generated");
  w.Sample({}, static_cast<double>(e.generation_tokens));
  w.Family("seedance_kv_steps_total", "counter", "Model steps (one token per running sequence)");
  w.Sample({}, static_cast<double>(e.steps));
  w.Family("seedance_kv_requests_running", "gauge", "Sequences in the running batch");
  w.Sample({}, static_cast<double>(e.running));
  w.Family("seedance_kv_requests_waiting", "gauge", "Requests queued for admission");
  w.Sample({}, static_cast<double>(e.waiting));
  w.Family("seedance_kv_cache_reserved_bytes", "gauge",
           "KV-cache bytes reserved by the running sequences");
  w.Sample({}, static_cast<double>(e.kv_reserved_bytes));
  w.Family("seedance_kv_cache_used_bytes", "gauge", "KV-cache bytes the running sequences hold");
  w.Sample({}, static_cast<double>(e.kv_used_bytes));
  w.Family("seedance_kv_cache_budget_bytes", "gauge", "The KV-cache memory budget");
  w.Sample({}, static_cast<double>(e.kv_budget_bytes));
  HistogramFamily(w, "seedance_kv_batch_size", "Sequences per model step",
                  EngineStats::kBatchBounds, e.batch_size);
  HistogramFamily(w, "seedance_kv_time_to_first_token_seconds",
                  "From a request's arrival to its first generated token",
                  EngineStats::kSecondsBounds, e.time_to_first_token);
  HistogramFamily(w, "seedance_kv_time_per_output_token_seconds",
                  "Mean time between a request's generated tokens after the first",
                  EngineStats::kSecondsBounds, e.time_per_output_token);
  HistogramFamily(w, "seedance_kv_request_duration_seconds",
                  "From a request's arrival to its last token", EngineStats::kSecondsBounds,
                  e.request_duration);
  HistogramFamily(w, "seedance_kv_queue_time_seconds",
                  "From a request's arrival to its admission into the batch",
                  EngineStats::kSecondsBounds, e.queue_time);
  return w.str();
}

class KvServer::Impl {
 public:
  Impl(LlamaModel model, std::unique_ptr<TextTokenizer> tokenizer, KvServerOptions o)
      : model_(std::move(model)), tokenizer_(std::move(tokenizer)), o_(std::move(o)) {}

  base::Status Start(EngineOptions engine_options) {
    const int ctx = model_.config().seq_len;
    if (o_.max_prompt_tokens == 0) o_.max_prompt_tokens = ctx - 1;
    if (o_.max_prompt_tokens < 1 || o_.max_prompt_tokens > ctx - 1) {
      return base::InvalidArgumentError("expected 1.." + std::to_string(ctx - 1) +
                                            " (the context minus one), got " +
                                            std::to_string(o_.max_prompt_tokens),
                                        "max_prompt_tokens");
    }
    if (o_.default_max_tokens < 1) {
      return base::InvalidArgumentError("must be >= 1", "default_max_tokens");
    }
    if (o_.drain_timeout.count() < 0) {
      return base::InvalidArgumentError("must be >= 0 ms", "drain_timeout");
    }
    if (o_.cancel_grace.count() < 0) {
      return base::InvalidArgumentError("must be >= 0 ms", "cancel_grace");
    }
    if (o_.http.workers < 1) {
      return base::InvalidArgumentError("must be >= 1 (streams run on worker threads)", "workers");
    }
    SEEDANCE_ASSIGN_OR_RETURN(engine_,
                              ServingEngine::Start(model_, *tokenizer_, std::move(engine_options)));
    created_ = base::Env::Default()->NowUnixNanos() / 1'000'000'000;
    net::Router router(ErrorPage);
    router.Add("POST", "/v1/completions",
               [this](const net::HttpRequest& req) { return Completions(req.body, false); });
    router.Add("POST", "/v1/chat/completions",
               [this](const net::HttpRequest& req) { return Completions(req.body, true); });
    router.Add("GET", "/v1/models", [this](const net::HttpRequest&) {
      return JsonResponse(ModelsJson(o_.model_name, created_));
    });
    net::HttpServerOptions http = o_.http;
    http.error_page = ErrorPage;
    http.metrics_prefix = "seedance_kv";
    http.health = [this]() -> base::Status {
      if (engine_->draining()) return base::UnavailableError("draining");
      return base::OkStatus();
    };
    http.metrics = [this] {
      return RenderServingMetrics(engine_->stats(), engine_->options(), o_.model_name);
    };
    auto server = net::HttpServer::Start(std::move(http), std::move(router));
    if (!server.ok()) {
      engine_->Stop();
      return server.status();
    }
    http_ = std::move(*server);
    return base::OkStatus();
  }

  int port() const { return http_->port(); }

  KvServerStats stats() const {
    const net::HttpServerStats h = http_->stats();
    KvServerStats s;
    s.responses = h.by_code;
    s.streams_cut = h.streams_cut;
    return s;
  }
  EngineStats engine_stats() const { return engine_->stats(); }

  base::Report Drain() {
    base::Env& env = *base::Env::Default();
    const int64_t start = env.NowMonotonicNanos();
    const int64_t timeout_ns = std::chrono::nanoseconds(o_.drain_timeout).count();
    engine_->BeginDrain();
    // After BeginDrain nothing is admitted: what runs or waits now is what the drain must end.
    const EngineStats before = engine_->stats();
    while (!engine_->Idle() && env.NowMonotonicNanos() - start < timeout_ns) {
      env.SleepFor(std::chrono::milliseconds(20));
    }
    const bool timed_out = !engine_->Idle();
    if (timed_out) {
      engine_->CancelAll("the server is shutting down: cancelled after the drain timeout of " +
                         std::to_string(o_.drain_timeout.count()) + " ms");
    }
    // Let the handlers write their last bytes, and the HTTP server hand them to the kernel,
    // before the connections close (Stop discards unsent output): until the drain's deadline, or
    // for cancel_grace after a cancellation (its error events). A client too slow to read them by
    // then is cut when the server stops: the drain ends at its timeout.
    const int64_t grace_ns = std::chrono::nanoseconds(o_.cancel_grace).count();
    const int64_t last_bytes_by =
        std::max(start + timeout_ns, env.NowMonotonicNanos() + (timed_out ? grace_ns : 0));
    const auto unsent = [&] {
      return std::max<int64_t>(active_.load(), static_cast<int64_t>(http_->stats().in_flight));
    };
    while (unsent() > 0 && env.NowMonotonicNanos() < last_bytes_by) {
      env.SleepFor(std::chrono::milliseconds(10));
    }
    const int64_t slow_clients = unsent();
    const EngineStats after = engine_->stats();
    Stop();
    base::Report r;
    r["in_flight"] = before.running + before.waiting;  // when the drain began
    r["finished"] = (after.finished_length + after.finished_stop) -
                    (before.finished_length + before.finished_stop);
    r["cancelled"] = after.cancelled - before.cancelled;
    r["timed_out"] = timed_out || slow_clients > 0;
    r["clients_cut"] = slow_clients;  // responses still being written at the deadline
    r["seconds"] = static_cast<double>(env.NowMonotonicNanos() - start) / 1e9;
    return r;
  }

  void Stop() {
    if (stopped_.exchange(true)) return;
    engine_->Stop();  // cancels what is left, so no handler stays blocked
    if (http_) http_->Stop();
  }

 private:
  // Counts a handler (or a stream's provider) in progress, for Drain.
  class Active {
   public:
    explicit Active(std::atomic<int>& n) : n_(n) { ++n_; }
    ~Active() { --n_; }
    Active(const Active&) = delete;
    Active& operator=(const Active&) = delete;

   private:
    std::atomic<int>& n_;
  };

  struct Stream {
    explicit Stream(std::atomic<int>& handlers) : active(handlers) {}
    Active active;
    std::shared_ptr<Generation> gen;
    std::string id, echo;
    bool include_usage = false;
    bool chat = false;
    bool first = true;  // no chunk written yet (a chat stream's first delta names the role)
  };

  net::HttpResponse Completions(const std::string& body, bool chat) {
    auto active = std::make_shared<Stream>(active_);
    ParsedCompletion parsed = chat ? ParseChatRequest(body) : ParseCompletionRequest(body);
    if (!parsed.params) return Send(parsed.error);
    CompletionParams& p = *parsed.params;
    if (chat) {
      if (!o_.chat_template) {
        ApiError e;
        e.param = "messages";
        e.message = "this server cannot render chat messages: " + o_.no_chat_template +
                    "; POST /v1/completions takes a prompt";
        return Send(e);
      }
      p.prompt = o_.chat_template->Render(p.messages, /*add_generation_prompt=*/true);
    }
    if (p.model != o_.model_name) {
      ApiError e;
      e.status = 404;
      e.param = "model";
      e.code = "model_not_found";
      e.message = "the model '" + p.model + "' is not served here; GET /v1/models lists '" +
                  o_.model_name + "'";
      return Send(e);
    }
    const int ctx = model_.config().seq_len;
    GenerationRequest g;
    g.prompt = tokenizer_->Encode(p.prompt);
    const std::optional<int> bos = tokenizer_->Bos();
    const int prompt_len = static_cast<int>(g.prompt.size()) + (bos ? 1 : 0);
    if (static_cast<int>(g.prompt.size()) > o_.max_prompt_tokens) {
      ApiError e;
      e.param = chat ? "messages" : "prompt";
      e.code = "context_length_exceeded";
      e.message = "the prompt is " + std::to_string(g.prompt.size()) +
                  " tokens; this server takes at most " + std::to_string(o_.max_prompt_tokens) +
                  " (the model's context is " + std::to_string(ctx) + ")";
      return Send(e);
    }
    g.max_tokens = p.max_tokens.value_or(std::min(o_.default_max_tokens, ctx - prompt_len));
    g.temperature = p.temperature;
    g.top_p = p.top_p;
    const int64_t number = next_id_++;
    g.seed = p.seed.value_or(static_cast<uint64_t>(number));
    g.stop = p.stop;
    const std::vector<int> prompt_tokens = g.prompt;  // for echo; Submit takes the request
    auto gen = engine_->Submit(std::move(g));
    if (!gen.ok()) return Send(FromStatus(gen.status()));
    char id[32];
    std::snprintf(id, sizeof id, "%s-%012llx", chat ? "chatcmpl" : "cmpl",
                  static_cast<unsigned long long>(number));
    active->gen = *gen;
    active->id = id;
    active->include_usage = p.include_usage;
    active->chat = chat;
    if (p.echo) {
      int previous = bos.value_or(-1);
      for (int t : prompt_tokens) {
        active->echo += tokenizer_->Decode(previous, t);
        previous = t;
      }
    }
    if (!p.stream) {
      std::string text = active->echo;
      GenerationUpdate u;
      do {
        u = active->gen->Next(std::chrono::milliseconds(1000));
        text += u.text;
      } while (!u.finished);
      if (u.reason == FinishReason::kCancelled) {
        ApiError e;
        e.status = 503;
        e.type = "server_error";
        e.message = u.message;
        return Send(e);
      }
      const CompletionUsage usage{u.prompt_tokens, u.completion_tokens};
      return JsonResponse(chat ? ChatCompletionJson(active->id, created_, o_.model_name, text,
                                                    FinishReasonName(u.reason), usage)
                               : CompletionJson(active->id, created_, o_.model_name, text,
                                                FinishReasonName(u.reason), usage));
    }
    net::HttpResponse res;
    res.content_type = "text/event-stream";
    res.headers.emplace_back("Cache-Control", "no-cache");
    res.stream = [this, s = active](net::HttpStreamSink& sink) {
      // A stream that ends early (the client left, the server stopped) cancels its generation.
      if (!Produce(*s, sink)) s->gen->Cancel();
    };
    return res;
  }

  // One stream chunk of `text` (and the finish reason on the last), in the request's shape.
  std::string Chunk(Stream& s, std::string_view text, std::string_view finish_reason) {
    if (!s.chat) return CompletionChunkEvent(s.id, created_, o_.model_name, text, finish_reason);
    const bool first = std::exchange(s.first, false);
    return ChatChunkEvent(s.id, created_, o_.model_name, text, finish_reason, first);
  }

  // Writes the stream's events until its generation finishes; false when the sink closed first.
  bool Produce(Stream& s, net::HttpStreamSink& sink) {
    if (!s.echo.empty()) {
      if (!sink.Write(Chunk(s, s.echo, ""))) return false;
      s.echo.clear();
    }
    while (true) {
      const GenerationUpdate u = s.gen->Next(std::chrono::milliseconds(100));
      std::string out;
      if (!u.text.empty()) out += Chunk(s, u.text, "");
      if (u.finished) {
        if (u.reason == FinishReason::kCancelled) {
          ApiError e;
          e.status = 503;
          e.type = "server_error";
          e.message = u.message;
          out += ErrorEvent(e);
        } else {
          out += Chunk(s, "", FinishReasonName(u.reason));
          if (s.include_usage) {
            const CompletionUsage usage{u.prompt_tokens, u.completion_tokens};
            out += s.chat ? ChatUsageChunkEvent(s.id, created_, o_.model_name, usage)
                          : UsageChunkEvent(s.id, created_, o_.model_name, usage);
          }
          out += kDoneEvent;
        }
      }
      // Between tokens the sink is polled, so a client that leaves while its request waits in
      // the queue is noticed at once.
      if (out.empty() ? !sink.Open() : !sink.Write(out)) return false;
      if (u.finished) return true;
    }
  }

  LlamaModel model_;
  std::unique_ptr<TextTokenizer> tokenizer_;
  KvServerOptions o_;
  std::unique_ptr<ServingEngine> engine_;
  std::unique_ptr<net::HttpServer> http_;
  int64_t created_ = 0;
  std::atomic<int64_t> next_id_{1};
  std::atomic<int> active_{0};
  std::atomic<bool> stopped_{false};
};

base::StatusOr<std::unique_ptr<KvServer>> KvServer::Start(LlamaModel model,
                                                          std::unique_ptr<TextTokenizer> tokenizer,
                                                          EngineOptions engine,
                                                          KvServerOptions options) {
  auto impl = std::make_unique<Impl>(std::move(model), std::move(tokenizer), std::move(options));
  SEEDANCE_RETURN_IF_ERROR(impl->Start(std::move(engine)));
  return std::unique_ptr<KvServer>(new KvServer(std::move(impl)));
}

KvServer::KvServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KvServer::~KvServer() { Stop(); }
int KvServer::port() const { return impl_->port(); }
base::Report KvServer::Drain() { return impl_->Drain(); }
void KvServer::Stop() { impl_->Stop(); }
KvServerStats KvServer::stats() const { return impl_->stats(); }
EngineStats KvServer::engine_stats() const { return impl_->engine_stats(); }

}  // namespace seedance::kv
