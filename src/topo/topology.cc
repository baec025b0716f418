// Discovery of NUMA nodes, caches, GPUs and NICs from sysfs (through Env).
#include "seedance/topo/topology.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "seedance/base/parse.h"
#include "src/topo/sysfs.h"

namespace seedance::topo {

using internal::Notes;
using internal::ReadCpuList;
using internal::ReadInteger;
using internal::ReadTrimmed;

namespace {

constexpr char kNodeDir[] = "/sys/devices/system/node";
constexpr char kCpuDir[] = "/sys/devices/system/cpu";
constexpr char kPciDir[] = "/sys/bus/pci/devices";

// "32K", "1024K", "36M" -> bytes.
std::optional<int64_t> ParseCacheSize(const std::string& s) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || v < 0) return std::nullopt;
  std::string unit(ptr, s.data() + s.size());
  if (unit.empty()) return v;
  if (unit == "K") return v << 10;
  if (unit == "M") return v << 20;
  if (unit == "G") return v << 30;
  return std::nullopt;
}

void ReadNodes(base::Env& env, Topology& t, Notes& notes) {
  auto online = ReadCpuList(env, std::string(kNodeDir) + "/online", notes, kMaxNumaNodes);
  if (!online) {
    notes.Add(std::string(kNodeDir) + "/online: missing, no NUMA information");
    return;
  }
  t.numa_info = true;
  for (int id : *online) {
    NumaNode n;
    n.id = id;
    const std::string dir = std::string(kNodeDir) + "/node" + std::to_string(id);
    if (auto cpus = ReadCpuList(env, dir + "/cpulist", notes)) {
      n.cpus = *cpus;
    } else if (!env.FileExists(dir + "/cpulist")) {
      notes.Add(dir + "/cpulist: missing (node listed online)");
    }
    if (auto d = ReadTrimmed(env, dir + "/distance", notes)) {
      bool numbers = true;
      for (std::string_view f : base::SplitFields(*d)) {
        const std::optional<int64_t> v = base::ParseInt64(f);
        numbers = numbers && v && *v >= 0 && *v <= INT32_MAX;
        if (numbers) n.distances.push_back(static_cast<int>(*v));
      }
      if (!numbers || n.distances.size() != online->size()) {
        notes.Add(dir + "/distance: expected " + std::to_string(online->size()) +
                  " integers, got '" + d->substr(0, 40) + "'");
        n.distances.clear();
      }
    }
    // meminfo: "Node 0 MemTotal:       32768000 kB"
    if (auto m = ReadTrimmed(env, dir + "/meminfo", notes)) {
      const auto pos = m->find("MemTotal:");
      int64_t kb = -1;
      if (pos != std::string::npos) {
        const auto fields = base::SplitFields(std::string_view(*m).substr(pos + 9));
        if (!fields.empty()) kb = base::ParseInt64(fields[0]).value_or(-1);
      }
      if (kb >= 0) {
        n.memory_total_bytes = kb * 1024;
      } else {
        notes.Add(dir + "/meminfo: no MemTotal line");
      }
    }
    t.nodes.push_back(std::move(n));
  }
}

void ReadCaches(base::Env& env, Topology& t, Notes& notes) {
  std::set<std::tuple<int, std::string, std::vector<int>>> seen;
  for (int cpu : t.online_cpus) {
    const std::string dir = std::string(kCpuDir) + "/cpu" + std::to_string(cpu) + "/cache";
    auto indices = env.ListDirectory(dir);
    if (!indices.ok()) continue;
    for (const auto& idx : *indices) {
      if (idx.rfind("index", 0) != 0) continue;
      const std::string d = dir + "/" + idx;
      Cache c;
      auto level = ReadInteger(env, d + "/level", notes);
      auto type = ReadTrimmed(env, d + "/type", notes);
      auto size = ReadTrimmed(env, d + "/size", notes);
      auto shared = ReadCpuList(env, d + "/shared_cpu_list", notes);
      if (!level || !type || !size || !shared) continue;
      auto bytes = ParseCacheSize(*size);
      if (!bytes) {
        notes.Add(d + "/size: expected a size like 32K, got '" + size->substr(0, 40) + "'");
        continue;
      }
      c.level = static_cast<int>(*level);
      c.type = *type;
      c.size_bytes = *bytes;
      c.cpus = *shared;
      if (!seen.insert({c.level, c.type, c.cpus}).second) continue;
      const int node = t.NodeOfCpu(c.cpus.empty() ? cpu : c.cpus.front());
      for (auto& n : t.nodes) {
        if (n.id == node) n.caches.push_back(c);
      }
    }
  }
  for (auto& n : t.nodes) {
    std::sort(n.caches.begin(), n.caches.end(), [](const Cache& a, const Cache& b) {
      return std::tie(a.level, a.type, a.cpus) < std::tie(b.level, b.type, b.cpus);
    });
  }
}

