// `seedancectl catalog list`: the GPU catalog (feature COST-1, data half).
#include "tools/seedancectl/cli.h"

namespace seedance::cli {

void RegisterCatalog(CLI::App& app, Context& context) {
  CLI::App* noun = app.add_subcommand("catalog", "The GPU catalog");
  noun->require_subcommand(1);
  auto output = std::make_shared<std::string>();
  CLI::App* list = noun->add_subcommand("list", "List the GPUs, their peaks and prices");
  AddOutputFlag(list, output.get());
  list->callback([output, &context] {
    auto catalog = LoadCatalog(context);
    if (Failed(catalog.status(), context)) return;
    const base::Report report = cost::CatalogReport(*catalog);
    context.exit_code =
        PrintReport(*output == "json" ? report : cost::CatalogTableView(report), *output);
  });
}

}  // namespace seedance::cli
