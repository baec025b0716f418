#include "seedance/control/tiered_cache.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "seedance/base/logging.h"
#include "seedance/base/prometheus_text.h"
#include "seedance/control/flat_scan_lfu.h"

namespace seedance::control {
namespace {

constexpr uint64_t kCacheMagic = 0x3130484354434453ULL;  // "SDCTCH01" little-endian
constexpr int kBounds = 18;

const std::vector<double> kLatencyBounds = {5e-7, 1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4,
                                            5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 5e-2, 0.1,  0.5,  1.0};

struct SlotMeta {
  CacheKey key;
  uint64_t gen;  // bumped by every write of the slot
  uint32_t length;
  uint32_t ready;  // the record holds key's value
};

struct Latency {
  uint64_t counts[kBounds + 1];  // per bucket, not cumulative; updated with atomic_ref
  uint64_t sum_ns;
};

struct TierHeader {
  char name[32];
  char dir[256];
  uint64_t capacity;
  uint64_t off_policy, policy_bytes, off_meta, off_data;  // off_data: host tier only
  uint64_t hits, admitted, evictions;                     // under the lock
  Latency latency;
};

struct StateHeader {
  uint64_t magic;
  uint32_t version;
  uint32_t tiers;
  uint64_t record_bytes;
  uint64_t total_bytes;
  uint64_t detect_scans;
  pthread_mutex_t mutex;  // process-shared, robust
  uint64_t misses, resets;
  Latency miss_latency;
  TierHeader tier[kMaxCacheTiers];
};

constexpr size_t AlignTo64(size_t x) { return (x + 63) & ~size_t{63}; }

std::string Errno(const std::string& what, const std::string& file) {
  return what + " " + file + ": " + std::strerror(errno);
}

bool NameOk(const std::string& name) {
  if (name.empty() || name.size() > 31) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

void AddLatency(Latency& l, int64_t took_ns) {
  const double s = static_cast<double>(took_ns) * 1e-9;
  const auto bucket = static_cast<size_t>(
      std::lower_bound(kLatencyBounds.begin(), kLatencyBounds.end(), s) - kLatencyBounds.begin());
  std::atomic_ref<uint64_t>(l.counts[bucket]).fetch_add(1, std::memory_order_relaxed);
  std::atomic_ref<uint64_t>(l.sum_ns).fetch_add(static_cast<uint64_t>(took_ns),
                                                std::memory_order_relaxed);
}

// Cumulative bucket counts (the Prometheus convention) and the sum in seconds.
std::pair<std::vector<uint64_t>, double> ReadLatency(Latency& l) {
  std::vector<uint64_t> cumulative(kBounds + 1);
  uint64_t total = 0;
  for (int b = 0; b <= kBounds; ++b) {
    total += std::atomic_ref<uint64_t>(l.counts[b]).load(std::memory_order_relaxed);
    cumulative[b] = total;
  }
  const auto ns = std::atomic_ref<uint64_t>(l.sum_ns).load(std::memory_order_relaxed);
  return {cumulative, static_cast<double>(ns) * 1e-9};
}

}  // namespace

struct TieredCache::Impl {
  base::Env* env = nullptr;
  std::string path;
  int fd = -1;
  unsigned char* base = nullptr;
  size_t bytes = 0;
  std::vector<int> tier_fds;  // -1 for the host tier
  std::vector<std::string> tier_files;
  std::vector<FlatScanLfu> policies;

  ~Impl() {
    if (base != nullptr) munmap(base, bytes);
    if (fd >= 0) close(fd);
    for (int f : tier_fds) {
      if (f >= 0) close(f);
    }
  }

  StateHeader& h() const { return *reinterpret_cast<StateHeader*>(base); }
  int tiers() const { return static_cast<int>(h().tiers); }
  SlotMeta* meta(int t) const { return reinterpret_cast<SlotMeta*>(base + h().tier[t].off_meta); }
  unsigned char* host(uint32_t slot) const {
    return base + h().tier[0].off_data + static_cast<size_t>(slot) * h().record_bytes;
  }
  off_t offset(uint32_t slot) const {
    return static_cast<off_t>(static_cast<uint64_t>(slot) * h().record_bytes);
  }

