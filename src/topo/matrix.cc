#include "seedance/topo/matrix.h"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "seedance/base/parse.h"
#include "seedance/base/report.h"

namespace seedance::topo {

std::string LinkLabel(const Connection& c) {
  switch (c.link) {
    case Link::kSelf:
      return "X";
    case Link::kNvlink:
      return "NV" + std::to_string(c.nvlinks);
    case Link::kPix:
      return "PIX";
    case Link::kPxb:
      return "PXB";
    case Link::kPhb:
      return "PHB";
    case Link::kNode:
      return "NODE";
    case Link::kSys:
      return "SYS";
  }
  return "?";
}

Link PciRelation(const std::vector<std::string>& a, int node_a, const std::vector<std::string>& b,
                 int node_b, bool single_node) {
  const bool same_node = single_node || (node_a >= 0 && node_a == node_b);
  if (a.empty() || b.empty() || a[0] != b[0] || a[0] == "pci?") {
    return same_node ? Link::kNode : Link::kSys;
  }
  // Functions below the host bridge: a[1..], b[1..]. c = shared ancestors.
  size_t c = 0;
  while (1 + c < a.size() && 1 + c < b.size() && a[1 + c] == b[1 + c]) ++c;
  if (c == 0) return Link::kPhb;  // different root ports of one host bridge
  // Below the deepest shared bridge, each side crosses (depth - 1) bridges
  // before reaching its device: one switch is a downstream port + the device.
  const size_t below = std::max(a.size() - 1 - c, b.size() - 1 - c);
  return below <= 2 ? Link::kPix : Link::kPxb;
}

std::vector<std::string> MatrixDeviceNames(const Topology& t) {
  std::vector<std::string> names;
  for (size_t i = 0; i < t.gpus.size(); ++i) names.push_back("GPU" + std::to_string(i));
  for (size_t i = 0; i < t.nics.size(); ++i) names.push_back("NIC" + std::to_string(i));
  return names;
}

std::vector<std::vector<Connection>> ConnectionMatrix(const Topology& t) {
  struct Dev {
    const std::vector<std::string>* path;
    int node;
  };
  std::vector<Dev> devs;
  for (const auto& g : t.gpus) devs.push_back({&g.pci_path, g.numa_node});
  for (const auto& n : t.nics) devs.push_back({&n.pci_path, n.numa_node});
  const bool single = t.nodes.size() <= 1;
  const size_t n = devs.size();
  std::vector<std::vector<Connection>> m(n, std::vector<Connection>(n));
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      if (i == j) {
        m[i][j].link = Link::kSelf;
      } else if (i < t.gpus.size() && j < t.gpus.size() && !t.nvlinks.empty() &&
                 t.nvlinks[i][j] > 0) {
        m[i][j] = {Link::kNvlink, t.nvlinks[i][j]};
      } else {
        m[i][j].link =
            PciRelation(*devs[i].path, devs[i].node, *devs[j].path, devs[j].node, single);
      }
    }
  }
  return m;
}

namespace {

std::string StripAnsi(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\x1b') {
      while (i < s.size() && !std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
      continue;
    }
    out += s[i];
  }
  return out;
}

std::vector<std::string> SplitCells(const std::string& line) {
  // nvidia-smi separates cells with tabs (padded with spaces): split on tabs exactly, so an empty
  // cell stays a cell instead of shifting the rest left. A copy without tabs is split on spaces.
  std::vector<std::string> cells;
  if (line.find('\t') != std::string::npos) {
    size_t i = 0;
    while (i <= line.size()) {
      size_t j = line.find('\t', i);
      if (j == std::string::npos) j = line.size();
      std::string cell = line.substr(i, j - i);
      const size_t a = cell.find_first_not_of(" \r");
      cell = a == std::string::npos ? "" : cell.substr(a, cell.find_last_not_of(" \r") - a + 1);
      cells.push_back(std::move(cell));
      i = j + 1;
    }
    if (!cells.empty() && cells.front().empty()) cells.erase(cells.begin());  // the header's
    while (!cells.empty() && cells.back().empty()) cells.pop_back();
    return cells;
  }
  for (std::string_view cell : base::SplitFields(line)) cells.emplace_back(cell);
  return cells;
}

}  // namespace

