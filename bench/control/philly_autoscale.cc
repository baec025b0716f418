// Autoscaling replayed on the Philly trace (issue 21 item 5): the jobs of one virtual cluster
// arrive as recorded and run on a pool of 8-GPU nodes whose size is set every 15 s by
//   static   the cluster's own size, all the time (peak provisioning),
//   hpa      Kubernetes' HPA on the allocated GPU share (control::Hpa, target --hpa-target),
//   pressure Seedance's three-factor scaler (control::PressureScaler; the trace has no memory or
//            utilization readings, so both read the allocated share: a GPU given to a job holds
//            its memory),
// each new node paying --restart-s of boot before it runs anything (control::ReplayFleet).
//
//   build/bench/philly_autoscale [--trace FILE] [--vc ID] [--max-nodes N] [--restart-s S]
//                                [--hpa-target T] [--days D]
//
// The trace defaults to $SEEDANCE_DATA_DIR/philly/philly_jobs_pollux.csv (../shared/data when
// unset), the VC to 6214e9 (64 nodes in the Helios artifact's philly_vc.csv), the whole trace.
// Prints one JSON document: per scaler, GPU-hours, queueing delay p50/p95/max, scale actions,
// reversals, mean and peak nodes.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "seedance/base/env.h"
#include "seedance/base/parse.h"
#include "seedance/base/report.h"
#include "seedance/control/fleet_replay.h"
#include "seedance/control/hpa.h"
#include "seedance/control/pressure_scaler.h"
#include "seedance/sched/readers.h"

namespace {

using seedance::base::Report;
namespace control = seedance::control;

int Usage(const std::string& why) {
  std::fprintf(stderr, "philly_autoscale: %s\n", why.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const char* dir = std::getenv("SEEDANCE_DATA_DIR");
  std::string trace = std::string(dir ? dir : "../shared/data") + "/philly/philly_jobs_pollux.csv";
  std::string vc = "6214e9";
  control::FleetSettings fleet;
  fleet.max_nodes = 64;
  double hpa_target = 0.8, days = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) return Usage("missing the value of " + std::string(flag));
    const std::string_view value = argv[++i];
    const auto number = seedance::base::ParseFiniteDouble(value);
    if (flag == "--trace") {
      trace = value;
    } else if (flag == "--vc") {
      vc = value;
    } else if (!number || *number < 0) {
      return Usage(std::string(flag) + " needs a non-negative number, got " + std::string(value));
    } else if (flag == "--max-nodes") {
      fleet.max_nodes = static_cast<int32_t>(*number);
    } else if (flag == "--restart-s") {
      fleet.restart_s = *number;
    } else if (flag == "--hpa-target") {
      hpa_target = *number;
    } else if (flag == "--days") {
      days = *number;
    } else {
      return Usage("unknown flag " + std::string(flag));
    }
  }
  auto text = seedance::base::Env::Default()->ReadFile(trace);
  if (!text.ok()) return Usage(text.status().ToString());
  auto all = seedance::sched::ReadPhillyJobs(*text, trace);
  if (!all.ok()) return Usage(all.status().ToString());
  std::vector<control::FleetJob> jobs;
  int64_t first = -1;
  for (const auto& j : *all) {
    if (j.vc != vc) continue;
    if (first < 0 || j.submit_s < first) first = j.submit_s;
  }
  for (const auto& j : *all) {
    if (j.vc != vc) continue;
    if (days > 0 && static_cast<double>(j.submit_s - first) > days * 86400) continue;
    jobs.push_back({static_cast<double>(j.submit_s), j.duration_s, j.num_gpus});
  }
  if (jobs.empty()) return Usage("no jobs of VC " + vc + " in " + trace);

  Report out = Report::object();
  out["trace"] = trace;
  out["vc"] = vc;
  out["jobs"] = static_cast<int64_t>(jobs.size());
  out["max_nodes"] = fleet.max_nodes;
  out["restart_s"] = fleet.restart_s;
  out["hpa_target"] = hpa_target;
  Report results = Report::object();

  fleet.initial_nodes = fleet.max_nodes;
  const int32_t peak = fleet.max_nodes;
  results["static"] = control::FleetResultToReport(control::ReplayFleet(
      jobs, fleet, [peak](double, int32_t, const control::FleetReading&) { return peak; }));

  fleet.initial_nodes = 1;
  control::HpaSpec spec;
  spec.min_replicas = 1;
  spec.max_replicas = fleet.max_nodes;
  spec.target = hpa_target;
  control::Hpa hpa(spec);
  results["hpa"] = control::FleetResultToReport(control::ReplayFleet(
      jobs, fleet, [&hpa](double now, int32_t current, const control::FleetReading& r) {
        return hpa.Reconcile(now, current, r.allocated_share).desired;
      }));

  control::PressureSettings pressure;
  pressure.min_replicas = 1;
  pressure.max_replicas = fleet.max_nodes;
  control::PressureScaler scaler(pressure);
  results["pressure"] = control::FleetResultToReport(control::ReplayFleet(
      jobs, fleet, [&scaler](double now, int32_t current, const control::FleetReading& r) {
        return scaler
            .Decide(now, current,
                    {.gpu_utilization = r.allocated_share,
                     .memory_free_fraction = 1 - r.allocated_share,
                     .queue_depth = static_cast<double>(r.queued_jobs)})
            .desired;
      }));
  out["results"] = results;
  std::printf("%s\n", seedance::base::DumpJson(out, 2).c_str());
  return 0;
}
