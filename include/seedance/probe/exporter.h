// The /metrics endpoint (feature PROBE-2): a sampler thread reads the probe every
// interval and renders the exposition once; scrapes copy the latest rendering,
// so a scrape never waits for NVML or procfs.
//
// HTTP (net/http_server.h): GET or HEAD /metrics -> 200 text/plain; version=0.0.4, the probe's
// families, then the server's own (seedance_probe_http_*); GET /healthz -> "ok"; GET / -> a short
// index; other paths 404; other methods 405; malformed requests get the parser's 4xx. One
// event-loop thread serves every connection, so slow, idle or pipelining clients cannot hold the
// scrapers out: each request must arrive within request_timeout, idle keep-alive connections
// close after idle_timeout, and at max_connections the longest-waiting idle one makes room.
//
// Thread safety: Start/Stop from one thread; everything else is internal.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "seedance/base/status.h"
#include "seedance/net/http_server.h"
#include "seedance/probe/exposition.h"
#include "seedance/probe/probe.h"

namespace seedance::probe {

struct ExporterOptions {
  std::string listen = "127.0.0.1:9464";  // host:port; port 0 picks a free one
  Naming naming = Naming::kSeedance;
  std::chrono::milliseconds interval{5000};
  size_t max_connections = 256;
  std::chrono::milliseconds request_timeout{2000};  // a request's head, from its first byte
  std::chrono::milliseconds idle_timeout{1000};     // keep-alive idle time before closing
  std::string version;                              // for seedance_probe_info
  // More families, rendered at each scrape and appended (e.g. the training-loop controllers'
  // decisions, control/decision_record.h); must be complete exposition text. Called from the
  // server's thread.
  std::function<std::string()> extra;
};

// "127.0.0.1:9464" -> ("127.0.0.1", 9464); "[::1]:9464"; ":9464" -> ("0.0.0.0", 9464).
base::StatusOr<std::pair<std::string, int>> ParseListenAddress(const std::string& listen);

class Exporter {
 public:
  // Takes one sample, binds the address, starts serving. The probe must
  // outlive the exporter. Errors: a bad address, a port in use.
  static base::StatusOr<std::unique_ptr<Exporter>> Start(Probe& probe, ExporterOptions options);
  ~Exporter();  // Stop()s

  int port() const;
  void Stop();
  // Counters for the self-metrics and tests.
  uint64_t scrapes() const;
  net::HttpServerStats http_stats() const;

  class Impl;

 private:
  explicit Exporter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace seedance::probe
