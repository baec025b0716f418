// Fuzz target (libFuzzer): the readers of the Kubernetes scheduler extender — quantities
// (k8s_quantity.h), Node and Pod objects (k8s_objects.h), the GPU assignment annotation, and
// the extender protocol's three decoders (extender_protocol.h) and the live configuration's
// (extender_config.h); the first byte picks. Contract:
// every input is accepted or refused with an error, never a crash; an accepted assignment
// formats back to an equal list; an accepted quantity's milli value is its value x 1000 within
// the rounding up of each; an accepted configuration update encodes and decodes back to itself.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "seedance/k8s/extender_config.h"
#include "seedance/k8s/extender_protocol.h"
#include "seedance/k8s/objects.h"
#include "seedance/k8s/quantity.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  namespace s = seedance::k8s;
  switch (data[0] % 8) {
    case 0: {
      auto v = s::ParseQuantity(in, "q");
      auto m = s::ParseQuantityMilli(in, "q");
      if (v.ok() && m.ok() && *v >= 0 && *m >= 0 &&
          (*m > *v * 1000 || *m + 1000 <= (*v - 1) * 1000)) {
        __builtin_trap();  // ceil(x) and ceil(1000x) disagree
      }
      break;
    }
    case 1:
      (void)s::ParseKubeNode(in, "node");
      break;
    case 2:
      (void)s::ParseKubePod(in, "pod");
      break;
    case 3: {
      auto gpus = s::ParseGpuAssignment(in, "a");
      if (gpus.ok()) {
        auto again = s::ParseGpuAssignment(s::FormatGpuAssignment(*gpus), "a");
        if (!again.ok() || *again != *gpus) __builtin_trap();
      }
      break;
    }
    case 4:
      (void)s::DecodeExtenderArgs(in);
      break;
    case 5:
      (void)s::DecodeBindingArgs(in);
      break;
    case 6:
      (void)s::DecodePreemptionArgs(in);
      break;
    default: {
      auto u = s::DecodeExtenderConfigUpdate(in, "config");
      if (u.ok()) {
        auto again = s::DecodeExtenderConfigUpdate(s::EncodeExtenderConfigUpdate(*u), "config");
        if (!again.ok() || again->policy != u->policy || again->numa_aware != u->numa_aware ||
            again->rdma != u->rdma) {
          __builtin_trap();
        }
      }
      break;
    }
  }
  return 0;
}
