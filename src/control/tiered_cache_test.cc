#include "seedance/control/tiered_cache.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "seedance/base/fake_env.h"

namespace seedance::control {
namespace {

namespace fs = std::filesystem;

class TieredCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("seedance-tc-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "ssd");
    fs::create_directories(dir_ / "hdd");
  }
  void TearDown() override { fs::remove_all(dir_); }

  TieredCacheOptions Options(uint64_t host, uint64_t ssd, uint64_t hdd) const {
    TieredCacheOptions o;
    o.path = (dir_ / "state").string();
    o.record_bytes = 64;
    o.tiers = {{"host", "", host}};
    if (ssd > 0) o.tiers.push_back({"ssd", (dir_ / "ssd").string(), ssd});
    if (hdd > 0) o.tiers.push_back({"hdd", (dir_ / "hdd").string(), hdd});
    return o;
  }

  fs::path dir_;
};

// A sample's bytes: a function of its key and a version, of varying length.
std::string Value(CacheKey k, int version = 0) {
  std::string v(1 + (k * 7 + static_cast<CacheKey>(version)) % 64, '\0');
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<char>('a' + (k + i + version) % 26);
  return v;
}

TEST_F(TieredCacheTest, AMissIsPutThenServedFromHostMemory) {
  auto c = TieredCache::Create(Options(4, 8, 0)).value();
  std::string out = "junk";
  EXPECT_EQ(c->Get(7, &out).value(), -1);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(c->Put(7, Value(7)).value(), 0);
  EXPECT_EQ(c->Get(7, &out).value(), 0);
  EXPECT_EQ(out, Value(7));
  const auto s = c->Stats();
  EXPECT_EQ(s.tiers[0].hits, 1U);
  EXPECT_EQ(s.misses, 1U);
  EXPECT_EQ(s.tiers[0].entries, 1U);
  EXPECT_EQ(c->Check(), "");
  EXPECT_FALSE(c->Put(8, std::string(65, 'x')).ok());  // over record_bytes
}

// Host memory overflows into the disk tiers and hits there come back up.
TEST_F(TieredCacheTest, EvictionsDemoteAndDiskHitsPromote) {
  auto c = TieredCache::Create(Options(4, 16, 64)).value();
  std::string out;
  for (CacheKey k = 0; k < 40; ++k) {
    ASSERT_EQ(c->Get(k, &out).value(), -1);
    ASSERT_GE(c->Put(k, Value(k)).value(), 0);
  }
  const auto before = c->Stats();
  EXPECT_EQ(before.tiers[0].entries, 4U);
  EXPECT_GT(before.tiers[1].entries, 0U);
  EXPECT_GT(before.tiers[2].entries, 0U);
  int from_disk = 0;
  for (CacheKey k = 0; k < 40; ++k) {
    const int tier = c->Get(k, &out).value();
    ASSERT_GE(tier, 0) << k;  // 4 + 16 + 64 records hold all 40
    ASSERT_EQ(out, Value(k)) << k;
    from_disk += tier > 0 ? 1 : 0;
  }
  EXPECT_GT(from_disk, 0);
  EXPECT_EQ(c->Check(), "");
}

// Random gets and puts (with overwrites) against a map: a get returns the latest value or
// nothing, never a stale or foreign one.
TEST_F(TieredCacheTest, NeverServesAStaleOrForeignValue) {
  auto c = TieredCache::Create(Options(8, 24, 48)).value();
  std::map<CacheKey, int> version;
  std::mt19937 rng(11);
  std::string out;
  int served = 0;
  for (int i = 0; i < 20000; ++i) {
    const CacheKey k = rng() % 120;
    const int tier = c->Get(k, &out).value();
    if (tier >= 0) {
      ASSERT_TRUE(version.count(k)) << k;
      ASSERT_EQ(out, Value(k, version[k])) << "key " << k << " tier " << tier;
      ++served;
    }
    if (tier < 0 || rng() % 10 == 0) {
      const int v = (version.count(k) ? version[k] : 0) + (tier >= 0 ? 1 : 0);
      version[k] = v;
      ASSERT_TRUE(c->Put(k, Value(k, v)).ok());
    }
    if (i % 2000 == 0) {
      ASSERT_EQ(c->Check(), "") << i;
    }
  }
  EXPECT_GT(served, 5000);
  const auto s = c->Stats();
  uint64_t gets = s.misses;
  for (const auto& t : s.tiers) gets += t.hits;
  EXPECT_EQ(gets, 20000U);
}

TEST_F(TieredCacheTest, PinnedRecordsStayInHostMemory) {
  auto c = TieredCache::Create(Options(4, 8, 0)).value();
  std::string out;
  ASSERT_EQ(c->Put(1, Value(1)).value(), 0);
  EXPECT_TRUE(c->Pin(1));
  EXPECT_FALSE(c->Pin(999));  // not held
  for (CacheKey k = 100; k < 200; ++k) {
    c->Get(k, &out).value();
    c->Put(k, Value(k)).value();
  }
  EXPECT_EQ(c->Get(1, &out).value(), 0);
  EXPECT_EQ(out, Value(1));
  c->Unpin(1);
  EXPECT_EQ(c->Check(), "");
}

// Epoch-shuffled reads of a dataset 4x host memory: host memory stops evicting (the scan
// detector) and keeps capacity/dataset of each later epoch; the disk tier holds the rest.
TEST_F(TieredCacheTest, ShuffledEpochsStopChurningHostMemory) {
  auto c = TieredCache::Create(Options(100, 400, 0)).value();
  std::mt19937_64 rng(3);
  std::vector<CacheKey> order(400);
  for (CacheKey k = 0; k < 400; ++k) order[k] = k;
  std::string out;
  for (int epoch = 0; epoch < 6; ++epoch) {
    std::shuffle(order.begin(), order.end(), rng);
    for (CacheKey k : order) {
      if (c->Get(k, &out).value() < 0) {
        ASSERT_GE(c->Put(k, Value(k)).value(), 0);
      }
    }
  }
  const auto s = c->Stats();
  EXPECT_TRUE(s.tiers[0].scanning);
  EXPECT_EQ(s.misses, 400U);  // the first epoch; the disk tier serves the rest
  EXPECT_GT(static_cast<double>(s.tiers[0].hits) / (5 * 400), 0.2);
  EXPECT_EQ(c->Check(), "");
}

// Processes share one copy: each of four children reads every key and puts what it missed;
// between them the keys are loaded about once, not four times.
TEST_F(TieredCacheTest, ForkedWorkersShareOneCopy) {
  const auto options = Options(512, 0, 0);
  auto c = TieredCache::Create(options).value();
  constexpr int kWorkers = 4;
  constexpr CacheKey kKeys = 400;
  std::vector<pid_t> kids;
  for (int w = 0; w < kWorkers; ++w) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto mine = TieredCache::Open(options.path);
      if (!mine.ok()) _exit(2);
      std::string out;
      for (int round = 0; round < 3; ++round) {
        for (CacheKey i = 0; i < kKeys; ++i) {
          const CacheKey k = (i * 37 + static_cast<CacheKey>(w) * 101) % kKeys;
          auto got = mine.value()->Get(k, &out);
          if (!got.ok()) _exit(3);
          if (got.value() >= 0 && out != Value(k)) _exit(4);
          if (got.value() < 0 && !mine.value()->Put(k, Value(k)).ok()) _exit(5);
        }
      }
      _exit(0);
    }
    kids.push_back(pid);
  }
  for (pid_t pid : kids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
  }
  const auto s = c->Stats();
  EXPECT_EQ(s.tiers[0].hits + s.misses, uint64_t{kWorkers} * 3 * kKeys);
  // A key is missed by every worker that asks before the first put lands; after that, hits.
  EXPECT_LT(s.misses, 2 * kKeys);
  EXPECT_EQ(s.tiers[0].entries, kKeys);
  EXPECT_EQ(c->Check(), "");
}

