// `seedancectl catalog list`: the GPU catalog (feature COST-1, data half).
#include "seedance/base/numeric_format.h"
#include "tools/seedancectl/cli.h"

namespace seedance::cli {
namespace {

base::Report Peak(const cost::GpuSpec& gpu, base::NumericFormat f) {
  auto v = gpu.DenseTflops(f);
  return v ? base::Report(*v) : base::Report(nullptr);
}

// The table view: one line per GPU with the figures people compare first.
// JSON carries every field.
base::Report TableView(const cost::GpuCatalog& catalog) {
  base::Report rows = base::Report::array();
  for (const auto& g : catalog.gpus()) {
    rows.push_back({{"id", g.id},
                    {"memory_gb", g.memory_gb},
                    {"memory_bandwidth_gbytes_per_s", g.memory_bandwidth_gbytes_per_s},
                    {"fp32_tflops", Peak(g, base::NumericFormat::kFp32)},
                    {"bf16_tflops", Peak(g, base::NumericFormat::kBf16)},
                    {"fp16_tflops", Peak(g, base::NumericFormat::kFp16)},
                    {"fp8_tflops", Peak(g, base::NumericFormat::kFp8)},
                    {"tdp_watts", g.tdp_watts},
                    {"price_per_hour_usd", g.price_per_hour_usd},
                    {"price_kind", cost::PriceKindName(g.price_kind)},
                    {"price_date", g.price_date}});
  }
  base::Report r;
  r["gpus"] = rows;
  r["note"] =
      "dense peaks (no 2:4 sparsity); prices are reported prices of the kind shown, with "
      "their sources in --output json";
  if (cost::PriceKinds(catalog.gpus()).size() > 1) {
    r["price_warning"] =
        "the prices are of different kinds (price_kind): compare GPUs on prices of one kind";
  }
  return r;
}

}  // namespace

void RegisterCatalog(CLI::App& app, Context& context) {
  CLI::App* noun = app.add_subcommand("catalog", "The GPU catalog");
  noun->require_subcommand(1);
  auto output = std::make_shared<std::string>();
  CLI::App* list = noun->add_subcommand("list", "List the GPUs, their peaks and prices");
  AddOutputFlag(list, output.get());
  list->callback([output, &context] {
    auto catalog = LoadCatalog(context);
    if (Failed(catalog.status(), context)) return;
    if (*output == "json") {
      base::Report r;
      r["gpus"] = base::Report::array();
      for (const auto& g : catalog->gpus()) r["gpus"].push_back(cost::GpuSpecToReport(g));
      context.exit_code = PrintReport(r, *output);
    } else {
      context.exit_code = PrintReport(TableView(*catalog), *output);
    }
  });
}

}  // namespace seedance::cli
