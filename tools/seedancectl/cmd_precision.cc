// `seedancectl precision show VALUE...`: each value's code and decoded value
// in FP16, BF16, FP8 E4M3 and E5M2, with and without saturation (SPEC PREC-1).
#include "seedance/precision/inspect.h"
#include "tools/seedancectl/cli.h"

namespace seedance::cli {
namespace {

// One line per value and format for the table view.
base::Report TableView(const base::Report& values) {
  base::Report rows = base::Report::array();
  for (const auto& v : values) {
    for (const auto& [name, f] : v["formats"].items()) {
      rows.push_back({{"input", v["input"]},
                      {"format", name},
                      {"code", f["code"]},
                      {"value", f["value"]},
                      {"saturated_code", f["saturated_code"]},
                      {"saturated_value", f["saturated_value"]}});
    }
  }
  base::Report r;
  r["values"] = rows;
  return r;
}

}  // namespace

void RegisterPrecision(CLI::App& app, Context& context) {
  CLI::App* noun = app.add_subcommand("precision", "Number formats of mixed precision");
  noun->require_subcommand(1);
  struct Flags {
    std::vector<std::string> values;
    std::string output;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* show = noun->add_subcommand(
      "show",
      "Show how values encode in fp16, bf16, fp8_e4m3 and fp8_e5m2 (RNE; saturated or not)");
  show->add_option("values", flags->values, "Numbers: 464, 1e-8, 0x1p-9, nan, inf, -inf")
      ->required();
  AddOutputFlag(show, &flags->output);
  show->callback([flags, &context] {
    base::Report values = base::Report::array();
    for (size_t i = 0; i < flags->values.size(); ++i) {
      auto x = precision::ParseValue(flags->values[i]);
      if (Failed(x.status().WithWhere("value " + std::to_string(i + 1)), context)) return;
      values.push_back(precision::DescribeValue(flags->values[i], *x));
    }
    if (flags->output == "json") {
      base::Report r;
      r["values"] = values;
      context.exit_code = PrintReport(r, flags->output);
    } else {
      context.exit_code = PrintReport(TableView(values), flags->output);
    }
  });
}

}  // namespace seedance::cli