// Threads of one process (a thread-pool loader) through one handle, with a disk tier.
TEST_F(TieredCacheTest, ThreadsShareOneHandle) {
  auto c = TieredCache::Create(Options(32, 64, 0)).value();
  std::vector<std::thread> threads;
  threads.reserve(4);
  std::vector<int> bad(4, 0);
  for (int w = 0; w < 4; ++w) {
    threads.emplace_back([&, w] {
      std::string out;
      for (CacheKey i = 0; i < 3000; ++i) {
        const CacheKey k = (i * 31 + static_cast<CacheKey>(w) * 7) % 150;
        const int tier = c->Get(k, &out).value();
        if (tier >= 0 && out != Value(k)) ++bad[w];
        if (tier < 0) (void)c->Put(k, Value(k)).value();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad, std::vector<int>(4, 0));
  const auto s = c->Stats();
  EXPECT_EQ(s.tiers[0].hits + s.tiers[1].hits + s.misses, 4U * 3000);
  EXPECT_EQ(c->Check(), "");
}

// A worker killed at random moments, sometimes inside the lock: the survivors neither hang
// nor see a broken state (a robust mutex; the cache empties itself when its holder died).
TEST_F(TieredCacheTest, AKilledWorkerDoesNotWedgeTheOthers) {
  const auto options = Options(64, 128, 0);
  auto c = TieredCache::Create(options).value();
  std::mt19937 rng(2);
  for (int round = 0; round < 20; ++round) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto mine = TieredCache::Open(options.path).value();
      std::string out;
      for (uint64_t i = 0;; ++i) {
        const CacheKey k = (i * 2654435761U) % 500;
        if (mine->Get(k, &out).value() < 0) (void)mine->Put(k, Value(k)).value();
      }
    }
    std::this_thread::sleep_for(std::chrono::microseconds(500 + rng() % 3000));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    std::string out;
    for (CacheKey k = 0; k < 50; ++k) {
      const int tier = c->Get(k, &out).value();
      if (tier >= 0) {
        ASSERT_EQ(out, Value(k));
      }
    }
    ASSERT_EQ(c->Check(), "") << "after kill " << round;
  }
  // The loop spends most of its time inside the lock: some kills land there, so the recovery
  // path ran.
  EXPECT_GT(c->Stats().resets, 0U);
}

TEST_F(TieredCacheTest, BadOptionsAndFilesAreRejectedWithTheirField) {
  auto o = Options(4, 8, 0);
  o.tiers[1].name = "has space";
  auto r = TieredCache::Create(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("tiers[1].name"), std::string::npos);
  o = Options(4, 8, 0);
  o.tiers[0].dir = "/tmp";
  EXPECT_FALSE(TieredCache::Create(o).ok());
  o = Options(0, 8, 0);
  EXPECT_FALSE(TieredCache::Create(o).ok());
  o = Options(4, 8, 0);
  o.record_bytes = 0;
  EXPECT_FALSE(TieredCache::Create(o).ok());
  o = Options(4, 8, 0);
  o.tiers[1].dir = (dir_ / "missing").string();
  EXPECT_FALSE(TieredCache::Create(o).ok());
  EXPECT_FALSE(fs::exists(o.path));  // nothing half-built left behind

  auto c = TieredCache::Create(Options(4, 8, 0)).value();
  EXPECT_FALSE(TieredCache::Create(Options(4, 8, 0)).ok());  // exists: not clobbered
  EXPECT_FALSE(TieredCache::Open((dir_ / "nothing").string()).ok());
  const std::string junk = (dir_ / "junk").string();
  std::ofstream(junk) << std::string(8192, 'j');
  auto bad = TieredCache::Open(junk);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("magic"), std::string::npos);
  ASSERT_TRUE(c->Remove().ok());
  EXPECT_FALSE(fs::exists(dir_ / "state"));
}

