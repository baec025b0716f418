#include "seedance/cost/gpu_catalog.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <unordered_map>
#include <unordered_set>

#include "seedance/base/ascii.h"
#include "seedance/base/enum_names.h"
#include "seedance/base/yaml_map.h"
#include "src/cost/gpu_catalog_data.h"

namespace seedance::cost {
namespace {

using base::AsciiLower;
using base::EqualsIgnoreCase;
using base::NumericFormat;
using base::Report;
using base::Status;
using base::StatusOr;
using base::YamlMap;

constexpr base::EnumTable<PriceKind, 6> kPriceKindNames = {
    {{PriceKind::kOnDemand, "on-demand"},
     {PriceKind::kReserved, "reserved"},
     {PriceKind::kCapacityBlock, "capacity-block"},
     {PriceKind::kSpot, "spot"},
     {PriceKind::kList, "list"},
     {PriceKind::kOwn, "own"}}};

constexpr double kMaxTflops = 1e6;  // a sanity bound far above any real GPU

// Reads `dense_tflops` / `sparse_tflops`: a mapping from format name to a
// non-negative peak. Only the formats given change.
Status ReadPeaks(const YamlMap& entry, std::string_view key, PeakTable& peaks) {
  SEEDANCE_ASSIGN_OR_RETURN(std::optional<YamlMap> map, entry.GetOptionalMap(key));
  if (!map) return base::OkStatus();
  SEEDANCE_RETURN_IF_ERROR(map->CheckKeys({"fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8"}));
  for (NumericFormat f : base::kAllNumericFormats) {
    const std::string_view name = base::NumericFormatName(f);
    if (!map->Has(name)) continue;
    SEEDANCE_ASSIGN_OR_RETURN(double v, map->GetNumber(name, std::nullopt, 0.0, kMaxTflops));
    peaks[static_cast<size_t>(f)] = v;
  }
  return base::OkStatus();
}

Status CheckDate(const YamlMap& entry, const std::string& date) {
  static const std::regex kIsoDate(R"(\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01]))");
  if (!std::regex_match(date, kIsoDate)) {
    return base::InvalidArgumentError("'" + entry.KeyPath("price_date") +
                                          "' must be a date written YYYY-MM-DD, got '" + date + "'",
                                      entry.Where("price_date"));
  }
  return base::OkStatus();
}

// Applies the fields present in `entry` to `gpu`. For a new GPU every scalar
// field is required; for an existing one every field is optional.
Status ApplyEntry(const YamlMap& entry, bool is_new, GpuSpec& gpu) {
  auto str = [&](std::string_view key, std::string& field) -> Status {
    SEEDANCE_ASSIGN_OR_RETURN(
        field, entry.GetString(key, is_new ? std::nullopt : std::optional<std::string>(field)));
    return base::OkStatus();
  };
  auto num = [&](std::string_view key, double& field, double min) -> Status {
    SEEDANCE_ASSIGN_OR_RETURN(
        field, entry.GetNumber(key, is_new ? std::nullopt : std::optional<double>(field), min));
    return base::OkStatus();
  };
  SEEDANCE_RETURN_IF_ERROR(str("name", gpu.name));
  SEEDANCE_RETURN_IF_ERROR(str("vendor", gpu.vendor));
  SEEDANCE_RETURN_IF_ERROR(str("form_factor", gpu.form_factor));
  SEEDANCE_RETURN_IF_ERROR(str("memory_type", gpu.memory_type));
  SEEDANCE_RETURN_IF_ERROR(num("memory_gb", gpu.memory_gb, 0.001));
  SEEDANCE_RETURN_IF_ERROR(
      num("memory_bandwidth_gbytes_per_s", gpu.memory_bandwidth_gbytes_per_s, 0.001));
  SEEDANCE_RETURN_IF_ERROR(num("tdp_watts", gpu.tdp_watts, 0.001));
  SEEDANCE_RETURN_IF_ERROR(num("price_per_hour_usd", gpu.price_per_hour_usd, 0.0));
  if (entry.Has("price_kind")) {
    SEEDANCE_ASSIGN_OR_RETURN(const std::string kind, entry.GetString("price_kind"));
    SEEDANCE_ASSIGN_OR_RETURN(gpu.price_kind, ParsePriceKind(kind, entry.Where("price_kind")));
  } else if (is_new || entry.Has("price_per_hour_usd")) {
    gpu.price_kind = PriceKind::kOwn;  // a price from the user's list, of no stated kind
  }
  SEEDANCE_RETURN_IF_ERROR(str("price_date", gpu.price_date));
  SEEDANCE_RETURN_IF_ERROR(CheckDate(entry, gpu.price_date));
  SEEDANCE_RETURN_IF_ERROR(str("price_source", gpu.price_source));
  SEEDANCE_RETURN_IF_ERROR(str("datasheet", gpu.datasheet));
  if (is_new && !entry.Has("dense_tflops")) {
    return base::InvalidArgumentError(
        "missing required key '" + entry.KeyPath("dense_tflops") + "' for new GPU '" + gpu.id + "'",
        entry.WhereSelf());
  }
  SEEDANCE_RETURN_IF_ERROR(ReadPeaks(entry, "dense_tflops", gpu.dense_tflops));
  SEEDANCE_RETURN_IF_ERROR(ReadPeaks(entry, "sparse_tflops", gpu.sparse_tflops));
  return base::OkStatus();
}

Report PeaksToReport(const PeakTable& peaks) {
  Report out = Report::object();
  for (NumericFormat f : base::kAllNumericFormats) {
    const auto& v = peaks[static_cast<size_t>(f)];
    out[std::string(base::NumericFormatName(f))] = v ? Report(*v) : Report(nullptr);
  }
  return out;
}

}  // namespace

std::string_view PriceKindName(PriceKind kind) { return base::EnumName(kPriceKindNames, kind); }

base::StatusOr<PriceKind> ParsePriceKind(std::string_view text, std::string_view where) {
  return base::ParseEnum(kPriceKindNames, text, where);
}

std::vector<PriceKind> PriceKinds(const std::vector<GpuSpec>& gpus) {
  std::vector<PriceKind> kinds;
  for (const GpuSpec& g : gpus) {
    if (std::find(kinds.begin(), kinds.end(), g.price_kind) == kinds.end()) {
      kinds.push_back(g.price_kind);
    }
  }
  return kinds;
}

const GpuCatalog& GpuCatalog::BuiltIn() {
  static const GpuCatalog* catalog = [] {
    auto* c = new GpuCatalog();
    c->gpus_ = internal::BuiltInGpus();
    return c;
  }();
  return *catalog;
}

StatusOr<GpuCatalog> GpuCatalog::WithOverrides(const GpuCatalog& base_catalog,
                                               std::string_view yaml, const std::string& file) {
  SEEDANCE_ASSIGN_OR_RETURN(YAML::Node root, base::ParseYaml(yaml, file));
  SEEDANCE_ASSIGN_OR_RETURN(YamlMap doc, YamlMap::FromNode(root, file, ""));
  SEEDANCE_RETURN_IF_ERROR(doc.CheckKeys({"gpus"}));
  SEEDANCE_ASSIGN_OR_RETURN(std::vector<YamlMap> entries, doc.GetMapList("gpus"));
  GpuCatalog out = base_catalog;
  // Ids compare case-insensitively; both look-ups are hashed, so a file of n entries costs O(n)
  // (a linear search per entry made 8,000 entries quadratic: hardening finding 11).
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < out.gpus_.size(); ++i) index.emplace(AsciiLower(out.gpus_[i].id), i);
  std::unordered_set<std::string> seen;
  for (const YamlMap& entry : entries) {
    if (entry.Has("memory_bandwidth_gbps")) {  // the old, ambiguous spelling
      return base::InvalidArgumentError(
          "memory_bandwidth_gbps is now memory_bandwidth_gbytes_per_s (GB/s)",
          entry.Where("memory_bandwidth_gbps"));
    }
    SEEDANCE_RETURN_IF_ERROR(entry.CheckKeys(
        {"id", "name", "vendor", "form_factor", "memory_gb", "memory_type",
         "memory_bandwidth_gbytes_per_s", "dense_tflops", "sparse_tflops", "tdp_watts",
         "price_per_hour_usd", "price_kind", "price_date", "price_source", "datasheet"}));
    SEEDANCE_ASSIGN_OR_RETURN(std::string id, entry.GetString("id"));
    const std::string key = AsciiLower(id);
    if (!seen.insert(key).second) {
      return base::InvalidArgumentError("GPU '" + id + "' appears twice in the catalog file",
                                        entry.Where("id"));
    }
    if (auto it = index.find(key); it != index.end()) {
      SEEDANCE_RETURN_IF_ERROR(ApplyEntry(entry, /*is_new=*/false, out.gpus_[it->second]));
    } else {
      GpuSpec gpu;
      gpu.id = id;
      SEEDANCE_RETURN_IF_ERROR(ApplyEntry(entry, /*is_new=*/true, gpu));
      index.emplace(key, out.gpus_.size());
      out.gpus_.push_back(std::move(gpu));
    }
  }
  return out;
}

