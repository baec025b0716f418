// Private to seedance::net: the worker threads of HttpServer (workers > 0) and the hand-over of
// their answers to the loop thread. A worker runs the handler; a plain answer goes back as one
// Completion; a streamed one as a Completion holding the head and a StreamState, into which the
// producer's sink appends encoded chunks while the loop takes them out as the socket drains.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "seedance/net/http_server.h"

namespace seedance::net::internal {

// A streamed body in flight, shared by its worker (appends) and the loop (takes).
struct StreamState {
  std::mutex mu;
  std::condition_variable room;  // the loop took bytes, or the stream closed
  std::string pending;           // encoded bytes the loop has not taken
  bool finished = false;         // the producer returned; the last chunk is in `pending`
  bool closed = false;           // the client is gone or the server stops
};

struct Job {
  int fd = -1;
  uint64_t serial = 0;  // tells a connection from a later one on the same descriptor
  HttpRequest request;
  int64_t started_ns = 0;
};

struct Completion {
  int fd = -1;
  uint64_t serial = 0;
  int status = 0;
  int64_t started_ns = 0;
  bool keep_alive = true;               // the connection may take another request after this one
  std::string bytes;                    // the whole response, or a stream's head
  std::shared_ptr<StreamState> stream;  // set: the body follows through it
};

class WorkerPool {
 public:
  // `deliver` hands a completion to the loop; `wake` tells the loop that a stream has bytes.
  // Both are called from worker threads.
  WorkerPool(int threads, HttpHandler handler, size_t max_output_bytes,
             std::function<void(Completion)> deliver, std::function<void()> wake);
  ~WorkerPool();  // Stop()s
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void Submit(Job job);
  // Sinks say false from now on, queued jobs are dropped, and the threads are joined once their
  // handlers return.
  void Stop();
  bool stopping() const { return stopping_.load(); }

 private:
  void Run();
  void Serve(Job job);

  HttpHandler handler_;
  size_t max_output_bytes_;
  std::function<void(Completion)> deliver_;
  std::function<void()> wake_;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  std::vector<std::thread> threads_;
};

}  // namespace seedance::net::internal
