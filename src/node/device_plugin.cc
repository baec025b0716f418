#include "seedance/node/device_plugin.h"

#include <grpc/support/time.h>
#include <grpcpp/grpcpp.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "deviceplugin_v1beta1.grpc.pb.h"
#include "seedance/base/logging.h"

namespace seedance::node {
namespace {

constexpr char kApiVersion[] = "v1beta1";

gpr_timespec InMillis(int64_t ms) {
  return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(ms, GPR_TIMESPAN));
}

// (device, inode) of a path; {0, 0} when it does not exist or is not a socket.
std::pair<dev_t, ino_t> SocketId(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) return {0, 0};
  return {st.st_dev, st.st_ino};
}

}  // namespace

struct DevicePlugin::Impl final : public v1beta1::DevicePlugin::Service {
  DeviceBackend& backend;
  DevicePluginOptions options;
  std::mutex mu;
  std::condition_variable cv;
  uint64_t generation = 0;  // DevicesChanged() count; ListAndWatch sends on change
  uint64_t serving = 0;     // bumped when a server ends: its streams return
  bool stop = false;
  DevicePluginStats stats;
  std::mutex call_mu;  // Allocate and GetPreferredAllocation one at a time

  Impl(DeviceBackend& b, DevicePluginOptions o) : backend(b), options(std::move(o)) {}

  std::string SocketPath() const { return options.plugin_dir + "/" + options.endpoint; }
  std::string KubeletSocket() const { return options.plugin_dir + "/kubelet.sock"; }

  grpc::Status GetDevicePluginOptions(grpc::ServerContext*, const v1beta1::Empty*,
                                      v1beta1::DevicePluginOptions* out) override {
    out->set_pre_start_required(false);
    out->set_get_preferred_allocation_available(true);
    return grpc::Status::OK;
  }

  grpc::Status ListAndWatch(grpc::ServerContext* context, const v1beta1::Empty*,
                            grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer) override {
    uint64_t my_serving;
    uint64_t sent = 0;
    {
      std::lock_guard<std::mutex> lock(mu);
      my_serving = serving;
      sent = generation;
    }
    for (;;) {
      v1beta1::ListAndWatchResponse response;
      for (const ShareDevice& d : backend.Devices()) {
        v1beta1::Device* dev = response.add_devices();
        dev->set_id(d.id);
        dev->set_health(std::string(d.healthy ? kHealthy : kUnhealthy));
        if (d.numa_node >= 0) dev->mutable_topology()->add_nodes()->set_id(d.numa_node);
      }
      if (!writer->Write(response)) return grpc::Status::OK;  // kubelet went away
      {
        std::lock_guard<std::mutex> lock(mu);
        ++stats.list_updates;
      }
      std::unique_lock<std::mutex> lock(mu);
      while (generation == sent && !stop && serving == my_serving && !context->IsCancelled()) {
        cv.wait_for(lock, std::chrono::milliseconds(200));
      }
      if (stop || serving != my_serving || context->IsCancelled()) return grpc::Status::OK;
      sent = generation;
    }
  }

  grpc::Status GetPreferredAllocation(grpc::ServerContext*,
                                      const v1beta1::PreferredAllocationRequest* request,
                                      v1beta1::PreferredAllocationResponse* out) override {
    std::lock_guard<std::mutex> serial(call_mu);
    for (const auto& c : request->container_requests()) {
      std::vector<std::string> available(c.available_deviceids().begin(),
                                         c.available_deviceids().end());
      std::vector<std::string> must(c.must_include_deviceids().begin(),
                                    c.must_include_deviceids().end());
      auto* answer = out->add_container_responses();
      for (std::string& id : backend.Prefer(available, must, c.allocation_size())) {
        answer->add_deviceids(std::move(id));
      }
    }
    return grpc::Status::OK;
  }