  // The one lock; a holder that died leaves the state suspect, and the cache empties itself.
  class Locked {
   public:
    explicit Locked(Impl& c) : c_(c) {
      const int rc = pthread_mutex_lock(&c.h().mutex);
      if (rc == EOWNERDEAD) {
        pthread_mutex_consistent(&c.h().mutex);
        c.ResetLocked();
      } else {
        SEEDANCE_CHECK(rc == 0);
      }
    }
    ~Locked() { pthread_mutex_unlock(&c_.h().mutex); }
    Locked(const Locked&) = delete;
    Locked& operator=(const Locked&) = delete;

   private:
    Impl& c_;
  };

  void ResetLocked() {
    for (int t = 0; t < tiers(); ++t) {
      TierHeader& th = h().tier[t];
      policies[t] = FlatScanLfu::Init(base + th.off_policy, th.capacity, h().detect_scans != 0);
      std::memset(meta(t), 0, (th.capacity + 1) * sizeof(SlotMeta));
    }
    ++h().resets;
  }

  base::Status WriteRecord(int t, uint32_t slot, CacheKey key, const unsigned char* data,
                           size_t length) {
    SlotMeta& m = meta(t)[slot];
    ++m.gen;
    m.ready = 0;
    if (t == 0) {
      std::memcpy(host(slot), data, length);
    } else if (pwrite(tier_fds[t], data, length, offset(slot)) != static_cast<ssize_t>(length)) {
      policies[t].Erase(key);
      return base::IoError(Errno("cannot write", tier_files[t]), "tiered cache");
    }
    m.key = key;
    m.length = static_cast<uint32_t>(length);
    m.ready = 1;
    ++h().tier[t].admitted;
    return base::OkStatus();
  }

  // Tier t's policy evicted `v`: its record moves to tier t + 1 (under the lock; the victim's
  // slot is free but not yet overwritten).
  base::Status DemoteLocked(int t, const LfuEviction& v) {
    SlotMeta& m = meta(t)[v.slot];
    ++h().tier[t].evictions;
    const bool had = m.ready != 0 && m.key == v.key;
    m.ready = 0;
    if (!had || t + 1 >= tiers()) return base::OkStatus();
    std::string buffer;
    const unsigned char* data = nullptr;
    if (t == 0) {
      data = host(v.slot);
    } else {
      buffer.resize(m.length);
      if (pread(tier_fds[t], buffer.data(), m.length, offset(v.slot)) !=
          static_cast<ssize_t>(m.length)) {
        return base::IoError(Errno("cannot read", tier_files[t]), "tiered cache");
      }
      data = reinterpret_cast<const unsigned char*>(buffer.data());
    }
    std::vector<LfuEviction> evicted;
    const uint32_t slot = policies[t + 1].Insert(v.key, &evicted);
    for (const auto& e : evicted) SEEDANCE_RETURN_IF_ERROR(DemoteLocked(t + 1, e));
    if (slot == kNoSlot) return base::OkStatus();
    const SlotMeta& d = meta(t + 1)[slot];
    if (d.ready != 0 && d.key == v.key) return base::OkStatus();  // inclusive: already there
    return WriteRecord(t + 1, slot, v.key, data, m.length);
  }