struct PciInfo {
  uint32_t cls = 0;
  uint16_t vendor = 0, device = 0;
  int numa_node = -1;
  std::vector<int> local_cpus;
  std::vector<std::string> path;
};

PciInfo ReadPciInfo(base::Env& env, const std::string& address, Notes& notes) {
  PciInfo info;
  const std::string dir = std::string(kPciDir) + "/" + address;
  if (auto n = ReadInteger(env, dir + "/numa_node", notes)) info.numa_node = static_cast<int>(*n);
  if (auto v = ReadInteger(env, dir + "/class", notes)) info.cls = static_cast<uint32_t>(*v);
  if (auto v = ReadInteger(env, dir + "/vendor", notes)) info.vendor = static_cast<uint16_t>(*v);
  if (auto v = ReadInteger(env, dir + "/device", notes)) info.device = static_cast<uint16_t>(*v);
  if (auto cpus = ReadCpuList(env, dir + "/local_cpulist", notes)) info.local_cpus = *cpus;
  if (auto link = env.ReadLink(dir); link.ok()) {
    info.path = internal::PciChain(internal::JoinLink(kPciDir, *link));
  }
  if (info.path.empty()) info.path = {"pci?", address};  // no link: own bridge unknown
  return info;
}

void ReadGpus(base::Env& env, Topology& t, Notes& notes) {
  auto devices = env.ListDirectory(kPciDir);
  if (!devices.ok()) {
    notes.Add(std::string(kPciDir) + ": cannot list, no PCI devices");
    return;
  }
  for (const auto& address : *devices) {
    const std::string dir = std::string(kPciDir) + "/" + address;
    auto vendor = ReadInteger(env, dir + "/vendor", notes);
    auto cls = ReadInteger(env, dir + "/class", notes);
    if (!vendor || !cls) continue;
    // Display controllers: class 0x03ssii (VGA 0x0300, 3D 0x0302, other 0x0380).
    if ((*cls >> 16) != 0x03) continue;
    std::string name;
    if (*vendor == 0x10de) name = "nvidia";
    if (*vendor == 0x1002) name = "amd";
    if (name.empty()) continue;                                   // e.g. a BMC's VGA chip
    if (name == "amd" && ((*cls >> 8) & 0xff) == 0x00) continue;  // AMD VGA: an APU's display
    Gpu g;
    g.vendor = name;
    g.pci_address = address;
    auto info = ReadPciInfo(env, address, notes);
    g.numa_node = info.numa_node;
    g.pci_class = info.cls;
    g.pci_vendor = info.vendor;
    g.pci_device = info.device;
    g.local_cpus = std::move(info.local_cpus);
    g.pci_path = std::move(info.path);
    t.gpus.push_back(std::move(g));
  }
  std::sort(t.gpus.begin(), t.gpus.end(),
            [](const Gpu& a, const Gpu& b) { return a.pci_address < b.pci_address; });
  for (size_t i = 0; i < t.gpus.size(); ++i) t.gpus[i].index = static_cast<int>(i);
}

