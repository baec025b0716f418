#include "seedance/node/gpu_health.h"

#include <algorithm>
#include <cctype>

namespace seedance::node {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

std::vector<AgentGpu> GpusFromReadings(const std::vector<port::NvmlReading>& readings,
                                       const topo::Topology& topology) {
  std::vector<AgentGpu> out;
  for (const port::NvmlReading& r : readings) {
    AgentGpu g;
    g.index = r.index;
    g.uuid = r.uuid;
    g.name = r.name;
    for (const topo::Gpu& t : topology.gpus) {
      if (!r.pci_address.empty() && Lower(t.pci_address) == Lower(r.pci_address)) {
        g.numa_node = t.numa_node;
      }
    }
    out.push_back(std::move(g));
  }
  std::sort(out.begin(), out.end(),
            [](const AgentGpu& a, const AgentGpu& b) { return a.index < b.index; });
  return out;
}

bool IsApplicationXid(uint64_t xid) {
  switch (xid) {
    case 13:
    case 31:
    case 43:
    case 45:
    case 68:
    case 109:
      return true;
    default:
      return false;
  }
}

bool GpuHealth::Update(const std::vector<port::NvmlReading>& readings) {
  bool changed = false;
  for (AgentGpu& g : gpus_) {
    const std::string key = g.Key();
    const port::NvmlReading* r = nullptr;
    for (const port::NvmlReading& x : readings) {
      if ((!g.uuid.empty() && x.uuid == g.uuid) || (g.uuid.empty() && x.index == g.index)) r = &x;
    }
    std::string why;
    if (r != nullptr) {
      for (uint64_t xid : r->xid_errors) {
        if (!IsApplicationXid(xid) && !sticky_.count(key)) {
          sticky_[key] = "XID " + std::to_string(xid);
        }
      }
      if (r->ecc_uncorrected_errors) {
        if (first_) ecc_baseline_[key] = *r->ecc_uncorrected_errors;
        auto base = ecc_baseline_.find(key);
        if (base == ecc_baseline_.end()) {
          ecc_baseline_[key] = *r->ecc_uncorrected_errors;
        } else if (*r->ecc_uncorrected_errors > base->second && !sticky_.count(key)) {
          sticky_[key] =
              std::to_string(*r->ecc_uncorrected_errors - base->second) + " uncorrected ECC errors";
        }
      }
    }
    if (auto it = sticky_.find(key); it != sticky_.end()) {
      why = it->second;
    } else if (r == nullptr) {
      why = "not reported by NVML";
    }
    const bool healthy = why.empty();
    if (healthy != g.healthy || why != g.why_unhealthy) {
      changed = changed || healthy != g.healthy;
      g.healthy = healthy;
      g.why_unhealthy = why;
    }
  }
  first_ = false;
  return changed;
}

std::string UnhealthyGpuList(const std::vector<AgentGpu>& gpus) {
  std::string out;
  for (const AgentGpu& g : gpus) {
    if (!g.healthy) out += (out.empty() ? "" : ",") + std::to_string(g.index);
  }
  return out;
}

}  // namespace seedance::node