  // Reads key's record from disk tier t outside the lock, validated by the slot's generation.
  base::StatusOr<bool> ReadDisk(int t, CacheKey key, std::string* out) {
    for (int attempt = 0; attempt < 4; ++attempt) {
      uint32_t slot = kNoSlot;
      SlotMeta seen{};
      {
        Locked lock(*this);
        slot = policies[t].Find(key);
        if (slot == kNoSlot) return false;
        seen = meta(t)[slot];
        if (seen.ready == 0 || seen.key != key) return false;
        policies[t].Access(key);  // a hit: recency and frequency
      }
      out->resize(seen.length);
      if (pread(tier_fds[t], out->data(), seen.length, offset(slot)) !=
          static_cast<ssize_t>(seen.length)) {
        return base::IoError(Errno("cannot read", tier_files[t]), "tiered cache");
      }
      Locked lock(*this);
      const SlotMeta& now = meta(t)[slot];
      if (now.gen == seen.gen && now.key == key && now.ready != 0) {
        ++h().tier[t].hits;
        return true;
      }
    }
    return false;  // rewritten under us four times: count it a miss
  }
};

base::Status ValidateTieredCacheOptions(const TieredCacheOptions& o) {
  const std::string where = "tiered cache";
  if (o.path.empty()) return base::InvalidArgumentError("path: expected a file path", where);
  if (o.record_bytes == 0 || o.record_bytes > (uint64_t{1} << 31)) {
    return base::InvalidArgumentError("record_bytes: expected 1 to 2^31", where);
  }
  if (o.tiers.empty() || o.tiers.size() > kMaxCacheTiers) {
    return base::InvalidArgumentError("tiers: expected 1 to 4", where);
  }
  for (size_t t = 0; t < o.tiers.size(); ++t) {
    const auto& s = o.tiers[t];
    const std::string field = "tiers[" + std::to_string(t) + "]";
    if (!NameOk(s.name)) {
      return base::InvalidArgumentError(field + ".name: expected [A-Za-z0-9_-]{1,31}", where);
    }
    if (s.capacity == 0 || s.capacity >= (uint64_t{1} << 31)) {
      return base::InvalidArgumentError(field + ".capacity: expected 1 to 2^31 - 1", where);
    }
    if (t == 0 && !s.dir.empty()) {
      return base::InvalidArgumentError(field + ".dir: the first tier is host memory (no dir)",
                                        where);
    }
    if (t > 0 && (s.dir.empty() || s.dir.size() > 255)) {
      return base::InvalidArgumentError(field + ".dir: expected a directory (<= 255 bytes)", where);
    }
    if ((t == 0 ? s.capacity + 1 : 1) * o.record_bytes > (uint64_t{1} << 40)) {
      return base::InvalidArgumentError(field + ": host memory over 1 TiB", where);
    }
  }
  return base::OkStatus();
}

const std::vector<double>& CacheLatencyBuckets() { return kLatencyBounds; }

TieredCache::TieredCache(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TieredCache::~TieredCache() = default;

namespace {

std::string TierFile(const std::string& dir, const std::string& path, int t) {
  return dir + "/" + Basename(path) + ".tier" + std::to_string(t);
}

base::Status OpenTierFiles(TieredCache::Impl& c, bool create) {
  c.tier_fds.assign(c.h().tiers, -1);
  c.tier_files.assign(c.h().tiers, "");
  for (int t = 1; t < c.tiers(); ++t) {
    const TierHeader& th = c.h().tier[t];
    c.tier_files[t] = TierFile(th.dir, c.path, t);
    const int flags = O_RDWR | O_CLOEXEC | (create ? O_CREAT | O_TRUNC : 0);
    c.tier_fds[t] = open(c.tier_files[t].c_str(), flags, 0600);
    if (c.tier_fds[t] < 0) return base::IoError(Errno("cannot open", c.tier_files[t]), th.name);
    const auto size = static_cast<off_t>((th.capacity + 1) * c.h().record_bytes);
    if (create && ftruncate(c.tier_fds[t], size) != 0) {
      return base::IoError(Errno("cannot size", c.tier_files[t]), th.name);
    }
  }
  return base::OkStatus();
}

}  // namespace

base::StatusOr<std::unique_ptr<TieredCache>> TieredCache::Create(const TieredCacheOptions& o) {
  SEEDANCE_RETURN_IF_ERROR(ValidateTieredCacheOptions(o));
  auto c = std::make_unique<Impl>();
  c->env = o.env != nullptr ? o.env : base::Env::Default();
  c->path = o.path;
  // The layout: header, then per tier its policy, slot table and (host) records.
  size_t off = AlignTo64(sizeof(StateHeader));
  std::vector<std::array<size_t, 4>> at(o.tiers.size());  // policy, bytes, meta, data
  for (size_t t = 0; t < o.tiers.size(); ++t) {
    const uint64_t cap = o.tiers[t].capacity;
    at[t][0] = off;
    at[t][1] = FlatScanLfu::BytesFor(cap);
    off += AlignTo64(at[t][1]);
    at[t][2] = off;
    off += AlignTo64((cap + 1) * sizeof(SlotMeta));
    at[t][3] = 0;
    if (t == 0) {
      at[t][3] = off;
      off += AlignTo64((cap + 1) * o.record_bytes);
    }
  }
  c->bytes = off;
  // Built under a temporary name and linked into place: Open never sees a half-built state,
  // and an existing cache is not clobbered.
  const std::string tmp = o.path + ".tmp." + std::to_string(getpid());
  c->fd = open(tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (c->fd < 0) return base::IoError(Errno("cannot create", tmp), "tiered cache");
  auto fail = [&](base::Status s) {
    unlink(tmp.c_str());
    return s;
  };
  if (ftruncate(c->fd, static_cast<off_t>(c->bytes)) != 0) {
    return fail(base::IoError(Errno("cannot size", tmp), "tiered cache"));
  }
  void* map = mmap(nullptr, c->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
  if (map == MAP_FAILED) return fail(base::IoError(Errno("cannot map", tmp), "tiered cache"));
  c->base = static_cast<unsigned char*>(map);
  StateHeader& h = c->h();
  h.version = kTieredCacheVersion;
  h.tiers = static_cast<uint32_t>(o.tiers.size());
  h.record_bytes = o.record_bytes;
  h.total_bytes = c->bytes;
  h.detect_scans = o.detect_scans ? 1 : 0;
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(&h.mutex, &attr);
  pthread_mutexattr_destroy(&attr);
  for (size_t t = 0; t < o.tiers.size(); ++t) {
    TierHeader& th = h.tier[t];
    std::snprintf(th.name, sizeof(th.name), "%s", o.tiers[t].name.c_str());
    std::snprintf(th.dir, sizeof(th.dir), "%s", o.tiers[t].dir.c_str());
    th.capacity = o.tiers[t].capacity;
    th.off_policy = at[t][0];
    th.policy_bytes = at[t][1];
    th.off_meta = at[t][2];
    th.off_data = at[t][3];
    c->policies.push_back(FlatScanLfu::Init(c->base + th.off_policy, th.capacity, o.detect_scans));
  }
  if (auto s = OpenTierFiles(*c, true); !s.ok()) return fail(s);
  std::atomic_thread_fence(std::memory_order_release);
  h.magic = kCacheMagic;
  if (msync(c->base, sizeof(StateHeader), MS_SYNC) != 0 || link(tmp.c_str(), o.path.c_str()) != 0) {
    return fail(base::IoError(Errno("cannot create", o.path), "tiered cache"));
  }
  unlink(tmp.c_str());
  return std::unique_ptr<TieredCache>(new TieredCache(std::move(c)));
}

base::StatusOr<std::unique_ptr<TieredCache>> TieredCache::Open(const std::string& path,
                                                               base::Env* env) {
  auto c = std::make_unique<Impl>();
  c->env = env != nullptr ? env : base::Env::Default();
  c->path = path;
  c->fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (c->fd < 0) return base::IoError(Errno("cannot open", path), "tiered cache");
  struct stat st {};
  if (fstat(c->fd, &st) != 0) return base::IoError(Errno("cannot stat", path), "tiered cache");
  c->bytes = static_cast<size_t>(st.st_size);
  if (c->bytes < sizeof(StateHeader)) {
    return base::InvalidArgumentError("too short for a cache state", path);
  }
  void* map = mmap(nullptr, c->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
  if (map == MAP_FAILED) return base::IoError(Errno("cannot map", path), "tiered cache");
  c->base = static_cast<unsigned char*>(map);
  const StateHeader& h = c->h();
  if (h.magic != kCacheMagic)
    return base::InvalidArgumentError("magic: not a Seedance cache", path);
  if (h.version != kTieredCacheVersion) {
    return base::InvalidArgumentError("version: " + std::to_string(h.version) + ", expected " +
                                          std::to_string(kTieredCacheVersion),
                                      path);
  }
  if (h.total_bytes != c->bytes || h.tiers == 0 || h.tiers > kMaxCacheTiers) {
    return base::InvalidArgumentError("header: size or tier count does not match the file", path);
  }
  for (int t = 0; t < c->tiers(); ++t) {
    const TierHeader& th = h.tier[t];
    if (th.off_policy + th.policy_bytes > c->bytes) {
      return base::InvalidArgumentError("tier " + std::to_string(t) + ": out of the file", path);
    }
    try {
      c->policies.push_back(FlatScanLfu::Attach(c->base + th.off_policy, th.policy_bytes));
    } catch (const std::invalid_argument& e) {
      return base::InvalidArgumentError(e.what(), path);
    }
  }
  SEEDANCE_RETURN_IF_ERROR(OpenTierFiles(*c, false));
  return std::unique_ptr<TieredCache>(new TieredCache(std::move(c)));
}

base::StatusOr<int> TieredCache::Get(CacheKey key, std::string* out) {
  Impl& c = *impl_;
  const int64_t start = c.env->NowMonotonicNanos();
  out->clear();
  int served = -1;
  uint32_t reserved = kNoSlot;
  {
    Impl::Locked lock(c);
    const LfuAccess a = c.policies[0].Access(key);
    if (a.evicted) SEEDANCE_RETURN_IF_ERROR(c.DemoteLocked(0, a.victim));
    if (a.slot != kNoSlot) {
      SlotMeta& m = c.meta(0)[a.slot];
      if (a.hit && m.ready != 0 && m.key == key) {
        out->assign(reinterpret_cast<const char*>(c.host(a.slot)), m.length);
        ++c.h().tier[0].hits;
        served = 0;
      } else {
        if (!a.hit) m = {key, m.gen + 1, 0, 0};  // reserved until a lower tier or Put fills it
        reserved = a.slot;
      }
    }
  }
  for (int t = 1; served < 0 && t < c.tiers(); ++t) {
    SEEDANCE_ASSIGN_OR_RETURN(const bool found, c.ReadDisk(t, key, out));
    if (found) served = t;
  }
  if (served > 0 && reserved != kNoSlot) {  // copy it up into host memory
    Impl::Locked lock(c);
    const SlotMeta& m = c.meta(0)[reserved];
    if (c.policies[0].Find(key) == reserved && m.key == key && m.ready == 0) {
      SEEDANCE_RETURN_IF_ERROR(c.WriteRecord(
          0, reserved, key, reinterpret_cast<const unsigned char*>(out->data()), out->size()));
    }
  }
  if (served < 0) {
    out->clear();
    std::atomic_ref<uint64_t>(c.h().misses).fetch_add(1, std::memory_order_relaxed);
  }
  AddLatency(served < 0 ? c.h().miss_latency : c.h().tier[served].latency,
             std::max<int64_t>(0, c.env->NowMonotonicNanos() - start));
  return served;
}

base::StatusOr<int> TieredCache::Put(CacheKey key, std::string_view value) {
  Impl& c = *impl_;
  if (value.size() > c.h().record_bytes) {
    return base::InvalidArgumentError("value of " + std::to_string(value.size()) +
                                          " bytes; the records hold " +
                                          std::to_string(c.h().record_bytes),
                                      "tiered cache put");
  }
  const auto* data = reinterpret_cast<const unsigned char*>(value.data());
  Impl::Locked lock(c);
  int placed = -1;
  for (int t = 0; t < c.tiers(); ++t) {
    uint32_t slot = c.policies[t].Find(key);
    if (placed >= 0) {  // a lower tier's older copy would come back on demotion
      if (slot != kNoSlot) {
        c.meta(t)[slot].ready = 0;
        c.policies[t].Erase(key);
      }
      continue;
    }
    if (slot == kNoSlot) {
      std::vector<LfuEviction> evicted;
      slot = c.policies[t].Insert(key, &evicted);
      for (const auto& e : evicted) SEEDANCE_RETURN_IF_ERROR(c.DemoteLocked(t, e));
    }
    if (slot != kNoSlot) {
      SEEDANCE_RETURN_IF_ERROR(c.WriteRecord(t, slot, key, data, value.size()));
      placed = t;
    }
  }
  return placed;
}

bool TieredCache::Pin(CacheKey key) {
  Impl& c = *impl_;
  Impl::Locked lock(c);
  if (c.policies[0].Find(key) == kNoSlot) return false;
  std::vector<LfuEviction> evicted;
  const bool ok = c.policies[0].Pin(key, &evicted);
  for (const auto& e : evicted) {
    if (!c.DemoteLocked(0, e).ok()) break;  // the victim is gone from host memory either way
  }
  return ok;
}

void TieredCache::Unpin(CacheKey key) {
  Impl& c = *impl_;
  Impl::Locked lock(c);
  std::vector<LfuEviction> evicted;
  c.policies[0].Unpin(key, &evicted);
  for (const auto& e : evicted) {
    if (!c.DemoteLocked(0, e).ok()) break;
  }
}

TieredCacheStats TieredCache::Stats() const {
  Impl& c = *impl_;
  TieredCacheStats s;
  Impl::Locked lock(c);
  for (int t = 0; t < c.tiers(); ++t) {
    TierHeader& th = c.h().tier[t];
    CacheTierStats ts;
    ts.name = th.name;
    ts.capacity = th.capacity;
    ts.entries = c.policies[t].size();
    ts.hits = th.hits;
    ts.admitted = th.admitted;
    ts.evictions = th.evictions;
    ts.scanning = c.policies[t].scanning();
    std::tie(ts.latency_buckets, ts.latency_sum_s) = ReadLatency(th.latency);
    s.tiers.push_back(std::move(ts));
  }
  s.misses = std::atomic_ref<uint64_t>(c.h().misses).load(std::memory_order_relaxed);
  std::tie(s.miss_latency_buckets, s.miss_latency_sum_s) = ReadLatency(c.h().miss_latency);
  s.resets = c.h().resets;
  return s;
}

std::string TieredCache::RenderPrometheus() const {
  const TieredCacheStats s = Stats();
  base::PrometheusWriter w;
  w.Family("seedance_cache_gets_total", "counter",
           "Gets of the tiered sample cache by the tier that served them (tier=\"miss\": none).");
  for (const auto& t : s.tiers) w.Sample({{"tier", t.name}}, static_cast<double>(t.hits));
  w.Sample({{"tier", "miss"}}, static_cast<double>(s.misses));
  w.Family("seedance_cache_get_seconds", "histogram",
           "Latency of a get, by the tier that served it (tier=\"miss\": none).");
  for (const auto& t : s.tiers) {
    w.Histogram({{"tier", t.name}}, kLatencyBounds, t.latency_buckets, t.latency_sum_s);
  }
  w.Histogram({{"tier", "miss"}}, kLatencyBounds, s.miss_latency_buckets, s.miss_latency_sum_s);
  // One sample per tier of a per-tier family.
  auto per_tier = [&](const char* name, const char* type, const char* help,
                      uint64_t (*value)(const CacheTierStats&)) {
    w.Family(name, type, help);
    for (const auto& t : s.tiers) w.Sample({{"tier", t.name}}, static_cast<double>(value(t)));
  };
  per_tier("seedance_cache_entries", "gauge", "Records held by each tier.",
           [](const CacheTierStats& t) { return t.entries; });
  per_tier("seedance_cache_capacity_entries", "gauge", "Records each tier can hold.",
           [](const CacheTierStats& t) { return t.capacity; });
  per_tier("seedance_cache_admissions_total", "counter",
           "Records written into each tier (puts, promotions, demotions).",
           [](const CacheTierStats& t) { return t.admitted; });
  per_tier("seedance_cache_evictions_total", "counter", "Records each tier's policy evicted.",
           [](const CacheTierStats& t) { return t.evictions; });
  per_tier("seedance_cache_scanning", "gauge",
           "1 while a tier's policy sees an epoch-shuffled scan and stops evicting.",
           [](const CacheTierStats& t) { return uint64_t{t.scanning ? 1U : 0U}; });
  w.Family("seedance_cache_resets_total", "counter",
           "Times the cache emptied itself after a process died holding its lock.");
  w.Sample({}, static_cast<double>(s.resets));
  return w.str();
}

std::string TieredCache::Check() const {
  Impl& c = *impl_;
  Impl::Locked lock(c);
  for (int t = 0; t < c.tiers(); ++t) {
    const std::string tier = std::string("tier ") + c.h().tier[t].name + ": ";
    if (std::string e = c.policies[t].Check(); !e.empty()) return tier + e;
    for (uint32_t slot = 0; slot <= c.h().tier[t].capacity; ++slot) {
      const SlotMeta& m = c.meta(t)[slot];
      if (m.ready != 0 && c.policies[t].Find(m.key) != slot) {
        return tier + "slot " + std::to_string(slot) +
               " holds a key the policy does not place there";
      }
      if (m.length > c.h().record_bytes) return tier + "slot " + std::to_string(slot) + " length";
    }
  }
  return {};
}

const std::string& TieredCache::path() const { return impl_->path; }
uint64_t TieredCache::record_bytes() const { return impl_->h().record_bytes; }

base::Status TieredCache::Remove() {
  for (const auto& f : impl_->tier_files) {
    if (!f.empty() && unlink(f.c_str()) != 0 && errno != ENOENT) {
      return base::IoError(Errno("cannot remove", f), "tiered cache");
    }
  }
  if (unlink(impl_->path.c_str()) != 0 && errno != ENOENT) {
    return base::IoError(Errno("cannot remove", impl_->path), "tiered cache");
  }
  return base::OkStatus();
}

}  // namespace seedance::control
