#include "seedance/topo/nvlink.h"

#include <algorithm>
#include <map>

#include "seedance/port/nvml.h"
#include "seedance/topo/matrix.h"

namespace seedance::topo {

base::Status LoadNvlinksFromNvml(Topology& t) {
  auto nvml = port::Nvml::Load();
  if (!nvml.ok()) return nvml.status();
  std::map<std::string, int> gpu_of_pci;
  for (const auto& g : t.gpus) gpu_of_pci[g.pci_address] = g.index;
  const size_t n = t.gpus.size();
  std::vector<std::vector<int>> links(n, std::vector<int>(n, 0));
  std::vector<int> switch_links(n, 0);
  for (int d = 0; d < (*nvml)->device_count(); ++d) {
    const auto reading = (*nvml)->Read(d);
    auto self = gpu_of_pci.find(reading.pci_address);
    if (self == gpu_of_pci.end()) continue;  // a GPU hidden from sysfs (container)
    for (const auto& [remote, count] : (*nvml)->NvlinkPeers(d)) {
      if (auto peer = gpu_of_pci.find(remote); peer != gpu_of_pci.end()) {
        if (peer->second != self->second) links[self->second][peer->second] = count;
      } else {
        switch_links[self->second] += count;  // NVSwitch
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      if (i != j && links[i][j] == 0 && switch_links[i] > 0 && switch_links[j] > 0) {
        links[i][j] = std::min(switch_links[i], switch_links[j]);
      }
    }
  }
  return SetNvlinks(t, std::move(links), "nvml");
}

base::Status LoadNvlinksFromSmiFile(Topology& t, base::Env& env, const std::string& file) {
  auto text = env.ReadFile(file);
  if (!text.ok()) return text.status().Annotate("cannot read the nvidia-smi topo -m file");
  auto links = ParseNvidiaSmiTopo(*text, file);
  if (!links.ok()) return links.status();
  return SetNvlinks(t, std::move(*links), file);
}

}  // namespace seedance::topo
