#include "seedance/cost/tco.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "seedance/base/enum_names.h"
#include "seedance/base/yaml_map.h"

namespace seedance::cost {
namespace {

using base::Report;
using base::YamlMap;

constexpr base::EnumTable<Ownership, 2> kOwnershipNames = {
    {{Ownership::kRented, "rented"}, {Ownership::kOwned, "owned"}}};
constexpr double kMaxTcoUsd = 1e9;

// A number that must be > 0 (GetNumber's ranges are inclusive).
base::StatusOr<double> Positive(const YamlMap& m, std::string_view key,
                                std::optional<double> fallback, double max) {
  SEEDANCE_ASSIGN_OR_RETURN(const double v, m.GetNumber(key, fallback, 0, max));
  if (v <= 0) {
    return base::InvalidArgumentError("'" + m.KeyPath(key) + "' must be greater than 0, got 0",
                                      m.Where(key));
  }
  return v;
}

base::Status ReadOwned(const YamlMap& m, TcoSpec& s) {
  SEEDANCE_RETURN_IF_ERROR(
      m.CheckKeys({"purchase_price_usd", "life_years", "residual_fraction", "hours_per_year",
                   "host_share", "network_share", "storage_share", "colocation_usd_per_kw_month"}));
  SEEDANCE_ASSIGN_OR_RETURN(s.purchase_price_usd,
                            Positive(m, "purchase_price_usd", std::nullopt, kMaxTcoUsd));
  SEEDANCE_ASSIGN_OR_RETURN(s.life_years, Positive(m, "life_years", std::nullopt, 100));
  SEEDANCE_ASSIGN_OR_RETURN(s.residual_fraction,
                            m.GetNumber("residual_fraction", s.residual_fraction, 0, 1));
  SEEDANCE_ASSIGN_OR_RETURN(s.hours_per_year,
                            Positive(m, "hours_per_year", s.hours_per_year, 8784));
  SEEDANCE_ASSIGN_OR_RETURN(s.host_share, m.GetNumber("host_share", s.host_share, 0, 100));
  SEEDANCE_ASSIGN_OR_RETURN(s.network_share, m.GetNumber("network_share", s.network_share, 0, 100));
  SEEDANCE_ASSIGN_OR_RETURN(s.storage_share, m.GetNumber("storage_share", s.storage_share, 0, 100));
  SEEDANCE_ASSIGN_OR_RETURN(
      s.colocation_usd_per_kw_month,
      m.GetNumber("colocation_usd_per_kw_month", s.colocation_usd_per_kw_month, 0, kMaxTcoUsd));
  return base::OkStatus();
}

base::Status ReadPower(const YamlMap& m, TcoSpec& s) {
  SEEDANCE_RETURN_IF_ERROR(m.CheckKeys({"busy_fraction", "gpus_per_node", "cpu_utilization_pct",
                                        "memory_bandwidth_gbytes_per_s", "nvme_kiops",
                                        "price_per_kwh_usd", "coefficients"}));
  SEEDANCE_ASSIGN_OR_RETURN(s.busy_fraction, m.GetNumber("busy_fraction", s.busy_fraction, 0, 1));
  SEEDANCE_ASSIGN_OR_RETURN(const int64_t per_node,
                            m.GetInt("gpus_per_node", s.gpus_per_node, 1, 1024));
  s.gpus_per_node = static_cast<int>(per_node);
  SEEDANCE_ASSIGN_OR_RETURN(s.cpu_utilization_pct,
                            m.GetNumber("cpu_utilization_pct", s.cpu_utilization_pct, 0, 100));
  SEEDANCE_ASSIGN_OR_RETURN(
      s.memory_bandwidth_gbytes_per_s,
      m.GetNumber("memory_bandwidth_gbytes_per_s", s.memory_bandwidth_gbytes_per_s, 0, 1e6));
  SEEDANCE_ASSIGN_OR_RETURN(s.nvme_kiops, m.GetNumber("nvme_kiops", s.nvme_kiops, 0, 1e6));
  SEEDANCE_ASSIGN_OR_RETURN(s.price_per_kwh_usd,
                            m.GetNumber("price_per_kwh_usd", s.price_per_kwh_usd, 0, 100));
  SEEDANCE_ASSIGN_OR_RETURN(auto coefficients, m.GetOptionalMap("coefficients"));
  if (coefficients) {
    SEEDANCE_ASSIGN_OR_RETURN(s.power, ReadPowerCoefficients(*coefficients));
  }
  return base::OkStatus();
}

// The breakdown per GPU-hour and what each term rests on: no term is 0 without saying why.
void AddBreakdown(const TcoSpec& s, const TcoBreakdown& t, Report& r) {
  Report usd = Report::object(), basis = Report::object();
  auto add = [&](const char* term, double value, const std::string& why) {
    usd[std::string(term) + "_usd"] = value;
    basis[term] = why;
  };
  auto given = [](const std::optional<double>& v) { return v.has_value(); };
  if (s.ownership == Ownership::kRented) {
    add("rent", t.compute_usd_per_gpu_hour,
        s.price_per_gpu_hour_usd ? "your price" : "the catalog's price");
    add("power", 0, "in the rent (its energy is under derived)");
    add("network", t.network_usd_per_gpu_hour,
        given(s.network_usd_per_gpu_hour) ? "other_usd_per_gpu_hour.network"
                                          : "in the instance price (its fabric)");
    add("storage", t.storage_usd_per_gpu_hour,
        given(s.storage_usd_per_gpu_hour) ? "other_usd_per_gpu_hour.storage"
                                          : "not charged: local disk is in the price; shared "
                                            "storage is other_usd_per_gpu_hour.storage");
    add("operations", t.operations_usd_per_gpu_hour,
        given(s.operations_usd_per_gpu_hour)
            ? "other_usd_per_gpu_hour.operations"
            : "not charged: give other_usd_per_gpu_hour.operations");
  } else {
    add("depreciation", t.compute_usd_per_gpu_hour, "the GPU: purchase_price_usd, depreciated");
    add("host", t.host_usd_per_gpu_hour, "owned.host_share of the GPU's price, depreciated");
    add("network", t.network_usd_per_gpu_hour,
        given(s.network_usd_per_gpu_hour) ? "other_usd_per_gpu_hour.network"
                                          : "owned.network_share of the server, depreciated");
    add("storage", t.storage_usd_per_gpu_hour,
        given(s.storage_usd_per_gpu_hour) ? "other_usd_per_gpu_hour.storage"
                                          : "owned.storage_share of the server, depreciated");
    add("colocation", t.colocation_usd_per_gpu_hour,
        "IT kW per GPU x owned.colocation_usd_per_kw_month");
    add("power", t.power_usd_per_gpu_hour, "facility kWh per GPU-hour x price_per_kwh_usd");
    add("operations", t.operations_usd_per_gpu_hour, "other_usd_per_gpu_hour.operations");
  }
  usd["total_usd"] = t.total_usd_per_gpu_hour;
  r["per_gpu_hour"] = std::move(usd);
  r["basis"] = std::move(basis);
}

// The hours a year's cost counts: an owned GPU's hours_per_year (its capital is spread over
// them), a rented one's whole year.
double YearHours(const TcoSpec& s) {
  return s.ownership == Ownership::kOwned ? s.hours_per_year : 8760.0;
}

// "$0.514", "$6.88", "$699,911", "$1.25 million".
std::string UsdText(double v) {
  char buf[64];
  if (v >= 1e6) {
    std::snprintf(buf, sizeof(buf), "$%.2f million", v / 1e6);
    return buf;
  }
  if (v >= 1000) {
    std::snprintf(buf, sizeof(buf), "%.0f", v);
    std::string digits = buf, out;
    for (size_t i = 0; i < digits.size(); ++i) {
      if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
      out += digits[i];
    }
    return "$" + out;
  }
  std::snprintf(buf, sizeof(buf), v >= 100 ? "$%.0f" : v >= 1 ? "$%.2f" : "$%.3g", v);
  return buf;
}

// The answer in a few lines: the cost of a GPU-hour, of a PFLOP-hour at the stated utilization,
// of the cluster for a year, and the terms that weigh most.
Report TcoVerdict(const TcoSpec& s, const TcoBreakdown& t, const GpuSpec& gpu) {
  Report out = Report::array();
  const bool owned = s.ownership == Ownership::kOwned;
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "%s %s: %s per GPU-hour; %s per PFLOP-hour at %.0f%% of the %s "
                "dense peak.",
                owned ? "Owned" : "Rented", gpu.id.c_str(),
                UsdText(t.total_usd_per_gpu_hour).c_str(), UsdText(t.usd_per_pflop_hour).c_str(),
                s.utilization * 100, std::string(base::NumericFormatName(s.precision)).c_str());
  out.push_back(buf);
  const double hours = YearHours(s);
  std::snprintf(buf, sizeof(buf), "%lld GPU%s: %s per hour, %s per year (%s hours).",
                static_cast<long long>(s.gpus), s.gpus == 1 ? "" : "s",
                UsdText(t.total_usd_per_gpu_hour * static_cast<double>(s.gpus)).c_str(),
                UsdText(t.total_usd_per_gpu_hour * static_cast<double>(s.gpus) * hours).c_str(),
                UsdText(hours).substr(1).c_str());
  out.push_back(buf);
  if (t.usd_per_million_tokens) {
    out.push_back("Serving: " + UsdText(*t.usd_per_million_tokens) + " per million tokens, " +
                  UsdText(*t.usd_per_1k_requests) + " per 1,000 requests.");
  }
  std::vector<std::pair<double, const char*>> terms = {
      {t.compute_usd_per_gpu_hour, owned ? "GPU depreciation" : "rent"},
      {t.host_usd_per_gpu_hour, "host"},
      {t.network_usd_per_gpu_hour, "network"},
      {t.storage_usd_per_gpu_hour, "storage"},
      {t.colocation_usd_per_gpu_hour, "colocation"},
      {t.power_usd_per_gpu_hour, "power"},
      {t.operations_usd_per_gpu_hour, "operations"}};
  std::sort(terms.begin(), terms.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string line = "Largest terms:";
  for (size_t i = 0; i < 3 && i < terms.size() && terms[i].first > 0; ++i) {
    std::snprintf(buf, sizeof(buf), "%s %s %s (%.0f%%)", i == 0 ? "" : ",", terms[i].second,
                  UsdText(terms[i].first).c_str(), 100 * terms[i].first / t.total_usd_per_gpu_hour);
    line += buf;
  }
  out.push_back(line + ".");
  if (!owned) {
    out.push_back(s.price_per_gpu_hour_usd
                      ? std::string("Price: yours (the input file).")
                      : "Price: the catalog's " + std::string(PriceKindName(gpu.price_kind)) +
                            " price of " + gpu.price_date + " (" + gpu.price_source + ").");
  }
  return out;
}

}  // namespace

std::string_view OwnershipName(Ownership o) { return base::EnumName(kOwnershipNames, o); }

base::StatusOr<TcoSpec> ParseTcoSpec(std::string_view yaml, const std::string& file,
                                     const GpuCatalog& catalog) {
  SEEDANCE_ASSIGN_OR_RETURN(YAML::Node root, base::ParseYaml(yaml, file));
  SEEDANCE_ASSIGN_OR_RETURN(YamlMap doc, YamlMap::FromNode(root, file, ""));
  SEEDANCE_RETURN_IF_ERROR(doc.CheckKeys({"gpu", "gpus", "precision", "utilization", "ownership",
                                          "price_per_gpu_hour_usd", "owned", "power",
                                          "other_usd_per_gpu_hour", "serving"}));
  TcoSpec s;
  SEEDANCE_ASSIGN_OR_RETURN(s.gpu, doc.GetString("gpu", s.gpu));
  auto gpu = catalog.Get(s.gpu);
  if (!gpu.ok()) return gpu.status().WithWhere(doc.Where("gpu"));
  s.gpu = (*gpu)->id;
  SEEDANCE_ASSIGN_OR_RETURN(s.gpus, doc.GetInt("gpus", s.gpus, 1, 10'000'000));
  SEEDANCE_ASSIGN_OR_RETURN(const std::string precision,
                            doc.GetString("precision", std::string("bf16")));
  auto format = base::ParseNumericFormat(precision, doc.Where("precision"));
  if (!format.ok()) return format.status();
  s.precision = *format;
  if (!(*gpu)->DenseTflops(s.precision)) {
    return base::InvalidArgumentError((*gpu)->id + " has no published dense peak at " + precision,
                                      doc.Where("precision"));
  }
  SEEDANCE_ASSIGN_OR_RETURN(s.utilization, Positive(doc, "utilization", s.utilization, 1));
  const std::string_view kOwnership[] = {"rented", "owned"};
  SEEDANCE_ASSIGN_OR_RETURN(const std::string ownership,
                            doc.GetChoice("ownership", kOwnership, std::string("rented")));
  s.ownership = ownership == "owned" ? Ownership::kOwned : Ownership::kRented;
  if (s.ownership == Ownership::kOwned) {
    if (doc.Has("price_per_gpu_hour_usd")) {
      return base::InvalidArgumentError(
          "price_per_gpu_hour_usd is for rented GPUs; an owned GPU's cost comes from 'owned'",
          doc.Where("price_per_gpu_hour_usd"));
    }
    if (!doc.Has("owned")) {
      return base::InvalidArgumentError(
          "ownership owned needs 'owned' with purchase_price_usd and life_years",
          doc.Where("ownership"));
    }
    SEEDANCE_ASSIGN_OR_RETURN(YamlMap owned, doc.GetMap("owned"));
    SEEDANCE_RETURN_IF_ERROR(ReadOwned(owned, s));
  } else {
    if (doc.Has("owned")) {
      return base::InvalidArgumentError("'owned' needs ownership: owned", doc.Where("owned"));
    }
    if (doc.Has("price_per_gpu_hour_usd")) {
      SEEDANCE_ASSIGN_OR_RETURN(
          s.price_per_gpu_hour_usd,
          doc.GetNumber("price_per_gpu_hour_usd", std::nullopt, 0, kMaxTcoUsd));
    }
  }
  SEEDANCE_ASSIGN_OR_RETURN(auto power, doc.GetOptionalMap("power"));
  if (power) SEEDANCE_RETURN_IF_ERROR(ReadPower(*power, s));
  SEEDANCE_ASSIGN_OR_RETURN(auto other, doc.GetOptionalMap("other_usd_per_gpu_hour"));
  if (other) {
    SEEDANCE_RETURN_IF_ERROR(other->CheckKeys({"network", "storage", "operations"}));
    const struct {
      const char* key;
      std::optional<double>* value;
    } terms[] = {{"network", &s.network_usd_per_gpu_hour},
                 {"storage", &s.storage_usd_per_gpu_hour},
                 {"operations", &s.operations_usd_per_gpu_hour}};
    for (const auto& term : terms) {
      if (!other->Has(term.key)) continue;
      SEEDANCE_ASSIGN_OR_RETURN(*term.value,
                                other->GetNumber(term.key, std::nullopt, 0, kMaxTcoUsd));
    }
  }
  if (s.ownership == Ownership::kOwned && !s.operations_usd_per_gpu_hour) {
    return base::InvalidArgumentError(
        "an owned GPU's operations (staff, support contracts, spares) have no neutral published "
        "figure: give other_usd_per_gpu_hour.operations (0 if you truly count none)",
        other ? other->WhereSelf() : doc.Where("ownership"));
  }
  SEEDANCE_ASSIGN_OR_RETURN(auto serving, doc.GetOptionalMap("serving"));
  if (serving) {
    SEEDANCE_RETURN_IF_ERROR(serving->CheckKeys({"tokens_per_request", "tokens_per_s_per_gpu"}));
    SEEDANCE_ASSIGN_OR_RETURN(s.tokens_per_request,
                              Positive(*serving, "tokens_per_request", std::nullopt, 1e9));
    SEEDANCE_ASSIGN_OR_RETURN(s.tokens_per_s_per_gpu,
                              Positive(*serving, "tokens_per_s_per_gpu", std::nullopt, 1e12));
  }
  return s;
}

base::StatusOr<TcoBreakdown> ComputeTco(const TcoSpec& s, const GpuCatalog& catalog) {
  SEEDANCE_ASSIGN_OR_RETURN(const GpuSpec* gpu, catalog.Get(s.gpu));
  const auto peak = gpu->DenseTflops(s.precision);
  if (!peak || *peak <= 0) {
    return base::InvalidArgumentError(gpu->id + " has no published dense peak at " +
                                          std::string(base::NumericFormatName(s.precision)),
                                      "precision");
  }
  TcoBreakdown t;
  // One GPU's share of its node's facility power.
  NodeLoad load;
  load.gpus = s.gpus_per_node;
  load.gpu_tdp_watts = gpu->tdp_watts;
  load.gpu_utilization = s.busy_fraction;
  load.cpu_utilization_pct = s.cpu_utilization_pct;
  load.memory_bandwidth_gbytes_per_s = s.memory_bandwidth_gbytes_per_s;
  load.nvme_kiops = s.nvme_kiops;
  const PowerBreakdown node = NodePower(s.power, load);
  t.facility_watts_per_gpu = node.facility_watts / s.gpus_per_node;
  t.energy_kwh_per_gpu_hour = t.facility_watts_per_gpu / 1000.0;
  t.network_usd_per_gpu_hour = s.network_usd_per_gpu_hour.value_or(0);
  t.storage_usd_per_gpu_hour = s.storage_usd_per_gpu_hour.value_or(0);
  t.operations_usd_per_gpu_hour = s.operations_usd_per_gpu_hour.value_or(0);
  if (s.ownership == Ownership::kRented) {
    t.compute_usd_per_gpu_hour = s.price_per_gpu_hour_usd.value_or(gpu->price_per_hour_usd);
  } else {
    // Capital, depreciated over the life to its residual value.
    const double per_hour = (1.0 - s.residual_fraction) / (s.life_years * s.hours_per_year);
    const double server = s.purchase_price_usd * (1 + s.host_share);
    t.compute_usd_per_gpu_hour = s.purchase_price_usd * per_hour;
    t.host_usd_per_gpu_hour = s.purchase_price_usd * s.host_share * per_hour;
    if (!s.network_usd_per_gpu_hour)
      t.network_usd_per_gpu_hour = server * s.network_share * per_hour;
    if (!s.storage_usd_per_gpu_hour)
      t.storage_usd_per_gpu_hour = server * s.storage_share * per_hour;
    // Space and cooling are rented by the kW of IT load (the facility's draw less its PUE).
    const double it_kw = t.facility_watts_per_gpu / s.power.pue / 1000.0;
    t.colocation_usd_per_gpu_hour = it_kw * s.colocation_usd_per_kw_month * 12 / s.hours_per_year;
    t.power_usd_per_gpu_hour = t.energy_kwh_per_gpu_hour * s.price_per_kwh_usd;
  }
  t.total_usd_per_gpu_hour = t.compute_usd_per_gpu_hour + t.host_usd_per_gpu_hour +
                             t.colocation_usd_per_gpu_hour + t.power_usd_per_gpu_hour +
                             t.network_usd_per_gpu_hour + t.storage_usd_per_gpu_hour +
                             t.operations_usd_per_gpu_hour;
  t.usd_per_pflop_hour = t.total_usd_per_gpu_hour / (*peak * s.utilization / 1000.0);
  if (s.tokens_per_request > 0 && s.tokens_per_s_per_gpu > 0) {
    const double requests_per_gpu_hour = s.tokens_per_s_per_gpu * 3600.0 / s.tokens_per_request;
    t.usd_per_1k_requests = t.total_usd_per_gpu_hour / (requests_per_gpu_hour / 1000.0);
    t.usd_per_million_tokens = t.total_usd_per_gpu_hour / (s.tokens_per_s_per_gpu * 3600.0 / 1e6);
  }
  // Inputs that each pass their own range can still combine past a double (a subnormal
  // utilization divides to inf): a cost that is not a finite number is an error naming what it
  // divides by, never an `inf` or a null printed with exit 0.
  const struct {
    const char* output;
    double value;
    const char* inputs;
  } outputs[] = {
      {"facility_watts_per_gpu", t.facility_watts_per_gpu, "gpus_per_node and the power inputs"},
      {"compute_usd_per_gpu_hour", t.compute_usd_per_gpu_hour,
       "the price, or purchase_price_usd / (life_years x hours_per_year)"},
      {"power_usd_per_gpu_hour", t.power_usd_per_gpu_hour, "price_per_kwh_usd"},
      {"total_usd_per_gpu_hour", t.total_usd_per_gpu_hour, "the per-GPU-hour costs"},
      {"usd_per_pflop_hour", t.usd_per_pflop_hour, "utilization"},
      {"usd_per_1k_requests", t.usd_per_1k_requests.value_or(0),
       "tokens_per_s_per_gpu, tokens_per_request"},
      {"usd_per_million_tokens", t.usd_per_million_tokens.value_or(0), "tokens_per_s_per_gpu"},
  };
  for (const auto& o : outputs) {
    if (std::isfinite(o.value)) continue;
    return base::InvalidArgumentError(std::string(o.output) +
                                          " is not a finite number: an input is too small or "
                                          "too large for it (it divides by " +
                                          o.inputs + ")",
                                      o.output);
  }
  return t;
}

base::StatusOr<base::Report> TcoReport(const TcoSpec& s, const GpuCatalog& catalog) {
  SEEDANCE_ASSIGN_OR_RETURN(const GpuSpec* gpu, catalog.Get(s.gpu));
  SEEDANCE_ASSIGN_OR_RETURN(const TcoBreakdown t, ComputeTco(s, catalog));
  Report r = Report::object();
  r["verdict"] = TcoVerdict(s, t, *gpu);
  Report in = Report::object();
  in["gpu"] = gpu->id;
  in["gpus"] = s.gpus;
  in["precision"] = base::NumericFormatName(s.precision);
  in["dense_peak_tflops"] = *gpu->DenseTflops(s.precision);
  in["utilization"] = s.utilization;
  in["ownership"] = OwnershipName(s.ownership);
  if (s.ownership == Ownership::kRented) {
    in["price_per_gpu_hour_usd"] = t.compute_usd_per_gpu_hour;
    if (s.price_per_gpu_hour_usd) {
      in["price_kind"] = "own";
      in["price_source"] = "the input file";
    } else {
      in["price_kind"] = PriceKindName(gpu->price_kind);
      in["price_date"] = gpu->price_date;
      in["price_source"] = gpu->price_source;
    }
  } else {
    in["purchase_price_usd"] = s.purchase_price_usd;
    in["life_years"] = s.life_years;
    in["residual_fraction"] = s.residual_fraction;
    in["hours_per_year"] = s.hours_per_year;
    in["host_share"] = s.host_share;
    in["network_share"] = s.network_share;
    in["storage_share"] = s.storage_share;
    in["colocation_usd_per_kw_month"] = s.colocation_usd_per_kw_month;
    in["price_per_kwh_usd"] = s.price_per_kwh_usd;
  }
  in["pue"] = s.power.pue;
  in["busy_fraction"] = s.busy_fraction;
  in["gpu_idle_fraction"] = s.power.gpu_idle_fraction;
  r["inputs"] = std::move(in);
  AddBreakdown(s, t, r);
  Report d = Report::object();
  d["facility_watts_per_gpu"] = t.facility_watts_per_gpu;
  d["energy_kwh_per_gpu_hour"] = t.energy_kwh_per_gpu_hour;
  d["power_charged"] = s.ownership == Ownership::kOwned;
  d["usd_per_pflop_hour"] = t.usd_per_pflop_hour;
  d["usd_per_1k_requests"] = t.usd_per_1k_requests ? Report(*t.usd_per_1k_requests) : Report();
  d["usd_per_million_tokens"] =
      t.usd_per_million_tokens ? Report(*t.usd_per_million_tokens) : Report();
  d["cluster_usd_per_hour"] = t.total_usd_per_gpu_hour * static_cast<double>(s.gpus);
  d["cluster_usd_per_year"] = t.total_usd_per_gpu_hour * static_cast<double>(s.gpus) * YearHours(s);
  d["cluster_energy_mwh_per_year"] =
      t.energy_kwh_per_gpu_hour * static_cast<double>(s.gpus) * YearHours(s) / 1000.0;
  r["derived"] = std::move(d);
  return r;
}

}  // namespace seedance::cost
