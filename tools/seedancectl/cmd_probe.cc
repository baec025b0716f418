// `seedancectl probe`: samples host and GPU metrics (feature PROBE-1), prints
// them with findings (PROBE-3), or serves them to Prometheus (PROBE-2).
#include <cstdio>
#include <iostream>

#include "seedance/base/env.h"
#include "seedance/base/parse.h"
#include "seedance/base/report.h"
#include "seedance/probe/exporter.h"
#include "seedance/probe/gpu.h"
#include "seedance/probe/probe.h"
#include "seedance/probe/rules.h"
#include "seedance/probe/window.h"
#include "seedance/version.h"
#include "tools/seedancectl/cli.h"

namespace seedance::cli {
namespace {

// "5s", "500ms", "2m", "1.5s", "10" (seconds), between 10 ms and 24 h.
base::StatusOr<std::chrono::milliseconds> ParseDuration(const std::string& text,
                                                        const std::string& flag) {
  const std::optional<double> seconds = base::ParseDurationSeconds(text);
  if (!seconds || *seconds < 0.01 || *seconds > 86400) {
    return base::InvalidArgumentError(
        "expected a duration between 10ms and 24h like 5s, 500ms or 1m, got '" + text + "'", flag);
  }
  return std::chrono::milliseconds(static_cast<int64_t>(*seconds * 1000));
}

std::string LabelText(const probe::Value& v) {
  std::string s;
  for (const auto& [k, val] : v.labels) s += (s.empty() ? "{" : ",") + k + "=" + val;
  return s.empty() ? s : s + "}";
}

std::string FormatValue(const probe::Value& v) {
  char buf[64];
  if (v.unit == "B" || v.unit == "B/s") {
    std::string h = base::HumanBytes(v.value);
    return v.unit == "B/s" ? h + "/s" : h;
  }
  std::snprintf(buf, sizeof(buf), "%.1f %s", v.value, v.unit.c_str());
  return buf;
}

void PrintWindow(const probe::Snapshot& before, const probe::Snapshot& after,
                 const std::vector<probe::Value>& values,
                 const std::vector<probe::Finding>& findings, const std::string& output,
                 bool once) {
  if (output == "json") {
    const base::Report r = probe::WindowReport(before, after, values, findings);
    std::fputs(once ? base::RenderJson(r).c_str() : (base::DumpJson(r) + "\n").c_str(), stdout);
    std::fflush(stdout);
    return;
  }
  size_t width = 0;
  for (const auto& v : values) width = std::max(width, v.metric.size() + LabelText(v).size());
  for (const auto& v : values) {
    std::string name = v.metric + LabelText(v);
    name.resize(width + 2, ' ');
    std::printf("%s%s\n", name.c_str(), FormatValue(v).c_str());
  }
  for (const auto& f : findings) {
    std::printf("[%s] %s: %s -- %s\n", f.severity == "warning" ? "WARN" : "INFO", f.metric.c_str(),
                f.message.c_str(), f.advice.c_str());
  }
  for (const auto& n : after.notes) std::printf("note: %s\n", n.c_str());
  if (!once) std::printf("\n");
  std::fflush(stdout);
}

}  // namespace

void RegisterProbe(CLI::App& app, Context& context) {
  struct Flags {
    bool once = false;
    std::string interval = "5s", metrics, output, listen, naming = "seedance", gpu_fixture, root;
    std::string power_samples;
    int task_id = -1;
    int count = 0;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand(
      "probe",
      "Sample CPU, memory, disk, network and GPU metrics; print findings or serve /metrics");
  CLI::Option* once =
      cmd->add_flag("--once", f->once, "Print one window of --sample-interval and exit");
  cmd->add_option("--sample-interval", f->interval, "Window between readings (5s, 500ms, 1m)")
      ->capture_default_str();
  CLI::Option* count =
      cmd->add_option("--count", f->count, "Stop after this many windows (0: until interrupted)")
          ->check(IntIn(0, 1 << 30));
  cmd->add_option("--metrics", f->metrics,
                  "Comma-separated values or prefixes to print: gpu.util,gpu.mem_bw,net.out_bytes");
  cmd->add_option("--task-id", f->task_id, "Also sample this process (CPU, resident memory)")
      ->check(IntIn(-1, 1 << 22));
  // Serving and printing windows are two modes: --once or --count with --listen is refused rather
  // than ignored.
  cmd->add_option("--listen", f->listen,
                  "Serve Prometheus /metrics on HOST:PORT (e.g. 127.0.0.1:9464) until interrupted")
      ->check(ListenAddress())
      ->excludes(once)
      ->excludes(count);
  cmd->add_option("--naming", f->naming, "Metric names on /metrics: seedance or dcgm")
      ->check(CLI::IsMember({"seedance", "dcgm"}))
      ->capture_default_str();
  cmd->add_option("--power-samples", f->power_samples,
                  "Also write each window's measured power (RAPL + GPU board power) and load as "
                  "CSV for `seedancectl cost power-fit` (rewritten atomically every window)")
      ->check(OutputPath())
      ->excludes("--listen");
  cmd->add_option("--root", f->root, "Read /proc and /sys under this directory")
      ->check(InputDirectory());
  cmd->add_option("--gpu-fixture", f->gpu_fixture,
                  "Replay GPU readings from a JSON file instead of NVML (tests, demos)");
  AddOutputFlag(cmd, &f->output);
  cmd->callback([f, &context] {
    auto interval = ParseDuration(f->interval, "--sample-interval");
    if (Failed(interval.status(), context)) return;
    auto metrics = probe::ParseMetricFilter(f->metrics);
    if (Failed(metrics.status(), context)) return;
    auto env = base::NewPosixEnv({.root = f->root.empty() ? "/" : f->root});
    std::unique_ptr<probe::GpuSource> gpus;
    if (!f->gpu_fixture.empty()) {
      auto fixture = probe::NewFixtureGpuSource(*base::Env::Default(), f->gpu_fixture);
      if (Failed(fixture.status(), context)) return;
      gpus = std::move(*fixture);
    } else {
      gpus = probe::NewNvmlGpuSource();
    }
    probe::HostOptions host;
    host.task_pid = f->task_id;
    probe::Probe probe(*env, std::move(gpus), host);
    InstallStopSignals();

    if (!f->listen.empty()) {
      probe::ExporterOptions o;
      o.listen = f->listen;
      const auto naming = probe::ParseNaming(f->naming, "--naming");
      if (Failed(naming.status(), context)) return;
      o.naming = *naming;
      o.interval = *interval;
      o.version = std::string(kVersion);
      auto exporter = probe::Exporter::Start(probe, o);
      if (Failed(WithFlag(exporter.status(), {{"listen", "--listen"}}), context)) return;
      std::fprintf(stderr, "serving http://%s/metrics (port %d); Ctrl-C stops\n", f->listen.c_str(),
                   (*exporter)->port());
      while (!StopRequested()) env->SleepFor(std::chrono::milliseconds(100));
      (*exporter)->Stop();
      return;
    }

    auto before = probe.Read();
    if (Failed(before.status(), context)) return;
    std::vector<probe::PowerSampleRow> power_rows;
    const int windows = f->once ? 1 : f->count;
    for (int w = 0; (windows == 0 || w < windows) && !StopRequested(); ++w) {
      // Sleep in slices so that Ctrl-C ends a long window promptly.
      const int64_t end = env->NowMonotonicNanos() + interval->count() * 1000000;
      while (!StopRequested() && env->NowMonotonicNanos() < end) {
        env->SleepFor(std::min<std::chrono::nanoseconds>(
            std::chrono::milliseconds(100),
            std::chrono::nanoseconds(end - env->NowMonotonicNanos())));
      }
      auto after = probe.Read();
      if (Failed(after.status(), context)) return;
      const auto values = probe::WindowValues(probe, *before, *after, *metrics);
      const auto findings = probe::Evaluate(values);
      PrintWindow(*before, *after, values, findings, f->output, f->once);
      if (!f->power_samples.empty()) {
        const auto all = metrics->empty() ? values : probe::WindowValues(probe, *before, *after);
        if (auto row = probe::PowerSampleOf(all, *after)) {
          power_rows.push_back(*row);
          base::Status s = base::Env::Default()->WriteFileAtomic(
              f->power_samples, probe::PowerSamplesCsv(power_rows));
          if (Failed(s.Annotate("cannot write the power samples"), context)) return;
        } else if (power_rows.empty() && w == 0) {
          std::fprintf(stderr,
                       "note: no power reading in this window (no readable RAPL zone, no GPU "
                       "power): --power-samples writes nothing\n");
        }
      }
      before = std::move(after);
    }
  });
}

}  // namespace seedance::cli
