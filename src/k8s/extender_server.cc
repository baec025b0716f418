#include "seedance/k8s/extender_server.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "seedance/base/prometheus_text.h"
#include "seedance/k8s/extender_config.h"
#include "seedance/net/router.h"

namespace seedance::k8s {
namespace {

// A 1-2-5 series from 50 us to 1 s: filter at a thousand nodes takes about a millisecond, so the
// quantiles a replay reads from the histogram need buckets that fine.
constexpr std::array<double, 14> kBounds = {5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3,
                                            1e-2, 2e-2, 5e-2, 0.1,  0.2,  0.5,  1.0};

struct VerbMetrics {
  std::map<int, uint64_t> codes;
  std::array<uint64_t, kBounds.size() + 1> buckets{};
  double sum_s = 0;
};

net::HttpResponse JsonResponse(int status, std::string body) {
  net::HttpResponse res;
  res.status = status;
  res.content_type = "application/json";
  res.body = std::move(body);
  return res;
}

// {"error": message}: the errors no verb writes (404, 405, 413, a malformed request).
net::HttpResponse ErrorPage(int status, const std::string& message) {
  return JsonResponse(status, nlohmann::json{{"error", message}}.dump(
                                  -1, ' ', false, nlohmann::json::error_handler_t::replace));
}

// Equal strings in a time that depends on their lengths only, not on where they differ.
bool SameSecret(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= a[i] ^ b[i % std::max<size_t>(b.size(), 1)];
  return diff == 0 && !b.empty();
}

net::HttpResponse Unauthorized(const std::string& why) {
  net::HttpResponse r = ErrorPage(401, why);
  r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"seedance-extender\"");
  return r;
}

}  // namespace

struct ExtenderServer::Impl {
  base::Env* env = nullptr;
  Extender* extender = nullptr;
  Binder* binder = nullptr;
  std::unique_ptr<net::HttpServer> http;
  mutable std::mutex mu;
  std::map<std::string, VerbMetrics> verbs;
  ExtenderRecorder recorder;
  std::mutex record_mu;  // one exchange recorded at a time
  std::string token;
  bool trust_loopback = true;

  // Why the request may not change anything, or "" when it may.
  std::string Refusal(const net::HttpRequest& req, bool loopback_suffices) const {
    if (token.empty()) return "";
    if (loopback_suffices && trust_loopback && req.peer_loopback) return "";
    const std::string_view auth = req.head.authorization;
    constexpr std::string_view kBearer = "Bearer ";
    if (auth.size() <= kBearer.size() || auth.substr(0, kBearer.size()) != kBearer) {
      return "this extender needs \"Authorization: Bearer <token>\" (serve --token-file)";
    }
    if (!SameSecret(auth.substr(kBearer.size()), token)) return "the bearer token is wrong";
    return "";
  }

  void Count(const std::string& verb, int code, double seconds) {
    std::lock_guard<std::mutex> lock(mu);
    VerbMetrics& m = verbs[verb];
    ++m.codes[code];
    size_t b = 0;
    while (b < kBounds.size() && seconds > kBounds[b]) ++b;
    ++m.buckets[b];
    m.sum_s += seconds;
  }

  // A POST verb: decode, answer, count.
  void Verb(net::Router& router, const std::string& path, const std::string& verb,
            std::function<std::pair<int, std::string>(const std::string&)> answer) {
    router.Add("POST", path, [this, verb, answer](const net::HttpRequest& req) {
      if (const std::string why = Refusal(req, /*loopback_suffices=*/true); !why.empty()) {
        Count(verb, 401, 0);
        return Unauthorized(why);
      }
      const int64_t t0 = env->NowMonotonicNanos();
      auto [code, body] = answer(req.body);
      Count(verb, code, static_cast<double>(env->NowMonotonicNanos() - t0) * 1e-9);
      if (recorder) {
        std::lock_guard<std::mutex> lock(record_mu);
        recorder(verb, req.body, code, body);
      }
      return JsonResponse(code, std::move(body));
    });
  }
};

