// The caching allocator. See include/seedance/mem/caching_allocator.h for the
// object hierarchy, the invariants and the policies. Every public method takes
// the one lock; everything below it runs under that lock.
#include "seedance/mem/caching_allocator.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "seedance/base/enum_names.h"

namespace seedance::mem {

namespace {

constexpr base::EnumTable<AllocatorPolicy, 5> kPolicyNames = {
    {{AllocatorPolicy::kSeedance, "seedance"},
     {AllocatorPolicy::kSeedanceStitch, "seedance-stitch"},
     {AllocatorPolicy::kBestFit, "best-fit"},
     {AllocatorPolicy::kFirstFit, "first-fit"},
     {AllocatorPolicy::kCaching2MiB, "caching-2mib"}}};

}  // namespace

std::string_view AllocatorPolicyName(AllocatorPolicy policy) {
  return base::EnumName(kPolicyNames, policy);
}

base::StatusOr<AllocatorPolicy> ParseAllocatorPolicy(std::string_view name) {
  return base::ParseEnum(kPolicyNames, name, "policy");
}

namespace {

constexpr size_t kMinBlock = 512;                   // rounding unit of every request
constexpr size_t kSmallRequest = size_t{1} << 20;   // <= 1 MiB: small pool
constexpr size_t kSmallSegment = size_t{2} << 20;   // small-pool segments
constexpr size_t kMidRequest = size_t{10} << 20;    // caching-2mib: 1-10 MiB ...
constexpr size_t kMidSegment = size_t{20} << 20;    // ... come from 20 MiB segments
constexpr size_t kLargeRound = size_t{2} << 20;     // larger segments round to 2 MiB
constexpr size_t kFragmentLimit = size_t{1} << 20;  // seedance: remainders below this are penalised
constexpr int kScoredCandidates = 8;

size_t RoundUp(size_t v, size_t unit) { return (v + unit - 1) / unit * unit; }
size_t RoundDown(size_t v, size_t unit) { return v / unit * unit; }

enum class State : uint8_t { kFree, kAllocated, kHole };
enum class Select { kBest, kFirst, kScored };

struct Segment;

struct Block {
  uintptr_t addr = 0;
  size_t size = 0;
  State state = State::kFree;
  size_t requested = 0;
  Block* prev = nullptr;
  Block* next = nullptr;
  Segment* segment = nullptr;
};

struct Segment {
  uintptr_t base = 0;
  size_t size = 0;           // extent tiled by blocks
  size_t address_space = 0;  // reserved from the back end (>= size for expandable ones)
  bool expandable = false;
  Block* head = nullptr;
  Block* tail = nullptr;
};

struct BySize {
  bool operator()(const Block* a, const Block* b) const {
    return std::tie(a->size, a->addr) < std::tie(b->size, b->addr);
  }
};
struct ByAddr {
  bool operator()(const Block* a, const Block* b) const { return a->addr < b->addr; }
};

struct Pool {
  bool small = false;
  std::set<Block*, BySize> free_by_size;
  std::set<Block*, ByAddr> free_by_addr;
  std::vector<Segment*> segments;
  Segment* growing = nullptr;  // the expandable segment, if the policy uses one
};

struct Config {
  Select select = Select::kBest;
  bool small_pool = false;
  bool expandable = false;
  bool stitch = false;
  bool pytorch_large = false;  // 20 MiB segments for 1-10 MiB, split only above 1 MiB
};

Config ConfigFor(AllocatorPolicy policy) {
  Config c;
  switch (policy) {
    case AllocatorPolicy::kCaching2MiB:
      c.small_pool = true;
      c.pytorch_large = true;
      break;
    case AllocatorPolicy::kBestFit:
      break;
    case AllocatorPolicy::kFirstFit:
      c.select = Select::kFirst;
      break;
    case AllocatorPolicy::kSeedance:
      c.select = Select::kScored;
      c.small_pool = true;
      c.expandable = true;
      break;
    case AllocatorPolicy::kSeedanceStitch:
      // One pool: small blocks may leave slivers between large ones, but
      // stitching reclaims every whole free page, so nothing is stranded and
      // a single growing segment packs tighter than separate pools.
      c.select = Select::kScored;
      c.expandable = true;
      c.stitch = true;
      break;
  }
  return c;
}

}  // namespace

class CachingAllocator::Impl {
 public:
  Impl(AllocatorPolicy policy, std::unique_ptr<SegmentBackend> backend)
      : policy_(policy), config_(ConfigFor(policy)), backend_(std::move(backend)) {}

