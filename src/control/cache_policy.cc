#include "seedance/control/cache_policy.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <list>
#include <queue>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace seedance::control {
namespace {

// Keys in recency order, most recent at the front, with O(1) lookup, touch and removal.
class RecencyList {
 public:
  bool Contains(CacheKey k) const { return where_.count(k) != 0; }
  size_t size() const { return order_.size(); }
  bool empty() const { return order_.empty(); }
  void PushFront(CacheKey k) {
    order_.push_front(k);
    where_[k] = order_.begin();
  }
  void Touch(CacheKey k) { order_.splice(order_.begin(), order_, where_.at(k)); }
  CacheKey Back() const { return order_.back(); }
  CacheKey PopBack() {
    const CacheKey k = order_.back();
    order_.pop_back();
    where_.erase(k);
    return k;
  }
  void Erase(CacheKey k) {
    auto it = where_.find(k);
    order_.erase(it->second);
    where_.erase(it);
  }

 private:
  std::list<CacheKey> order_;
  std::unordered_map<CacheKey, std::list<CacheKey>::iterator> where_;
};

class LruPolicy : public CachePolicy {
 public:
  explicit LruPolicy(size_t capacity) : capacity_(capacity) {}
  std::string_view name() const override { return "lru"; }
  bool Access(CacheKey key) override {
    if (list_.Contains(key)) {
      list_.Touch(key);
      return true;
    }
    if (capacity_ == 0) return false;
    if (list_.size() == capacity_) list_.PopBack();
    list_.PushFront(key);
    return false;
  }
  bool Contains(CacheKey key) const override { return list_.Contains(key); }
  size_t size() const override { return list_.size(); }

 private:
  size_t capacity_;
  RecencyList list_;
};

class ArcPolicy : public CachePolicy {
 public:
  explicit ArcPolicy(size_t capacity) : c_(capacity) {}
  std::string_view name() const override { return "arc"; }
  bool Contains(CacheKey key) const override { return t1_.Contains(key) || t2_.Contains(key); }
  size_t size() const override { return t1_.size() + t2_.size(); }

  bool Access(CacheKey x) override {
    if (c_ == 0) return false;
    if (t1_.Contains(x)) {
      t1_.Erase(x);
      t2_.PushFront(x);
      return true;
    }
    if (t2_.Contains(x)) {
      t2_.Touch(x);
      return true;
    }
    const auto b1 = static_cast<double>(b1_.size());
    const auto b2 = static_cast<double>(b2_.size());
    if (b1_.Contains(x)) {
      p_ = std::min(static_cast<double>(c_), p_ + std::max(b2 / b1, 1.0));
      Replace(false);
      b1_.Erase(x);
      t2_.PushFront(x);
      return false;
    }
    if (b2_.Contains(x)) {
      p_ = std::max(0.0, p_ - std::max(b1 / b2, 1.0));
      Replace(true);
      b2_.Erase(x);
      t2_.PushFront(x);
      return false;
    }
    if (t1_.size() + b1_.size() == c_) {
      if (t1_.size() < c_) {
        b1_.PopBack();
        Replace(false);
      } else {
        t1_.PopBack();
      }
    } else if (t1_.size() + t2_.size() + b1_.size() + b2_.size() >= c_) {
      if (t1_.size() + t2_.size() + b1_.size() + b2_.size() == 2 * c_) b2_.PopBack();
      Replace(false);
    }
    t1_.PushFront(x);
    return false;
  }

 private:
  // Makes room in T1 + T2, moving the victim's key to its ghost list.
  void Replace(bool in_b2) {
    if (t1_.size() + t2_.size() < c_) return;
    const auto t1 = static_cast<double>(t1_.size());
    if (!t1_.empty() && ((in_b2 && t1 == p_) || t1 > p_ || t2_.empty())) {
      b1_.PushFront(t1_.PopBack());
    } else {
      b2_.PushFront(t2_.PopBack());
    }
  }

  size_t c_;
  double p_ = 0;  // target size of T1
  RecencyList t1_, t2_, b1_, b2_;
};

// Four rows of 4-bit counters (a byte each here), halved every 10 x capacity increments.
class FrequencySketch {
 public:
  explicit FrequencySketch(size_t capacity)
      : width_(std::max<size_t>(16, std::bit_ceil(std::max<size_t>(capacity, 1)))),
        reset_at_(std::max<size_t>(10 * capacity, 16)) {
    for (auto& row : rows_) row.assign(width_, 0);
  }
  void Increment(CacheKey k) {
    for (size_t r = 0; r < rows_.size(); ++r) {
      uint8_t& c = rows_[r][Slot(k, r)];
      if (c < 15) ++c;
    }
    if (++samples_ >= reset_at_) {
      for (auto& row : rows_) {
        for (uint8_t& c : row) c = static_cast<uint8_t>(c / 2);
      }
      samples_ /= 2;
    }
  }
  int Estimate(CacheKey k) const {
    int m = 15;
    for (size_t r = 0; r < rows_.size(); ++r) m = std::min<int>(m, rows_[r][Slot(k, r)]);
    return m;
  }

