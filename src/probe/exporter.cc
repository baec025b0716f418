#include "seedance/probe/exporter.h"

#include <algorithm>
#include <charconv>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace seedance::probe {

base::StatusOr<std::pair<std::string, int>> ParseListenAddress(const std::string& listen) {
  std::string host;
  std::string port;
  if (!listen.empty() && listen.front() == '[') {
    const size_t close = listen.find(']');
    if (close == std::string::npos || close + 1 >= listen.size() || listen[close + 1] != ':') {
      return base::InvalidArgumentError("expected [IPv6]:PORT, got '" + listen + "'", "listen");
    }
    host = listen.substr(1, close - 1);
    port = listen.substr(close + 2);
  } else {
    const size_t colon = listen.rfind(':');
    if (colon == std::string::npos) {
      return base::InvalidArgumentError("expected HOST:PORT, got '" + listen + "'", "listen");
    }
    host = listen.substr(0, colon);
    port = listen.substr(colon + 1);
  }
  if (host.empty()) host = "0.0.0.0";
  int p = -1;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
  if (port.empty() || ec != std::errc() || ptr != port.data() + port.size() || p < 0 || p > 65535) {
    return base::InvalidArgumentError("port must be 0-65535, got '" + port + "'", "listen");
  }
  return std::make_pair(host, p);
}

class Exporter::Impl {
 public:
  Impl(Probe& probe, ExporterOptions options) : probe_(probe), options_(std::move(options)) {}

  base::Status Start() {
    auto addr = ParseListenAddress(options_.listen);
    if (!addr.ok()) return addr.status();
    Sample();  // the first scrape has data
    net::HttpServerOptions http;
    http.host = addr->first;
    http.port = addr->second;
    http.max_connections = std::max<size_t>(1, options_.max_connections);
    http.request_timeout = options_.request_timeout;
    http.idle_timeout = options_.idle_timeout;
    http.write_timeout = options_.request_timeout;
    http.metrics_prefix = "seedance_probe";
    http.metrics = [this] { return Metrics(); };
    auto server =
        net::HttpServer::Start(http, [](const net::HttpRequest& req) { return Handle(req.head); });
    if (!server.ok()) return server.status();
    server_ = std::move(*server);
    sampler_ = std::thread([this] { SampleLoop(); });
    return base::OkStatus();
  }

  // The /metrics body before the server's own families (called on the server's thread).
  std::string Metrics() {
    scrapes_.fetch_add(1, std::memory_order_relaxed);
    std::shared_ptr<const std::string> rendered;
    {
      std::lock_guard<std::mutex> lock(mu_);
      rendered = rendered_;
    }
    std::string body;
    body.reserve(rendered->size() + 160);
    body = *rendered;
    if (options_.extra) body += options_.extra();
    body +=
        "# HELP seedance_probe_scrapes_total Scrapes of this endpoint.\n"
        "# TYPE seedance_probe_scrapes_total counter\n"
        "seedance_probe_scrapes_total " +
        std::to_string(scrapes_.load(std::memory_order_relaxed)) + "\n";
    return body;
  }

  static net::HttpResponse Handle(const net::HttpRequestHead& req) {
    net::HttpResponse res;
    if (req.path == "/") {
      if (req.method != "GET" && req.method != "HEAD") {
        res.status = 405;
        res.headers.emplace_back("Allow", "GET, HEAD");
        res.body = "method not allowed\n";
        return res;
      }
      res.content_type = "text/html; charset=utf-8";
      res.body =
          "<html><head><title>Seedance probe</title></head><body>"
          "<h1>Seedance probe</h1><p><a href=\"/metrics\">Metrics</a></p></body></html>\n";
      return res;
    }
    res.status = 404;
    res.body = "not found\n";
    return res;
  }

  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      stopping_ = true;
    }
    cv_.notify_all();
    if (server_) server_->Stop();
    if (sampler_.joinable()) sampler_.join();
  }

  int port() const { return server_ ? server_->port() : -1; }
  uint64_t scrapes() const { return scrapes_.load(); }
  net::HttpServerStats http_stats() const {
    return server_ ? server_->stats() : net::HttpServerStats{};
  }

 private:
  void Sample() {
    auto snap = probe_.Read();
    if (!snap.ok()) return;  // keep serving the last good rendering
    ExpositionContext c;
    c.hostname = probe_.hostname();
    c.version = options_.version;
    c.driver_version = probe_.driver_version();
    c.previous = previous_ ? previous_.get() : nullptr;
    auto text = std::make_shared<const std::string>(RenderPrometheus(*snap, options_.naming, c));
    previous_ = std::make_unique<Snapshot>(std::move(*snap));
    std::lock_guard<std::mutex> lock(mu_);
    rendered_ = std::move(text);
  }

  void SampleLoop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stopping_) {
      if (cv_.wait_for(lock, options_.interval, [this] { return stopping_; })) break;
      lock.unlock();
      Sample();
      lock.lock();
    }
  }

  Probe& probe_;
  ExporterOptions options_;
  std::unique_ptr<net::HttpServer> server_;
  std::thread sampler_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::shared_ptr<const std::string> rendered_ = std::make_shared<const std::string>();
  std::unique_ptr<Snapshot> previous_;  // sampler thread only
  std::atomic<uint64_t> scrapes_{0};
};

base::StatusOr<std::unique_ptr<Exporter>> Exporter::Start(Probe& probe, ExporterOptions options) {
  auto impl = std::make_unique<Impl>(probe, std::move(options));
  if (auto s = impl->Start(); !s.ok()) return s;
  return std::unique_ptr<Exporter>(new Exporter(std::move(impl)));
}

Exporter::Exporter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Exporter::~Exporter() { Stop(); }
int Exporter::port() const { return impl_->port(); }
void Exporter::Stop() { impl_->Stop(); }
uint64_t Exporter::scrapes() const { return impl_->scrapes(); }
net::HttpServerStats Exporter::http_stats() const { return impl_->http_stats(); }

}  // namespace seedance::probe
