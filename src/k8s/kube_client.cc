#include "seedance/k8s/kube_client.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "seedance/base/yaml_map.h"
#include "seedance/k8s/objects.h"
#include "seedance/net/http_client.h"

namespace seedance::k8s {
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

// The named entry of a kubeconfig list (clusters, users, contexts): its inner mapping, or nullopt
// when no entry has that name (or the list is absent).
base::StatusOr<std::optional<base::YamlMap>> Named(const base::YamlMap& root, std::string_view list,
                                                   const std::string& name,
                                                   std::string_view inner) {
  if (!root.Has(list)) return std::optional<base::YamlMap>();
  SEEDANCE_ASSIGN_OR_RETURN(const std::vector<base::YamlMap> items, root.GetMapList(list));
  for (const base::YamlMap& item : items) {
    SEEDANCE_ASSIGN_OR_RETURN(const std::string n, item.GetString("name", ""));
    if (n == name) {
      SEEDANCE_ASSIGN_OR_RETURN(base::YamlMap m, item.GetMap(inner));
      return std::optional<base::YamlMap>(std::move(m));
    }
  }
  return std::optional<base::YamlMap>();
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
  SEEDANCE_ASSIGN_OR_RETURN(const YAML::Node doc, base::ParseYaml(text, path));
  SEEDANCE_ASSIGN_OR_RETURN(const base::YamlMap root, base::YamlMap::FromNode(doc, path, ""));
  SEEDANCE_ASSIGN_OR_RETURN(const std::string context_name, root.GetString("current-context", ""));
  if (context_name.empty()) return base::InvalidArgumentError("no current-context", path);
  SEEDANCE_ASSIGN_OR_RETURN(const auto context, Named(root, "contexts", context_name, "context"));
  if (!context) {
    return base::InvalidArgumentError("current-context '" + context_name + "' is not in contexts",
                                      root.Where("contexts"));
  }
  SEEDANCE_ASSIGN_OR_RETURN(const std::string cluster_name, context->GetString("cluster", ""));
  SEEDANCE_ASSIGN_OR_RETURN(const auto cluster, Named(root, "clusters", cluster_name, "cluster"));
  if (!cluster) {
    return base::InvalidArgumentError(
        "context '" + context_name + "': no cluster named '" + cluster_name + "'",
        context->WhereSelf());
  }
  KubeConfig c;
  SEEDANCE_ASSIGN_OR_RETURN(c.server, cluster->GetString("server", ""));
  if (c.server.empty()) {
    return base::InvalidArgumentError("context '" + context_name + "': no cluster server",
                                      cluster->WhereSelf());
  }
  SEEDANCE_ASSIGN_OR_RETURN(c.insecure_skip_tls_verify,
                            cluster->GetBool("insecure-skip-tls-verify", false));
  SEEDANCE_ASSIGN_OR_RETURN(const std::string ca, cluster->GetString("certificate-authority", ""));
  c.ca_file = Resolve(ca, path);
  SEEDANCE_ASSIGN_OR_RETURN(const std::string ca_data,
                            cluster->GetString("certificate-authority-data", ""));
  if (!ca_data.empty()) {
    SEEDANCE_ASSIGN_OR_RETURN(c.ca_file, PrivateFile(Base64Decode(ca_data), path));
  }
  SEEDANCE_ASSIGN_OR_RETURN(const std::string user_name, context->GetString("user", ""));
  SEEDANCE_ASSIGN_OR_RETURN(const auto user, Named(root, "users", user_name, "user"));
  if (!user) return c;  // no credentials: an http:// server, or a proxy in front
  SEEDANCE_ASSIGN_OR_RETURN(c.token, user->GetString("token", ""));
  SEEDANCE_ASSIGN_OR_RETURN(const std::string token_file, user->GetString("tokenFile", ""));
  if (const std::string file = Resolve(token_file, path); !file.empty()) {
    SEEDANCE_ASSIGN_OR_RETURN(c.token, ReadTokenFile(env, file));
  }
  SEEDANCE_ASSIGN_OR_RETURN(const std::string cert, user->GetString("client-certificate", ""));
  SEEDANCE_ASSIGN_OR_RETURN(const std::string key, user->GetString("client-key", ""));
  c.client_cert_file = Resolve(cert, path);
  c.client_key_file = Resolve(key, path);
  SEEDANCE_ASSIGN_OR_RETURN(const std::string cert_data,
                            user->GetString("client-certificate-data", ""));
  if (!cert_data.empty()) {
    SEEDANCE_ASSIGN_OR_RETURN(c.client_cert_file, PrivateFile(Base64Decode(cert_data), path));
  }
  SEEDANCE_ASSIGN_OR_RETURN(const std::string key_data, user->GetString("client-key-data", ""));
  if (!key_data.empty()) {
    SEEDANCE_ASSIGN_OR_RETURN(c.client_key_file, PrivateFile(Base64Decode(key_data), path));
  }
  return c;
}

base::StatusOr<std::string> ReadTokenFile(base::Env& env, const std::string& path) {
  SEEDANCE_ASSIGN_OR_RETURN(std::string token, env.ReadFile(path));
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ' ||
                            token.back() == '\t')) {
    token.pop_back();
  }
  if (token.empty()) return base::InvalidArgumentError("the token file is empty", path);
  for (unsigned char c : token) {
    if (c <= ' ' || c == 0x7f) {
      return base::InvalidArgumentError("a token holds no spaces or control bytes", path);
    }
  }
  return token;
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