  ~Impl() {
    for (auto& [key, pool] : pools_) {
      for (Segment* s : pool->segments) {
        for (Block* b = s->head; b != nullptr;) {
          Block* next = b->next;
          delete b;
          b = next;
        }
        backend_->ReleaseAddressSpace(s->base, s->address_space);
        delete s;
      }
    }
    for (Block* b : spare_) delete b;
  }

  base::StatusOr<void*> Allocate(size_t size, int64_t stream) {
    std::lock_guard<std::mutex> lock(mu_);
    const size_t rounded = RoundUp(std::max<size_t>(size, 1), kMinBlock);
    Pool& pool = PoolFor(stream, config_.small_pool && rounded <= kSmallRequest);
    Block* b = Choose(pool, rounded);
    if (b == nullptr) {
      SEEDANCE_ASSIGN_OR_RETURN(b, Grow(pool, rounded));
    }
    RemoveFree(pool, b);
    Split(pool, b, rounded);
    b->state = State::kAllocated;
    b->requested = size;
    live_.emplace(b->addr, b);
    stats_.allocated_bytes += static_cast<int64_t>(b->size);
    stats_.requested_bytes += static_cast<int64_t>(size);
    stats_.allocated_peak_bytes = std::max(stats_.allocated_peak_bytes, stats_.allocated_bytes);
    stats_.requested_peak_bytes = std::max(stats_.requested_peak_bytes, stats_.requested_bytes);
    ++stats_.allocations;
    // Segments hand out addresses as integers (host, virtual or device memory alike).
    return reinterpret_cast<void*>(b->addr);
  }

