#include "seedance/probe/scrape.h"

#include <httplib.h>

#include <chrono>

namespace seedance::probe {
namespace {

base::StatusOr<std::string> FetchMetricsUrl(const std::string& url, const ScrapeOptions& o) {
  const size_t scheme_end = url.find("://");
  const size_t path_start = url.find('/', scheme_end + 3);
  const std::string origin = url.substr(0, path_start);
  const std::string path = path_start == std::string::npos ? "/metrics" : url.substr(path_start);
  httplib::Client client(origin);
  if (!client.is_valid()) return base::InvalidArgumentError("not a usable URL", url);
  const auto timeout = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::duration<double>(o.timeout_seconds));
  client.set_connection_timeout(timeout);
  client.set_read_timeout(timeout);
#ifdef CPPHTTPLIB_OPENSSL_SUPPORT
  if (!o.ca_file.empty()) client.set_ca_cert_path(o.ca_file);
  client.enable_server_certificate_verification(!o.insecure);
#endif
  httplib::Headers headers = {{"Accept", "text/plain;version=0.0.4"}};
  if (!o.bearer_token.empty()) headers.emplace("Authorization", "Bearer " + o.bearer_token);
  const httplib::Result r = client.Get(path, headers);
  if (!r) return base::UnavailableError("scrape failed: " + httplib::to_string(r.error()), url);
  if (r->status != 200) {
    return base::UnavailableError(
        "scrape answered HTTP " + std::to_string(r->status) + ": " + r->body.substr(0, 200), url);
  }
  return r->body;
}

}  // namespace

bool IsMetricsUrl(std::string_view where) {
  return where.starts_with("http://") || where.starts_with("https://");
}

base::StatusOr<std::string> ReadMetricsText(base::Env& env, const std::string& where,
                                            const ScrapeOptions& options) {
  if (IsMetricsUrl(where)) return FetchMetricsUrl(where, options);
  return env.ReadFile(where);
}

base::StatusOr<std::vector<MetricsSource>> CollectMetrics(base::Env& env,
                                                          const std::vector<std::string>& wheres,
                                                          double window_seconds,
                                                          const ScrapeOptions& options) {
  if (wheres.empty()) return base::InvalidArgumentError("no metrics given", "--metrics");
  auto scrape = [&](const std::string& where) -> base::StatusOr<base::PromText> {
    SEEDANCE_ASSIGN_OR_RETURN(std::string text, ReadMetricsText(env, where, options));
    return base::ParsePrometheusText(text, where);
  };
  std::vector<MetricsSource> sources;
  for (const std::string& where : wheres) {
    if (window_seconds > 0 && !IsMetricsUrl(where)) {
      return base::InvalidArgumentError(
          "a file is one scrape; --window needs http:// or https:// URLs to scrape twice", where);
    }
    MetricsSource s;
    s.name = where;
    SEEDANCE_ASSIGN_OR_RETURN(s.now, scrape(where));
    sources.push_back(std::move(s));
  }
  if (window_seconds <= 0) return sources;
  env.SleepFor(std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(window_seconds)));
  for (MetricsSource& s : sources) {
    SEEDANCE_ASSIGN_OR_RETURN(base::PromText later, scrape(s.name));
    s.before = std::move(s.now);
    s.now = std::move(later);
    s.window_seconds = window_seconds;
  }
  return sources;
}

}  // namespace seedance::probe