// A watch event larger than this is refused (a Node or Pod object is a few kilobytes; the API
// server's own limit on an object is 1.5 MiB).
constexpr size_t kMaxWatchLine = size_t{16} << 20;

struct KubeClient::Impl {
  KubeConfig config;
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::set<net::HttpClient*> watching;  // streams Stop() interrupts
  // GET and POST share one keep-alive connection (a TLS handshake per bind took most of its
  // time); HttpClient makes calls on it take turns.
  std::unique_ptr<net::HttpClient> unary;

  net::HttpClientOptions Options() const {
    net::HttpClientOptions o;
    o.ca_file = config.ca_file;
    o.verify_tls = !config.insecure_skip_tls_verify;
    o.cert_file = config.client_cert_file;
    o.key_file = config.client_key_file;
    o.connect_timeout = std::chrono::seconds(5);
    o.timeout = std::chrono::seconds(30);  // a GET or a Binding, whole
    o.max_body_bytes = size_t{256} << 20;  // a LIST of every pod of a large cluster
    if (!config.token.empty()) o.headers.emplace_back("Authorization", "Bearer " + config.token);
    o.headers.emplace_back("Accept", "application/json");
    return o;
  }

  base::StatusOr<std::string> Call(const std::string& method, const std::string& path,
                                   const std::string& body,
                                   const std::string& content_type = "application/json") {
    net::HttpClientRequest req;
    req.method = method;
    req.target = path;
    req.body = body;
    if (!body.empty()) req.content_type = content_type;
    auto r = unary->Send(req);
    if (!r.ok()) {
      return base::UnavailableError(
          "API server " + config.server + ": " + std::string(r.status().message()),
          method + " " + path);
    }
    if (r->status == 409) {  // the object changed since it was read (or exists already)
      return base::FailedPreconditionError("API server answered 409: " + ApiMessage(r->body),
                                           method + " " + path);
    }
    if (r->status / 100 != 2) return Refused(r->status, r->body, method + " " + path);
    return std::move(r->body);
  }

  static base::Status Refused(int status, const std::string& body, const std::string& what) {
    return base::UnavailableError(
        "API server answered " + std::to_string(status) + ": " + ApiMessage(body), what);
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
  // ParseUrl takes "https://host:port" with or without its trailing slash.
  auto unary = net::HttpClient::Create(config.server, impl->Options());
  if (!unary.ok())
    return base::InvalidArgumentError(std::string(unary.status().message()), "kubeconfig server");
  impl->unary = std::move(*unary);
  return std::unique_ptr<KubeClient>(new KubeClient(std::move(impl)));
}

base::StatusOr<std::string> KubeClient::Get(const std::string& path) {
  return impl_->Call("GET", path, "");
}

base::StatusOr<std::string> KubeClient::Post(const std::string& path, const std::string& json) {
  return impl_->Call("POST", path, json);
}

base::StatusOr<std::string> KubeClient::Patch(const std::string& path, const std::string& json) {
  return impl_->Call("PATCH", path, json, "application/merge-patch+json");
}

base::Status KubeClient::Watch(const std::string& path,
                               const std::function<bool(std::string_view)>& on_line) {
  SEEDANCE_ASSIGN_OR_RETURN(auto cli,
                            net::HttpClient::Create(impl_->config.server, impl_->Options()));
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (impl_->stop.load()) return base::OkStatus();
    impl_->watching.insert(cli.get());
  }
  struct Forget {
    Impl* impl;
    net::HttpClient* cli;
    ~Forget() {
      std::lock_guard<std::mutex> lock(impl->mu);
      impl->watching.erase(cli);
    }
  } forget{impl_.get(), cli.get()};
  std::string pending;
  bool stopped_by_caller = false;
  bool too_long = false;
  net::HttpClientRequest req;
  req.target = path;
  req.timeout = std::chrono::milliseconds(0);    // a watch runs until the server ends it
  req.idle_timeout = std::chrono::seconds(120);  // timeoutSeconds and bookmarks come sooner
  req.on_body = [&](std::string_view piece) {
    if (impl_->stop.load()) return false;
    pending.append(piece);
    size_t start = 0;
    for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
      const std::string_view line = std::string_view(pending).substr(start, nl - start);
      if (!line.empty() && !on_line(line)) {
        stopped_by_caller = true;
        return false;
      }
    }
    pending.erase(0, start);
    if (pending.size() > kMaxWatchLine) {
      too_long = true;
      return false;
    }
    return true;
  };
  auto r = cli->Send(req);
  if (stopped_by_caller || impl_->stop.load()) return base::OkStatus();
  if (too_long) {
    return base::UnavailableError("a watch event over " + std::to_string(kMaxWatchLine) + " bytes",
                                  "watch " + path);
  }
  if (!r.ok()) return base::UnavailableError(std::string(r.status().message()), "watch " + path);
  if (r->status / 100 != 2) return Impl::Refused(r->status, r->body, "watch " + path);
  return base::OkStatus();
}

void KubeClient::Stop() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->stop.store(true);
  for (net::HttpClient* cli : impl_->watching) cli->Stop();  // ends the stream at once
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

}  // namespace seedance::k8s
