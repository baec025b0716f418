// The GPU catalog (the data half of feature COST-1): for each GPU model a job
// spec may name, its memory, memory bandwidth, peak throughput per numeric
// format, power, and a price per hour with the date and source of that price.
//
// The built-in table cites a datasheet for every figure (docs/gpu-catalog.md).
// A YAML file can override fields of built-in entries or add new GPUs:
//
//   gpus:
//     - id: H100-SXM                 # an existing id: only the given fields change
//       price_per_hour_usd: 2.10
//       price_kind: reserved           # default "own" when a price is given without its kind
//       price_date: 2026-11-01
//       price_source: our reserved-instance contract
//     - id: B200                     # a new id: every field is required
//       ...
//
// Ids are matched case-insensitively. Peak figures are in TFLOPS (TOPS for
// int8); "dense" excludes 2:4 structured sparsity, "sparse" includes it; a
// format the GPU does not support (or whose peak is not published) is absent.
//
// Thread safety: a GpuCatalog is immutable once made.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/numeric_format.h"
#include "seedance/base/report.h"
#include "seedance/base/status.h"

namespace seedance::cost {

// What a price is: prices of different kinds are not comparable (a capacity block or a spot
// price is not an on-demand price). "own" is a price from the user's own list or contract.
enum class PriceKind { kOnDemand, kReserved, kCapacityBlock, kSpot, kList, kOwn };
// "on-demand", "reserved", "capacity-block", "spot", "list" (a provider's published list price
// as reported by a survey), "own".
std::string_view PriceKindName(PriceKind kind);
base::StatusOr<PriceKind> ParsePriceKind(std::string_view text, std::string_view where);

// Peak throughput per format, indexed by base::NumericFormat.
using PeakTable = std::array<std::optional<double>, base::kAllNumericFormats.size()>;

struct GpuSpec {
  std::string id;           // "H100-SXM"
  std::string name;         // "NVIDIA H100 SXM5 80GB"
  std::string vendor;       // "nvidia", "amd"
  std::string form_factor;  // "SXM5", "PCIe", "OAM"
  double memory_gb = 0;     // datasheet GB: HBM capacities are binary (80 GB = 5 x 16 GiB stacks)
  std::string memory_type;  // "HBM3"
  double memory_bandwidth_gbytes_per_s = 0;  // GB/s
  PeakTable dense_tflops{};
  PeakTable sparse_tflops{};
  double tdp_watts = 0;
  double price_per_hour_usd = 0;
  PriceKind price_kind = PriceKind::kOnDemand;
  std::string price_date;    // ISO date (YYYY-MM-DD) when the price was reported
  std::string price_source;  // who charged it, for what
  std::string datasheet;     // the document the hardware figures come from

  std::optional<double> DenseTflops(base::NumericFormat f) const {
    return dense_tflops[static_cast<size_t>(f)];
  }
  // The device's memory in bytes: the datasheet's GB taken as GiB, as HBM stacks are sized (the
  // planner's runtime reserve stands for what the driver and the CUDA context keep of it).
  int64_t MemoryBytes() const { return static_cast<int64_t>(memory_gb * 1073741824.0); }
};

class GpuCatalog {
 public:
  // The table compiled into Seedance.
  static const GpuCatalog& BuiltIn();

  // `base` with the overrides and additions of a YAML document applied.
  // Errors name the file, line and key.
  static base::StatusOr<GpuCatalog> WithOverrides(const GpuCatalog& base, std::string_view yaml,
                                                  const std::string& file);

  // Case-insensitive; nullptr when unknown.
  const GpuSpec* Find(std::string_view id) const;
  // Like Find, but an unknown id is NotFound with the list of known ids.
  base::StatusOr<const GpuSpec*> Get(std::string_view id) const;

  const std::vector<GpuSpec>& gpus() const { return gpus_; }
  // "V100, A100-40GB, ..." in catalog order.
  std::string IdList() const;

 private:
  std::vector<GpuSpec> gpus_;
};

// The distinct price kinds of a set of GPUs, in catalog order; more than one means the prices
// must not be ranked against each other without saying so.
std::vector<PriceKind> PriceKinds(const std::vector<GpuSpec>& gpus);

// Every field of a GPU, for `--output json`.
base::Report GpuSpecToReport(const GpuSpec& gpu);

// `catalog list`'s report: {"gpus": [GpuSpecToReport of each], "note": ..., and "price_warning"
// when the prices are of more than one kind}.
base::Report CatalogReport(const GpuCatalog& catalog);
// The table rendering's selection from CatalogReport: each row keeps the fields people compare
// first (id, memory, bandwidth, the dense fp32/bf16/fp16/fp8 peaks, TDP, price, its kind and
// date) under the same keys as the JSON (nested peaks render as `dense_tflops.fp32` columns);
// `note` and `price_warning` stay as they are.
base::Report CatalogTableView(const base::Report& catalog_report);

}  // namespace seedance::cost