TEST_F(TieredCacheTest, MetricsCountEveryGetInItsTier) {
  base::FakeEnv env;  // a clock that stands still: every get takes 0 s, the first bucket
  auto o = Options(2, 8, 0);
  o.env = &env;
  auto c = TieredCache::Create(o).value();
  std::string out;
  for (CacheKey k = 0; k < 6; ++k) {
    c->Get(k, &out).value();
    c->Put(k, Value(k)).value();
  }
  for (CacheKey k = 0; k < 6; ++k) c->Get(k, &out).value();
  const auto s = c->Stats();
  const std::string text = c->RenderPrometheus();
  EXPECT_NE(
      text.find("seedance_cache_gets_total{tier=\"host\"} " + std::to_string(s.tiers[0].hits)),
      std::string::npos);
  EXPECT_NE(text.find("seedance_cache_gets_total{tier=\"ssd\"} " + std::to_string(s.tiers[1].hits)),
            std::string::npos);
  EXPECT_NE(text.find("seedance_cache_gets_total{tier=\"miss\"} 6"), std::string::npos);
  EXPECT_NE(text.find("seedance_cache_get_seconds_bucket{tier=\"host\",le=\"5e-07\"}"),
            std::string::npos);
  EXPECT_NE(text.find("seedance_cache_get_seconds_count{tier=\"miss\"} 6"), std::string::npos);
  EXPECT_EQ(s.tiers[0].hits + s.tiers[1].hits, 6U);
  EXPECT_EQ(s.tiers[0].latency_buckets.front(), s.tiers[0].hits);
  EXPECT_EQ(s.tiers[0].latency_sum_s, 0.0);
  EXPECT_NE(text.find("seedance_cache_get_seconds_bucket{tier=\"ssd\",le=\"5e-07\"} " +
                      std::to_string(s.tiers[1].hits)),
            std::string::npos);
  EXPECT_NE(text.find("seedance_cache_get_seconds_sum{tier=\"host\"} 0\n"), std::string::npos);
}

}  // namespace
}  // namespace seedance::control
