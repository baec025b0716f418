#include "seedance/kv/server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

#include "seedance/base/env.h"
#include "seedance/base/prometheus_text.h"
#include "seedance/kv/openai_api.h"

namespace seedance::kv {
namespace {

void Send(httplib::Response& res, const ApiError& e) {
  res.status = e.status;
  if (e.status == 429 || e.status == 503) res.set_header("Retry-After", "1");
  res.set_content(ErrorJson(e), "application/json");
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

std::string RenderServingMetrics(const EngineStats& e, const KvServerStats& s,
                                 const EngineOptions& o, const std::string& model_name) {
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
  w.Family("seedance_kv_http_responses_total", "counter", "HTTP responses by status code");
  const std::pair<const char*, int64_t> codes[] = {
      {"2xx", s.responses_2xx},    {"400", s.responses_400}, {"404", s.responses_404},
      {"413", s.responses_413},    {"429", s.responses_429}, {"503", s.responses_503},
      {"other", s.responses_other}};
  for (const auto& [code, n] : codes) w.Sample({{"code", code}}, static_cast<double>(n));
  w.Family("seedance_kv_streams_cut_total", "counter",
           "Streamed completions whose client went away before the end");
  w.Sample({}, static_cast<double>(s.streams_cut));
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
  Impl(LlamaModel model, Tokenizer tokenizer, KvServerOptions o)
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
    if (o_.http_threads < 1) return base::InvalidArgumentError("must be >= 1", "http_threads");
    SEEDANCE_ASSIGN_OR_RETURN(engine_,
                              ServingEngine::Start(model_, tokenizer_, std::move(engine_options)));
    created_ = base::Env::Default()->NowUnixNanos() / 1'000'000'000;
    const int threads = o_.http_threads;
    http_.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    http_.set_payload_max_length(o_.max_body_bytes);
    http_.set_tcp_nodelay(true);  // a token's event leaves at once
    http_.set_keep_alive_timeout(2);
    http_.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) {
      Completions(req, res);
    });
    http_.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(ModelsJson(o_.model_name, created_), "application/json");
    });
    http_.Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
      if (engine_->draining()) {
        res.status = 503;
        res.set_content("draining\n", "text/plain");
      } else {
        res.set_content("ok\n", "text/plain");
      }
    });
    http_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(
          RenderServingMetrics(engine_->stats(), stats(), engine_->options(), o_.model_name),
          "text/plain; version=0.0.4; charset=utf-8");
    });
    http_.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return;
      // A known path asked with another method: 405 with the methods it takes.
      static const std::map<std::string, std::string, std::less<>> kAllow = {
          {"/v1/completions", "POST"},
          {"/v1/models", "GET"},
          {"/healthz", "GET"},
          {"/metrics", "GET"}};
      if (res.status == 404) {
        if (const auto it = kAllow.find(req.path); it != kAllow.end()) {
          res.status = 405;
          res.set_header("Allow", it->second);
        }
      }
      ApiError e;
      e.status = res.status;
      if (res.status == 405) {
        e.message = req.method + " is not allowed on " + req.path +
                    "; allowed: " + kAllow.find(req.path)->second;
      } else if (res.status == 404) {
        e.message = "no route for " + req.method + " " + req.path;
      } else if (res.status == 413) {
        e.message = "the request body is larger than this server takes";
      } else {
        e.message = "HTTP " + std::to_string(res.status);
      }
      res.set_content(ErrorJson(e), "application/json");
    });
    http_.set_logger([this](const httplib::Request&, const httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu_);
      const int c = res.status;
      (c >= 200 && c < 300 ? stats_.responses_2xx
       : c == 400          ? stats_.responses_400
       : c == 404          ? stats_.responses_404
       : c == 413          ? stats_.responses_413
       : c == 429          ? stats_.responses_429
       : c == 503          ? stats_.responses_503
                           : stats_.responses_other)++;
    });
    // cpp-httplib 0.11 listens with a backlog of 5: a burst of connections overflows it and some
    // are reset. Keep the descriptor and listen again with the system's maximum once bound (on
    // Linux a second listen() changes the backlog).
    http_.set_socket_options([this](int fd) {
      const int yes = 1;
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
      listen_fd_ = fd;
    });
    port_ = o_.port == 0 ? http_.bind_to_any_port(o_.host)
                         : (http_.bind_to_port(o_.host, o_.port) ? o_.port : -1);
    if (port_ < 0) {
      engine_->Stop();
      return base::UnavailableError("cannot listen (address in use, or not an address here)",
                                    o_.host + ":" + std::to_string(o_.port));
    }
    if (listen_fd_ >= 0) ::listen(listen_fd_, SOMAXCONN);
    thread_ = std::thread([this] { http_.listen_after_bind(); });
    return base::OkStatus();
  }

  int port() const { return port_; }

  KvServerStats stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }
  EngineStats engine_stats() const { return engine_->stats(); }

  base::Report Drain() {
    base::Env& env = *base::Env::Default();
    const int64_t start = env.NowMonotonicNanos();
    const int64_t timeout_ns = std::chrono::nanoseconds(o_.drain_timeout).count();
    const EngineStats before = engine_->stats();
    engine_->BeginDrain();
    while (!engine_->Idle() && env.NowMonotonicNanos() - start < timeout_ns) {
      env.SleepFor(std::chrono::milliseconds(20));
    }
    const bool timed_out = !engine_->Idle();
    if (timed_out) {
      engine_->CancelAll("the server is shutting down: cancelled after the drain timeout of " +
                         std::to_string(o_.drain_timeout.count()) + " ms");
    }
    // Let the handlers write their last bytes before the connections close.
    const int64_t written = env.NowMonotonicNanos();
    while (active_.load() > 0 && env.NowMonotonicNanos() - written < 5'000'000'000) {
      env.SleepFor(std::chrono::milliseconds(10));
    }
    const EngineStats after = engine_->stats();
    Stop();
    base::Report r;
    r["finished"] = (after.finished_length + after.finished_stop) -
                    (before.finished_length + before.finished_stop);
    r["cancelled"] = after.cancelled - before.cancelled;
    r["timed_out"] = timed_out;
    r["seconds"] = static_cast<double>(env.NowMonotonicNanos() - start) / 1e9;
    return r;
  }

  void Stop() {
    if (stopped_.exchange(true)) return;
    engine_->Stop();  // cancels what is left, so no handler stays blocked
    http_.stop();
    if (thread_.joinable()) thread_.join();
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
    bool include_usage = false, finished = false;
  };

  void Completions(const httplib::Request& req, httplib::Response& res) {
    auto active = std::make_shared<Stream>(active_);
    ParsedCompletion parsed = ParseCompletionRequest(req.body);
    if (!parsed.params) return Send(res, parsed.error);
    const CompletionParams& p = *parsed.params;
    if (p.model != o_.model_name) {
      ApiError e;
      e.status = 404;
      e.param = "model";
      e.code = "model_not_found";
      e.message = "the model '" + p.model + "' is not served here; GET /v1/models lists '" +
                  o_.model_name + "'";
      return Send(res, e);
    }
    const int ctx = model_.config().seq_len;
    GenerationRequest g;
    g.prompt = tokenizer_.Encode(p.prompt);
    const int prompt_len = static_cast<int>(g.prompt.size()) + 1;
    if (static_cast<int>(g.prompt.size()) > o_.max_prompt_tokens) {
      ApiError e;
      e.param = "prompt";
      e.code = "context_length_exceeded";
      e.message = "the prompt is " + std::to_string(g.prompt.size()) +
                  " tokens; this server takes at most " + std::to_string(o_.max_prompt_tokens) +
                  " (the model's context is " + std::to_string(ctx) + ")";
      return Send(res, e);
    }
    g.max_tokens = p.max_tokens.value_or(std::min(o_.default_max_tokens, ctx - prompt_len));
    g.temperature = p.temperature;
    g.top_p = p.top_p;
    const int64_t number = next_id_++;
    g.seed = p.seed.value_or(static_cast<uint64_t>(number));
    g.stop = p.stop;
    const std::vector<int> prompt_tokens = g.prompt;  // for echo; Submit takes the request
    auto gen = engine_->Submit(std::move(g));
    if (!gen.ok()) return Send(res, FromStatus(gen.status()));
    char id[32];
    std::snprintf(id, sizeof id, "cmpl-%012llx", static_cast<unsigned long long>(number));
    active->gen = *gen;
    active->id = id;
    active->include_usage = p.include_usage;
    if (p.echo) {
      int previous = 1;  // BOS
      for (int t : prompt_tokens) {
        active->echo += tokenizer_.Decode(previous, t);
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
        return Send(res, e);
      }
      res.set_content(
          CompletionJson(active->id, created_, o_.model_name, text, FinishReasonName(u.reason),
                         {u.prompt_tokens, u.completion_tokens}),
          "application/json");
      return;
    }
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream",
        [this, s = active](size_t, httplib::DataSink& sink) { return Provide(*s, sink); },
        [this, s = active](bool success) {
          if (!success && !s->finished) {
            s->gen->Cancel();
            std::lock_guard<std::mutex> lock(mu_);
            ++stats_.streams_cut;
          }
        });
  }

  // One call of a stream's content provider: waits briefly for text, writes it as an event.
  bool Provide(Stream& s, httplib::DataSink& sink) {
    std::string out;
    if (!s.echo.empty()) {
      out += CompletionChunkEvent(s.id, created_, o_.model_name, s.echo, "");
      s.echo.clear();
    }
    const GenerationUpdate u = s.gen->Next(std::chrono::milliseconds(100));
    if (!u.text.empty()) out += CompletionChunkEvent(s.id, created_, o_.model_name, u.text, "");
    if (u.finished) {
      if (u.reason == FinishReason::kCancelled) {
        ApiError e;
        e.status = 503;
        e.type = "server_error";
        e.message = u.message;
        out += ErrorEvent(e);
      } else {
        out += CompletionChunkEvent(s.id, created_, o_.model_name, "", FinishReasonName(u.reason));
        if (s.include_usage) {
          out += UsageChunkEvent(s.id, created_, o_.model_name,
                                 {u.prompt_tokens, u.completion_tokens});
        }
        out += kDoneEvent;
      }
    }
    if (!out.empty() && !sink.write(out.data(), out.size())) return false;
    if (u.finished) {
      s.finished = true;
      sink.done();
    }
    return true;
  }

  LlamaModel model_;
  Tokenizer tokenizer_;
  KvServerOptions o_;
  std::unique_ptr<ServingEngine> engine_;
  httplib::Server http_;
  std::thread thread_;
  int port_ = -1;
  int listen_fd_ = -1;  // the listening socket, as set_socket_options saw it
  int64_t created_ = 0;
  std::atomic<int64_t> next_id_{1};
  std::atomic<int> active_{0};
  std::atomic<bool> stopped_{false};
  mutable std::mutex mu_;
  KvServerStats stats_;
};

base::StatusOr<std::unique_ptr<KvServer>> KvServer::Start(LlamaModel model, Tokenizer tokenizer,
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
