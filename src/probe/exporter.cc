#include "seedance/probe/exporter.h"

#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

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
      return base::InvalidArgumentError("expected [IPv6]:PORT, got '" + listen + "'", "--listen");
    }
    host = listen.substr(1, close - 1);
    port = listen.substr(close + 2);
  } else {
    const size_t colon = listen.rfind(':');
    if (colon == std::string::npos) {
      return base::InvalidArgumentError("expected HOST:PORT, got '" + listen + "'", "--listen");
    }
    host = listen.substr(0, colon);
    port = listen.substr(colon + 1);
  }
  if (host.empty()) host = "0.0.0.0";
  int p = -1;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
  if (port.empty() || ec != std::errc() || ptr != port.data() + port.size() || p < 0 || p > 65535) {
    return base::InvalidArgumentError("port must be 0-65535, got '" + port + "'", "--listen");
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
    const int threads = std::max(1, options_.worker_threads);
    server_.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    const auto io = options_.io_timeout;
    server_.set_read_timeout(io);
    server_.set_write_timeout(io);
    server_.set_keep_alive_timeout(std::max<time_t>(
        1, std::chrono::duration_cast<std::chrono::seconds>(options_.keep_alive).count()));
    server_.set_keep_alive_max_count(100);
    server_.set_payload_max_length(4096);  // scrapes carry no body
    // SO_REUSEADDR only: httplib's default also sets SO_REUSEPORT, which would
    // let a second exporter share a port that is in use instead of failing.
    // TCP_NODELAY (inherited by accepted sockets): the headers and body go
    // out in two writes, and Nagle + delayed ACK would hold the body ~40 ms.
    server_.set_socket_options([](int sock) {
      int yes = 1;
      ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
      ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
    });
    server_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      scrapes_.fetch_add(1, std::memory_order_relaxed);
      std::shared_ptr<const std::string> body;
      {
        std::lock_guard<std::mutex> lock(mu_);
        body = rendered_;
      }
      std::string text = *body;
      text +=
          "# HELP seedance_probe_scrapes_total Scrapes of this endpoint.\n"
          "# TYPE seedance_probe_scrapes_total counter\n"
          "seedance_probe_scrapes_total " +
          std::to_string(scrapes_.load(std::memory_order_relaxed)) + "\n";
      res.set_content(std::move(text), "text/plain; version=0.0.4; charset=utf-8");
    });
    server_.Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(
          "<html><head><title>Seedance probe</title></head><body>"
          "<h1>Seedance probe</h1><p><a href=\"/metrics\">Metrics</a></p></body></html>\n",
          "text/html; charset=utf-8");
    });
    // Everything else: 404 for unknown paths (httplib's default), 405 for
    // methods other than GET/HEAD on known ones.
    auto not_allowed = [](const httplib::Request&, httplib::Response& res) {
      res.status = 405;
      res.set_header("Allow", "GET, HEAD");
      res.set_content("method not allowed\n", "text/plain");
    };
    server_.Post("/metrics", not_allowed);
    server_.Put("/metrics", not_allowed);
    server_.Delete("/metrics", not_allowed);
    server_.Patch("/metrics", not_allowed);
    if (addr->second == 0) {
      port_ = server_.bind_to_any_port(addr->first);
    } else {
      port_ = server_.bind_to_port(addr->first, addr->second) ? addr->second : -1;
    }
    if (port_ <= 0) {
      return base::UnavailableError(
          "cannot listen on " + options_.listen + " (address in use or not local?)", "--listen");
    }
    listener_ = std::thread([this] {
      server_.listen_after_bind();
      listener_done_ = true;
    });
    // stop() only interrupts a server that is already running: wait until it
    // is (or gave up), or an early Stop() would leave the listener running.
    while (!server_.is_running() && !listener_done_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    sampler_ = std::thread([this] { SampleLoop(); });
    return base::OkStatus();
  }

  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      stopping_ = true;
    }
    cv_.notify_all();
    server_.stop();
    if (listener_.joinable()) listener_.join();
    if (sampler_.joinable()) sampler_.join();
  }

  int port() const { return port_; }
  uint64_t scrapes() const { return scrapes_.load(); }

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
  httplib::Server server_;
  std::thread listener_, sampler_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::shared_ptr<const std::string> rendered_ = std::make_shared<const std::string>();
  std::unique_ptr<Snapshot> previous_;  // sampler thread only
  std::atomic<uint64_t> scrapes_{0};
  std::atomic<bool> listener_done_{false};
  int port_ = -1;
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

}  // namespace seedance::probe
