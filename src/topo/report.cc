// The JSON form of `topo show`.
#include "seedance/base/report.h"

#include <cstdio>

#include "seedance/topo/matrix.h"
#include "seedance/topo/topology.h"

namespace seedance::topo {
namespace {

std::string Hex(uint32_t v, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%0*x", digits, v);
  return buf;
}

}  // namespace

base::Report TopologyToReport(const Topology& t) {
  base::Report r;
  r["numa_info"] = t.numa_info;
  r["online_cpus"] = FormatCpuList(t.online_cpus);
  r["cpu_count"] = t.online_cpus.size();
  base::Report nodes = base::Report::array();
  for (const auto& n : t.nodes) {
    base::Report node;
    node["id"] = n.id;
    node["cpus"] = FormatCpuList(n.cpus);
    node["cpu_count"] = n.cpus.size();
    if (n.memory_total_bytes >= 0) node["memory_total_bytes"] = n.memory_total_bytes;
    node["distances"] = n.distances;
    base::Report caches = base::Report::array();
    for (const auto& c : n.caches) {
      caches.push_back({{"level", c.level},
                        {"type", c.type},
                        {"size_bytes", c.size_bytes},
                        {"cpus", FormatCpuList(c.cpus)}});
    }
    node["caches"] = caches;
    nodes.push_back(node);
  }
  r["numa_nodes"] = nodes;
  base::Report gpus = base::Report::array();
  for (const auto& g : t.gpus) {
    gpus.push_back({{"name", "GPU" + std::to_string(g.index)},
                    {"vendor", g.vendor},
                    {"pci_address", g.pci_address},
                    {"pci_class", Hex(g.pci_class, 6)},
                    {"pci_vendor", Hex(g.pci_vendor, 4)},
                    {"pci_device", Hex(g.pci_device, 4)},
                    {"numa_node", g.numa_node},
                    {"local_cpus", FormatCpuList(g.local_cpus)},
                    {"pci_path", g.pci_path}});
  }
  r["gpus"] = gpus;
  base::Report nics = base::Report::array();
  for (size_t i = 0; i < t.nics.size(); ++i) {
    const auto& n = t.nics[i];
    nics.push_back({{"name", "NIC" + std::to_string(i)},
                    {"device", n.name},
                    {"kind", n.kind},
                    {"interface", n.interface},
                    {"pci_address", n.pci_address},
                    {"pci_class", Hex(n.pci_class, 6)},
                    {"pci_vendor", Hex(n.pci_vendor, 4)},
                    {"numa_node", n.numa_node},
                    {"local_cpus", FormatCpuList(n.local_cpus)},
                    {"speed_gbits_per_s", n.speed_gbits_per_s},
                    {"up", n.up}});
  }
  r["nics"] = nics;
  const auto names = MatrixDeviceNames(t);
  const auto m = ConnectionMatrix(t);
  base::Report matrix = base::Report::object();
  for (size_t i = 0; i < names.size(); ++i) {
    base::Report row = base::Report::object();
    for (size_t j = 0; j < names.size(); ++j) row[names[j]] = LinkLabel(m[i][j]);
    matrix[names[i]] = row;
  }
  r["matrix"] = matrix;
  r["nvlink_source"] = t.nvlink_source.empty() ? "none" : t.nvlink_source;
  r["notes"] = t.notes;
  return r;
}

}  // namespace seedance::topo