// The PCI address at the end of a class link's PCI chain ("" when virtual).
std::string PciOfClassDevice(base::Env& env, const std::string& class_dir,
                             const std::string& name) {
  auto link = env.ReadLink(class_dir + "/" + name);
  if (!link.ok()) return {};
  const auto chain = internal::PciChain(internal::JoinLink(class_dir, *link));
  return chain.size() >= 2 ? chain.back() : std::string();
}

bool IsVirtualNetdev(base::Env& env, const std::string& name) {
  if (name == "lo") return true;
  auto link = env.ReadLink("/sys/class/net/" + name);
  if (link.ok()) return link->find("/virtual/") != std::string::npos;
  // Not a link (fake trees may use plain directories): physical when it has a device.
  return !env.FileExists("/sys/class/net/" + name + "/device");
}

void FillPci(base::Env& env, Nic& nic, Notes& notes) {
  if (nic.pci_address.empty()) return;
  auto info = ReadPciInfo(env, nic.pci_address, notes);
  nic.numa_node = info.numa_node;
  nic.pci_class = info.cls;
  nic.pci_vendor = info.vendor;
  nic.local_cpus = std::move(info.local_cpus);
  nic.pci_path = std::move(info.path);
}

void ReadNics(base::Env& env, Topology& t, Notes& notes) {
  std::set<std::string> rdma_netdevs;
  if (auto hcas = env.ListDirectory("/sys/class/infiniband"); hcas.ok()) {
    for (const auto& hca : *hcas) {
      const std::string dir = "/sys/class/infiniband/" + hca;
      const std::string port = dir + "/ports/1/";
      Nic nic;
      nic.name = hca;
      nic.kind = ReadTrimmed(env, port + "link_layer", notes).value_or("InfiniBand") == "Ethernet"
                     ? "roce"
                     : "infiniband";
      nic.up =
          ReadTrimmed(env, port + "state", notes).value_or("").find("ACTIVE") != std::string::npos;
      // "rate": "200 Gb/sec (4X HDR)".
      if (auto rate = ReadTrimmed(env, port + "rate", notes)) {
        const auto fields = base::SplitFields(*rate);
        const std::optional<double> gbits_per_s =
            fields.empty() ? std::nullopt : base::ParseFiniteDouble(fields[0]);
        if (gbits_per_s && *gbits_per_s >= 0) {
          nic.speed_gbits_per_s = *gbits_per_s;
        } else {
          notes.Add(port + "rate: expected '<N> Gb/sec', got '" + rate->substr(0, 40) + "'");
        }
      }
      if (auto nets = env.ListDirectory(dir + "/device/net"); nets.ok() && !nets->empty()) {
        nic.interface = nets->front();
        for (const auto& n : *nets) rdma_netdevs.insert(n);
      }
      nic.pci_address = PciOfClassDevice(env, "/sys/class/infiniband", hca);
      FillPci(env, nic, notes);
      t.nics.push_back(std::move(nic));
    }
  }
  if (auto ifs = env.ListDirectory("/sys/class/net"); ifs.ok()) {
    for (const auto& name : *ifs) {
      if (rdma_netdevs.count(name) || IsVirtualNetdev(env, name)) continue;
      const std::string dir = "/sys/class/net/" + name + "/";
      if (!env.FileExists("/sys/class/net/" + name)) {
        notes.Add("/sys/class/net/" + name + ": dangling link, interface skipped");
        continue;
      }
      Nic nic;
      nic.name = name;
      nic.interface = name;
      nic.kind = env.FileExists(dir + "wireless") ? "wireless" : "ethernet";
      nic.up = ReadTrimmed(env, dir + "operstate", notes).value_or("down") == "up";
      // "speed" is Mb/s; reading it fails (EINVAL) or gives -1 when the link is down.
      auto speed = env.ReadFile(dir + "speed");
      if (speed.ok()) {
        const auto fields = base::SplitFields(*speed);
        const int64_t mbps = fields.empty() ? -1 : base::ParseInt64(fields[0]).value_or(-1);
        if (mbps > 0) nic.speed_gbits_per_s = static_cast<double>(mbps) / 1000.0;
      }
      nic.pci_address = PciOfClassDevice(env, "/sys/class/net", name);
      FillPci(env, nic, notes);
      t.nics.push_back(std::move(nic));
    }
  }
}

}  // namespace

