// Trace jobs as event-mode jobs, and Philly's cluster (event_sim.h).
#include <algorithm>
#include <string>
#include <unordered_set>

#include "seedance/base/parse.h"
#include "seedance/sched/event_sim.h"
#include "seedance/sched/qos_tiers.h"

namespace seedance::sched {

std::vector<EventJob> JobsFromPhilly(const std::vector<Job>& jobs, int gpus_per_node) {
  std::vector<EventJob> out;
  out.reserve(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    const Job& j = jobs[i];
    EventJob e;
    e.id = "philly-" + std::to_string(i);
    e.group = j.vc;
    e.submit_s = j.submit_s;
    e.duration_s = j.duration_s;
    int left = j.num_gpus;
    while (left > 0) {
      Pod p;
      p.name = e.id + "-" + std::to_string(e.members.size());
      p.num_gpu = std::min(left, gpus_per_node);
      p.gpu_milli = 1000;
      p.gang = (j.num_gpus + gpus_per_node - 1) / gpus_per_node;
      left -= p.num_gpu;
      e.members.push_back(std::move(p));
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<EventJob> JobsFromAlibaba(const std::vector<Pod>& pods) {
  std::vector<EventJob> out;
  out.reserve(pods.size());
  for (const Pod& p : pods) {
    EventJob e;
    e.id = p.name;
    e.group = std::string(QosName(p.qos));
    e.submit_s = p.creation_s.value_or(0);
    e.duration_s = p.deletion_s ? static_cast<double>(*p.deletion_s - e.submit_s) : -1.0;
    e.priority = (p.qos == Qos::kLatencySensitive || p.qos == Qos::kGuaranteed) ? 1 : 0;
    e.tier = TierOfQos(p.qos);
    e.members = {p};
    out.push_back(std::move(e));
  }
  return out;
}

base::StatusOr<std::vector<Node>> PhillyNodes(std::string_view text, const std::string& file,
                                              int gpus_per_node) {
  if (gpus_per_node < 1) return base::InvalidArgumentError("GPUs per node must be >= 1", file);
  std::vector<Node> nodes;
  std::unordered_set<std::string> vcs;
  int line_no = 0;
  for (std::string_view view : base::SplitLines(text)) {
    std::string line(view);
    ++line_no;
    if (line_no == 1 && line.starts_with("\xEF\xBB\xBF")) line.erase(0, 3);  // a UTF-8 BOM
    if (line_no == 1) {
      if (line != "vc,node num") {
        return base::InvalidArgumentError("expected the header 'vc,node num'", file + ":1");
      }
      continue;
    }
    if (line.empty()) continue;
    const size_t comma = line.find(',');
    const std::string where = file + ":" + std::to_string(line_no);
    if (comma == std::string::npos || comma == 0) {
      return base::InvalidArgumentError("expected 'vc,node num'", where);
    }
    // A Philly VC holds at most a few hundred machines; a count past kMaxPhillyNodes (in one VC
    // or in all) cannot be a real cluster and would only exhaust memory.
    const std::optional<int64_t> count = base::ParseInt64(std::string_view(line).substr(comma + 1));
    if (!count || *count < 1 || *count > kMaxPhillyNodes) {
      return base::InvalidArgumentError(
          "node num: expected a whole number in [1, " + std::to_string(kMaxPhillyNodes) + "]",
          where + ": node num");
    }
    if (static_cast<int64_t>(nodes.size()) + *count > kMaxPhillyNodes) {
      return base::InvalidArgumentError(
          "the VCs hold more than " + std::to_string(kMaxPhillyNodes) + " nodes in all",
          where + ": node num");
    }
    const std::string vc = line.substr(0, comma);
    if (!vcs.insert(vc).second) {
      return base::InvalidArgumentError("VC '" + vc + "' is listed twice", where + ": vc");
    }
    for (int64_t i = 0; i < *count; ++i) {
      Node n;
      n.name = vc + "-" + std::to_string(i);
      n.cpu_milli = 1'000'000;  // Philly jobs carry no CPU or memory request
      n.memory_mib = 1 << 30;
      n.gpu_count = gpus_per_node;
      n.gpu_model = "philly";
      n.pool = vc;
      nodes.push_back(std::move(n));
    }
  }
  if (nodes.empty()) return base::InvalidArgumentError("no VC lines", file);
  return nodes;
}

}  // namespace seedance::sched
