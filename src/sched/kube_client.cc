#include "seedance/sched/kube_client.h"

#include <fcntl.h>
#include <httplib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <atomic>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <utility>

#include "seedance/base/yaml_map.h"
#include "seedance/sched/k8s_objects.h"

namespace seedance::sched {
namespace {

std::string Base64Decode(std::string_view in) {
  static constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    const size_t v = kAlphabet.find(c);
    if (v == std::string_view::npos) continue;  // padding, newlines
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

// A private (0600) temporary file holding `contents`, for the TLS library's file-only settings.
base::StatusOr<std::string> PrivateFile(const std::string& contents, const std::string& what) {
  const char* dir = std::getenv("TMPDIR");
  std::string path =
      std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/seedance-kube-XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd < 0) return base::IoError("cannot create a temporary file", what);
  const bool ok =
      write(fd, contents.data(), contents.size()) == static_cast<ssize_t>(contents.size());
  close(fd);
  if (!ok) return base::IoError("cannot write " + path, what);
  return path;
}

// The named entry of a kubeconfig list (clusters, users, contexts): its inner mapping.
YAML::Node Named(const YAML::Node& list, const std::string& name, const char* inner) {
  if (!list.IsSequence()) return YAML::Node();
  for (const auto& item : list) {
    if (item["name"] && item["name"].as<std::string>() == name) return item[inner];
  }
  return YAML::Node();
}

std::string Str(const YAML::Node& n, const char* key) {
  return n && n[key] && n[key].IsScalar() ? n[key].as<std::string>() : std::string();
}

// A path in a kubeconfig is relative to the kubeconfig's directory.
std::string Resolve(const std::string& path, const std::string& kubeconfig) {
  if (path.empty() || path[0] == '/') return path;
  const size_t slash = kubeconfig.rfind('/');
  return slash == std::string::npos ? path : kubeconfig.substr(0, slash + 1) + path;
}

std::string ApiMessage(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("message") && j["message"].is_string()) {
    return j["message"].get<std::string>();
  }
  return body.substr(0, 200);
}

}  // namespace

base::StatusOr<KubeConfig> LoadKubeConfig(base::Env& env, const std::string& path) {
  SEEDANCE_ASSIGN_OR_RETURN(const std::string text, env.ReadFile(path));
  SEEDANCE_ASSIGN_OR_RETURN(const YAML::Node root, base::ParseYaml(text, path));
  try {
    const std::string context_name = Str(root, "current-context");
    if (context_name.empty()) return base::InvalidArgumentError("no current-context", path);
    const YAML::Node context = Named(root["contexts"], context_name, "context");
    if (!context) {
      return base::InvalidArgumentError("current-context '" + context_name + "' is not in contexts",
                                        path);
    }
    const YAML::Node cluster = Named(root["clusters"], Str(context, "cluster"), "cluster");
    if (!cluster || Str(cluster, "server").empty()) {
      return base::InvalidArgumentError("context '" + context_name + "': no cluster server", path);
    }
    const YAML::Node user = Named(root["users"], Str(context, "user"), "user");
    KubeConfig c;
    c.server = Str(cluster, "server");
    c.insecure_skip_tls_verify = Str(cluster, "insecure-skip-tls-verify") == "true";
    c.ca_file = Resolve(Str(cluster, "certificate-authority"), path);
    if (const std::string data = Str(cluster, "certificate-authority-data"); !data.empty()) {
      SEEDANCE_ASSIGN_OR_RETURN(c.ca_file, PrivateFile(Base64Decode(data), path));
    }
    c.token = Str(user, "token");
    if (const std::string file = Resolve(Str(user, "tokenFile"), path); !file.empty()) {
      SEEDANCE_ASSIGN_OR_RETURN(c.token, env.ReadFile(file));
      while (!c.token.empty() && (c.token.back() == '\n' || c.token.back() == '\r')) {
        c.token.pop_back();
      }
    }
    c.client_cert_file = Resolve(Str(user, "client-certificate"), path);
    c.client_key_file = Resolve(Str(user, "client-key"), path);
    if (const std::string data = Str(user, "client-certificate-data"); !data.empty()) {
      SEEDANCE_ASSIGN_OR_RETURN(c.client_cert_file, PrivateFile(Base64Decode(data), path));
    }
    if (const std::string data = Str(user, "client-key-data"); !data.empty()) {
      SEEDANCE_ASSIGN_OR_RETURN(c.client_key_file, PrivateFile(Base64Decode(data), path));
    }
    return c;
  } catch (const YAML::Exception& e) {
    return base::InvalidArgumentError("unexpected structure: " + std::string(e.what()), path);
  }
}

base::StatusOr<KubeConfig> InClusterKubeConfig(base::Env& env) {
  const auto host = env.GetVar("KUBERNETES_SERVICE_HOST");
  const auto port = env.GetVar("KUBERNETES_SERVICE_PORT");
  if (!host || !port) {
    return base::FailedPreconditionError("not in a pod (KUBERNETES_SERVICE_HOST/PORT unset)",
                                         "in-cluster config");
  }
  const std::string dir = "/var/run/secrets/kubernetes.io/serviceaccount/";
  KubeConfig c;
  c.server =
      "https://" + (host->find(':') != std::string::npos ? "[" + *host + "]" : *host) + ":" + *port;
  SEEDANCE_ASSIGN_OR_RETURN(c.token, env.ReadFile(dir + "token"));
  c.ca_file = dir + "ca.crt";
  return c;
}