 private:
  size_t Slot(CacheKey k, size_t row) const {
    uint64_t z = k + 0x9E3779B97F4A7C15ULL * (row + 1);  // splitmix64, one seed per row
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return static_cast<size_t>(z ^ (z >> 31)) & (width_ - 1);
  }

  size_t width_;
  size_t reset_at_;
  size_t samples_ = 0;
  std::array<std::vector<uint8_t>, 4> rows_;
};

class WTinyLfu {
 public:
  explicit WTinyLfu(size_t capacity) : sketch_(capacity) { SetCapacity(capacity); }

  bool Contains(CacheKey k) const {
    return window_.Contains(k) || probation_.Contains(k) || protected_.Contains(k);
  }
  size_t size() const { return window_.size() + probation_.size() + protected_.size(); }

  // A hit updates recency; a miss is admitted when `admit` (else only counted).
  bool Access(CacheKey k, bool admit) {
    sketch_.Increment(k);
    if (window_.Contains(k)) {
      window_.Touch(k);
      return true;
    }
    if (protected_.Contains(k)) {
      protected_.Touch(k);
      return true;
    }
    if (probation_.Contains(k)) {
      probation_.Erase(k);
      protected_.PushFront(k);
      while (protected_.size() > protected_cap_) probation_.PushFront(protected_.PopBack());
      return true;
    }
    if (admit) Insert(k);
    return false;
  }

  // The miss path: into the window; the window's overflow competes for the main space.
  void Insert(CacheKey k) {
    if (capacity_ == 0 || Contains(k)) return;
    window_.PushFront(k);
    if (window_.size() <= window_cap_) return;
    const CacheKey candidate = window_.PopBack();
    const size_t main_cap = capacity_ - window_cap_;
    if (probation_.size() + protected_.size() < main_cap) {
      probation_.PushFront(candidate);
      return;
    }
    if (main_cap == 0) return;
    RecencyList& victims = probation_.empty() ? protected_ : probation_;
    if (sketch_.Estimate(candidate) > sketch_.Estimate(victims.Back())) {
      victims.PopBack();
      probation_.PushFront(candidate);
    }
  }

  void Erase(CacheKey k) {
    for (RecencyList* l : {&window_, &probation_, &protected_}) {
      if (l->Contains(k)) l->Erase(k);
    }
  }

  void SetCapacity(size_t capacity) {
    capacity_ = capacity;
    window_cap_ = capacity == 0 ? 0 : std::max<size_t>(1, capacity / 100);
    const size_t main_cap = capacity - window_cap_;
    protected_cap_ = main_cap * 4 / 5;
    while (window_.size() > window_cap_) window_.PopBack();
    while (protected_.size() > protected_cap_) probation_.PushFront(protected_.PopBack());
    while (probation_.size() + protected_.size() > main_cap) {
      (probation_.empty() ? protected_ : probation_).PopBack();
    }
  }

 private:
  FrequencySketch sketch_;
  size_t capacity_ = 0, window_cap_ = 0, protected_cap_ = 0;
  RecencyList window_, probation_, protected_;
};

class WTinyLfuPolicy : public CachePolicy {
 public:
  explicit WTinyLfuPolicy(size_t capacity) : lfu_(capacity) {}
  std::string_view name() const override { return "w-tinylfu"; }
  bool Access(CacheKey key) override { return lfu_.Access(key, true); }
  bool Contains(CacheKey key) const override { return lfu_.Contains(key); }
  size_t size() const override { return lfu_.size(); }

 private:
  WTinyLfu lfu_;
};

}  // namespace

class ScanAwarePolicy::Impl {
 public:
  explicit Impl(size_t capacity)
      : capacity_(capacity), lfu_(capacity), ring_(std::max<size_t>(2 * capacity, 16)) {}

  bool Access(CacheKey key) {
    Observe(key);
    if (pinned_.count(key) != 0) return true;
    const bool full = lfu_.size() + pinned_.size() >= capacity_;
    return lfu_.Access(key, !(scanning_ && full));
  }

  bool Contains(CacheKey key) const { return pinned_.count(key) != 0 || lfu_.Contains(key); }
  size_t size() const { return lfu_.size() + pinned_.size(); }
  bool scanning() const { return scanning_; }

  bool Pin(CacheKey key) {
    if (pinned_.count(key) != 0) return true;
    if (pinned_.size() + 1 >= capacity_) return false;
    lfu_.Erase(key);
    pinned_.insert(key);
    lfu_.SetCapacity(capacity_ - pinned_.size());
    return true;
  }
  void Unpin(CacheKey key) {
    if (pinned_.erase(key) == 0) return;
    lfu_.SetCapacity(capacity_ - pinned_.size());
    lfu_.Insert(key);  // stays cached, now evictable
  }
  void Prewarm(const std::vector<CacheKey>& keys) {
    for (CacheKey k : keys) {
      if (pinned_.count(k) == 0) lfu_.Insert(k);
    }
  }