base::StatusOr<std::vector<std::vector<int>>> ParseNvidiaSmiTopo(const std::string& text,
                                                                 const std::string& file) {
  int line_no = 0;
  int gpu_columns = -1;
  std::vector<std::vector<int>> rows;
  std::vector<int> row_lines;
  for (std::string_view raw : base::SplitLines(text)) {
    ++line_no;
    const std::string line = StripAnsi(std::string(raw));
    auto cells = SplitCells(line);
    if (cells.empty()) continue;
    if (gpu_columns < 0) {
      if (cells[0] != "GPU0") continue;  // header: GPU0 GPU1 ... NIC0 CPU Affinity ...
      gpu_columns = 0;
      for (const auto& c : cells) {
        if (c != "GPU" + std::to_string(gpu_columns)) break;
        ++gpu_columns;
      }
      continue;
    }
    if (cells[0] != "GPU" + std::to_string(rows.size())) {
      if (cells[0].rfind("GPU", 0) == 0 && cells[0] != "GPU") {
        return base::InvalidArgumentError(
            "expected row GPU" + std::to_string(rows.size()) + ", got " + cells[0],
            file + ":" + std::to_string(line_no));
      }
      if (!rows.empty()) break;  // NIC rows, legend: the GPU block is over
      continue;
    }
    if (static_cast<int>(cells.size()) < 1 + gpu_columns) {
      return base::InvalidArgumentError("row " + cells[0] + " has fewer cells than GPU columns",
                                        file + ":" + std::to_string(line_no));
    }
    std::vector<int> row;
    for (int j = 0; j < gpu_columns; ++j) {
      const std::string& c = cells[1 + j];
      int links = 0;
      if (c.rfind("NV", 0) == 0) {
        auto [p, ec] = std::from_chars(c.data() + 2, c.data() + c.size(), links);
        if (ec != std::errc() || p != c.data() + c.size() || links <= 0) {
          return base::InvalidArgumentError(
              "cell '" + c + "' in column GPU" + std::to_string(j) + ": expected NV<count>",
              file + ":" + std::to_string(line_no));
        }
      } else if ((c == "X") != (j == static_cast<int>(rows.size()))) {
        return base::InvalidArgumentError(
            "cell '" + c + "' in column GPU" + std::to_string(j) +
                ": X must be exactly on the diagonal (a GPU's link to itself)",
            file + ":" + std::to_string(line_no));
      } else if (c != "X" && c != "SYS" && c != "NODE" && c != "PHB" && c != "PXB" && c != "PIX" &&
                 c != "SOC") {
        return base::InvalidArgumentError("cell '" + c + "' in column GPU" + std::to_string(j) +
                                              ": expected X, NV#, PIX, PXB, PHB, NODE or SYS",
                                          file + ":" + std::to_string(line_no));
      }
      row.push_back(links);
    }
    rows.push_back(std::move(row));
    row_lines.push_back(line_no);
  }
  if (gpu_columns <= 0) {
    return base::InvalidArgumentError(
        "no 'GPU0 GPU1 ...' header line: not nvidia-smi topo -m output", file);
  }
  if (static_cast<int>(rows.size()) != gpu_columns) {
    return base::InvalidArgumentError("found " + std::to_string(rows.size()) + " GPU rows for " +
                                          std::to_string(gpu_columns) + " GPU columns",
                                      file);
  }
  // A link is one cable seen from both ends: the NVLink counts must be symmetric.
  for (size_t i = 0; i < rows.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (rows[i][j] != rows[j][i]) {
        return base::InvalidArgumentError(
            "GPU" + std::to_string(i) + " -> GPU" + std::to_string(j) + " has " +
                std::to_string(rows[i][j]) + " NVLinks but GPU" + std::to_string(j) + " -> GPU" +
                std::to_string(i) + " has " + std::to_string(rows[j][i]) +
                ": the matrix must be symmetric",
            file + ":" + std::to_string(row_lines[i]));
      }
    }
  }
  return rows;
}

