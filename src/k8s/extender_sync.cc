#include "seedance/k8s/extender_sync.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>

#include "src/k8s/json.h"

namespace seedance::k8s {
namespace {

using nlohmann::json;

enum class Kind { kNodes, kPods };

const char* Path(Kind k) { return k == Kind::kNodes ? "/api/v1/nodes" : "/api/v1/pods"; }

}  // namespace

struct ExtenderSync::Impl {
  KubeClient* client = nullptr;
  Extender* extender = nullptr;
  std::function<void(const std::string&)> log;
  std::atomic<bool> stop{false};
  std::atomic<int64_t> events{0}, relists{0}, errors{0};
  std::mutex mu;
  std::condition_variable wake;
  std::vector<std::thread> threads;

  void Problem(const std::string& line) {
    ++errors;
    if (log) log(line);
  }

  // Applies one object of a list or a watch event.
  void Apply(Kind kind, const std::string& type, const json& object) {
    if (kind == Kind::kNodes) {
      auto node = internal::KubeNodeFromJson(object, "node");
      if (!node.ok()) return Problem(node.status().ToString());
      const base::Status s =
          type == "DELETED" ? extender->DeleteNode(node->node.name) : extender->UpsertNode(*node);
      if (!s.ok()) Problem(s.ToString());
      return;
    }
    auto pod = internal::KubePodFromJson(object, "pod");
    if (!pod.ok()) return Problem(pod.status().ToString());
    if (type == "DELETED") {
      extender->DeletePod(*pod);
    } else if (const base::Status s = extender->UpsertPod(*pod); !s.ok()) {
      Problem(s.ToString());
    }
  }

  // Lists `kind`, applies every item, returns the list's resourceVersion.
  base::StatusOr<std::string> List(Kind kind) {
    SEEDANCE_ASSIGN_OR_RETURN(const std::string body, client->Get(Path(kind)));
    const json list = json::parse(body, nullptr, false);
    if (!list.is_object() || !list.contains("items") || !list["items"].is_array()) {
      return base::InvalidArgumentError("expected a list", std::string(Path(kind)));
    }
    for (const auto& item : list["items"]) Apply(kind, "ADDED", item);
    ++relists;
    return list.value("/metadata/resourceVersion"_json_pointer, std::string());
  }

  void WatchLoop(Kind kind, std::string version) {
    while (!stop.load()) {
      bool gone = false;
      const std::string path = std::string(Path(kind)) + "?watch=1&allowWatchBookmarks=true" +
                               "&timeoutSeconds=60&resourceVersion=" + version;
      const base::Status s = client->Watch(path, [&](std::string_view line) {
        const json e = json::parse(line, nullptr, false);
        if (!e.is_object() || !e.contains("type") || !e.contains("object")) {
          Problem("watch " + std::string(Path(kind)) + ": an event that is not JSON");
          return true;
        }
        const std::string type = e["type"].get<std::string>();
        const json& object = e["object"];
        if (type == "ERROR") {  // 410 Gone: the version is too old; anything else: start over
          gone = true;
          return false;
        }
        version = object.value("/metadata/resourceVersion"_json_pointer, version);
        if (type != "BOOKMARK") {
          ++events;
          Apply(kind, type, object);
        }
        return true;
      });
      if (stop.load()) return;
      if (!s.ok()) {
        Problem(s.ToString());
        Sleep(std::chrono::seconds(1));
        gone = true;
      }
      if (gone) {
        auto relisted = List(kind);
        if (relisted.ok()) {
          version = *relisted;
        } else {
          Problem(relisted.status().ToString());
          Sleep(std::chrono::seconds(1));
        }
      }
    }
  }

  void Sleep(std::chrono::milliseconds d) {
    std::unique_lock<std::mutex> lock(mu);
    wake.wait_for(lock, d, [this] { return stop.load(); });
  }
};

ExtenderSync::ExtenderSync(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ExtenderSync::~ExtenderSync() { Stop(); }

base::StatusOr<std::unique_ptr<ExtenderSync>> ExtenderSync::Start(
    KubeClient& client, Extender& extender, std::function<void(const std::string&)> log) {
  auto impl = std::make_unique<Impl>();
  impl->client = &client;
  impl->extender = &extender;
  impl->log = std::move(log);
  SEEDANCE_ASSIGN_OR_RETURN(std::string nodes_version, impl->List(Kind::kNodes));
  SEEDANCE_ASSIGN_OR_RETURN(std::string pods_version, impl->List(Kind::kPods));
  Impl* s = impl.get();
  s->threads.emplace_back([s, v = std::move(nodes_version)] { s->WatchLoop(Kind::kNodes, v); });
  s->threads.emplace_back([s, v = std::move(pods_version)] { s->WatchLoop(Kind::kPods, v); });
  s->threads.emplace_back([s] {
    while (!s->stop.load()) {
      s->extender->ExpireReservations();
      s->Sleep(std::chrono::seconds(1));
    }
  });
  return std::unique_ptr<ExtenderSync>(new ExtenderSync(std::move(impl)));
}

void ExtenderSync::Stop() {
  if (!impl_ || impl_->stop.exchange(true)) return;
  impl_->client->Stop();
  impl_->wake.notify_all();
  for (auto& t : impl_->threads) t.join();
}

SyncStats ExtenderSync::stats() const {
  return {impl_->events.load(), impl_->relists.load(), impl_->errors.load()};
}

}  // namespace seedance::k8s