namespace {

std::string Render(const ExtenderServer::Impl& s) {
  base::PrometheusWriter w;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    w.Family("seedance_extender_requests_total", "counter",
             "Requests kube-scheduler made of the extender, by verb and HTTP status.");
    for (const auto& [verb, m] : s.verbs) {
      for (const auto& [code, n] : m.codes) {
        w.Sample({{"verb", verb}, {"code", std::to_string(code)}}, static_cast<double>(n));
      }
    }
    w.Family("seedance_extender_request_seconds", "histogram",
             "Time to answer a verb, decoding and encoding included (bind: the API write too).");
    for (const auto& [verb, m] : s.verbs) {
      std::array<uint64_t, kBounds.size() + 1> cumulative{};
      uint64_t total = 0;
      for (size_t b = 0; b < cumulative.size(); ++b) cumulative[b] = total += m.buckets[b];
      w.Histogram({{"verb", verb}}, kBounds, cumulative, m.sum_s);
    }
  }
  const ExtenderStats st = s.extender->stats();
  struct Sample {
    const char* name;
    const char* type;
    const char* help;
    int64_t value;
  };
  const Sample samples[] = {
      {"seedance_extender_nodes", "gauge", "Nodes in the extender's cache.", st.nodes},
      {"seedance_extender_pods", "gauge", "Pods holding GPUs in its cache, reserved or bound.",
       st.pods},
      {"seedance_extender_reservations", "gauge", "Pods reserved at filter, not yet bound.",
       st.reservations},
      {"seedance_extender_gangs_waiting", "gauge", "Gangs with members pending, none placed.",
       st.gangs_waiting},
      {"seedance_extender_gpu_milli_used", "gauge", "Milli-GPU in use or reserved.",
       st.used_gpu_milli},
      {"seedance_extender_gpu_milli_capacity", "gauge", "Milli-GPU on the known nodes.",
       st.total_gpu_milli},
      {"seedance_extender_filters_total", "counter", "Filter calls answered.", st.filters},
      {"seedance_extender_filter_fits_total", "counter", "Filter calls that found a node.",
       st.filter_fits},
      {"seedance_extender_binds_total", "counter", "Bindings the API server accepted.", st.binds},
      {"seedance_extender_bind_failures_total", "counter", "Binds that failed and released.",
       st.bind_failures},
      {"seedance_extender_reservations_expired_total", "counter",
       "Reservations released unbound after the TTL.", st.expired},
  };
  for (const auto& m : samples) {
    w.Family(m.name, m.type, m.help);
    w.Sample({}, static_cast<double>(m.value));
  }
  return w.str();
}

}  // namespace

net::HttpServerOptions ExtenderHttpDefaults() {
  net::HttpServerOptions o;
  o.max_body_bytes = size_t{64} << 20;
  o.workers = 8;
  o.max_connections = 1024;
  o.request_timeout = std::chrono::milliseconds(10000);
  o.idle_timeout = std::chrono::milliseconds(60000);
  o.write_timeout = std::chrono::milliseconds(10000);
  return o;
}