std::string RenderTopologyTable(const Topology& t) {
  std::ostringstream out;
  const auto names = MatrixDeviceNames(t);
  const auto m = ConnectionMatrix(t);
  if (!names.empty()) {
    std::vector<std::vector<std::string>> grid;
    std::vector<std::string> header = {""};
    header.insert(header.end(), names.begin(), names.end());
    header.push_back("CPU Affinity");
    header.push_back("NUMA Affinity");
    grid.push_back(header);
    for (size_t i = 0; i < names.size(); ++i) {
      std::vector<std::string> row = {names[i]};
      for (size_t j = 0; j < names.size(); ++j) row.push_back(LinkLabel(m[i][j]));
      const bool gpu = i < t.gpus.size();
      const auto& cpus = gpu ? t.gpus[i].local_cpus : t.nics[i - t.gpus.size()].local_cpus;
      const int node = gpu ? t.gpus[i].numa_node : t.nics[i - t.gpus.size()].numa_node;
      row.push_back(cpus.empty() ? "N/A" : FormatCpuList(cpus));
      row.push_back(node < 0 ? "N/A" : std::to_string(node));
      grid.push_back(row);
    }
    std::vector<size_t> width(header.size(), 0);
    for (const auto& r : grid) {
      for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
    }
    for (const auto& r : grid) {
      std::string line;
      for (size_t c = 0; c < r.size(); ++c) {
        std::string cell = r[c];
        if (c + 1 < r.size()) cell.resize(width[c] + 2, ' ');
        line += cell;
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out << line << "\n";
    }
    out << "\nLegend:\n"
        << "  X    = Self\n"
        << "  SYS  = Connection traversing PCIe as well as the interconnect between NUMA nodes\n"
        << "  NODE = Connection traversing PCIe and the interconnect between PCIe host bridges "
           "within a NUMA node\n"
        << "  PHB  = Connection traversing PCIe and a PCIe host bridge\n"
        << "  PXB  = Connection traversing multiple PCIe bridges (without a host bridge)\n"
        << "  PIX  = Connection traversing at most a single PCIe bridge\n"
        << "  NV#  = Connection traversing a bonded set of # NVLinks\n";
    out << "NVLink source: " << (t.nvlink_source.empty() ? "none" : t.nvlink_source) << "\n";
    if (!t.nics.empty()) {
      out << "\nNIC Legend:\n";
      for (size_t i = 0; i < t.nics.size(); ++i) {
        const auto& n = t.nics[i];
        out << "  NIC" << i << ": " << n.name << " (" << n.kind;
        if (!n.interface.empty() && n.interface != n.name) out << ", " << n.interface;
        if (n.speed_gbits_per_s > 0) {
          std::ostringstream s;
          s << n.speed_gbits_per_s;
          out << ", " << s.str() << " Gb/s";
        }
        out << ", " << (n.up ? "up" : "down");
        if (!n.pci_address.empty()) out << ", " << n.pci_address;
        out << ")\n";
      }
    }
    if (!t.gpus.empty()) {
      out << "\nGPU Legend:\n";
      for (const auto& g : t.gpus) {
        out << "  GPU" << g.index << ": " << g.vendor << " " << g.pci_address << "\n";
      }
    }
    out << "\n";
  } else {
    out << "No GPUs or NICs found.\n\n";
  }
  out << "NUMA nodes: " << (t.numa_info ? std::to_string(t.nodes.size()) : "unknown") << "\n";
  for (const auto& n : t.nodes) {
    out << "  node" << n.id << ": CPUs " << (n.cpus.empty() ? "none" : FormatCpuList(n.cpus));
    if (n.memory_total_bytes >= 0) {
      out << ", memory " << base::HumanBytes(static_cast<double>(n.memory_total_bytes));
    }
    if (!n.distances.empty()) {
      out << ", distances";
      for (int d : n.distances) out << " " << d;
    }
    out << "\n";
    // Caches of one kind and size on this node, counted: "L2 Unified 2 MiB x16, 1 CPU each".
    for (size_t i = 0; i < n.caches.size();) {
      const Cache& c = n.caches[i];
      size_t j = i;
      bool same_width = true;
      while (j < n.caches.size() && n.caches[j].level == c.level && n.caches[j].type == c.type &&
             n.caches[j].size_bytes == c.size_bytes) {
        same_width &= n.caches[j].cpus.size() == c.cpus.size();
        ++j;
      }
      out << "    L" << c.level << " " << c.type << " "
          << base::HumanBytes(static_cast<double>(c.size_bytes)) << " x" << (j - i);
      if (j - i == 1) {
        out << ", shared by CPUs " << FormatCpuList(c.cpus);
      } else if (same_width) {
        out << ", " << c.cpus.size() << (c.cpus.size() == 1 ? " CPU each" : " CPUs each");
      }
      out << "\n";
      i = j;
    }
  }
  if (!t.notes.empty()) {
    out << "\nNotes:\n";
    for (const auto& note : t.notes) out << "  " << note << "\n";
  }
  return out.str();
}

}  // namespace seedance::topo
