// The built-in GPU table. Every hardware figure is from the vendor datasheet
// named in `datasheet` (see docs/gpu-catalog.md for the documents); prices are
// reported list prices with their date and source, not measurements.
//
// Conventions: fp64 and fp32 are the vector (non-tensor) peaks; tf32, bf16,
// fp16, fp8 and int8 are the tensor/matrix-core peaks. NVIDIA datasheets from
// Ampere on print the sparse figure for tensor formats (footnoted "with
// sparsity"); the dense figure is half of it, as the footnote says.
#include "src/cost/gpu_catalog_data.h"

namespace seedance::cost::internal {
namespace {

// Order: fp64, fp32, tf32, bf16, fp16, fp8, int8.
using P = PeakTable;
constexpr std::nullopt_t kNone = std::nullopt;

}  // namespace

std::vector<GpuSpec> BuiltInGpus() {
  std::vector<GpuSpec> g;

  g.push_back(GpuSpec{
      .id = "V100",
      .name = "NVIDIA Tesla V100 SXM2 16GB",
      .vendor = "nvidia",
      .form_factor = "SXM2",
      .memory_gb = 16,
      .memory_type = "HBM2",
      .memory_bandwidth_gbytes_per_s = 900,
      .dense_tflops = P{7.8, 15.7, kNone, kNone, 125, kNone, kNone},
      .sparse_tflops = P{},
      .tdp_watts = 300,
      .price_per_hour_usd = 3.06,
      .price_kind = PriceKind::kOnDemand,
      .price_date = "2026-01-21",
      .price_source = "AWS EC2 on-demand, p3.2xlarge (1x V100 16GB), us-east-1 (AWS Price List, as "
                      "copied by instances.vantage.sh)",
      .datasheet = "NVIDIA Tesla V100 GPU Accelerator datasheet (SXM2 column)",
  });

  g.push_back(GpuSpec{
      .id = "A100-40GB",
      .name = "NVIDIA A100 SXM4 40GB",
      .vendor = "nvidia",
      .form_factor = "SXM4",
      .memory_gb = 40,
      .memory_type = "HBM2",
      .memory_bandwidth_gbytes_per_s = 1555,
      .dense_tflops = P{9.7, 19.5, 156, 312, 312, kNone, 624},
      .sparse_tflops = P{kNone, kNone, 312, 624, 624, kNone, 1248},
      .tdp_watts = 400,
      .price_per_hour_usd = 2.7447,
      .price_kind = PriceKind::kOnDemand,
      .price_date = "2026-08-01",
      .price_source = "AWS EC2 on-demand, p4d.24xlarge $21.957642/h for 8 GPUs, us-east-1, after "
                      "the June 2025 cut (AWS Price List)",
      .datasheet = "NVIDIA A100 Tensor Core GPU datasheet (A100 40GB SXM column)",
  });

  g.push_back(GpuSpec{
      .id = "A100-80GB",
      .name = "NVIDIA A100 SXM4 80GB",
      .vendor = "nvidia",
      .form_factor = "SXM4",
      .memory_gb = 80,
      .memory_type = "HBM2e",
      .memory_bandwidth_gbytes_per_s = 2039,
      .dense_tflops = P{9.7, 19.5, 156, 312, 312, kNone, 624},
      .sparse_tflops = P{kNone, kNone, 312, 624, 624, kNone, 1248},
      .tdp_watts = 400,
      .price_per_hour_usd = 3.4309,
      .price_kind = PriceKind::kOnDemand,
      .price_date = "2026-08-01",
      .price_source = "AWS EC2 on-demand, p4de.24xlarge $27.44705/h for 8 GPUs, us-east-1, after "
                      "the June 2025 cut (AWS Price List)",
      .datasheet = "NVIDIA A100 Tensor Core GPU datasheet (A100 80GB SXM column)",
  });

  g.push_back(GpuSpec{
      .id = "H100-SXM",
      .name = "NVIDIA H100 SXM5 80GB",
      .vendor = "nvidia",
      .form_factor = "SXM5",
      .memory_gb = 80,
      .memory_type = "HBM3",
      .memory_bandwidth_gbytes_per_s = 3350,
      .dense_tflops = P{34, 67, 494.5, 989.5, 989.5, 1979, 1979},
      .sparse_tflops = P{kNone, kNone, 989, 1979, 1979, 3958, 3958},
      .tdp_watts = 700,
      .price_per_hour_usd = 6.88,
      .price_kind = PriceKind::kOnDemand,
      .price_date = "2026-08-01",
      .price_source = "AWS EC2 on-demand, p5.48xlarge $55.04/h for 8 GPUs, us-east-1, after the "
                      "June 2025 cut (AWS Price List)",
      .datasheet = "NVIDIA H100 Tensor Core GPU datasheet (H100 SXM column)",
  });

  g.push_back(GpuSpec{
      .id = "H200",
      .name = "NVIDIA H200 SXM 141GB",
      .vendor = "nvidia",
      .form_factor = "SXM5",
      .memory_gb = 141,
      .memory_type = "HBM3e",
      .memory_bandwidth_gbytes_per_s = 4800,
      .dense_tflops = P{34, 67, 494.5, 989.5, 989.5, 1979, 1979},
      .sparse_tflops = P{kNone, kNone, 989, 1979, 1979, 3958, 3958},
      .tdp_watts = 700,
      .price_per_hour_usd = 7.912,
      .price_kind = PriceKind::kOnDemand,
      .price_date = "2026-08-01",
      .price_source =
          "AWS EC2 on-demand, p5en.48xlarge $63.296/h for 8 GPUs, us-east-1 (AWS Price List)",
      .datasheet = "NVIDIA H200 Tensor Core GPU datasheet (H200 SXM column)",
  });

  g.push_back(GpuSpec{
      .id = "L40S",
      .name = "NVIDIA L40S 48GB",
      .vendor = "nvidia",
      .form_factor = "PCIe",
      .memory_gb = 48,
      .memory_type = "GDDR6",
      .memory_bandwidth_gbytes_per_s = 864,
      .dense_tflops = P{kNone, 91.6, 183, 362.05, 362.05, 733, 733},
      .sparse_tflops = P{kNone, kNone, 366, 733, 733, 1466, 1466},
      .tdp_watts = 350,
      .price_per_hour_usd = 1.861,
      .price_kind = PriceKind::kOnDemand,
      .price_date = "2026-01-21",
      .price_source = "AWS EC2 on-demand, g6e.xlarge (1x L40S), us-east-1 (AWS Price List, as "
                      "copied by instances.vantage.sh)",
      .datasheet = "NVIDIA L40S GPU datasheet",
  });

  g.push_back(GpuSpec{
      .id = "L4",
      .name = "NVIDIA L4 24GB",
      .vendor = "nvidia",
      .form_factor = "PCIe",
      .memory_gb = 24,
      .memory_type = "GDDR6",
      .memory_bandwidth_gbytes_per_s = 300,
      .dense_tflops = P{kNone, 30.3, 60, 121, 121, 242.5, 242.5},
      .sparse_tflops = P{kNone, kNone, 120, 242, 242, 485, 485},
      .tdp_watts = 72,
      .price_per_hour_usd = 0.8048,
      .price_kind = PriceKind::kOnDemand,
      .price_date = "2026-01-21",
      .price_source = "AWS EC2 on-demand, g6.xlarge (1x L4), us-east-1 (AWS Price List, as copied "
                      "by instances.vantage.sh)",
      .datasheet = "NVIDIA L4 Tensor Core GPU datasheet",
  });

  g.push_back(GpuSpec{
      .id = "A10",
      .name = "NVIDIA A10 24GB",
      .vendor = "nvidia",
      .form_factor = "PCIe",
      .memory_gb = 24,
      .memory_type = "GDDR6",
      .memory_bandwidth_gbytes_per_s = 600,
      .dense_tflops = P{kNone, 31.2, 62.5, 125, 125, kNone, 250},
      .sparse_tflops = P{kNone, kNone, 125, 250, 250, kNone, 500},
      .tdp_watts = 150,
      .price_per_hour_usd = 1.006,
      .price_kind = PriceKind::kOnDemand,
      .price_date = "2026-01-21",
      .price_source = "AWS EC2 on-demand, g5.xlarge (1x A10G, the AWS variant of A10), us-east-1 "
                      "(AWS Price List, as copied by instances.vantage.sh)",
      .datasheet = "NVIDIA A10 Tensor Core GPU datasheet",
  });

  g.push_back(GpuSpec{
      .id = "MI300X",
      .name = "AMD Instinct MI300X 192GB",
      .vendor = "amd",
      .form_factor = "OAM",
      .memory_gb = 192,
      .memory_type = "HBM3",
      .memory_bandwidth_gbytes_per_s = 5300,
      .dense_tflops = P{81.7, 163.4, 653.7, 1307.4, 1307.4, 2614.9, 2614.9},
      .sparse_tflops = P{kNone, kNone, 1307.4, 2614.9, 2614.9, 5229.8, 5229.8},
      .tdp_watts = 750,
      .price_per_hour_usd = 3.45,
      .price_kind = PriceKind::kOnDemand,
      .price_date = "2026-09-20",
      .price_source = "Crusoe Cloud on-demand, AMD MI300X 192GB, per GPU (crusoe.ai/cloud/pricing)",
      .datasheet = "AMD Instinct MI300X accelerator data sheet",
  });

  return g;
}

}  // namespace seedance::cost::internal
