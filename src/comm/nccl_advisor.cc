#include "seedance/comm/nccl_advisor.h"

#include <algorithm>
#include <array>
#include <optional>

#include "seedance/base/yaml_map.h"
#include "seedance/topo/discover.h"
#include "seedance/topo/matrix.h"

namespace seedance::comm {
namespace {

std::string Join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

}  // namespace

base::StatusOr<Topology> ParseTopologyYaml(std::string_view text, const std::string& file) {
  SEEDANCE_ASSIGN_OR_RETURN(YAML::Node doc, base::ParseYaml(text, file));
  SEEDANCE_ASSIGN_OR_RETURN(base::YamlMap root, base::YamlMap::FromNode(doc, file, ""));
  SEEDANCE_RETURN_IF_ERROR(root.CheckKeys({"topology"}));
  SEEDANCE_ASSIGN_OR_RETURN(base::YamlMap m, root.GetMap("topology"));
  SEEDANCE_RETURN_IF_ERROR(
      m.CheckKeys({"nodes", "gpus_per_node", "nvlink", "gpu_nic_affinity", "nics"}));
  Topology t;
  t.source = file;
  SEEDANCE_ASSIGN_OR_RETURN(int64_t nodes, m.GetInt("nodes", 1, 1, 1 << 20));
  SEEDANCE_ASSIGN_OR_RETURN(int64_t gpus, m.GetInt("gpus_per_node", 8, 0, 1024));
  t.nodes = static_cast<int>(nodes);
  t.gpus_per_node = static_cast<int>(gpus);
  SEEDANCE_ASSIGN_OR_RETURN(t.nvlink, m.GetBool("nvlink", false));
  static constexpr std::array<std::string_view, 4> kAffinity = {"same-pcie-switch", "same-numa",
                                                                "cross-numa", "unknown"};
  SEEDANCE_ASSIGN_OR_RETURN(t.gpu_nic_affinity,
                            m.GetChoice("gpu_nic_affinity", kAffinity, "unknown"));
  if (m.Has("nics")) {
    SEEDANCE_ASSIGN_OR_RETURN(std::vector<base::YamlMap> nics, m.GetMapList("nics"));
    static constexpr std::array<std::string_view, 3> kTypes = {"infiniband", "roce", "ethernet"};
    for (const auto& n : nics) {
      if (n.Has("speed_gbps")) {  // the old, ambiguous spelling
        return base::InvalidArgumentError(
            "speed_gbps is now speed_gbits_per_s (the line rate in Gb/s)", n.Where("speed_gbps"));
      }
      SEEDANCE_RETURN_IF_ERROR(
          n.CheckKeys({"name", "type", "speed_gbits_per_s", "up", "numa_node"}));
      Nic nic;
      SEEDANCE_ASSIGN_OR_RETURN(nic.name, n.GetString("name"));
      SEEDANCE_ASSIGN_OR_RETURN(nic.type, n.GetChoice("type", kTypes));
      SEEDANCE_ASSIGN_OR_RETURN(nic.speed_gbits_per_s,
                                n.GetNumber("speed_gbits_per_s", 0.0, 0.0, 1e6));
      SEEDANCE_ASSIGN_OR_RETURN(nic.up, n.GetBool("up", true));
      SEEDANCE_ASSIGN_OR_RETURN(int64_t numa, n.GetInt("numa_node", -1, -1, 1024));
      nic.numa_node = static_cast<int>(numa);
      t.nics.push_back(std::move(nic));
    }
  }
  return t;
}

Topology FromNodeTopology(const topo::Topology& node) {
  Topology t;
  t.source = "detected";
  for (const topo::Nic& n : node.nics) {
    if (n.kind != "infiniband" && n.kind != "roce" && n.kind != "ethernet") continue;
    t.nics.push_back(Nic{n.name, n.kind, n.speed_gbits_per_s, n.up, n.numa_node});
  }
  std::vector<const topo::Gpu*> gpus;
  for (const topo::Gpu& g : node.gpus) {
    if (g.vendor == "nvidia") gpus.push_back(&g);
  }
  t.gpus_per_node = static_cast<int>(gpus.size());
  for (const auto& row : node.nvlinks) {
    t.nvlink |= std::any_of(row.begin(), row.end(), [](int links) { return links > 0; });
  }
  // The farthest, over the GPUs, of each GPU's nearest RDMA NIC (Link orders near to far).
  const bool single_node = node.nodes.size() <= 1;
  std::optional<topo::Link> worst;
  for (const topo::Gpu* g : gpus) {
    std::optional<topo::Link> nearest;
    for (const topo::Nic& n : node.nics) {
      if (!n.up || (n.kind != "infiniband" && n.kind != "roce")) continue;
      const topo::Link l =
          topo::PciRelation(g->pci_path, g->numa_node, n.pci_path, n.numa_node, single_node);
      if (!nearest || l < *nearest) nearest = l;
    }
    if (!nearest) {
      worst.reset();
      break;
    }
    if (!worst || *nearest > *worst) worst = nearest;
  }
  if (worst) {
    switch (*worst) {
      case topo::Link::kPix:
      case topo::Link::kPxb:
        t.gpu_nic_affinity = "same-pcie-switch";
        break;
      case topo::Link::kPhb:
      case topo::Link::kNode:
        t.gpu_nic_affinity = "same-numa";
        break;
      default:
        t.gpu_nic_affinity = "cross-numa";
    }
  }
  return t;
}

std::vector<NcclAdvice> AdviseNccl(const Topology& t) {
  std::vector<NcclAdvice> a;
  std::vector<std::string> ib, roce, eth;
  double eth_best = 0;
  for (const auto& n : t.nics) {
    if (!n.up) continue;
    if (n.type == "infiniband") ib.push_back(n.name);
    if (n.type == "roce") roce.push_back(n.name);
    if (n.type == "ethernet") eth_best = std::max(eth_best, n.speed_gbits_per_s);
  }
  for (const auto& n : t.nics) {
    if (n.up && n.type == "ethernet" && n.speed_gbits_per_s == eth_best) eth.push_back(n.name);
  }
  std::vector<std::string> hcas = ib;
  hcas.insert(hcas.end(), roce.begin(), roce.end());
  const bool multi = t.nodes > 1;

  if (!hcas.empty()) {
    a.push_back({"NCCL_IB_HCA", Join(hcas, ","),
                 "use exactly the HCAs whose port is up (" + std::to_string(hcas.size()) +
                     "); NCCL would otherwise also try ports that are down"});
    if (!roce.empty()) {
      a.push_back({"NCCL_IB_GID_INDEX", "3",
                   "RoCE: RoCE v2 GIDs are usually at index 3 (check with show_gids); the "
                   "default index 0 is RoCE v1, which does not route across subnets"});
    }
  } else if (multi) {
    a.push_back({"NCCL_IB_DISABLE", "1",
                 "no InfiniBand or RoCE HCA is up: go straight to the socket transport"});
  }
  if (!eth.empty() && (hcas.empty() || multi)) {
    // '=' makes NCCL match the names exactly instead of as prefixes.
    a.push_back({"NCCL_SOCKET_IFNAME", "=" + Join(eth, ","),
                 "bootstrap" + std::string(hcas.empty() && multi ? " and data" : "") +
                     " traffic on the fastest interface(s) up (" +
                     (eth_best > 0 ? std::to_string(static_cast<int>(eth_best)) + " Gb/s"
                                   : std::string("speed not reported")) +
                     "), not on docker0 or lo"});
  }
  if (multi && hcas.empty() && eth_best >= 100) {
    a.push_back({"NCCL_SOCKET_NTHREADS", "4",
                 "sockets only, >= 100 Gb/s: more helper threads are needed to fill the link "
                 "(NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD must stay <= 64)"});
    a.push_back({"NCCL_NSOCKS_PERTHREAD", "4", "with NCCL_SOCKET_NTHREADS=4: 16 sockets per peer"});
  }
  if (!hcas.empty() && multi) {
    if (t.gpu_nic_affinity == "same-pcie-switch" || t.gpu_nic_affinity == "same-numa") {
      a.push_back(
          {"NCCL_NET_GDR_LEVEL", t.gpu_nic_affinity == "same-pcie-switch" ? "PXB" : "PHB",
           "GPUs and NICs share a " +
               std::string(t.gpu_nic_affinity == "same-pcie-switch" ? "PCIe switch" : "NUMA node") +
               ": GPUDirect RDMA avoids a copy through host memory"});
    } else if (t.gpu_nic_affinity == "cross-numa") {
      a.push_back({"NCCL_NET_GDR_LEVEL", "LOC",
                   "NICs sit on another NUMA node than the GPUs: GPUDirect RDMA across the "
                   "inter-socket link is usually slower than staging in host memory"});
    }
  }
  if (t.gpus_per_node > 1 && !t.nvlink) {
    a.push_back({"NCCL_P2P_LEVEL", "PXB",
                 "no NVLink: allow direct PCIe peer-to-peer only through PCIe switches, not "
                 "across the CPU's root complex where it is often slower than shared memory"});
  }
  if (t.gpus_per_node > 1 && t.nvlink) {
    a.push_back({"NCCL_P2P_LEVEL", "NVL", "GPUs are connected by NVLink: use it for peer traffic"});
  }
  a.push_back({"TORCH_NCCL_ASYNC_ERROR_HANDLING", "1",
               "PyTorch: a failed or hung collective ends the process instead of hanging the job"});
  a.push_back({"NCCL_DEBUG", "WARN",
               "keep warnings; run once with NCCL_DEBUG=INFO and feed the log to "
               "'seedancectl comm nccl-log' to check the rings and transports"});
  return a;
}

base::Report TopologyToReport(const Topology& t) {
  base::Report r;
  r["source"] = t.source;
  r["nodes"] = t.nodes;
  r["gpus_per_node"] = t.gpus_per_node;
  r["nvlink"] = t.nvlink;
  r["gpu_nic_affinity"] = t.gpu_nic_affinity;
  r["nics"] = base::Report::array();
  for (const auto& n : t.nics) {
    r["nics"].push_back({{"name", n.name},
                         {"type", n.type},
                         {"speed_gbits_per_s", n.speed_gbits_per_s},
                         {"up", n.up},
                         {"numa_node", n.numa_node}});
  }
  return r;
}

base::Report AdviceToReport(const std::vector<NcclAdvice>& advice) {
  base::Report r = base::Report::array();
  for (const auto& a : advice) {
    r.push_back({{"variable", a.variable}, {"value", a.value}, {"reason", a.reason}});
  }
  return r;
}

base::StatusOr<base::Report> AdviseReport(const AdviseRequest& request) {
  Topology topology;
  if (request.topology_file.empty()) {
    SEEDANCE_ASSIGN_OR_RETURN(const topo::Machine machine,
                              topo::DiscoverMachine(request.root, request.nvlink_from));
    topology = FromNodeTopology(machine.topology);
    topology.nodes = request.nodes;
  } else {
    SEEDANCE_ASSIGN_OR_RETURN(topology,
                              ParseTopologyYaml(request.topology_yaml, request.topology_file));
  }
  base::Report r = base::Report::object();
  r["topology"] = TopologyToReport(topology);
  r["advice"] = AdviceToReport(AdviseNccl(topology));
  return r;
}

}  // namespace seedance::comm