  base::Status Free(void* ptr) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = live_.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == live_.end()) {
      return base::InvalidArgumentError("free of a pointer this allocator did not hand out");
    }
    Block* b = it->second;
    live_.erase(it);
    stats_.allocated_bytes -= static_cast<int64_t>(b->size);
    stats_.requested_bytes -= static_cast<int64_t>(b->requested);
    b->state = State::kFree;
    b->requested = 0;
    Pool& pool = *pool_of_[b->segment];
    // Coalesce: a free neighbour leaves the free sets, absorbs or is absorbed.
    if (b->prev && b->prev->state == State::kFree) {
      RemoveFree(pool, b->prev);
      b = Merge(b->prev, b);
    }
    if (b->next && b->next->state == State::kFree) {
      RemoveFree(pool, b->next);
      b = Merge(b, b->next);
    }
    InsertFree(pool, b);
    return base::OkStatus();
  }

  AllocatorStats stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }

  void EmptyCache() {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [key, pool] : pools_) {
      auto& segs = pool->segments;
      for (auto it = segs.begin(); it != segs.end();) {
        Segment* s = *it;
        Block* only = s->head;
        if (only == s->tail && only->state == State::kFree && !s->expandable) {
          RemoveFree(*pool, only);
          (void)backend_->Unmap(s->base, s->size);
          backend_->ReleaseAddressSpace(s->base, s->address_space);
          stats_.reserved_bytes -= static_cast<int64_t>(s->size);
          --stats_.segments;
          pool_of_.erase(s);
          DeleteBlock(only);
          delete s;
          it = segs.erase(it);
        } else {
          ++it;
        }
      }
    }
  }

  base::Status IsValid() const {
    std::lock_guard<std::mutex> lock(mu_);
    int64_t allocated = 0, reserved = 0;
    size_t live = 0;
    for (const auto& [key, pool] : pools_) {
      size_t free_blocks = 0;
      for (const Segment* s : pool->segments) {
        uintptr_t expect = s->base;
        size_t total = 0;
        for (const Block* b = s->head; b != nullptr; b = b->next) {
          if (b->addr != expect) return base::InternalError("blocks do not tile the segment");
          if (b->segment != s) return base::InternalError("block points at the wrong segment");
          if (b->next && b->next->prev != b) return base::InternalError("broken block links");
          if (b->state == State::kFree) {
            if (b->next && b->next->state == State::kFree) {
              return base::InternalError("two adjacent free blocks were not coalesced");
            }
            if (!pool->free_by_size.count(const_cast<Block*>(b)) ||
                (config_.select == Select::kFirst &&
                 !pool->free_by_addr.count(const_cast<Block*>(b)))) {
              return base::InternalError("a free block is missing from its pool's free sets");
            }
            ++free_blocks;
          }
          if (b->state == State::kAllocated) {
            allocated += static_cast<int64_t>(b->size);
            ++live;
          }
          if (b->state != State::kHole) reserved += static_cast<int64_t>(b->size);
          expect += b->size;
          total += b->size;
          if (b->next == nullptr && b != s->tail) return base::InternalError("wrong segment tail");
        }
        if (total != s->size) return base::InternalError("block sizes do not sum to the segment");
      }
      if (free_blocks != pool->free_by_size.size() ||
          (config_.select == Select::kFirst && free_blocks != pool->free_by_addr.size())) {
        return base::InternalError("a pool's free sets hold blocks that are not free");
      }
    }
    if (allocated != stats_.allocated_bytes) return base::InternalError("allocated_bytes is off");
    if (reserved != stats_.reserved_bytes) return base::InternalError("reserved_bytes is off");
    if (live != live_.size()) return base::InternalError("the live-pointer map is off");
    return base::OkStatus();
  }

  AllocatorPolicy policy() const { return policy_; }

 private:
  Pool& PoolFor(int64_t stream, bool small) {
    auto& slot = pools_[{stream, small}];
    if (!slot) {
      slot = std::make_unique<Pool>();
      slot->small = small;
    }
    return *slot;
  }

  // The address-ordered set is kept only for first fit, which needs it.
  void InsertFree(Pool& pool, Block* b) {
    pool.free_by_size.insert(b);
    if (config_.select == Select::kFirst) pool.free_by_addr.insert(b);
  }
  void RemoveFree(Pool& pool, Block* b) {
    pool.free_by_size.erase(b);
    if (config_.select == Select::kFirst) pool.free_by_addr.erase(b);
  }

  // `a` and `b` are adjacent, free and in no free set; `a` absorbs `b`.
  Block* Merge(Block* a, Block* b) {
    a->size += b->size;
    a->next = b->next;
    if (b->next) b->next->prev = a;
    if (b->segment->tail == b) b->segment->tail = a;
    DeleteBlock(b);
    return a;
  }

  Block* Choose(Pool& pool, size_t rounded) {
    Block key;
    key.size = rounded;
    key.addr = 0;
    auto it = pool.free_by_size.lower_bound(&key);
    if (it == pool.free_by_size.end()) return nullptr;
    switch (config_.select) {
      case Select::kBest:
        return *it;
      case Select::kFirst:
        for (Block* b : pool.free_by_addr) {
          if (b->size >= rounded) return b;
        }
        return nullptr;
      case Select::kScored: {
        // Among the best-fitting candidates: avoid leaving a remainder too
        // small to serve a large request; then the smallest remainder; then
        // the lowest address, which keeps the free end of the growing
        // segment contiguous.
        Block* best = nullptr;
        std::tuple<bool, size_t, uintptr_t> best_score{};
        for (int k = 0; k < kScoredCandidates && it != pool.free_by_size.end(); ++k, ++it) {
          Block* b = *it;
          const size_t rem = b->size - rounded;
          const bool fragment = !pool.small && rem > 0 && rem < kFragmentLimit;
          const auto score = std::make_tuple(fragment, rem, b->addr);
          if (best == nullptr || score < best_score) {
            best = b;
            best_score = score;
          }
          if (rem == 0) break;
        }
        return best;
      }
    }
    return nullptr;
  }

  void Split(Pool& pool, Block* b, size_t rounded) {
    const size_t rem = b->size - rounded;
    const bool split =
        pool.small || !config_.pytorch_large ? rem >= kMinBlock : rem > kSmallRequest;
    if (!split) return;
    Block* r = SplitOff(b, rounded);  // b is out of the free sets; r is free
    r->state = State::kFree;
    InsertFree(pool, r);
  }

  size_t SegmentSizeFor(const Pool& pool, size_t rounded) const {
    if (pool.small) return kSmallSegment;
    if (config_.pytorch_large && rounded <= kMidRequest) return kMidSegment;
    return RoundUp(rounded, kLargeRound);
  }

  // A free block of at least `rounded` bytes, not in the free sets' way:
  // it is inserted there, and the caller removes it again.
  base::StatusOr<Block*> Grow(Pool& pool, size_t rounded) {
    if (config_.expandable && !pool.small) return GrowExpandable(pool, rounded);
    const size_t size = RoundUp(SegmentSizeFor(pool, rounded), backend_->page_size());
    SEEDANCE_ASSIGN_OR_RETURN(Segment * s, NewSegment(pool, size));
    SEEDANCE_RETURN_IF_ERROR(backend_->Map(s->base, size));
    Block* b = AppendBlock(s, size, State::kFree);
    AddReserved(size);
    InsertFree(pool, b);
    return b;
  }

  base::StatusOr<Segment*> NewSegment(Pool& pool, size_t address_space) {
    SEEDANCE_ASSIGN_OR_RETURN(uintptr_t base, backend_->ReserveAddressSpace(address_space));
    Segment* s = new Segment;
    s->base = base;
    s->size = 0;
    s->address_space = address_space;
    pool.segments.push_back(s);
    pool_of_[s] = &pool;
    ++stats_.segments;
    return s;
  }

  Block* AppendBlock(Segment* s, size_t size, State state) {
    Block* b = NewBlock();
    b->addr = s->base + s->size;
    b->size = size;
    b->state = state;
    b->segment = s;
    b->prev = s->tail;
    if (s->tail) s->tail->next = b;
    if (!s->head) s->head = b;
    s->tail = b;
    s->size += size;
    return b;
  }

  void AddReserved(size_t bytes) {
    stats_.reserved_bytes += static_cast<int64_t>(bytes);
    stats_.reserved_peak_bytes = std::max(stats_.reserved_peak_bytes, stats_.reserved_bytes);
  }

  // The expandable segment grows at its end by whole pages: the free tail is
  // extended, or a new free tail is added. With stitching, free pages from the
  // middle of the segment are moved to the end first.
  base::StatusOr<Block*> GrowExpandable(Pool& pool, size_t rounded) {
    const size_t page = backend_->page_size();
    Segment* s = pool.growing;
    const size_t tail_free = s && s->tail && s->tail->state == State::kFree ? s->tail->size : 0;
    size_t need = RoundUp(rounded - std::min(rounded, tail_free), page);
    if (s == nullptr || s->size + need > s->address_space) {
      const size_t space = std::max(kExpandableSpace, RoundUp(rounded, page));
      SEEDANCE_ASSIGN_OR_RETURN(s, NewSegment(pool, space));
      s->expandable = true;
      pool.growing = s;
      need = RoundUp(rounded, page);
    }
    size_t moved = 0;
    if (config_.stitch && backend_->CanRemap()) {
      SEEDANCE_ASSIGN_OR_RETURN(moved, Stitch(pool, s, need));
    }
    const size_t fresh = need - moved;
    if (fresh > 0) {
      SEEDANCE_RETURN_IF_ERROR(backend_->Map(s->base + s->size, fresh));
      AddReserved(fresh);
    }
    Block* tail = s->tail;
    if (tail && tail->state == State::kFree) {
      RemoveFree(pool, tail);
      tail->size += fresh;
      s->size += fresh;
    } else if (fresh > 0) {
      tail = AppendBlock(s, fresh, State::kFree);
    }
    InsertFree(pool, tail);
    return tail;
  }

  // Moves up to `need` bytes of whole free pages from the middle of segment
  // `s` to its end, growing its free tail. Returns the bytes moved.
  base::StatusOr<size_t> Stitch(Pool& pool, Segment* s, size_t need) {
    const size_t page = backend_->page_size();
    size_t moved = 0;
    // Largest donors first: fewer remaps.
    std::vector<Block*> donors;
    for (auto it = pool.free_by_size.rbegin(); it != pool.free_by_size.rend(); ++it) {
      Block* b = *it;
      if (b->size < page) break;  // sorted by size: no later block holds a whole page
      if (b->segment == s && b != s->tail) donors.push_back(b);
    }
    for (Block* d : donors) {
      if (moved >= need) break;
      const uintptr_t lo = RoundUp(d->addr, page);
      const uintptr_t hi = RoundDown(d->addr + d->size, page);
      if (hi <= lo) continue;
      const size_t take = std::min<size_t>(hi - lo, need - moved);
      // Make sure the tail is a free block that the moved pages extend.
      Block* tail = s->tail;
      if (tail == nullptr || tail->state != State::kFree) {
        tail = AppendBlock(s, 0, State::kFree);
        InsertFree(pool, tail);
      }
      SEEDANCE_RETURN_IF_ERROR(backend_->Remap(lo, s->base + s->size, take));
      RemoveFree(pool, tail);
      tail->size += take;
      s->size += take;
      InsertFree(pool, tail);
      // The donor becomes [head free][hole][rest free].
      RemoveFree(pool, d);
      Block* hole = d;
      if (lo > d->addr) {
        hole = SplitOff(d, lo - d->addr);  // d keeps the head
        InsertFree(pool, d);
      }
      if (hole->size > take) {
        Block* rest = SplitOff(hole, take);
        InsertFree(pool, rest);
      }
      hole->state = State::kHole;
      // reserved_bytes is unchanged: the same memory, at a new address.
      moved += take;
      ++stats_.stitches;
      stats_.stitched_bytes += static_cast<int64_t>(take);
    }
    return moved;
  }

  // Cuts `b` after `first` bytes; returns the second part (same state).
  Block* SplitOff(Block* b, size_t first) {
    Block* r = NewBlock();
    r->addr = b->addr + first;
    r->size = b->size - first;
    r->state = b->state;
    r->segment = b->segment;
    r->prev = b;
    r->next = b->next;
    if (b->next) b->next->prev = r;
    b->next = r;
    if (b->segment->tail == b) b->segment->tail = r;
    b->size = first;
    return r;
  }

  // Block records are recycled: the split/merge of a malloc+free pair then
  // costs no heap traffic.
  Block* NewBlock() {
    if (spare_.empty()) return new Block;
    Block* b = spare_.back();
    spare_.pop_back();
    *b = Block{};
    return b;
  }
  void DeleteBlock(Block* b) { spare_.push_back(b); }

  static constexpr size_t kExpandableSpace = size_t{1} << 40;  // address space only

  mutable std::mutex mu_;
  AllocatorPolicy policy_;
  Config config_;
  std::unique_ptr<SegmentBackend> backend_;
  std::map<std::pair<int64_t, bool>, std::unique_ptr<Pool>> pools_;
  std::unordered_map<const Segment*, Pool*> pool_of_;
  std::unordered_map<uintptr_t, Block*> live_;
  std::vector<Block*> spare_;
  AllocatorStats stats_;
};

CachingAllocator::CachingAllocator(AllocatorPolicy policy, std::unique_ptr<SegmentBackend> backend)
    : impl_(std::make_unique<Impl>(policy, std::move(backend))) {}
CachingAllocator::~CachingAllocator() = default;
base::StatusOr<void*> CachingAllocator::Allocate(size_t size, int64_t stream) {
  return impl_->Allocate(size, stream);
}
base::Status CachingAllocator::Free(void* ptr) { return impl_->Free(ptr); }
AllocatorStats CachingAllocator::stats() const { return impl_->stats(); }
base::Status CachingAllocator::IsValid() const { return impl_->IsValid(); }
void CachingAllocator::EmptyCache() { impl_->EmptyCache(); }
AllocatorPolicy CachingAllocator::policy() const { return impl_->policy(); }

}  // namespace seedance::mem
