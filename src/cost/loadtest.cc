#include "seedance/cost/loadtest.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <thread>

#include "seedance/base/env.h"
#include "seedance/base/quantile.h"
#include "seedance/net/http_client.h"

namespace seedance::cost {
namespace {

using Json = nlohmann::json;

// The endpoint: an http:// URL (its path is the API base for completions).
base::StatusOr<net::Url> ParseTarget(const std::string& url) {
  SEEDANCE_ASSIGN_OR_RETURN(net::Url u, net::ParseUrl(url, "url"));
  if (u.scheme != "http") {
    return base::InvalidArgumentError("expected http://HOST:PORT/PATH, got '" + url + "'", "url");
  }
  return u;
}

// An SSE event longer than this without its blank line is a malformed stream.
constexpr size_t kMaxEventBytes = size_t{1} << 20;

// The log of the binomial(n, q) probability of k.
double LogBinomialPmf(int64_t n, int64_t k, double q) {
  return std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(k) + 1) -
         std::lgamma(static_cast<double>(n - k) + 1) + static_cast<double>(k) * std::log(q) +
         static_cast<double>(n - k) * std::log1p(-q);
}

// The smallest k with P(X <= k) >= p, X ~ binomial(n, q).
int64_t BinomialQuantile(int64_t n, double q, double p) {
  double cdf = 0;
  for (int64_t k = 0; k <= n; ++k) {
    cdf += std::exp(LogBinomialPmf(n, k, q));
    if (cdf >= p - 1e-12) return k;
  }
  return n;
}

base::Report CiReport(const ConfidenceInterval& ci) {
  return base::Report{{"estimate", ci.estimate}, {"low", ci.low}, {"high", ci.high}};
}

// One `data:` event of a completion stream, read strictly; nullopt when it is not what the API
// sends (not JSON, not an object, `choices` not an array of objects, `text` not a string,
// `usage.completion_tokens` not a non-negative integer).
struct StreamEvent {
  bool error = false;     // an {"error": ...} event
  bool has_text = false;  // choices[0].text non-empty
  std::optional<int> completion_tokens;
};

std::optional<StreamEvent> ReadStreamEvent(const std::string& payload) {
  const Json j = Json::parse(payload, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  StreamEvent e;
  if (j.contains("error")) {
    e.error = true;
    return e;
  }
  const auto choices = j.find("choices");
  if (choices == j.end() || !choices->is_array()) return std::nullopt;
  if (!choices->empty()) {
    const Json& first = (*choices)[0];
    if (!first.is_object()) return std::nullopt;
    const auto text = first.find("text");
    if (text != first.end() && !text->is_null()) {
      if (!text->is_string()) return std::nullopt;
      e.has_text = !text->get_ref<const std::string&>().empty();
    }
  }
  const auto usage = j.find("usage");
  if (usage != j.end() && !usage->is_null()) {
    if (!usage->is_object()) return std::nullopt;
    const auto n = usage->find("completion_tokens");
    if (n != usage->end()) {
      if (!n->is_number_integer() || n->get<int64_t>() < 0 || n->get<int64_t>() > (1 << 30)) {
        return std::nullopt;
      }
      e.completion_tokens = static_cast<int>(n->get<int64_t>());
    }
  }
  return e;
}

// One request; fills `s` (times relative to `origin`).
void Issue(net::HttpClient& client, const net::Url& target, const LoadTestOptions& o,
           const std::string& body, base::Env& env, int64_t origin, RequestSample& s,
           std::string* why = nullptr) {
  s.start_ns = env.NowMonotonicNanos() - origin;
  if (o.kind == LoadKind::kHttpGet) {
    net::HttpClientRequest get;
    get.target = target.target;
    auto r = client.Send(get);
    s.ok = r.ok() && r->status >= 200 && r->status < 300;
    s.end_ns = env.NowMonotonicNanos() - origin;
    if (why != nullptr && !s.ok) {
      *why = r.ok() ? "HTTP " + std::to_string(r->status) : std::string(r.status().message());
    }
    return;
  }
  net::HttpClientRequest req;
  req.method = "POST";
  const std::string base = target.target == "/" ? "" : target.target;
  req.target = base + "/completions";
  req.content_type = "application/json";
  req.headers = {{"Accept", "text/event-stream"}};
  req.body = body;
  std::string buffer;
  bool done = false;
  int events = 0;  // chunks with text
  int chunks = 0;  // completion chunks read
  req.on_body = [&](std::string_view data) {
    buffer.append(data);
    size_t start = 0;
    for (size_t end; (end = buffer.find("\n\n", start)) != std::string::npos; start = end + 2) {
      const std::string_view event = std::string_view(buffer).substr(start, end - start);
      if (event.rfind("data: ", 0) != 0) continue;
      const std::string payload(event.substr(6));
      if (payload == "[DONE]") {
        done = true;
        continue;
      }
      const std::optional<StreamEvent> event_read = ReadStreamEvent(payload);
      if (!event_read) {
        s.malformed = true;
        return false;  // stop reading: this response is an error whatever follows
      }
      if (event_read->error) return false;
      ++chunks;
      if (event_read->has_text) {
        ++events;
        if (s.first_token_ns < 0) s.first_token_ns = env.NowMonotonicNanos() - origin;
      }
      if (event_read->completion_tokens) s.tokens = *event_read->completion_tokens;
    }
    buffer.erase(0, start);
    if (buffer.size() > kMaxEventBytes) {
      s.malformed = true;
      return false;
    }
    return true;
  };
  auto r = client.Send(req);
  s.end_ns = env.NowMonotonicNanos() - origin;
  const bool answered = r.ok() && r->status == 200;
  // No completion chunk at all before [DONE] is no completion; chunks without text (a greedy
  // first token that is EOS, a usage chunk of 0 tokens) are a valid empty completion.
  if (answered && done && chunks == 0) s.malformed = true;
  s.ok = answered && done && !s.malformed;
  if (s.tokens == 0) s.tokens = events;
  if (why != nullptr && !s.ok) {
    *why = !r.ok()       ? std::string(r.status().message())
           : !answered   ? "HTTP " + std::to_string(r->status)
           : s.malformed ? "a malformed event stream"
                         : "the stream ended before [DONE]";
  }
}

// A client of its own per connection: each exchange (connect, request, the whole answer) ends by
// timeout_s, however slowly the server sends.
std::unique_ptr<net::HttpClient> LoadClient(const net::Url& target, const LoadTestOptions& o) {
  net::HttpClientOptions co;
  co.timeout = std::chrono::milliseconds(static_cast<int64_t>(o.timeout_s * 1000));
  co.connect_timeout = co.timeout;
  co.max_body_bytes = size_t{64} << 20;
  auto client = net::HttpClient::Create(target.Origin(), co);
  return client.ok() ? std::move(*client) : nullptr;  // the origin was parsed already
}

// Open loop: requests arrive at Poisson times over `seconds`; a pool of connections takes them in
// arrival order. Each sample's start is its arrival, so time spent waiting for a free connection
// counts. Every arrival is sent and kept.
std::vector<RequestSample> RunOpenLevel(const net::Url& target, const LoadTestOptions& o,
                                        const std::string& body, double rate, double seconds,
                                        uint64_t seed) {
  base::Env& env = *base::Env::Default();
  const std::vector<int64_t> arrivals = PoissonArrivals(rate, seconds, seed);
  const int64_t origin = env.NowMonotonicNanos();
  std::mutex mu;
  std::condition_variable ready;
  std::deque<int64_t> queue;  // arrived, not yet sent
  bool closed = false;
  std::vector<RequestSample> all;
  const size_t workers = std::min<size_t>(static_cast<size_t>(o.max_connections),
                                          std::max<size_t>(1, arrivals.size()));
  std::vector<std::thread> threads;
  threads.reserve(workers);
  for (size_t w = 0; w < workers; ++w) {
    threads.emplace_back([&] {
      std::unique_ptr<net::HttpClient> client = LoadClient(target, o);
      std::vector<RequestSample> mine;
      while (true) {
        int64_t arrival = 0;
        {
          std::unique_lock<std::mutex> lock(mu);
          ready.wait(lock, [&] { return closed || !queue.empty(); });
          if (queue.empty()) break;
          arrival = queue.front();
          queue.pop_front();
        }
        RequestSample s;
        Issue(*client, target, o, body, env, origin, s);
        s.start_ns = arrival;
        mine.push_back(s);
      }
      std::lock_guard<std::mutex> lock(mu);
      all.insert(all.end(), mine.begin(), mine.end());
    });
  }
  for (const int64_t at : arrivals) {
    const int64_t wait = at - (env.NowMonotonicNanos() - origin);
    if (wait > 0) env.SleepFor(std::chrono::nanoseconds(wait));
    {
      std::lock_guard<std::mutex> lock(mu);
      queue.push_back(at);
    }
    ready.notify_one();
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    closed = true;
  }
  ready.notify_all();
  for (auto& t : threads) t.join();
  return all;
}

// C closed-loop clients for `seconds`; requests begun before the end are finished and kept.
std::vector<RequestSample> RunLevel(const net::Url& target, const LoadTestOptions& o,
                                    const std::string& body, int clients, double seconds) {
  base::Env& env = *base::Env::Default();
  const int64_t origin = env.NowMonotonicNanos();
  const auto stop = static_cast<int64_t>(seconds * 1e9);
  std::mutex mu;
  std::vector<RequestSample> all;
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(clients));
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&] {
      std::unique_ptr<net::HttpClient> client = LoadClient(target, o);
      std::vector<RequestSample> mine;
      while (env.NowMonotonicNanos() - origin < stop) {
        RequestSample s;
        Issue(*client, target, o, body, env, origin, s);
        mine.push_back(s);
      }
      std::lock_guard<std::mutex> lock(mu);
      all.insert(all.end(), mine.begin(), mine.end());
    });
  }
  for (auto& t : threads) t.join();
  return all;
}

}  // namespace