 private:
  // The scan detector: of the last ring_.size() accesses, how many repeated a key already in
  // the window.
  void Observe(CacheKey key) {
    Slot& slot = ring_[next_];
    if (filled_ == ring_.size()) {  // the oldest access leaves the window
      if (slot.repeat) --repeats_;
      auto it = in_window_.find(slot.key);
      if (--it->second == 0) in_window_.erase(it);
    } else {
      ++filled_;
    }
    int& count = in_window_[key];
    slot = {key, count > 0};
    if (slot.repeat) ++repeats_;
    ++count;
    next_ = (next_ + 1) % ring_.size();
    if (filled_ < ring_.size()) return;
    const double rate = static_cast<double>(repeats_) / static_cast<double>(filled_);
    const bool full = lfu_.size() + pinned_.size() >= capacity_;
    if (!scanning_ && full && rate < 0.01) scanning_ = true;
    if (scanning_ && rate > 0.3) scanning_ = false;
  }

  struct Slot {
    CacheKey key = 0;
    bool repeat = false;
  };

  size_t capacity_;
  WTinyLfu lfu_;
  std::unordered_set<CacheKey> pinned_;
  std::vector<Slot> ring_;
  size_t next_ = 0, filled_ = 0, repeats_ = 0;
  std::unordered_map<CacheKey, int> in_window_;
  bool scanning_ = false;
};

ScanAwarePolicy::ScanAwarePolicy(size_t capacity) : impl_(std::make_unique<Impl>(capacity)) {}
ScanAwarePolicy::~ScanAwarePolicy() = default;
bool ScanAwarePolicy::Access(CacheKey key) { return impl_->Access(key); }
bool ScanAwarePolicy::Contains(CacheKey key) const { return impl_->Contains(key); }
size_t ScanAwarePolicy::size() const { return impl_->size(); }
bool ScanAwarePolicy::Pin(CacheKey key) { return impl_->Pin(key); }
void ScanAwarePolicy::Unpin(CacheKey key) { impl_->Unpin(key); }
void ScanAwarePolicy::Prewarm(const std::vector<CacheKey>& keys) { impl_->Prewarm(keys); }
bool ScanAwarePolicy::scanning() const { return impl_->scanning(); }

std::unique_ptr<CachePolicy> NewLruPolicy(size_t capacity) {
  return std::make_unique<LruPolicy>(capacity);
}
std::unique_ptr<CachePolicy> NewArcPolicy(size_t capacity) {
  return std::make_unique<ArcPolicy>(capacity);
}
std::unique_ptr<CachePolicy> NewWTinyLfuPolicy(size_t capacity) {
  return std::make_unique<WTinyLfuPolicy>(capacity);
}

int64_t CountHits(CachePolicy& policy, const std::vector<CacheKey>& trace) {
  int64_t hits = 0;
  for (CacheKey k : trace) hits += policy.Access(k) ? 1 : 0;
  return hits;
}

int64_t BeladyHits(const std::vector<CacheKey>& trace, size_t capacity) {
  const size_t n = trace.size();
  constexpr size_t kNever = SIZE_MAX;
  std::vector<size_t> next_use(n, kNever);
  std::unordered_map<CacheKey, size_t> later;
  for (size_t i = n; i-- > 0;) {
    auto it = later.find(trace[i]);
    next_use[i] = it == later.end() ? kNever : it->second;
    later[trace[i]] = i;
  }
  // Held keys by their next use (a max-heap with stale entries skipped).
  std::unordered_map<CacheKey, size_t> held;  // key -> its current next use
  std::priority_queue<std::pair<size_t, CacheKey>> heap;
  int64_t hits = 0;
  for (size_t i = 0; i < n; ++i) {
    const CacheKey k = trace[i];
    auto it = held.find(k);
    if (it != held.end()) {
      ++hits;
      it->second = next_use[i];
      heap.emplace(next_use[i], k);
      continue;
    }
    if (capacity == 0) continue;
    bool keep = true;
    if (held.size() == capacity) {
      while (true) {  // the held key used furthest in the future, skipping stale heap entries
        const auto [use, victim] = heap.top();
        auto h = held.find(victim);
        if (h == held.end() || h->second != use) {
          heap.pop();
          continue;
        }
        if (next_use[i] >= use) {
          keep = false;  // bypass: k comes back no sooner than that key
        } else {
          heap.pop();
          held.erase(h);
        }
        break;
      }
    }
    if (keep) {
      held[k] = next_use[i];
      heap.emplace(next_use[i], k);
    }
  }
  return hits;
}

}  // namespace seedance::control