base::StatusOr<std::unique_ptr<KubeClient>> ConnectKube(base::Env& env,
                                                        const std::string& kubeconfig) {
  SEEDANCE_ASSIGN_OR_RETURN(const KubeConfig config, kubeconfig.empty()
                                                         ? InClusterKubeConfig(env)
                                                         : LoadKubeConfig(env, kubeconfig));
  return KubeClient::Connect(config);
}

struct KubeClient::Impl {
  KubeConfig config;
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::set<httplib::Client*> watching;  // streams Stop() interrupts
  // GET and POST share one keep-alive connection (a TLS handshake per bind took most of its
  // time); calls on it take turns.
  std::mutex unary_mu;
  std::unique_ptr<httplib::Client> unary;

  httplib::Client& Unary() {
    if (!unary) {
      unary = Open(false);
      unary->set_keep_alive(true);
    }
    return *unary;
  }

  std::unique_ptr<httplib::Client> Open(bool streaming) const {
    auto cli = config.client_cert_file.empty()
                   ? std::make_unique<httplib::Client>(config.server)
                   : std::make_unique<httplib::Client>(config.server, config.client_cert_file,
                                                       config.client_key_file);
    if (!config.ca_file.empty()) cli->set_ca_cert_path(config.ca_file);
    cli->enable_server_certificate_verification(!config.insecure_skip_tls_verify);
    if (!config.token.empty()) cli->set_bearer_token_auth(config.token);
    cli->set_connection_timeout(std::chrono::seconds(5));
    // cpp-httplib writes a request's headers and body apart; with Nagle's algorithm on, the body
    // waits for the server's delayed ACK, and binds take turns on one connection.
    cli->set_tcp_nodelay(true);
    cli->set_read_timeout(streaming ? std::chrono::seconds(120) : std::chrono::seconds(30));
    return cli;
  }

  base::Status Failed(const httplib::Result& r, const std::string& what) const {
    if (!r) {
      return base::UnavailableError(
          "API server " + config.server + ": " + httplib::to_string(r.error()), what);
    }
    return base::UnavailableError(
        "API server answered " + std::to_string(r->status) + ": " + ApiMessage(r->body), what);
  }
};

KubeClient::KubeClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KubeClient::~KubeClient() = default;

base::StatusOr<std::unique_ptr<KubeClient>> KubeClient::Connect(const KubeConfig& config) {
  if (config.server.rfind("https://", 0) != 0 && config.server.rfind("http://", 0) != 0) {
    return base::InvalidArgumentError(
        "expected an http:// or https:// server, got '" + config.server + "'", "kubeconfig server");
  }
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  return std::unique_ptr<KubeClient>(new KubeClient(std::move(impl)));
}

base::StatusOr<std::string> KubeClient::Get(const std::string& path) {
  std::lock_guard<std::mutex> lock(impl_->unary_mu);
  auto r = impl_->Unary().Get(path);
  if (!r || r->status / 100 != 2) return impl_->Failed(r, "GET " + path);
  return r->body;
}

base::StatusOr<std::string> KubeClient::Post(const std::string& path, const std::string& json) {
  std::lock_guard<std::mutex> lock(impl_->unary_mu);
  auto r = impl_->Unary().Post(path, json, "application/json");
  if (!r || r->status / 100 != 2) return impl_->Failed(r, "POST " + path);
  return r->body;
}

base::Status KubeClient::Watch(const std::string& path,
                               const std::function<bool(std::string_view)>& on_line) {
  auto cli = impl_->Open(true);
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (impl_->stop.load()) return base::OkStatus();
    impl_->watching.insert(cli.get());
  }
  struct Forget {
    Impl* impl;
    httplib::Client* cli;
    ~Forget() {
      std::lock_guard<std::mutex> lock(impl->mu);
      impl->watching.erase(cli);
    }
  } forget{impl_.get(), cli.get()};
  std::string pending;
  bool stopped_by_caller = false;
  auto r = cli->Get(path, [&](const char* data, size_t n) {
    if (impl_->stop.load()) return false;
    pending.append(data, n);
    size_t nl;
    while ((nl = pending.find('\n')) != std::string::npos) {
      const std::string line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      if (!line.empty() && !on_line(line)) {
        stopped_by_caller = true;
        return false;
      }
    }
    return true;
  });
  if (stopped_by_caller || impl_->stop.load()) return base::OkStatus();
  if (!r && r.error() == httplib::Error::Read) return base::OkStatus();  // the stream ended
  if (!r || r->status / 100 != 2) return impl_->Failed(r, "watch " + path);
  return base::OkStatus();
}

void KubeClient::Stop() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->stop.store(true);
  for (httplib::Client* cli : impl_->watching) cli->stop();  // shuts the stream's socket
}
bool KubeClient::stopped() const { return impl_->stop.load(); }

std::string BindingJson(const BindPlan& plan) {
  nlohmann::json metadata = {{"name", plan.name}, {"namespace", plan.ns}};
  if (!plan.uid.empty()) metadata["uid"] = plan.uid;
  if (!plan.gpus.empty()) {  // a CPU-only pod gets no assignment
    metadata["annotations"] = {
        {std::string(kAssignmentAnnotation), FormatGpuAssignment(plan.gpus)}};
  }
  const nlohmann::json binding = {
      {"apiVersion", "v1"},
      {"kind", "Binding"},
      {"metadata", metadata},
      {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", plan.node}}}};
  return binding.dump();
}

base::Status KubeBinder::Bind(const BindPlan& plan) {
  return client_
      .Post("/api/v1/namespaces/" + plan.ns + "/pods/" + plan.name + "/binding", BindingJson(plan))
      .status();
}

}  // namespace seedance::sched
