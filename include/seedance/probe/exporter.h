// The /metrics endpoint (SPEC PROBE-2): a sampler thread reads the probe every
// interval and renders the exposition once; scrapes copy the latest rendering,
// so a scrape never waits for NVML or procfs.
//
// HTTP: GET or HEAD /metrics -> 200 text/plain; version=0.0.4; GET / -> a
// short index; other paths 404; other methods 405; malformed requests 400.
// Slow clients: a pool of worker threads serves connections, each with read
// and write timeouts and a short keep-alive, so one stuck or slow client holds
// one worker for at most the timeout while the others keep answering.
//
// Thread safety: Start/Stop from one thread; everything else is internal.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "seedance/base/status.h"
#include "seedance/probe/exposition.h"
#include "seedance/probe/probe.h"

namespace seedance::probe {

struct ExporterOptions {
  std::string listen = "127.0.0.1:9464";  // host:port; port 0 picks a free one
  Naming naming = Naming::kSeedance;
  std::chrono::milliseconds interval{5000};
  int worker_threads = 8;
  std::chrono::milliseconds io_timeout{2000};  // per read/write on a connection
  std::chrono::milliseconds keep_alive{1000};  // idle time before closing
  std::string version;                         // for seedance_probe_info
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

  class Impl;

 private:
  explicit Exporter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace seedance::probe
