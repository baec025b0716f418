// `seedancectl diagnose` (feature PROBE-6): the degradation pattern of a cluster, named from the
// /metrics text of its etcd, kube-apiserver, kube-scheduler, kubelets and node exporters
// (k8s/diagnose.h); exit 1 when a pattern matches.
#include <optional>

#include "seedance/base/env.h"
#include "seedance/base/parse.h"
#include "seedance/k8s/diagnose.h"
#include "seedance/k8s/kube_client.h"
#include "seedance/k8s/scrape.h"
#include "tools/seedancectl/cli.h"

namespace seedance::cli {

void RegisterDiagnose(CLI::App& app, Context& context) {
  struct Flags {
    std::vector<std::string> metrics;
    std::string window, output, cacert, token_file;
    bool insecure = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand(
      "diagnose",
      "Name a cluster's degradation pattern (slow etcd disk, leader churn, slow API server or "
      "scheduler, slow pod starts, RDMA drops) from Prometheus metrics, with the command that "
      "confirms it; exit 1 when one matches or a check has nothing to judge");
  cmd->add_option("--metrics", f->metrics,
                  "A file or http(s):// URL of Prometheus text (repeatable: etcd, kube-apiserver, "
                  "kube-scheduler, kubelet, node exporter)")
      ->required();
  cmd->add_option("--window", f->window,
                  "Scrape every URL twice this far apart (10s, 1m) and judge the increase; "
                  "without it, totals since each process started");
  cmd->add_option("--cacert", f->cacert, "https: the CA certificate to verify servers with")
      ->check(CLI::ExistingFile);
  cmd->add_option("--token-file", f->token_file,
                  "https: a file holding a bearer token (kube-apiserver's /metrics)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--insecure", f->insecure, "https: do not verify the server's certificate");
  AddOutputFlag(cmd, &f->output);
  cmd->callback([f, &context] {
    base::Env& env = *base::Env::Default();
    double window = 0;
    if (!f->window.empty()) {
      const std::optional<double> s = base::ParseDurationSeconds(f->window);
      if (!s || *s <= 0 || *s > 3600) {
        Failed(
            base::InvalidArgumentError(
                "expected a duration above 0 and up to 1h like 10s or 1m, got '" + f->window + "'",
                "--window"),
            context);
        return;
      }
      window = *s;
    }
    k8s::ScrapeOptions o;
    o.ca_file = f->cacert;
    o.insecure = f->insecure;
    if (!f->token_file.empty()) {
      auto token = k8s::ReadTokenFile(env, f->token_file);
      if (Failed(token.status(), context)) return;
      o.bearer_token = *token;
    }
    auto sources = k8s::CollectMetrics(env, f->metrics, window, o);
    if (Failed(WithFlag(sources.status(), {{"metrics", "--metrics"}}), context)) return;
    auto d = k8s::DiagnoseCluster(*sources);
    if (Failed(d.status(), context)) return;
    context.exit_code = PrintReport(k8s::DiagnosisToReport(*d), f->output);
    if (context.exit_code == 0 && (!d->findings.empty() || k8s::Undetermined(*d))) {
      context.exit_code = kExitFailure;
    }
  });
}

}  // namespace seedance::cli
