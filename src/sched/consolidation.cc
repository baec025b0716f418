// Consolidation of long-tail jobs (event_sim.h): a post-pass rebalancer of the event simulator.
#include <string>
#include <vector>

#include "src/sched/simulation.h"

namespace seedance::sched {

// A long-tail job moves onto a small GPU share. Its own freed resources always hold the smaller
// share, so the move cannot fail; the policy may still put it elsewhere.
base::Status ConsolidatePass(Simulation& sim, double t) {
  const EventRunOptions& o = sim.options();
  std::vector<size_t> movers;
  for (size_t r : sim.running()) {
    const EventJob& j = sim.job(r);
    const JobState& s = sim.state(r);
    if (s.consolidated || j.members.size() != 1 || j.gpu_util_pct < 0 ||
        j.gpu_util_pct >= o.consolidate_below_pct || t - s.segment_start < o.consolidate_after_s) {
      continue;
    }
    const int64_t holds =
        sim.IsShare(r) ? sim.shares().profile(r).request_milli : j.members[0].gpu_demand_milli();
    if (holds <= o.consolidate_share_milli) continue;
    movers.push_back(r);
  }
  for (size_t r : movers) {
    const int64_t before = sim.DemandOf(r);
    SEEDANCE_ASSIGN_OR_RETURN(const bool guaranteed, sim.CheckpointOut(r, t));
    sim.job(r).members[0].num_gpu = 1;
    sim.Book(r, o.consolidate_share_milli);
    SEEDANCE_ASSIGN_OR_RETURN(const bool placed, sim.TryPlace(r));
    if (!placed) return base::InternalError("consolidation could not place job " + sim.job(r).id);
    JobState& s = sim.state(r);
    s.consolidated = true;
    s.shrunk_by = static_cast<double>(before - sim.DemandOf(r));
    ++sim.run().consolidations;
    sim.BeginSegment(r, t, guaranteed);
  }
  return base::OkStatus();
}

}  // namespace seedance::sched
