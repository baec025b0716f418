// A small Kubernetes API client for the extender (feature SCHED-8): the connection a kubeconfig
// or a pod's service account describes, GET and POST of JSON, and the watch stream — enough to
// list-watch nodes and pods, to post Bindings and to patch objects. HTTPS with the cluster's CA (or
// plain HTTP for an `http://` server); a bearer token (token, tokenFile) or a client certificate.
//
// Kubeconfig: the current context's cluster (server, certificate-authority[-data],
// insecure-skip-tls-verify) and user (token, tokenFile, client-certificate[-data],
// client-key[-data]); -data values are written to private temporary files for the TLS library.
// Other keys are ignored (a kubeconfig carries many). In a pod: KUBERNETES_SERVICE_HOST/PORT and
// /var/run/secrets/kubernetes.io/serviceaccount/{token,ca.crt}.
//
// Thread safety: a KubeClient may be used from several threads. GET and POST share one
// keep-alive connection and take turns on it; each watch opens a stream of its own.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "seedance/base/env.h"
#include "seedance/base/status.h"
#include "seedance/k8s/extender_server.h"

namespace seedance::k8s {

struct KubeConfig {
  std::string server;  // https://host:port or http://host:port
  std::string ca_file;
  bool insecure_skip_tls_verify = false;
  std::string token;
  std::string client_cert_file, client_key_file;
};

base::StatusOr<KubeConfig> LoadKubeConfig(base::Env& env, const std::string& path);

// A bearer token from a file (a mounted Secret, a kubeconfig's tokenFile): trailing whitespace
// dropped; empty, or holding a space or a control byte (it goes into an HTTP header), an error
// naming the file.
base::StatusOr<std::string> ReadTokenFile(base::Env& env, const std::string& path);
base::StatusOr<KubeConfig> InClusterKubeConfig(base::Env& env);

class KubeClient {
 public:
  static base::StatusOr<std::unique_ptr<KubeClient>> Connect(const KubeConfig& config);
  ~KubeClient();

  // The body of a 2xx answer; otherwise an error with the status and the API's message.
  base::StatusOr<std::string> Get(const std::string& path);
  base::StatusOr<std::string> Post(const std::string& path, const std::string& json);
  // A JSON merge patch (RFC 7386). A patch carrying metadata.resourceVersion is refused with 409
  // when the object changed since: that answer is FailedPrecondition, every other refusal
  // Unavailable.
  base::StatusOr<std::string> Patch(const std::string& path, const std::string& json);
  // Feeds each line of a watch stream to `on_line` until the server ends the stream, on_line
  // returns false, or Stop() is called. Add timeoutSeconds to the path so a quiet stream ends.
  base::Status Watch(const std::string& path, const std::function<bool(std::string_view)>& on_line);
  void Stop();
  bool stopped() const;

  struct Impl;

 private:
  explicit KubeClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The client of a kubeconfig file, or of the pod's service account when `kubeconfig` is empty.
base::StatusOr<std::unique_ptr<KubeClient>> ConnectKube(base::Env& env,
                                                        const std::string& kubeconfig);

// Posts a planned bind as a v1 Binding whose annotations carry the GPU assignment (the API
// server copies a Binding's annotations onto the pod, in the same write).
class KubeBinder : public Binder {
 public:
  explicit KubeBinder(KubeClient& client) : client_(client) {}
  base::Status Bind(const BindPlan& plan) override;

 private:
  KubeClient& client_;
};

// The Binding object for a plan, as JSON text.
std::string BindingJson(const BindPlan& plan);

}  // namespace seedance::k8s
