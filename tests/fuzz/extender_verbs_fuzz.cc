// Fuzz target (libFuzzer): the extender's verbs as its HTTP handlers run them, one sequence per
// input. The input is a list of requests separated by the byte 0xFF; each request's first byte
// picks the verb (filter, bind, preempt, a watched pod, a deleted pod) and the rest is its JSON
// body, decoded as the server decodes it. A bind whose plan is accepted is then reported
// succeeded or failed (the next byte's low bit), as the API server would answer it. Contract,
// after every request: no crash or throw, every answer encodes, and the extender's audit holds
// (Extender::Check: no GPU past 1000 milli, every reservation its own pod's), with the milli-GPU
// in use never past the cluster's total (docs/design/hardening.md, issue 40 classes 2 and 3).
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "seedance/base/fake_env.h"
#include "seedance/k8s/extender.h"
#include "seedance/k8s/extender_protocol.h"
#include "seedance/k8s/objects.h"

namespace {

namespace s = seedance::k8s;

s::KubeNode FuzzNode(const char* name, int gpus) {
  s::KubeNode n;
  n.node.name = name;
  n.node.cpu_milli = 64000;
  n.node.memory_mib = 262144;
  n.node.gpu_count = gpus;
  n.node.gpu_model = "V100";
  return n;
}

void Audit(const s::Extender& e) {
  if (!e.Check().ok()) __builtin_trap();
  const s::ExtenderStats st = e.stats();
  if (st.used_gpu_milli < 0 || st.used_gpu_milli > st.total_gpu_milli) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static seedance::base::FakeEnv env;
  for (const s::ExtenderMode mode : {s::ExtenderMode::kDecide, s::ExtenderMode::kCooperative}) {
    s::ExtenderOptions o;
    o.mode = mode;
    o.env = &env;
    o.policy = "bestfit";
    auto created = s::Extender::Create(o);
    if (!created.ok()) __builtin_trap();
    s::Extender& e = **created;
    if (!e.UpsertNode(FuzzNode("a", 2)).ok() || !e.UpsertNode(FuzzNode("b", 1)).ok()) {
      __builtin_trap();
    }
    const std::string_view all(reinterpret_cast<const char*>(data), size);
    size_t start = 0;
    while (start < all.size()) {
      const size_t end = std::min(all.find('\xff', start), all.size());
      const std::string_view request = all.substr(start, end - start);
      start = end + 1;
      if (request.empty()) continue;
      const std::string_view body = request.substr(1);
      switch (static_cast<uint8_t>(request[0]) % 5) {
        case 0: {
          auto args = s::DecodeExtenderArgs(body);
          if (args.ok()) (void)s::EncodeFilterResult(e.Filter(*args));
          break;
        }
        case 1: {
          auto args = s::DecodeBindingArgs(body);
          if (!args.ok()) break;
          auto plans = e.PlanBind(*args);
          if (!plans.ok()) {
            (void)s::EncodeBindingResult(plans.status().ToString());
            break;
          }
          const bool refused = !body.empty() && (static_cast<uint8_t>(body.back()) & 1) != 0;
          for (const s::BindPlan& plan : *plans) {
            if (refused) {
              e.BindFailed(plan);
            } else {
              e.BindSucceeded(plan);
            }
          }
          break;
        }
        case 2: {
          auto args = s::DecodePreemptionArgs(body);
          if (args.ok()) (void)s::EncodePreemptionResult(e.Preempt(*args));
          break;
        }
        case 3: {
          auto pod = s::ParseKubePod(body, "pod");
          if (pod.ok()) (void)e.UpsertPod(*pod);
          break;
        }
        default: {
          auto pod = s::ParseKubePod(body, "pod");
          if (pod.ok()) e.DeletePod(*pod);
          break;
        }
      }
      Audit(e);
    }
    (void)e.ExpireReservations();
    Audit(e);
  }
  return 0;
}
