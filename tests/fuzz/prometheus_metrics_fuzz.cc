// Fuzz target (libFuzzer): the Prometheus text reader (base/prometheus_parse.h) and what
// `diagnose` does with what it accepts. Contract: every input is accepted or refused with an
// error, never a crash; an accepted text's samples, written back in PrometheusWriter's spelling,
// read back to the same names, labels and values; the diagnosis of an accepted text either runs or
// says it found nothing to read; histogram_quantile of any bucket set never crashes.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "seedance/base/prometheus_parse.h"
#include "seedance/base/prometheus_text.h"
#include "seedance/k8s/diagnose.h"
#include "seedance/k8s/histogram_quantile.h"

namespace {

bool SameValue(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace base = seedance::base;
  namespace k8s = seedance::k8s;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  auto parsed = base::ParsePrometheusText(in, "fuzz.txt");
  if (!parsed.ok()) return 0;
  // Written back in the writer's spelling (escapes, numbers), without HELP or TYPE lines: a name
  // may come back after another family, which a second TYPE line would make an error.
  std::string text;
  for (const base::PromSample& s : parsed->samples) {
    text += s.name;
    for (size_t i = 0; i < s.labels.size(); ++i) {
      text += (i ? "," : "{") + s.labels[i].first + "=\"" +
              base::EscapeLabelValue(s.labels[i].second) + "\"";
    }
    text += (s.labels.empty() ? " " : "} ") + base::FormatSampleValue(s.value) + "\n";
  }
  auto again = base::ParsePrometheusText(text, "rewritten");
  if (!again.ok() || again->samples.size() != parsed->samples.size()) __builtin_trap();
  for (size_t i = 0; i < parsed->samples.size(); ++i) {
    const base::PromSample& a = parsed->samples[i];
    const base::PromSample& b = again->samples[i];
    if (a.name != b.name || a.labels != b.labels || !SameValue(a.value, b.value)) __builtin_trap();
  }
  k8s::MetricsSource source;
  source.name = "fuzz.txt";
  source.now = *parsed;
  (void)k8s::DiagnoseCluster({source});
  for (const base::PromSample& s : parsed->samples) {
    if (s.name.size() < 7 || !s.name.ends_with("_bucket")) continue;
    for (const auto& h : k8s::CollectHistograms(*parsed, s.name.substr(0, s.name.size() - 7))) {
      (void)k8s::BucketQuantile(0.99, h.buckets);
    }
    break;
  }
  return 0;
}
