#include "seedance/control/cache_policy.h"

#include <algorithm>
#include <cstddef>
#include <list>
#include <queue>
#include <unordered_map>
#include <utility>

#include "seedance/control/flat_scan_lfu.h"
#include "src/control/frequency_sketch.h"

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

// W-TinyLFU's sketch (frequency_sketch.h) over counters this object owns.
class FrequencySketch {
 public:
  explicit FrequencySketch(size_t capacity)
      : counters_(internal::SketchBlocks(capacity) * internal::kSketchBlockBytes, 0),
        view_(counters_.data(), internal::SketchBlocks(capacity), &samples_,
              internal::SketchResetAt(capacity)) {}
  FrequencySketch(const FrequencySketch&) = delete;
  FrequencySketch& operator=(const FrequencySketch&) = delete;
  void Increment(CacheKey k) { view_.Increment(k); }
  int Estimate(CacheKey k) const { return view_.Estimate(k); }

 private:
  std::vector<uint8_t> counters_;
  uint64_t samples_ = 0;
  internal::SketchView view_;
};

// Node-based, kept beside the flat one (flat_scan_lfu.h) as its independent reference: with
// scan detection off the two must agree hit for hit.
class WTinyLfuPolicy : public CachePolicy {
 public:
  explicit WTinyLfuPolicy(size_t capacity)
      : sketch_(capacity),
        capacity_(capacity),
        window_cap_(capacity == 0 ? 0 : std::max<size_t>(1, capacity / 100)),
        protected_cap_((capacity - window_cap_) * 4 / 5) {}
  std::string_view name() const override { return "w-tinylfu"; }
  bool Contains(CacheKey k) const override {
    return window_.Contains(k) || probation_.Contains(k) || protected_.Contains(k);
  }
  size_t size() const override { return window_.size() + probation_.size() + protected_.size(); }

  bool Access(CacheKey k) override {
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
    Insert(k);
    return false;
  }

 private:
  // The miss path: into the window; the window's overflow competes for the main space.
  void Insert(CacheKey k) {
    if (capacity_ == 0) return;
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

  FrequencySketch sketch_;
  size_t capacity_, window_cap_, protected_cap_;
  RecencyList window_, probation_, protected_;
};

}  // namespace

// The flat implementation (flat_scan_lfu.h) in a block this object owns.
class ScanAwarePolicy::Impl {
 public:
  explicit Impl(size_t capacity)
      : block_(FlatScanLfu::BytesFor(capacity) / sizeof(Line)),
        lfu_(FlatScanLfu::Init(block_.data(), capacity)) {}
  FlatScanLfu& lfu() { return lfu_; }

 private:
  struct alignas(64) Line {
    unsigned char bytes[64];
  };
  std::vector<Line> block_;
  FlatScanLfu lfu_;
};

ScanAwarePolicy::ScanAwarePolicy(size_t capacity) : impl_(std::make_unique<Impl>(capacity)) {}
ScanAwarePolicy::~ScanAwarePolicy() = default;
bool ScanAwarePolicy::Access(CacheKey key) { return impl_->lfu().Access(key).hit; }
bool ScanAwarePolicy::Contains(CacheKey key) const { return impl_->lfu().Find(key) != kNoSlot; }
size_t ScanAwarePolicy::size() const { return impl_->lfu().size(); }
bool ScanAwarePolicy::Pin(CacheKey key) { return impl_->lfu().Pin(key, nullptr); }
void ScanAwarePolicy::Unpin(CacheKey key) { impl_->lfu().Unpin(key, nullptr); }
void ScanAwarePolicy::Prewarm(const std::vector<CacheKey>& keys) {
  for (CacheKey k : keys) impl_->lfu().Insert(k, nullptr);
}
bool ScanAwarePolicy::scanning() const { return impl_->lfu().scanning(); }

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
