// The FGD paper's evaluation protocol (feature SCHED-7; docs/design/sched.md):
// pods sorted by name and shuffled by the seed; topped up by sampling with
// replacement (or trimmed at random) until the requested GPUs are `tune`
// (1.3) times the cluster's; scheduled one by one with no departures; after
// every pod the allocation ratio (used / capacity GPU) is recorded against
// the arrived demand (requested so far / capacity).
//
// Thread safety: a run owns its state; runs of different seeds may go in parallel.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "seedance/base/status.h"
#include "seedance/sched/model.h"
#include "seedance/sched/policy.h"

namespace seedance::sched {

struct FgdRunOptions {
  std::string policy = "fgd";
  uint64_t seed = 42;
  double tune = 1.3;
  // The paper's simulator breaks score ties by node name, after renaming the
  // nodes in a random order (policy.h).
  TieBreak ties = TieBreak::kShuffledNodeNames;
  bool check_invariants = false;  // Cluster::Check after every pod (debug tests)
  bool record_nodes = false;      // fill FgdRun::node_gpu_used_at (for --report)
  bool record_arrivals = false;   // fill FgdRun::arrivals (for --placements)
};

// One arrival of a run: the pod (its index in the input list; the top-up repeats pods), and
// where it went — the node's index in the input list and its GPUs, or node -1 if it fit nowhere.
struct FgdArrival {
  int pod = 0;
  int node = -1;
  std::vector<int> gpus;
};

struct FgdRun {
  // alloc_pct_at[k] for arrived = 50, 60, ..., 130 % (index (k - 50) / 10):
  // the allocation ratio after the last pod whose arrival kept arrived <= k%.
  std::vector<double> alloc_pct_at;
  // frag_pct_at[k]: FGD's fragmentation (sum over nodes of F_n(M), the
  // typical pods as M) as % of GPU capacity, at the same marks.
  std::vector<double> frag_pct_at;
  double unallocated_pct_at_130 = 0;
  // Where the unallocated GPU sits at the end (130%): whole idle GPUs and
  // partly used ones, as % of GPU capacity; remnant_gpus[m] = GPUs left with
  // exactly m milli-GPU free (0 < m < 1000).
  double idle_whole_gpu_pct = 0, idle_partial_gpu_pct = 0;
  std::map<int, int64_t> remnant_gpus;
  // With record_nodes: node_gpu_used_at[k][n] = share of node n's GPU in use
  // at mark k (nodes in the input order).
  std::vector<std::vector<float>> node_gpu_used_at;
  // With record_arrivals: every arrival in order (what a replay on a real cluster submits).
  std::vector<FgdArrival> arrivals;
  int64_t pods = 0, scheduled = 0, failed = 0;
  double runtime_ms = 0;
};

base::StatusOr<FgdRun> RunFgdProtocol(const std::vector<Node>& nodes, const std::vector<Pod>& pods,
                                      const FgdRunOptions& options);

}  // namespace seedance::sched
