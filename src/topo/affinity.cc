#include "seedance/topo/affinity.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <string_view>

#include "seedance/base/ascii.h"
#include "seedance/base/parse.h"
#include "src/topo/sysfs.h"

namespace seedance::topo {

namespace {

// The value of "Key:\t..." in a /proc status file.
std::string StatusField(const std::string& status, const std::string& key) {
  const std::string k = "\n" + key + ":";
  size_t pos = ("\n" + status).find(k);
  if (pos == std::string::npos) return {};
  pos += k.size() - 1;  // index in `status` after the colon
  size_t end = status.find('\n', pos);
  std::string v = status.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
  size_t b = v.find_first_not_of(" \t");
  return b == std::string::npos ? std::string() : v.substr(b);
}

// Field 39 ("processor") of /proc/PID/task/TID/stat; the command may hold
// spaces and parentheses, so count from the last ')'.
int LastCpu(const std::string& stat) {
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  const auto fields = base::SplitFields(std::string_view(stat).substr(close + 1));
  if (fields.size() < 37) return -1;  // fields 3 .. 39
  const std::optional<int64_t> cpu = base::ParseInt64(fields[36]);
  return cpu && *cpu >= 0 && *cpu <= INT32_MAX ? static_cast<int>(*cpu) : -1;
}

// numa_maps: "7f... default anon=3 dirty=3 N0=2 N1=1 kernelpagesize_kB=4".
void AddNumaMaps(const std::string& text, std::map<int, int64_t>& bytes) {
  for (std::string_view line : base::SplitLines(text)) {
    int64_t page_kb = 4;
    std::vector<std::pair<int, int64_t>> pages;
    for (std::string_view w : base::SplitFields(line)) {
      if (w.size() > 1 && w[0] == 'N' && std::isdigit(static_cast<unsigned char>(w[1]))) {
        const size_t eq = w.find('=');
        if (eq == std::string_view::npos) continue;
        const std::optional<int64_t> node = base::ParseInt64(w.substr(1, eq - 1));
        const std::optional<int64_t> n = base::ParseInt64(w.substr(eq + 1));
        if (node && *node <= INT32_MAX && n && *n >= 0) {
          pages.push_back({static_cast<int>(*node), *n});
        }
      } else if (w.starts_with("kernelpagesize_kB=")) {
        const std::optional<int64_t> kb = base::ParseInt64(w.substr(18));
        if (kb && *kb > 0) page_kb = *kb;
      }
    }
    for (auto [node, n] : pages) bytes[node] += n * page_kb * 1024;
  }
}

std::vector<int> ParseListOrEmpty(const std::string& text) {
  auto v = ParseCpuList(text);
  return v.ok() ? *v : std::vector<int>{};
}

std::vector<int> NodesOf(const Topology& t, const std::vector<int>& cpus) {
  std::set<int> nodes;
  for (int c : cpus) {
    const int n = t.NodeOfCpu(c);
    if (n >= 0) nodes.insert(n);
  }
  return {nodes.begin(), nodes.end()};
}

// GPU minor number -> PCI address, from the NVIDIA driver's procfs files.
std::map<int, std::string> NvidiaMinors(base::Env& env) {
  std::map<int, std::string> minors;
  auto gpus = env.ListDirectory("/proc/driver/nvidia/gpus");
  if (!gpus.ok()) return minors;
  for (const auto& pci : *gpus) {
    auto info = env.ReadFile("/proc/driver/nvidia/gpus/" + pci + "/information");
    if (!info.ok()) continue;
    const std::string value = StatusField(*info, "Device Minor");  // the fields view into it
    const auto fields = base::SplitFields(value);
    const std::optional<int64_t> minor =
        fields.empty() ? std::nullopt : base::ParseInt64(fields[0]);
    if (minor && *minor >= 0 && *minor <= INT32_MAX) {
      minors[static_cast<int>(*minor)] = base::AsciiLower(pci);
    }
  }
  return minors;
}

}  // namespace

base::StatusOr<ProcessPlacement> ReadProcessPlacement(base::Env& env, int pid,
                                                      const Topology& topology) {
  const std::string dir = "/proc/" + std::to_string(pid);
  auto status = env.ReadFile(dir + "/status");
  if (!status.ok()) {
    return base::NotFoundError("no such process (cannot read " + dir + "/status)",
                               "pid " + std::to_string(pid));
  }
  ProcessPlacement p;
  p.pid = pid;
  p.command = StatusField(*status, "Name");
  p.allowed_cpus = ParseListOrEmpty(StatusField(*status, "Cpus_allowed_list"));
  p.allowed_mems = ParseListOrEmpty(StatusField(*status, "Mems_allowed_list"));
  if (auto tids = env.ListDirectory(dir + "/task"); tids.ok()) {
    for (const auto& tid : *tids) {
      ThreadPlacement th;
      const std::optional<int64_t> id = base::ParseInt64(tid);
      if (!id || *id < 0 || *id > INT32_MAX) continue;
      th.tid = static_cast<int>(*id);
      const std::string tdir = dir + "/task/" + tid;
      auto ts = env.ReadFile(tdir + "/status");
      if (!ts.ok()) continue;  // the thread exited meanwhile
      th.name = StatusField(*ts, "Name");
      th.allowed_cpus = ParseListOrEmpty(StatusField(*ts, "Cpus_allowed_list"));
      if (auto st = env.ReadFile(tdir + "/stat"); st.ok()) th.last_cpu = LastCpu(*st);
      p.threads.push_back(std::move(th));
    }
  }
  if (auto maps = env.ReadFile(dir + "/numa_maps"); maps.ok()) {
    p.numa_maps_readable = true;
    AddNumaMaps(*maps, p.resident_bytes_per_node);
  }
  // Open devices.
  std::set<int> gpus;
  std::set<std::string> nics;
  if (auto fds = env.ListDirectory(dir + "/fd"); fds.ok()) {
    std::map<int, std::string> minors;
    bool minors_read = false;
    for (const auto& fd : *fds) {
      auto target = env.ReadLink(dir + "/fd/" + fd);
      if (!target.ok()) continue;
      const std::string& t = *target;
      if (t.rfind("/dev/nvidia", 0) == 0 && t.size() > 11 &&
          std::all_of(t.begin() + 11, t.end(), ::isdigit)) {
        if (!minors_read) {
          minors = NvidiaMinors(env);
          minors_read = true;
        }
        const std::optional<int64_t> minor = base::ParseInt64(std::string_view(t).substr(11));
        if (auto m =
                minor && *minor <= INT32_MAX ? minors.find(static_cast<int>(*minor)) : minors.end();
            m != minors.end()) {
          for (const auto& g : topology.gpus) {
            if (g.pci_address == m->second) gpus.insert(g.index);
          }
        }
      } else if (t.rfind("/dev/infiniband/uverbs", 0) == 0) {
        const std::string uverbs = t.substr(16);
        internal::Notes ignored;
        if (auto ib = internal::ReadTrimmed(env, "/sys/class/infiniband_verbs/" + uverbs + "/ibdev",
                                            ignored)) {
          nics.insert(*ib);
        }
      }
    }
  }
  p.gpus.assign(gpus.begin(), gpus.end());
  p.nics.assign(nics.begin(), nics.end());
  return p;
}

AffinityReport CheckAffinity(const Topology& t, const ProcessPlacement& p,
                             const AffinityOptions& options) {
  AffinityReport r;
  auto add = [&r](std::string severity, std::string code, std::string message, std::string advice,
                  double score) {
    r.findings.push_back(
        {std::move(severity), std::move(code), std::move(message), std::move(advice), score});
    r.mismatch_score = std::max(r.mismatch_score, score);
  };
  if (!t.numa_info || t.nodes.empty()) {
    r.exit_code = 1;
    r.verdict = "no_numa_info";
    add("error", "no_numa_info", "the machine gives no NUMA information (/sys/devices/system/node)",
        "run on the host or mount /sys into the container", 0);
    return r;
  }
  const bool any_cpus = std::any_of(t.nodes.begin(), t.nodes.end(),
                                    [](const NumaNode& n) { return !n.cpus.empty(); });
  if (!any_cpus) {
    r.exit_code = 1;
    r.verdict = "no_numa_info";
    add("error", "no_numa_info", "no NUMA node lists its CPUs (unreadable cpulist files)",
        "see the notes of seedancectl topo show", 0);
    return r;
  }
  r.cpu_nodes = NodesOf(t, p.allowed_cpus);
  const std::set<int> cpu_nodes(r.cpu_nodes.begin(), r.cpu_nodes.end());

  // Memory: bytes on nodes outside the CPU nodes are remote.
  int64_t local = 0, remote = 0;
  for (auto [node, bytes] : p.resident_bytes_per_node) {
    (cpu_nodes.count(node) ? local : remote) += bytes;
  }
  const int64_t total = local + remote;
  r.remote_memory_share = total > 0 ? static_cast<double>(remote) / static_cast<double>(total) : 0;

  if (t.nodes.size() == 1) {
    r.verdict = "consistent";
    add("info", "single_node", "one NUMA node: every placement is local", "", 0);
    return r;
  }
  if (p.allowed_cpus.empty()) {
    // Cannot show the process is bound: report it as unbound.
    r.exit_code = 2;
    r.verdict = "unbound";
    add("error", "cpu_mask_unreadable",
        "cannot read process " + std::to_string(p.pid) + "'s CPU mask (Cpus_allowed_list)",
        "run as the process's owner or root", 1);
    return r;
  }
  const bool unbound = r.cpu_nodes.size() > 1;
  const bool memory_remote =
      static_cast<double>(remote) > options.remote_to_local_limit * static_cast<double>(local) &&
      remote > 0;
  if (unbound) {
    std::string nodes;
    for (int n : r.cpu_nodes) nodes += (nodes.empty() ? "" : ",") + std::to_string(n);
    add("error", "unbound",
        "process " + std::to_string(p.pid) + " may run on CPUs " + FormatCpuList(p.allowed_cpus) +
            " spanning NUMA nodes " + nodes,
        "bind it to one node: numactl --cpunodebind=N --membind=N, or "
        "seedance.topo.bind_to_numa_node(N)",
        1.0 - 1.0 / static_cast<double>(r.cpu_nodes.size()));
  }
  if (!p.numa_maps_readable) {
    add("warning", "numa_maps_unreadable",
        "/proc/" + std::to_string(p.pid) + "/numa_maps is not readable: memory placement unknown",
        "run as the process's owner or root", 0);
  } else if (!unbound && memory_remote) {
    std::ostringstream msg;
    msg << "resident memory " << std::lround(r.remote_memory_share * 100) << "% remote (" << remote
        << " bytes off the process's node, " << local << " on it)";
    add("error", "memory_remote", msg.str(),
        "allocate after binding (numactl --membind) or migrate pages (migratepages)",
        r.remote_memory_share);
  }
  // Devices: each open GPU/NIC should sit on a node the process runs on.
  std::vector<std::pair<std::string, int>> devices;
  for (int g : p.gpus) devices.push_back({"GPU" + std::to_string(g), t.gpus[g].numa_node});
  for (const auto& name : p.nics) {
    for (const auto& n : t.nics) {
      if (n.name == name) devices.push_back({n.name, n.numa_node});
    }
  }
  for (const auto& [name, node] : devices) {
    if (node < 0) continue;
    size_t away = 0;
    for (const auto& th : p.threads) {
      const auto nodes = NodesOf(t, th.allowed_cpus);
      if (nodes.size() == 1 && nodes[0] != node) ++away;
    }
    if (!cpu_nodes.count(node)) {
      add("warning", "device_remote",
          name + " is on NUMA node " + std::to_string(node) +
              ", outside the nodes the process runs on",
          "bind the threads that drive " + name + " to node " + std::to_string(node) +
              " (seedance.torch.numa_worker_init_fn for DataLoader workers)",
          p.threads.empty() ? 1.0
                            : static_cast<double>(away) / static_cast<double>(p.threads.size()));
    } else if (away > 0) {
      add("warning", "device_remote",
          std::to_string(away) + " thread(s) bound away from " + name + "'s NUMA node " +
              std::to_string(node),
          "bind I/O and communication threads next to the device",
          static_cast<double>(away) / static_cast<double>(std::max<size_t>(1, p.threads.size())));
    }
  }
  // Threads whose masks span other nodes than the process's.
  size_t split = 0;
  for (const auto& th : p.threads) {
    for (int n : NodesOf(t, th.allowed_cpus)) {
      if (!cpu_nodes.count(n)) {
        ++split;
        break;
      }
    }
  }
  if (split > 0) {
    add("warning", "thread_split",
        std::to_string(split) + " thread(s) may run on nodes outside the main thread's",
        "bind every worker thread with the main thread's node",
        static_cast<double>(split) / static_cast<double>(p.threads.size()));
  }
  if (unbound) {
    r.exit_code = 2;
    r.verdict = "unbound";
  } else if (memory_remote) {
    r.exit_code = 3;
    r.verdict = "memory_not_local";
  } else {
    r.verdict = "consistent";
  }
  return r;
}

base::Report AffinityToReport(const AffinityReport& a, const ProcessPlacement& p) {
  base::Report r;
  r["pid"] = p.pid;
  r["command"] = p.command;
  r["verdict"] = a.verdict;
  r["exit_code"] = a.exit_code;
  r["mismatch_score"] = a.mismatch_score;
  r["allowed_cpus"] = FormatCpuList(p.allowed_cpus);
  r["allowed_mems"] = FormatCpuList(p.allowed_mems);
  r["cpu_nodes"] = a.cpu_nodes;
  base::Report mem = base::Report::object();
  for (auto [node, bytes] : p.resident_bytes_per_node) mem["node" + std::to_string(node)] = bytes;
  r["resident_bytes_per_node"] = mem;
  r["remote_memory_share"] = a.remote_memory_share;
  r["thread_count"] = p.threads.size();
  base::Report threads = base::Report::array();
  for (size_t i = 0; i < p.threads.size() && i < 256; ++i) {  // 256: a report, not a dump
    const auto& t = p.threads[i];
    threads.push_back({{"tid", t.tid},
                       {"name", t.name},
                       {"allowed_cpus", FormatCpuList(t.allowed_cpus)},
                       {"last_cpu", t.last_cpu}});
  }
  r["threads"] = threads;
  base::Report gpus = base::Report::array();
  for (int g : p.gpus) gpus.push_back("GPU" + std::to_string(g));
  r["open_gpus"] = gpus;
  r["open_nics"] = p.nics;
  base::Report findings = base::Report::array();
  for (const auto& f : a.findings) {
    findings.push_back({{"severity", f.severity},
                        {"code", f.code},
                        {"message", f.message},
                        {"advice", f.advice},
                        {"score", f.score}});
  }
  r["findings"] = findings;
  return r;
}

}  // namespace seedance::topo
