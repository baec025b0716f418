// The extender's live configuration over HTTP (feature CLI-2): `GET {prefix}/config` answers
// it, `PUT {prefix}/config` changes it between scheduling cycles (`seedancectl scheduler set`).
//
//   {"policy": "fgd", "numaAware": true, "rdmaEnable": false}
//
// A PUT may leave fields out (they keep their value). The decoder validates first: a body that
// is not a JSON object, an unknown field or a field of the wrong type is an error naming it,
// and nothing changes; so is an unknown policy (Extender::Reconfigure).
//
// Thread safety: pure functions; PutExtenderConfig opens its own connection.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/k8s/extender.h"

namespace seedance::k8s {

struct ExtenderConfigUpdate {
  std::optional<std::string> policy;
  std::optional<bool> numa_aware, rdma;
  bool empty() const { return !policy && !numa_aware && !rdma; }
};

std::string EncodeExtenderConfig(const ExtenderConfig& config);
std::string EncodeExtenderConfigUpdate(const ExtenderConfigUpdate& update);
base::StatusOr<ExtenderConfigUpdate> DecodeExtenderConfigUpdate(std::string_view json,
                                                                std::string_view where);
// Every field present (an answer from the extender).
base::StatusOr<ExtenderConfig> DecodeExtenderConfig(std::string_view json, std::string_view where);
// For `scheduler set`'s table and JSON: policy, numa_aware, rdma_enable.
base::Report ExtenderConfigToReport(const ExtenderConfig& config);
ExtenderConfig ApplyUpdate(ExtenderConfig config, const ExtenderConfigUpdate& update);

// The client: PUTs `update` to the extender at `url` (http://HOST:PORT[/prefix]) and returns
// the configuration it runs now. An empty update only GETs it. A non-empty `token` is sent as
// "Authorization: Bearer <token>" (an extender served with --token-file needs it).
base::StatusOr<ExtenderConfig> PutExtenderConfig(std::string_view url,
                                                 const ExtenderConfigUpdate& update,
                                                 double timeout_s = 10,
                                                 const std::string& token = "");

}  // namespace seedance::k8s
