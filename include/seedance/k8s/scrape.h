// Reading Prometheus text from where a user points `seedancectl diagnose`: a file, or an
// http:// or https:// URL (kube-apiserver's /metrics needs a bearer token and its CA; etcd's and
// kube-scheduler's insecure metrics ports need neither), and the two scrapes of a window. URLs
// are fetched with net::HttpClient: a deadline on the whole scrape and caps on the answer.
//
// Thread safety: each call is independent; the Env is used for files and the window's sleep.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/env.h"
#include "seedance/base/status.h"
#include "seedance/k8s/diagnose.h"

namespace seedance::k8s {

struct ScrapeOptions {
  std::string ca_file;          // https: the CA to verify the server with ("" = the system's)
  std::string bearer_token;     // sent as "Authorization: Bearer ..." when not empty
  bool insecure = false;        // https: do not verify the server's certificate
  double timeout_seconds = 10;  // the whole scrape: connecting, the request and the answer
  size_t max_body_bytes = size_t{64} << 20;  // a larger page is an error, not a memory hog
};

bool IsMetricsUrl(std::string_view where);  // starts with http:// or https://

// The text at a file path or URL; an error names it and says what failed (the HTTP status and
// the start of the body for a non-200 answer).
base::StatusOr<std::string> ReadMetricsText(base::Env& env, const std::string& where,
                                            const ScrapeOptions& options);

// Every `where` read and parsed. With window_seconds > 0 every one must be a URL: each is
// scraped, then again after the window, and the source carries both scrapes.
base::StatusOr<std::vector<MetricsSource>> CollectMetrics(base::Env& env,
                                                          const std::vector<std::string>& wheres,
                                                          double window_seconds,
                                                          const ScrapeOptions& options);

}  // namespace seedance::k8s