  grpc::Status Allocate(grpc::ServerContext*, const v1beta1::AllocateRequest* request,
                        v1beta1::AllocateResponse* out) override {
    std::lock_guard<std::mutex> serial(call_mu);
    for (const auto& c : request->container_requests()) {
      std::vector<std::string> ids(c.devicesids().begin(), c.devicesids().end());
      auto env = backend.Allocate(ids);
      if (!env.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        ++stats.refusals;
        SEEDANCE_LOG(kWarning) << "refused an Allocate of " << ids.size()
                               << " devices: " << env.status().ToString();
        return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                            "seedance node agent: " + env.status().ToString());
      }
      auto* answer = out->add_container_responses();
      for (const auto& [k, v] : *env) (*answer->mutable_envs())[k] = v;
    }
    std::lock_guard<std::mutex> lock(mu);
    ++stats.allocations;
    return grpc::Status::OK;
  }

  grpc::Status PreStartContainer(grpc::ServerContext*, const v1beta1::PreStartContainerRequest*,
                                 v1beta1::PreStartContainerResponse*) override {
    return grpc::Status::OK;
  }

  // One Register call to kubelet.
  base::Status Register() {
    auto channel =
        grpc::CreateChannel("unix://" + KubeletSocket(), grpc::InsecureChannelCredentials());
    auto stub = v1beta1::Registration::NewStub(channel);
    v1beta1::RegisterRequest request;
    request.set_version(kApiVersion);
    request.set_endpoint(options.endpoint);
    request.set_resource_name(options.resource);
    request.mutable_options()->set_get_preferred_allocation_available(true);
    grpc::ClientContext context;
    context.set_deadline(InMillis(5000));
    v1beta1::Empty reply;
    const grpc::Status s = stub->Register(&context, request, &reply);
    if (!s.ok()) {
      return base::UnavailableError(
          "kubelet refused or did not answer the registration: " + s.error_message(),
          KubeletSocket());
    }
    return base::OkStatus();
  }

  // Waits `watch_interval`; false when stopped.
  bool Sleep() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, options.watch_interval, [&] { return stop; });
    return !stop;
  }
};

DevicePlugin::DevicePlugin(DeviceBackend& backend, DevicePluginOptions options)
    : impl_(std::make_unique<Impl>(backend, std::move(options))) {}
DevicePlugin::~DevicePlugin() { Stop(); }

base::Status DevicePlugin::Run() {
  Impl& s = *impl_;
  const std::string socket = s.SocketPath();
  if (s.KubeletSocket().size() >= sizeof(sockaddr_un::sun_path) ||
      socket.size() >= sizeof(sockaddr_un::sun_path)) {
    return base::InvalidArgumentError("a Unix socket path must be shorter than " +
                                          std::to_string(sizeof(sockaddr_un::sun_path)) +
                                          " bytes: " + socket,
                                      "--device-plugin-dir");
  }
  bool first = true;
  while (true) {
    {
      std::lock_guard<std::mutex> lock(s.mu);
      if (s.stop) return base::OkStatus();
    }
    ::unlink(socket.c_str());  // a stale socket from an earlier run
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix://" + socket, grpc::InsecureServerCredentials());
    builder.RegisterService(&s);
    std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
    if (!server) {
      if (first) return base::UnavailableError("cannot serve the device plugin", socket);
      if (!s.Sleep()) return base::OkStatus();
      continue;
    }
    first = false;
    // Register, retrying until kubelet answers.
    std::pair<dev_t, ino_t> kubelet{0, 0};
    for (;;) {
      kubelet = SocketId(s.KubeletSocket());
      if (kubelet.second != 0) {
        base::Status r = s.Register();
        if (r.ok()) {
          std::lock_guard<std::mutex> lock(s.mu);
          ++s.stats.registrations;
          break;
        }
        SEEDANCE_LOG(kWarning) << r.ToString() << "; retrying";
      }
      if (!s.Sleep()) break;
    }
    const std::pair<dev_t, ino_t> mine = SocketId(socket);
    // Watch for kubelet's restart: our socket removed, or a new kubelet.sock.
    while (s.Sleep()) {
      if (SocketId(socket) != mine || SocketId(s.KubeletSocket()) != kubelet) {
        SEEDANCE_LOG(kInfo) << "kubelet restarted (" << socket
                            << " or kubelet.sock changed): serving and registering again";
        break;
      }
    }
    {
      std::lock_guard<std::mutex> lock(s.mu);
      ++s.serving;  // ends this server's ListAndWatch streams
    }
    s.cv.notify_all();
    server->Shutdown(InMillis(2000));
    server->Wait();
    if (SocketId(socket) == mine) ::unlink(socket.c_str());
  }
}

void DevicePlugin::Stop() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->cv.notify_all();
}

void DevicePlugin::DevicesChanged() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    ++impl_->generation;
  }
  impl_->cv.notify_all();
}

DevicePluginStats DevicePlugin::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->stats;
}

}  // namespace seedance::node
