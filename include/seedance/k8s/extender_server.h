// The extender's HTTP face (feature SCHED-8; `seedancectl scheduler serve`): kube-scheduler
// POSTs each verb to <prefix>/<verb> (extender_protocol.h), the Extender answers, and bind
// writes the Binding through a Binder (the API server; kube_client.h). Also:
//   GET /healthz   "ok"
//   GET /metrics   Prometheus text: seedance_extender_requests_total{verb,code},
//                  seedance_extender_request_seconds{verb} (histogram), and the Extender's
//                  state (nodes, pods, reservations, GPU milli in use and in all, filters,
//                  binds, bind failures, expired reservations, gangs waiting)
//   GET /config, PUT /config (under the prefix)   the live policy and topology plugins
//                  (extender_config.h; `seedancectl scheduler set`); a bad PUT gets 400
//                  {"error": ...} and changes nothing; with a token (ExtenderServerOptions), an
//                  unauthenticated one gets 401
// With a recorder, every verb's exchange is handed to it in the order answered (kube-scheduler's
// requests as it sent them, the answers as sent back): `serve --record FILE` keeps them as JSON
// lines, and the tests replay such a recording against a fresh extender (the fake kube-scheduler
// tier, tests/cli/test_extender_fake_scheduler.py).
// A malformed body is answered 400 with the decoder's error in the protocol's Error field
// (kube-scheduler reports it as the extender's error); the filter and prioritize verbs never
// block on the API server. Other errors (404, 405 with Allow, 413, a malformed request) are
// {"error": ...}. Served by net::HttpServer: its limits on connections, slow and idle clients
// and output hold here, /metrics ends with its families (seedance_extender_http_*), and the verbs
// run on http.workers threads (a bind waiting on the API server holds one), meeting in the
// Extender's lock.
//
// Thread safety: Start and Stop from one thread; the rest from any. Start's errors: an address
// that cannot be bound (where "listen"), a bad option.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "seedance/base/env.h"
#include "seedance/base/status.h"
#include "seedance/k8s/extender.h"
#include "seedance/net/http_server.h"

namespace seedance::k8s {

// Writes the Binding of a planned bind (pod to node, with the GPU assignment annotation).
class Binder {
 public:
  virtual ~Binder() = default;
  virtual base::Status Bind(const BindPlan& plan) = 0;
};

// One exchange: the verb ("filter", "prioritize", "bind", "preempt"), the request's body, the
// HTTP status and the response's body. Called under a lock, one exchange at a time.
using ExtenderRecorder = std::function<void(std::string_view verb, std::string_view request,
                                            int code, std::string_view response)>;

// One exchange as a JSON line: {"verb", "code", "request", "response"} with the bodies as
// strings, exactly as sent; ends in "\n".
std::string ExchangeJsonLine(std::string_view verb, std::string_view request, int code,
                             std::string_view response);

// The extender's HTTP settings: 64 MiB bodies (ExtenderArgs with a thousand full Node objects
// fit), 8 workers (verbs answered at once), 1,024 connections, 10 s request and write deadlines,
// 60 s idle (kube-scheduler keeps its connections).
net::HttpServerOptions ExtenderHttpDefaults();

struct ExtenderServerOptions {
  // The address, limits, deadlines and workers; the server sets error_page, metrics and
  // metrics_prefix itself.
  net::HttpServerOptions http = ExtenderHttpDefaults();
  std::string prefix = "";    // the urlPrefix's path, e.g. "/seedance"; verbs are appended
  base::Env* env = nullptr;   // the clock for the latency histograms; null: Env::Default()
  ExtenderRecorder recorder;  // empty: nothing recorded
  // Authentication (`serve --token-file`, a mounted Secret). When set, PUT /config needs
  // "Authorization: Bearer <token>", and so do the verbs (filter reserves, bind writes Bindings)
  // unless the client is on loopback and trust_loopback holds: kube-scheduler cannot send a
  // token to an extender (its extender configuration has TLS settings only), so it runs in the
  // extender's pod and calls http://127.0.0.1. Refused requests get 401 and change nothing. The
  // reads (GET /config, /metrics, /healthz) stay open. Empty: no authentication.
  std::string token;
  bool trust_loopback = true;
};

class ExtenderServer {
 public:
  // `extender` and `binder` must outlive the server.
  static base::StatusOr<std::unique_ptr<ExtenderServer>> Start(
      Extender& extender, Binder& binder, const ExtenderServerOptions& options);
  ~ExtenderServer();  // Stop()s
  ExtenderServer(const ExtenderServer&) = delete;
  ExtenderServer& operator=(const ExtenderServer&) = delete;

  int port() const;
  void Stop();
  std::string RenderMetrics() const;

  struct Impl;

 private:
  explicit ExtenderServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace seedance::k8s
