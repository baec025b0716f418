#include "seedance/plan/links.h"

namespace seedance::plan {
namespace {

double NvlinkGbytesPerS(const std::string& gpu_id) {
  if (gpu_id.starts_with("V100")) return 150;
  if (gpu_id.starts_with("A100")) return 300;
  return 450;  // H100 SXM, H200 and later SXM parts: 900 GB/s bidirectional
}

}  // namespace

Links ResolveLinks(const HardwareSpec& hardware, const cost::GpuSpec& gpu) {
  Links l;
  if (hardware.intra_node_gbytes_per_s > 0) {
    l.intra_node_gbytes_per_s = hardware.intra_node_gbytes_per_s;
    l.intra_source = "job spec";
  } else if (hardware.intra_node == "nvlink") {
    l.intra_node_gbytes_per_s = NvlinkGbytesPerS(gpu.id);
    l.intra_source = "NVLink, half the datasheet's bidirectional total";
  } else if (hardware.intra_node == "xgmi") {
    l.intra_node_gbytes_per_s = 448;
    l.intra_source = "Infinity Fabric, 7 links x 64 GB/s";
  } else {
    l.intra_node_gbytes_per_s = 31.5;
    l.intra_source = "PCIe 4.0 x16 line rate";
  }
  if (hardware.inter_node_gbytes_per_s > 0) {
    l.inter_node_gbytes_per_s = hardware.inter_node_gbytes_per_s;
    l.inter_source = "job spec";
  } else if (hardware.inter_node == "infiniband" || hardware.inter_node == "roce") {
    l.inter_node_gbytes_per_s = 50;
    l.inter_source = "one 400 Gb/s adapter per GPU";
  } else if (hardware.inter_node == "ethernet") {
    l.inter_node_gbytes_per_s = 12.5 / static_cast<double>(hardware.gpus_per_node);
    l.inter_source = "one 100 Gb/s port per node, shared by its GPUs";
  } else {
    l.inter_node_gbytes_per_s = 0;
    l.inter_source = "single node";
  }
  return l;
}

base::Report LinksToReport(const Links& links) {
  base::Report r = base::Report::object();
  r["intra_node_gbytes_per_s"] = links.intra_node_gbytes_per_s;
  r["intra_node_source"] = links.intra_source;
  r["inter_node_gbytes_per_s"] = links.inter_node_gbytes_per_s;
  r["inter_node_source"] = links.inter_source;
  return r;
}

}  // namespace seedance::plan