std::string ExchangeJsonLine(std::string_view verb, std::string_view request, int code,
                             std::string_view response) {
  nlohmann::ordered_json j;
  j["verb"] = verb;
  j["code"] = code;
  // Bodies that are not UTF-8 (a malformed request) are kept with the bad bytes replaced.
  j["request"] = request;
  j["response"] = response;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

ExtenderServer::ExtenderServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ExtenderServer::~ExtenderServer() { Stop(); }

base::StatusOr<std::unique_ptr<ExtenderServer>> ExtenderServer::Start(
    Extender& extender, Binder& binder, const ExtenderServerOptions& o) {
  auto impl = std::make_unique<Impl>();
  impl->env = o.env != nullptr ? o.env : base::Env::Default();
  impl->extender = &extender;
  impl->binder = &binder;
  impl->recorder = o.recorder;
  impl->token = o.token;
  impl->trust_loopback = o.trust_loopback;
  Impl* s = impl.get();
  net::Router router(ErrorPage);
  const std::string p = o.prefix;
  s->Verb(router, p + "/filter", "filter",
          [s](const std::string& body) -> std::pair<int, std::string> {
            auto args = DecodeExtenderArgs(body);
            if (!args.ok()) {
              ExtenderFilterResult r;
              r.error = args.status().ToString();
              return {400, EncodeFilterResult(r)};
            }
            return {200, EncodeFilterResult(s->extender->Filter(*args))};
          });
  s->Verb(router, p + "/prioritize", "prioritize",
          [s](const std::string& body) -> std::pair<int, std::string> {
            auto args = DecodeExtenderArgs(body);
            if (!args.ok()) return {400, EncodeHostPriorityList({})};
            return {200, EncodeHostPriorityList(s->extender->Prioritize(*args))};
          });
  s->Verb(router, p + "/bind", "bind", [s](const std::string& body) -> std::pair<int, std::string> {
    auto args = DecodeBindingArgs(body);
    if (!args.ok()) return {400, EncodeBindingResult(args.status().ToString())};
    auto plans = s->extender->PlanBind(*args);
    if (!plans.ok()) return {200, EncodeBindingResult(plans.status().ToString())};
    std::string error;  // the asked pod's (the first plan); a gang's others report
    for (const BindPlan& plan : *plans) {
      const base::Status posted = s->binder->Bind(plan);
      if (posted.ok()) {
        s->extender->BindSucceeded(plan);
      } else {
        s->extender->BindFailed(plan);
        if (&plan == &plans->front()) error = posted.ToString();
      }
    }
    return {200, EncodeBindingResult(error)};
  });
  s->Verb(router, p + "/preempt", "preempt",
          [s](const std::string& body) -> std::pair<int, std::string> {
            auto args = DecodePreemptionArgs(body);
            if (!args.ok()) return {400, EncodePreemptionResult({})};
            return {200, EncodePreemptionResult(s->extender->Preempt(*args))};
          });
  // The live configuration (extender_config.h): under the prefix, as kube-scheduler's verbs.
  router.Add("GET", p + "/config", [s](const net::HttpRequest&) {
    return JsonResponse(200, EncodeExtenderConfig(s->extender->config()));
  });
  router.Add("PUT", p + "/config", [s](const net::HttpRequest& req) {
    if (const std::string why = s->Refusal(req, /*loopback_suffices=*/false); !why.empty()) {
      return Unauthorized(why);
    }
    auto update = DecodeExtenderConfigUpdate(req.body, "config");
    if (!update.ok()) return ErrorPage(400, update.status().ToString());
    const ExtenderConfig next = ApplyUpdate(s->extender->config(), *update);
    if (base::Status done = s->extender->Reconfigure(next); !done.ok()) {
      return ErrorPage(400, done.ToString());
    }
    return JsonResponse(200, EncodeExtenderConfig(s->extender->config()));
  });
  net::HttpServerOptions http = o.http;
  http.error_page = ErrorPage;
  http.metrics_prefix = "seedance_extender";
  http.metrics = [s] { return Render(*s); };
  auto server = net::HttpServer::Start(std::move(http), std::move(router));
  if (!server.ok()) return server.status();
  s->http = std::move(*server);
  return std::unique_ptr<ExtenderServer>(new ExtenderServer(std::move(impl)));
}

int ExtenderServer::port() const { return impl_->http->port(); }

void ExtenderServer::Stop() {
  if (impl_ && impl_->http) impl_->http->Stop();
}

std::string ExtenderServer::RenderMetrics() const { return Render(*impl_); }

}  // namespace seedance::k8s
