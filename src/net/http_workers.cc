#include "src/net/http_workers.h"

#include <chrono>
#include <exception>
#include <utility>

#include "src/net/http_response.h"

namespace seedance::net::internal {
namespace {

class Sink : public HttpStreamSink {
 public:
  Sink(StreamState& state, const WorkerPool& pool, size_t max_output_bytes, bool chunked,
       const std::function<void()>& wake)
      : state_(state), pool_(pool), max_(max_output_bytes), chunked_(chunked), wake_(wake) {}

  bool Write(std::string_view data) override {
    {
      std::unique_lock<std::mutex> lock(state_.mu);
      // Waits for the loop to take bytes; the loop's write deadline closes a client that never
      // reads, and Stop closes every stream, so the wait ends. The timed wait re-reads stopping().
      while (!state_.closed && !pool_.stopping() && state_.pending.size() > max_) {
        state_.room.wait_for(lock, std::chrono::milliseconds(100));
      }
      if (state_.closed || pool_.stopping()) return false;
      state_.pending += chunked_ ? EncodeChunk(data) : std::string(data);
    }
    wake_();
    return true;
  }

  bool Open() const override {
    std::lock_guard<std::mutex> lock(state_.mu);
    return !state_.closed && !pool_.stopping();
  }

 private:
  StreamState& state_;
  const WorkerPool& pool_;
  size_t max_;
  bool chunked_;
  const std::function<void()>& wake_;
};

}  // namespace

WorkerPool::WorkerPool(int threads, HttpHandler handler, size_t max_output_bytes,
                       std::function<void(Completion)> deliver, std::function<void()> wake)
    : handler_(std::move(handler)),
      max_output_bytes_(max_output_bytes),
      deliver_(std::move(deliver)),
      wake_(std::move(wake)) {
  threads_.reserve(static_cast<size_t>(threads));
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Run(); });
}

WorkerPool::~WorkerPool() { Stop(); }

void WorkerPool::Submit(Job job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void WorkerPool::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    jobs_.clear();
  }
  cv_.notify_all();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void WorkerPool::Run() {
  while (true) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_.load() || !jobs_.empty(); });
      if (stopping_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    Serve(std::move(job));
  }
}

void WorkerPool::Serve(Job job) {
  const HttpRequestHead& head = job.request.head;
  HttpResponse res;
  try {
    res = handler_(job.request);
  } catch (const std::exception& e) {
    res = HttpResponse{};
    res.status = 500;
    res.body = std::string("500 Internal Server Error: ") + e.what() + "\n";
  }
  Completion c;
  c.fd = job.fd;
  c.serial = job.serial;
  c.status = res.status;
  c.started_ns = job.started_ns;
  if (!res.stream || head.method == "HEAD") {
    c.keep_alive = head.keep_alive;
    c.bytes = RenderResponse(head, res, res.stream ? BodyFraming::kChunked : BodyFraming::kLength);
    deliver_(std::move(c));
    return;
  }
  const bool chunked = head.minor_version >= 1;
  auto state = std::make_shared<StreamState>();
  c.keep_alive = head.keep_alive && chunked;
  c.bytes = RenderResponse(head, res, chunked ? BodyFraming::kChunked : BodyFraming::kUntilClose);
  c.stream = state;
  deliver_(std::move(c));
  Sink sink(*state, *this, max_output_bytes_, chunked, wake_);
  try {
    res.stream(sink);
  } catch (const std::exception&) {
    // The head is gone already: the only way left to say "failed" is to cut the stream.
    std::lock_guard<std::mutex> lock(state->mu);
    state->closed = true;
  }
  {
    std::lock_guard<std::mutex> lock(state->mu);
    if (chunked && !state->closed) state->pending += kLastChunk;
    state->finished = true;
  }
  wake_();
}

}  // namespace seedance::net::internal
