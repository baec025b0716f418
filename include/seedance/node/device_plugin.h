// kubelet's device-plugin protocol, v1beta1, over gRPC on Unix sockets (feature SCHED-8, the
// node half): the server kubelet calls (GetDevicePluginOptions, ListAndWatch,
// GetPreferredAllocation, Allocate, PreStartContainer) and the registration with kubelet.
//
// The lifecycle, as kubelet expects it:
//   1. serve on <plugin dir>/<endpoint> (a stale socket there is removed first);
//   2. call Registration/Register on <plugin dir>/kubelet.sock with the endpoint, the resource
//      name and the options (GetPreferredAllocation available, no PreStartContainer);
//   3. kubelet then opens ListAndWatch, which sends the device list at once and again whenever
//      DevicesChanged() is called;
//   4. kubelet deletes the plugin sockets when it restarts and makes a new kubelet.sock: the
//      plugin checks both every `watch_interval` and, when its socket is gone or kubelet.sock is
//      a new file, serves again and registers again. Until kubelet is there, registration is
//      retried every `watch_interval`.
//
// What the answers are is the backend's: the node agent (agent.h) implements it over the API
// server. Nothing here knows about pods.
//
// Thread safety: Run() on one thread; Stop() and DevicesChanged() from any thread. The backend
// is called from gRPC's threads, one call at a time for Allocate and GetPreferredAllocation.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "seedance/base/status.h"
#include "seedance/node/gpu_shares.h"

namespace seedance::node {

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual std::vector<ShareDevice> Devices() = 0;
  // The container's environment for the devices kubelet allocated, or why not (kubelet puts
  // the message into the pod's events).
  virtual base::StatusOr<std::map<std::string, std::string>> Allocate(
      const std::vector<std::string>& ids) = 0;
  virtual std::vector<std::string> Prefer(const std::vector<std::string>& available,
                                          const std::vector<std::string>& must_include,
                                          int64_t size) = 0;
};

struct DevicePluginOptions {
  std::string plugin_dir = "/var/lib/kubelet/device-plugins";
  std::string endpoint = "seedance-gpu-milli.sock";
  std::string resource = std::string(kGpuMilliResource);
  std::chrono::milliseconds watch_interval{500};
};

struct DevicePluginStats {
  int registrations = 0;  // successful Register calls
  int allocations = 0;    // Allocate calls answered with an environment
  int refusals = 0;       // Allocate calls refused
  int list_updates = 0;   // ListAndWatch messages sent
};

class DevicePlugin {
 public:
  DevicePlugin(DeviceBackend& backend, DevicePluginOptions options);
  ~DevicePlugin();
  DevicePlugin(const DevicePlugin&) = delete;
  DevicePlugin& operator=(const DevicePlugin&) = delete;

  // Serves until Stop(); an error when the socket cannot be served at all.
  base::Status Run();
  void Stop();
  void DevicesChanged();
  DevicePluginStats stats() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace seedance::node
