// `seedancectl precision show VALUE...`: each value's code and decoded value
// in FP16, BF16, FP8 E4M3 and E5M2, with and without saturation (feature PREC-1).
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
  // The values are taken in order from what CLI11 leaves unparsed, not from a positional option:
  // a positional cannot hold "-inf" or "-0x1p-9", which CLI11 reads as short options.
  show->allow_extras();
  show->positionals_at_end(false);
  show->footer(
      "VALUES: one or more numbers, e.g. 464 1e-8 0x1p-9 nan inf -inf -0x1p-9 (a value that "
      "starts with '-' is a number too)");
  AddOutputFlag(show, &flags->output);
  show->callback([show, flags, &context] {
    flags->values = show->remaining();
    if (flags->values.empty()) {
      Failed(base::InvalidArgumentError("expected one or more numbers", "command line: VALUES"),
             context);
      context.exit_code = kExitUsage;
      return;
    }
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