std::vector<int64_t> PoissonArrivals(double rate, double seconds, uint64_t seed) {
  std::vector<int64_t> out;
  if (!(rate > 0) || !(seconds > 0)) return out;
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(rate);
  for (double t = gap(rng); t < seconds; t += gap(rng)) {
    out.push_back(static_cast<int64_t>(t * 1e9));
  }
  return out;
}

size_t MserTruncation(std::span<const double> series, int batch) {
  const size_t k = series.size() / static_cast<size_t>(batch);
  if (k < 2) return 0;
  std::vector<double> means(k);
  for (size_t i = 0; i < k; ++i) {
    double sum = 0;
    for (int j = 0; j < batch; ++j) sum += series[i * batch + j];
    means[i] = sum / batch;
  }
  size_t best = 0;
  double best_score = INFINITY;
  for (size_t d = 0; d <= k / 2; ++d) {
    const double n = static_cast<double>(k - d);
    double mean = 0;
    for (size_t i = d; i < k; ++i) mean += means[i];
    mean /= n;
    double ss = 0;
    for (size_t i = d; i < k; ++i) ss += (means[i] - mean) * (means[i] - mean);
    const double score = ss / (n * n);
    if (score < best_score) {
      best_score = score;
      best = d;
    }
  }
  return best * static_cast<size_t>(batch);
}

