#include "seedance/comm/nccl_advisor.h"

#include <algorithm>
#include <array>
#include <cstdlib>

#include "seedance/base/yaml_map.h"

namespace seedance::comm {
namespace {

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

std::string ReadOr(base::Env& env, const std::string& path, const std::string& fallback) {
  auto v = env.ReadFile(path);
  return v.ok() ? Trim(*v) : fallback;
}

bool Virtual(const std::string& name) {
  for (const char* prefix : {"lo", "docker", "veth", "virbr", "br-", "cni", "flannel", "tun", "tap",
                             "ifb", "ib"}) {  // ib*: IPoIB, covered by the HCA itself
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

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
      SEEDANCE_RETURN_IF_ERROR(n.CheckKeys({"name", "type", "speed_gbps", "up", "numa_node"}));
      Nic nic;
      SEEDANCE_ASSIGN_OR_RETURN(nic.name, n.GetString("name"));
      SEEDANCE_ASSIGN_OR_RETURN(nic.type, n.GetChoice("type", kTypes));
      SEEDANCE_ASSIGN_OR_RETURN(nic.speed_gbps, n.GetNumber("speed_gbps", 0.0, 0.0, 1e6));
      SEEDANCE_ASSIGN_OR_RETURN(nic.up, n.GetBool("up", true));
      SEEDANCE_ASSIGN_OR_RETURN(int64_t numa, n.GetInt("numa_node", -1, -1, 1024));
      nic.numa_node = static_cast<int>(numa);
      t.nics.push_back(std::move(nic));
    }
  }
  return t;
}

Topology DetectTopology(base::Env& env) {
  Topology t;
  t.source = "detected";
  // InfiniBand and RoCE HCAs.
  if (auto hcas = env.ListDirectory("/sys/class/infiniband"); hcas.ok()) {
    for (const auto& hca : *hcas) {
      const std::string port = "/sys/class/infiniband/" + hca + "/ports/1/";
      Nic nic;
      nic.name = hca;
      nic.type =
          ReadOr(env, port + "link_layer", "InfiniBand") == "Ethernet" ? "roce" : "infiniband";
      nic.up = ReadOr(env, port + "state", "").find("ACTIVE") != std::string::npos;
      // "rate" reads like "200 Gb/sec (4X HDR)".
      nic.speed_gbps = std::atof(ReadOr(env, port + "rate", "0").c_str());
      nic.numa_node = std::atoi(
          ReadOr(env, "/sys/class/infiniband/" + hca + "/device/numa_node", "-1").c_str());
      t.nics.push_back(nic);
    }
  }
  if (auto ifs = env.ListDirectory("/sys/class/net"); ifs.ok()) {
    for (const auto& name : *ifs) {
      if (Virtual(name)) continue;
      const std::string dir = "/sys/class/net/" + name + "/";
      Nic nic;
      nic.name = name;
      nic.type = "ethernet";
      nic.up = ReadOr(env, dir + "operstate", "down") == "up";
      const double mbps = std::atof(ReadOr(env, dir + "speed", "0").c_str());
      nic.speed_gbps = mbps > 0 ? mbps / 1000 : 0;
      nic.numa_node = std::atoi(ReadOr(env, dir + "device/numa_node", "-1").c_str());
      t.nics.push_back(nic);
    }
  }
  // NVIDIA GPUs: PCI class 0x0300xx (VGA) or 0x0302xx (3D), vendor 0x10de.
  if (auto devs = env.ListDirectory("/sys/bus/pci/devices"); devs.ok()) {
    for (const auto& d : *devs) {
      const std::string dir = "/sys/bus/pci/devices/" + d + "/";
      const std::string cls = ReadOr(env, dir + "class", "");
      if (ReadOr(env, dir + "vendor", "") == "0x10de" &&
          (cls.starts_with("0x0300") || cls.starts_with("0x0302"))) {
        ++t.gpus_per_node;
      }
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
    if (n.type == "ethernet") eth_best = std::max(eth_best, n.speed_gbps);
  }
  for (const auto& n : t.nics) {
    if (n.up && n.type == "ethernet" && n.speed_gbps == eth_best) eth.push_back(n.name);
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
                         {"speed_gbps", n.speed_gbps},
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

}  // namespace seedance::comm
