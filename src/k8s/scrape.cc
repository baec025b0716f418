#include "seedance/k8s/scrape.h"

#include <chrono>

#include "seedance/net/http_client.h"

namespace seedance::k8s {
namespace {

base::StatusOr<std::string> FetchMetricsUrl(const std::string& url, const ScrapeOptions& o) {
  SEEDANCE_ASSIGN_OR_RETURN(net::Url u, net::ParseUrl(url, url));
  // A URL without a path means the usual one.
  if (url.find('/', url.find("://") + 3) == std::string::npos) u.target = "/metrics";
  net::HttpClientOptions co;
  co.ca_file = o.ca_file;
  co.verify_tls = !o.insecure;
  // The whole scrape, not each read, is bounded: a server dripping bytes cannot hold it.
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(o.timeout_seconds * 1000));
  co.timeout = timeout;
  co.connect_timeout = timeout;
  co.max_body_bytes = o.max_body_bytes;
  co.headers = {{"Accept", "text/plain;version=0.0.4"}};
  if (!o.bearer_token.empty()) co.headers.emplace_back("Authorization", "Bearer " + o.bearer_token);
  SEEDANCE_ASSIGN_OR_RETURN(auto client, net::HttpClient::Create(u.Origin(), co));
  net::HttpClientRequest get;
  get.target = u.target;
  auto r = client->Send(get);
  if (!r.ok())
    return base::UnavailableError("scrape failed: " + std::string(r.status().message()), url);
  if (r->status != 200) {
    return base::UnavailableError(
        "scrape answered HTTP " + std::to_string(r->status) + ": " + r->body.substr(0, 200), url);
  }
  return std::move(r->body);
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
  if (wheres.empty()) return base::InvalidArgumentError("no metrics given", "metrics");
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

}  // namespace seedance::k8s
