#include "seedance/k8s/extender_config.h"

#include <chrono>
#include <nlohmann/json.hpp>

#include "seedance/net/http_client.h"

namespace seedance::k8s {

using nlohmann::json;

std::string EncodeExtenderConfig(const ExtenderConfig& c) {
  json j = json::object();
  j["policy"] = c.policy;
  j["numaAware"] = c.numa_aware;
  j["rdmaEnable"] = c.rdma;
  return j.dump();
}

std::string EncodeExtenderConfigUpdate(const ExtenderConfigUpdate& u) {
  json j = json::object();
  if (u.policy) j["policy"] = *u.policy;
  if (u.numa_aware) j["numaAware"] = *u.numa_aware;
  if (u.rdma) j["rdmaEnable"] = *u.rdma;
  return j.dump();
}

base::StatusOr<ExtenderConfigUpdate> DecodeExtenderConfigUpdate(std::string_view text,
                                                                std::string_view where) {
  const std::string at(where);
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return base::InvalidArgumentError("not valid JSON", at);
  if (!j.is_object()) return base::InvalidArgumentError("expected a JSON object", at);
  ExtenderConfigUpdate u;
  for (const auto& [key, value] : j.items()) {
    const std::string field = at + "." + key;
    if (key == "policy") {
      if (!value.is_string()) return base::InvalidArgumentError("expected a string", field);
      u.policy = value.get<std::string>();
    } else if (key == "numaAware" || key == "rdmaEnable") {
      if (!value.is_boolean()) return base::InvalidArgumentError("expected true or false", field);
      (key == "numaAware" ? u.numa_aware : u.rdma) = value.get<bool>();
    } else {
      return base::InvalidArgumentError("unknown field; expected policy, numaAware or rdmaEnable",
                                        field);
    }
  }
  return u;
}

base::StatusOr<ExtenderConfig> DecodeExtenderConfig(std::string_view text, std::string_view where) {
  SEEDANCE_ASSIGN_OR_RETURN(const ExtenderConfigUpdate u, DecodeExtenderConfigUpdate(text, where));
  if (!u.policy || !u.numa_aware || !u.rdma) {
    return base::InvalidArgumentError("expected policy, numaAware and rdmaEnable",
                                      std::string(where));
  }
  return ExtenderConfig{*u.policy, *u.numa_aware, *u.rdma};
}

base::Report ExtenderConfigToReport(const ExtenderConfig& c) {
  base::Report r = base::Report::object();
  r["policy"] = c.policy;
  r["numa_aware"] = c.numa_aware;
  r["rdma_enable"] = c.rdma;
  return r;
}

ExtenderConfig ApplyUpdate(ExtenderConfig c, const ExtenderConfigUpdate& u) {
  if (u.policy) c.policy = *u.policy;
  if (u.numa_aware) c.numa_aware = *u.numa_aware;
  if (u.rdma) c.rdma = *u.rdma;
  return c;
}

base::StatusOr<ExtenderConfig> PutExtenderConfig(std::string_view url,
                                                 const ExtenderConfigUpdate& update,
                                                 double timeout_s, const std::string& token) {
  SEEDANCE_ASSIGN_OR_RETURN(net::Url u, net::ParseUrl(url, "url"));
  std::string path = u.target.substr(0, u.target.find('?'));
  while (!path.empty() && path.back() == '/') path.pop_back();
  path += "/config";
  const std::string where = u.Origin() + path;
  net::HttpClientOptions o;
  o.timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  o.connect_timeout = o.timeout;
  o.max_body_bytes = size_t{1} << 20;  // a configuration is a few hundred bytes
  if (!token.empty()) o.headers.emplace_back("Authorization", "Bearer " + token);
  SEEDANCE_ASSIGN_OR_RETURN(auto client, net::HttpClient::Create(u.Origin(), o));
  net::HttpClientRequest req;
  req.target = path;
  if (!update.empty()) {
    req.method = "PUT";
    req.body = EncodeExtenderConfigUpdate(update);
    req.content_type = "application/json";
  }
  auto res = client->Send(req);
  if (!res.ok()) {
    return base::UnavailableError(
        "no answer from the extender: " + std::string(res.status().message()), where);
  }
  if (res->status != 200) {
    std::string why = res->body;
    const json j = json::parse(res->body, nullptr, false);
    if (j.is_object() && j.contains("error") && j["error"].is_string()) {
      why = j["error"].get<std::string>();
    }
    return base::FailedPreconditionError(
        "the extender refused (HTTP " + std::to_string(res->status) + "): " + why, where);
  }
  return DecodeExtenderConfig(res->body, where);
}

}  // namespace seedance::k8s