ConfidenceInterval QuantileWithCi(std::vector<double> values, double q, double confidence) {
  std::sort(values.begin(), values.end());
  ConfidenceInterval ci;
  if (values.empty()) return ci;
  const auto n = static_cast<int64_t>(values.size());
  ci.estimate = base::QuantileOfSorted(values, q);
  const double alpha = (1 - confidence) / 2;
  // Order statistics x_(l) <= x_(u) (1-based) with P(x_(l) <= Q <= x_(u)) >= confidence.
  const int64_t l = std::max<int64_t>(1, BinomialQuantile(n, q, alpha));
  const int64_t u = std::min<int64_t>(n, BinomialQuantile(n, q, 1 - alpha) + 1);
  ci.low = std::min(values[static_cast<size_t>(l - 1)], ci.estimate);
  ci.high = std::max(values[static_cast<size_t>(u - 1)], ci.estimate);
  return ci;
}

base::Report SummarizeLevel(std::vector<RequestSample> samples, int concurrency,
                            const LoadTestOptions& o) {
  std::sort(samples.begin(), samples.end(),
            [](const RequestSample& a, const RequestSample& b) { return a.end_ns < b.end_ns; });
  base::Report r;
  r["concurrency"] = concurrency;
  r["requests"] = samples.size();
  std::vector<double> latency_ms;
  std::vector<size_t> ok_index;
  for (size_t i = 0; i < samples.size(); ++i) {
    if (!samples[i].ok) continue;
    latency_ms.push_back(static_cast<double>(samples[i].end_ns - samples[i].start_ns) / 1e6);
    ok_index.push_back(i);
  }
  // The steady window: from the end of the last dropped request on.
  const size_t drop = MserTruncation(latency_ms);
  const int64_t t0 = drop == 0 ? (samples.empty() ? 0 : samples.front().start_ns)
                               : samples[ok_index[drop - 1]].end_ns;
  std::vector<RequestSample> steady;
  for (const RequestSample& s : samples) {
    if (s.end_ns > t0 || (drop == 0)) steady.push_back(s);
  }
  const std::vector<double> steady_ms(latency_ms.begin() + static_cast<int64_t>(drop),
                                      latency_ms.end());
  const double span_s = steady.empty() ? 0 : static_cast<double>(steady.back().end_ns - t0) / 1e9;
  int64_t errors = 0, tokens = 0, malformed = 0;
  std::vector<double> ttft_ms, tpot_ms;
  for (const RequestSample& s : steady) {
    errors += s.ok ? 0 : 1;
    malformed += s.malformed ? 1 : 0;
    if (!s.ok) continue;
    tokens += s.tokens;
    if (s.first_token_ns >= 0) {
      ttft_ms.push_back(static_cast<double>(s.first_token_ns - s.start_ns) / 1e6);
      if (s.tokens > 1) {
        tpot_ms.push_back(static_cast<double>(s.end_ns - s.first_token_ns) / 1e6 / (s.tokens - 1));
      }
    }
  }
  r["steady_from_s"] = static_cast<double>(t0) / 1e9;
  r["steady_requests"] = steady.size();
  r["errors"] = errors;
  r["malformed_streams"] = malformed;  // of the errors: 200s whose stream was not a completion's
  r["error_rate"] = steady.empty() ? 0.0 : static_cast<double>(errors) / steady.size();
  const double throughput = span_s > 0 ? static_cast<double>(steady.size() - errors) / span_s : 0.0;
  r["throughput_rps"] = throughput;
  // A CI for the throughput: completions per whole second of the steady span, bootstrapped.
  std::vector<double> per_second(static_cast<size_t>(std::floor(span_s)), 0.0);
  for (const RequestSample& s : steady) {
    const auto bin = static_cast<size_t>(static_cast<double>(s.end_ns - t0) / 1e9);
    if (s.ok && bin < per_second.size()) ++per_second[bin];
  }
  BootstrapOptions bo;
  bo.seed = o.seed;
  bo.resamples = 2000;
  auto tci = BootstrapCi(per_second, bo);
  r["throughput_rps_ci"] = tci.ok() ? CiReport(*tci) : base::Report(nullptr);
  base::Report latency = base::Report::object();
  if (!steady_ms.empty()) {
    for (const auto& [name, q] : {std::pair{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}}) {
      latency[name] = CiReport(QuantileWithCi(steady_ms, q));
    }
  }
  r["latency_ms"] = latency;
  // Drift: the P99 of the steady window's second half against its first half.
  double drift = 0;
  if (steady_ms.size() >= 20) {
    const auto half = static_cast<int64_t>(steady_ms.size() / 2);
    const std::vector<double> a(steady_ms.begin(), steady_ms.begin() + half),
        b(steady_ms.begin() + half, steady_ms.end());
    const double pa = base::Quantile(a, 0.99), pb = base::Quantile(b, 0.99);
    drift = pa > 0 ? std::fabs(pb - pa) / pa : 0;
  }
  r["p99_drift"] = drift;
  if (o.kind == LoadKind::kCompletions) {
    auto p50_p99 = [](std::vector<double> v) {
      if (v.empty()) return base::Report(nullptr);
      std::sort(v.begin(), v.end());
      return base::Report{{"p50", base::QuantileOfSorted(v, 0.5)},
                          {"p99", base::QuantileOfSorted(v, 0.99)}};
    };
    r["ttft_ms"] = p50_p99(ttft_ms);
    r["tpot_ms"] = p50_p99(tpot_ms);
    r["tokens_per_s"] = span_s > 0 ? static_cast<double>(tokens) / span_s : 0.0;
  }
  r["usd_per_1k_requests"] = o.usd_per_hour > 0 && throughput > 0
                                 ? base::Report(o.usd_per_hour / 3600.0 / throughput * 1000.0)
                                 : base::Report(nullptr);
  return r;
}