int Topology::NodeOfCpu(int cpu) const {
  for (const auto& n : nodes) {
    if (std::binary_search(n.cpus.begin(), n.cpus.end(), cpu)) return n.id;
  }
  return -1;
}

Topology DiscoverTopology(base::Env& env) {
  Topology t;
  Notes notes;
  if (auto cpus = ReadCpuList(env, std::string(kCpuDir) + "/online", notes)) {
    t.online_cpus = *cpus;
  } else {
    notes.Add(std::string(kCpuDir) + "/online: missing, CPU list unknown");
  }
  ReadNodes(env, t, notes);
  if (t.online_cpus.empty()) {
    for (const auto& n : t.nodes)
      t.online_cpus.insert(t.online_cpus.end(), n.cpus.begin(), n.cpus.end());
    std::sort(t.online_cpus.begin(), t.online_cpus.end());
  }
  ReadCaches(env, t, notes);
  ReadGpus(env, t, notes);
  ReadNics(env, t, notes);
  t.notes = notes.Take();
  return t;
}

base::Status SetNvlinks(Topology& topology, std::vector<std::vector<int>> links,
                        std::string source) {
  const size_t n = topology.gpus.size();
  if (links.size() != n) {
    return base::InvalidArgumentError("NVLink matrix has " + std::to_string(links.size()) +
                                          " rows, the machine has " + std::to_string(n) + " GPUs",
                                      source);
  }
  for (size_t i = 0; i < n; ++i) {
    if (links[i].size() != n) {
      return base::InvalidArgumentError("NVLink matrix row " + std::to_string(i) + " has " +
                                            std::to_string(links[i].size()) +
                                            " entries, expected " + std::to_string(n),
                                        source);
    }
    for (size_t j = 0; j < n; ++j) {
      if (links[i][j] < 0 || (i == j && links[i][j] != 0)) {
        return base::InvalidArgumentError("NVLink count at row " + std::to_string(i) + ", column " +
                                              std::to_string(j) +
                                              " must be a non-negative count (0 on the diagonal)",
                                          source);
      }
    }
  }
  topology.nvlinks = std::move(links);
  topology.nvlink_source = std::move(source);
  return base::OkStatus();
}

base::StatusOr<std::vector<int>> ParseCpuList(std::string_view text, const std::string& where,
                                              int limit) {
  std::vector<int> cpus;
  size_t i = 0;
  auto bad = [&](const std::string& why) {
    return base::InvalidArgumentError(
        "bad CPU list '" + std::string(text.substr(0, 60)) + "': " + why, where);
  };
  while (i < text.size() && (text[i] == ' ' || text[i] == '\n')) ++i;
  size_t end = text.size();
  while (end > i && (text[end - 1] == ' ' || text[end - 1] == '\n')) --end;
  if (i == end) return cpus;  // an empty list is valid (a memory-only node)
  while (i < end) {
    size_t j = text.find(',', i);
    if (j == std::string_view::npos || j > end) j = end;
    std::string_view item = text.substr(i, j - i);
    const size_t dash = item.find('-');
    int lo = 0, hi = 0;
    auto num = [limit](std::string_view s, int& out) {
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
      return ec == std::errc() && p == s.data() + s.size() && out >= 0 && out < limit;
    };
    if (dash == std::string_view::npos) {
      if (!num(item, lo)) {
        return bad("'" + std::string(item) + "' is not a number below " + std::to_string(limit));
      }
      hi = lo;
    } else if (!num(item.substr(0, dash), lo) || !num(item.substr(dash + 1), hi) || hi < lo) {
      return bad("'" + std::string(item) + "' is not a range lo-hi below " + std::to_string(limit));
    }
    for (int c = lo; c <= hi; ++c) cpus.push_back(c);
    i = j + 1;
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::string out;
  size_t i = 0;
  while (i < cpus.size()) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace seedance::topo
