// Keeps an Extender's cache in step with the API server (feature SCHED-8; what an informer does
// for kube-scheduler): list the nodes, then the pods, then watch both from the lists'
// resourceVersion — relisting when the API server says that version is gone (410) or a watch
// fails — and release expired reservations every second. Start returns once both lists are
// applied, so the extender answers its first filter with a full cache; a restarted extender
// gets its reservations back from the bound pods' annotations this way.
//
// Thread safety: Start and Stop from one thread; three threads of its own while running.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "seedance/base/status.h"
#include "seedance/k8s/extender.h"
#include "seedance/k8s/kube_client.h"

namespace seedance::k8s {

struct SyncStats {
  int64_t events = 0, relists = 0, errors = 0;
};

class ExtenderSync {
 public:
  // `log` receives one line per problem (a pod that does not fit its recorded node, a failed
  // watch); it may be called from the sync's threads.
  static base::StatusOr<std::unique_ptr<ExtenderSync>> Start(
      KubeClient& client, Extender& extender, std::function<void(const std::string&)> log);
  ~ExtenderSync();  // Stop()s
  void Stop();
  SyncStats stats() const;

  struct Impl;

 private:
  explicit ExtenderSync(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace seedance::k8s