base::StatusOr<base::Report> RunLoadTest(const LoadTestOptions& o) {
  SEEDANCE_ASSIGN_OR_RETURN(const net::Url target, ParseTarget(o.url));
  const bool open = !o.rates.empty();
  if (!open && o.concurrency.empty()) {
    return base::InvalidArgumentError("no level", "concurrency");
  }
  for (double rate : o.rates) {
    if (!(rate > 0) || rate > 1e6) {
      return base::InvalidArgumentError("each rate must be above 0 and at most 1e6 per second",
                                        "rates");
    }
  }
  if (open && (o.max_connections < 1 || o.max_connections > 4096)) {
    return base::InvalidArgumentError("must be 1..4096", "max_connections");
  }
  for (int c : o.concurrency) {
    if (c < 1 || c > 4096) {
      return base::InvalidArgumentError("each level must be 1..4096, got " + std::to_string(c),
                                        "concurrency");
    }
  }
  if (!(o.level_s > 0) || !(o.warmup_s >= 0) || !(o.drift > 0) || o.max_recalibrations < 0) {
    return base::InvalidArgumentError("level and drift must be > 0, warm-up >= 0", "level_s");
  }
  std::string body;
  if (o.kind == LoadKind::kCompletions) {
    if (o.model.empty()) return base::InvalidArgumentError("completions need a model", "model");
    body =
        Json{
            {"model", o.model}, {"prompt", o.prompt}, {"max_tokens", o.max_tokens},
            {"temperature", 0}, {"stream", true},     {"stream_options", {{"include_usage", true}}}}
            .dump();
  }
  // A first request: an endpoint that does not answer is an error, not a level of failures.
  {
    std::unique_ptr<net::HttpClient> probe = LoadClient(target, o);
    RequestSample s;
    base::Env& env = *base::Env::Default();
    std::string why;
    Issue(*probe, target, o, body, env, env.NowMonotonicNanos(), s, &why);
    if (!s.ok) return base::UnavailableError("the first request failed: " + why, o.url);
  }
  base::Report r;
  r["url"] = o.url;
  r["kind"] = o.kind == LoadKind::kCompletions ? "completions" : "http-get";
  r["warmup_s"] = o.warmup_s;
  r["level_s"] = o.level_s;
  r["drift_threshold"] = o.drift;
  r["arrivals"] = open ? "open loop (Poisson)" : "closed loop";
  // One run of level `i`: its samples, summarized.
  uint64_t run_seed = o.seed;
  auto run = [&](size_t i, double seconds) {
    if (!open) return RunLevel(target, o, body, o.concurrency[i], seconds);
    return RunOpenLevel(target, o, body, o.rates[i], seconds, run_seed++);
  };
  if (o.warmup_s > 0) (void)run(0, o.warmup_s);
  r["levels"] = base::Report::array();
  const size_t levels = open ? o.rates.size() : o.concurrency.size();
  for (size_t i = 0; i < levels; ++i) {
    base::Report level;
    int reruns = 0;
    const int c = open ? 0 : o.concurrency[i];
    while (true) {
      level = SummarizeLevel(run(i, o.level_s), c, o);
      if (open) {
        base::Report keyed{{"offered_rps", o.rates[i]}};
        for (auto& [key, value] : level.items()) {
          if (key != "concurrency") keyed[key] = value;
        }
        level = std::move(keyed);
      }
      if (o.progress) {
        o.progress((open ? "rate " + std::to_string(o.rates[i]) + "/s"
                         : "concurrency " + std::to_string(c)) +
                   ": " + std::to_string(level["throughput_rps"].get<double>()) +
                   " req/s, P99 drift " + std::to_string(level["p99_drift"].get<double>()));
      }
      if (level["p99_drift"].get<double>() <= o.drift || reruns >= o.max_recalibrations) break;
      ++reruns;
    }
    level["recalibrations"] = reruns;
    level["steady"] = level["p99_drift"].get<double>() <= o.drift;
    r["levels"].push_back(level);
  }
  base::Report out{{"verdict", LoadTestVerdict(r)}};
  out.update(r);
  return out;
}

}  // namespace seedance::cost