const GpuSpec* GpuCatalog::Find(std::string_view id) const {
  for (const GpuSpec& g : gpus_) {
    if (EqualsIgnoreCase(g.id, id)) return &g;
  }
  return nullptr;
}

StatusOr<const GpuSpec*> GpuCatalog::Get(std::string_view id) const {
  if (const GpuSpec* g = Find(id)) return g;
  return base::NotFoundError("unknown GPU model '" + std::string(id) + "' (known: " + IdList() +
                             ")");
}

std::string GpuCatalog::IdList() const {
  std::string out;
  for (const GpuSpec& g : gpus_) out += (out.empty() ? "" : ", ") + g.id;
  return out;
}

Report CatalogReport(const GpuCatalog& catalog) {
  Report r = Report::object();
  r["gpus"] = Report::array();
  for (const auto& g : catalog.gpus()) r["gpus"].push_back(GpuSpecToReport(g));
  r["note"] =
      "dense_tflops are peaks without 2:4 sparsity (sparse_tflops with it); prices are reported "
      "prices of the kind given by price_kind, from price_source";
  if (PriceKinds(catalog.gpus()).size() > 1) {
    r["price_warning"] =
        "the prices are of different kinds (price_kind): compare GPUs on prices of one kind";
  }
  return r;
}

Report CatalogTableView(const Report& catalog_report) {
  static constexpr std::string_view kBefore[] = {"id", "memory_gb",
                                                 "memory_bandwidth_gbytes_per_s"};
  static constexpr std::string_view kPeaks[] = {"fp32", "bf16", "fp16", "fp8"};
  static constexpr std::string_view kAfter[] = {"tdp_watts", "price_per_hour_usd", "price_kind",
                                                "price_date"};
  Report r = catalog_report;
  r["gpus"] = Report::array();
  for (const Report& gpu : catalog_report.at("gpus")) {
    Report row = Report::object();
    for (std::string_view key : kBefore) row[key] = gpu.at(key);
    row["dense_tflops"] = Report::object();
    for (std::string_view f : kPeaks) row["dense_tflops"][f] = gpu.at("dense_tflops").at(f);
    for (std::string_view key : kAfter) row[key] = gpu.at(key);
    r["gpus"].push_back(row);
  }
  return r;
}

Report GpuSpecToReport(const GpuSpec& gpu) {
  Report r = Report::object();
  r["id"] = gpu.id;
  r["name"] = gpu.name;
  r["vendor"] = gpu.vendor;
  r["form_factor"] = gpu.form_factor;
  r["memory_gb"] = gpu.memory_gb;
  r["memory_type"] = gpu.memory_type;
  r["memory_bandwidth_gbytes_per_s"] = gpu.memory_bandwidth_gbytes_per_s;
  r["dense_tflops"] = PeaksToReport(gpu.dense_tflops);
  r["sparse_tflops"] = PeaksToReport(gpu.sparse_tflops);
  r["tdp_watts"] = gpu.tdp_watts;
  r["price_per_hour_usd"] = gpu.price_per_hour_usd;
  r["price_kind"] = PriceKindName(gpu.price_kind);
  r["price_date"] = gpu.price_date;
  r["price_source"] = gpu.price_source;
  r["datasheet"] = gpu.datasheet;
  return r;
}

}  // namespace seedance::cost
