// The GPU auditor (feature SCHED-8; `seedancectl scheduler audit`): per-GPU use recomputed from
// what the API server holds — the nodes and the pods bound to them with their
// `seedance.io/gpu-assignment` annotations — independently of the extender's own bookkeeping.
// A finding is one of:
//   over       a GPU whose pods' milli-GPU sum exceeds 1000
//   repeated   a pod whose assignment names a GPU twice (read from the raw annotation)
//   out-of-range  a GPU index the node does not have, or an assignment of the wrong length
//   unknown-node  a pod bound to a node the API server does not list
//   unassigned a GPU pod bound without an assignment (placed by someone else)
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seedance/base/report.h"
#include "seedance/base/status.h"

namespace seedance::k8s {

struct AuditFinding {
  std::string kind;  // over, repeated, out-of-range, unknown-node, unassigned
  std::string node;
  int gpu = -1;        // -1 when the finding is not about one GPU
  std::string detail;  // the pods involved and the numbers
};

struct AuditReport {
  int64_t nodes = 0, pods = 0, gpu_pods = 0;
  std::map<std::pair<std::string, int>, int64_t> gpu_milli;  // (node, GPU) -> milli in use
  std::vector<AuditFinding> findings;
};

// `nodes_json` and `pods_json`: the API server's NodeList and PodList (GET /api/v1/nodes,
// /api/v1/pods).
base::StatusOr<AuditReport> AuditGpus(std::string_view nodes_json, std::string_view pods_json);

// The report `seedancectl scheduler audit` prints: counts, GPUs in use, milli-GPU in use, and
// each finding (kind, node, gpu, detail).
base::Report AuditToReport(const AuditReport& audit);

}  // namespace seedance::k8s
