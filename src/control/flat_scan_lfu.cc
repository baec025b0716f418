#include "seedance/control/flat_scan_lfu.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>

#include "src/control/frequency_sketch.h"

namespace seedance::control {
namespace {

constexpr uint64_t kLfuMagic = 0x3130305546434453ULL;  // "SDCFU001" little-endian
constexpr uint32_t kLfuVersion = 1;

enum Where : uint8_t { kFree = 0, kWindow, kProbation, kProtected, kPinned, kLists };

struct Node {
  CacheKey key;
  uint32_t prev;
  uint32_t next;
  uint8_t where;
};

struct ListHead {
  uint32_t head;
  uint32_t tail;
  uint64_t size;
};

struct RingSlot {
  CacheKey key;
  uint64_t repeat;
};

struct Count {
  CacheKey key;
  uint64_t count;  // 0 = an empty cell
};

constexpr size_t AlignToLine(size_t x) { return (x + 63) & ~size_t{63}; }

}  // namespace

struct FlatScanLfu::Header {
  uint64_t magic;
  uint32_t version;
  uint32_t detect_scans;
  uint64_t bytes;
  uint64_t capacity;
  uint64_t window_cap, protected_cap, main_cap;  // for capacity - pinned
  uint64_t index_mask;
  uint64_t sketch_blocks, sketch_samples, sketch_reset_at;
  uint64_t ring_size, ring_next, ring_filled, repeats;
  uint64_t window_mask;
  uint64_t scanning;
  ListHead lists[kLists];
  uint64_t off_nodes, off_index, off_sketch, off_ring, off_window;
};

namespace {

struct Layout {
  size_t nodes, index, sketch, ring, window, total;
  size_t index_size, sketch_blocks, ring_size, window_size;
};

Layout LayoutFor(size_t c, size_t header_bytes) {
  Layout l{};
  l.index_size = std::bit_ceil(2 * (c + 1));
  l.sketch_blocks = internal::SketchBlocks(c);
  l.ring_size = std::max<size_t>(2 * c, 16);
  l.window_size = std::bit_ceil(2 * l.ring_size);
  size_t off = AlignToLine(header_bytes);
  l.nodes = off;
  off += AlignToLine((c + 1) * sizeof(Node));
  l.index = off;
  off += AlignToLine(l.index_size * sizeof(uint32_t));
  l.sketch = off;
  off += l.sketch_blocks * internal::kSketchBlockBytes;
  l.ring = off;
  off += AlignToLine(l.ring_size * sizeof(RingSlot));
  l.window = off;
  off += AlignToLine(l.window_size * sizeof(Count));
  l.total = off;
  return l;
}

// The operations, on a header and the arrays it locates.
class State {
 public:
  explicit State(unsigned char* base)
      : h_(*reinterpret_cast<FlatScanLfu::Header*>(base)),
        nodes_(reinterpret_cast<Node*>(base + h_.off_nodes)),
        index_(reinterpret_cast<uint32_t*>(base + h_.off_index)),
        ring_(reinterpret_cast<RingSlot*>(base + h_.off_ring)),
        window_(reinterpret_cast<Count*>(base + h_.off_window)),
        sketch_(base + h_.off_sketch, h_.sketch_blocks, &h_.sketch_samples, h_.sketch_reset_at) {}

  FlatScanLfu::Header& h() { return h_; }
  uint64_t held() const { return h_.capacity + 1 - h_.lists[kFree].size; }
  uint64_t pinned() const { return h_.lists[kPinned].size; }
  bool full() const { return held() >= h_.capacity; }
  Node& node(uint32_t n) { return nodes_[n]; }

  // --- lists ---
  void PushFront(Where w, uint32_t n) {
    ListHead& l = h_.lists[w];
    Node& x = nodes_[n];
    x.where = w;
    x.prev = kNoSlot;
    x.next = l.head;
    if (l.head != kNoSlot) {
      nodes_[l.head].prev = n;
    } else {
      l.tail = n;
    }
    l.head = n;
    ++l.size;
  }
  void Unlink(uint32_t n) {
    Node& x = nodes_[n];
    ListHead& l = h_.lists[x.where];
    if (x.prev != kNoSlot) {
      nodes_[x.prev].next = x.next;
    } else {
      l.head = x.next;
    }
    if (x.next != kNoSlot) {
      nodes_[x.next].prev = x.prev;
    } else {
      l.tail = x.prev;
    }
    --l.size;
  }
  void MoveToFront(Where w, uint32_t n) {
    Unlink(n);
    PushFront(w, n);
  }
  uint32_t Tail(Where w) const { return h_.lists[w].tail; }
  uint64_t Size(Where w) const { return h_.lists[w].size; }

  // --- the index: open addressing, linear probing, deletion by backward shift ---
  uint32_t Find(CacheKey key) const {
    for (uint64_t i = internal::MixKey(key) & h_.index_mask;; i = (i + 1) & h_.index_mask) {
      const uint32_t n = index_[i];
      if (n == kNoSlot || nodes_[n].key == key) return n;
    }
  }
  void IndexInsert(uint32_t n) {
    uint64_t i = internal::MixKey(nodes_[n].key) & h_.index_mask;
    while (index_[i] != kNoSlot) i = (i + 1) & h_.index_mask;
    index_[i] = n;
  }
  void IndexErase(CacheKey key) {
    uint64_t i = internal::MixKey(key) & h_.index_mask;
    while (nodes_[index_[i]].key != key) i = (i + 1) & h_.index_mask;
    for (uint64_t j = i;;) {
      j = (j + 1) & h_.index_mask;
      if (index_[j] == kNoSlot) break;
      const uint64_t home = internal::MixKey(nodes_[index_[j]].key) & h_.index_mask;
      if (!CyclicallyIn(i, j, home)) {
        index_[i] = index_[j];
        i = j;
      }
    }
    index_[i] = kNoSlot;
  }
  // Whether `k` lies in the cyclic range (i, j].
  static bool CyclicallyIn(uint64_t i, uint64_t j, uint64_t k) {
    return i <= j ? (i < k && k <= j) : (k > i || k <= j);
  }

  // --- nodes ---
  uint32_t Alloc(CacheKey key) {
    const uint32_t n = h_.lists[kFree].head;
    Unlink(n);
    nodes_[n].key = key;
    IndexInsert(n);
    return n;
  }
  void Evict(uint32_t n, std::vector<LfuEviction>* out, LfuAccess* one) {
    const LfuEviction e{nodes_[n].key, n};
    IndexErase(e.key);
    Unlink(n);
    PushFront(kFree, n);
    if (out != nullptr) out->push_back(e);
    if (one != nullptr) {
      one->evicted = true;
      one->victim = e;
    }
  }

  // W-TinyLFU's placement of a node not in any list of the cache: into the window; the
  // window's overflow competes with the probation victim for the main space.
  void Admit(uint32_t n, std::vector<LfuEviction>* out, LfuAccess* one) {
    PushFront(kWindow, n);
    if (Size(kWindow) <= h_.window_cap) return;
    const uint32_t candidate = Tail(kWindow);
    if (Size(kProbation) + Size(kProtected) < h_.main_cap) {
      MoveToFront(kProbation, candidate);
      return;
    }
    if (h_.main_cap == 0) {
      Evict(candidate, out, one);
      return;
    }
    const uint32_t victim = Tail(Size(kProbation) != 0 ? kProbation : kProtected);
    if (sketch_.Estimate(nodes_[candidate].key) > sketch_.Estimate(nodes_[victim].key)) {
      Evict(victim, out, one);
      MoveToFront(kProbation, candidate);
    } else {
      Evict(candidate, out, one);
    }
  }

  // Sets the segment sizes for capacity - pinned and trims to them.
  void Resize(std::vector<LfuEviction>* out) {
    const uint64_t eff = h_.capacity - pinned();
    h_.window_cap = eff == 0 ? 0 : std::max<uint64_t>(1, eff / 100);
    h_.main_cap = eff - h_.window_cap;
    h_.protected_cap = h_.main_cap * 4 / 5;
    while (Size(kWindow) > h_.window_cap) Evict(Tail(kWindow), out, nullptr);
    while (Size(kProtected) > h_.protected_cap) MoveToFront(kProbation, Tail(kProtected));
    while (Size(kProbation) + Size(kProtected) > h_.main_cap) {
      Evict(Tail(Size(kProbation) != 0 ? kProbation : kProtected), out, nullptr);
    }
  }

  void Hit(uint32_t n) {
    switch (nodes_[n].where) {
      case kWindow:
        MoveToFront(kWindow, n);
        break;
      case kProtected:
        MoveToFront(kProtected, n);
        break;
      case kProbation:
        MoveToFront(kProtected, n);
        while (Size(kProtected) > h_.protected_cap) MoveToFront(kProbation, Tail(kProtected));
        break;
      default:
        break;
    }
  }

  // --- the scan detector ---
  uint64_t* CountCell(CacheKey key, bool insert) {
    for (uint64_t i = internal::MixKey(key) & h_.window_mask;; i = (i + 1) & h_.window_mask) {
      Count& c = window_[i];
      if (c.count == 0) {
        if (!insert) return nullptr;
        c.key = key;
        return &c.count;
      }
      if (c.key == key) return &c.count;
    }
  }
  void Decrement(CacheKey key) {
    uint64_t i = internal::MixKey(key) & h_.window_mask;
    while (window_[i].key != key || window_[i].count == 0) i = (i + 1) & h_.window_mask;
    if (--window_[i].count != 0) return;
    for (uint64_t j = i;;) {  // backward shift
      j = (j + 1) & h_.window_mask;
      if (window_[j].count == 0) break;
      const uint64_t home = internal::MixKey(window_[j].key) & h_.window_mask;
      if (!CyclicallyIn(i, j, home)) {
        window_[i] = window_[j];
        i = j;
      }
    }
    window_[i].count = 0;
  }
  void Observe(CacheKey key) {
    RingSlot& slot = ring_[h_.ring_next];
    if (h_.ring_filled == h_.ring_size) {  // the oldest access leaves the window
      h_.repeats -= slot.repeat;
      Decrement(slot.key);
    } else {
      ++h_.ring_filled;
    }
    uint64_t* count = CountCell(key, true);
    slot = {key, *count > 0 ? 1U : 0U};
    h_.repeats += slot.repeat;
    ++*count;
    h_.ring_next = (h_.ring_next + 1) % h_.ring_size;
    if (h_.ring_filled < h_.ring_size) return;
    const double rate = static_cast<double>(h_.repeats) / static_cast<double>(h_.ring_filled);
    if (h_.scanning == 0 && full() && rate < 0.01) h_.scanning = 1;
    if (h_.scanning != 0 && rate > 0.3) h_.scanning = 0;
  }

  internal::SketchView& sketch() { return sketch_; }
  const RingSlot* ring() const { return ring_; }
  const Count* window() const { return window_; }
  const uint32_t* index() const { return index_; }

 private:
  FlatScanLfu::Header& h_;
  Node* nodes_;
  uint32_t* index_;
  RingSlot* ring_;
  Count* window_;
  internal::SketchView sketch_;
};

}  // namespace

FlatScanLfu::Header& FlatScanLfu::h() const { return *reinterpret_cast<Header*>(base_); }

size_t FlatScanLfu::BytesFor(size_t capacity) { return LayoutFor(capacity, sizeof(Header)).total; }

FlatScanLfu FlatScanLfu::Init(void* mem, size_t capacity, bool detect_scans) {
  if (capacity >= kNoSlot - 1) throw std::invalid_argument("FlatScanLfu: capacity too large");
  auto* base = static_cast<unsigned char*>(mem);
  const Layout l = LayoutFor(capacity, sizeof(Header));
  std::memset(base, 0, l.total);
  auto& h = *reinterpret_cast<Header*>(base);
  h.magic = kLfuMagic;
  h.version = kLfuVersion;
  h.detect_scans = detect_scans ? 1 : 0;
  h.bytes = l.total;
  h.capacity = capacity;
  h.index_mask = l.index_size - 1;
  h.sketch_blocks = l.sketch_blocks;
  h.sketch_reset_at = internal::SketchResetAt(capacity);
  h.ring_size = l.ring_size;
  h.window_mask = l.window_size - 1;
  for (auto& list : h.lists) list = {kNoSlot, kNoSlot, 0};
  h.off_nodes = l.nodes;
  h.off_index = l.index;
  h.off_sketch = l.sketch;
  h.off_ring = l.ring;
  h.off_window = l.window;
  std::memset(base + l.index, 0xFF, l.index_size * sizeof(uint32_t));
  State s(base);
  for (uint32_t n = static_cast<uint32_t>(capacity) + 1; n-- > 0;) s.PushFront(kFree, n);
  s.Resize(nullptr);
  return FlatScanLfu(base);
}

FlatScanLfu FlatScanLfu::Attach(void* mem, size_t bytes) {
  auto* base = static_cast<unsigned char*>(mem);
  if (bytes < sizeof(Header)) throw std::invalid_argument("FlatScanLfu: block too small");
  const auto& h = *reinterpret_cast<const Header*>(base);
  if (h.magic != kLfuMagic) throw std::invalid_argument("FlatScanLfu: not a cache state (magic)");
  if (h.version != kLfuVersion) {
    throw std::invalid_argument("FlatScanLfu: state version " + std::to_string(h.version) +
                                ", expected " + std::to_string(kLfuVersion));
  }
  if (h.bytes > bytes || h.bytes != LayoutFor(h.capacity, sizeof(Header)).total) {
    throw std::invalid_argument("FlatScanLfu: block of " + std::to_string(bytes) +
                                " bytes does not hold a state of " + std::to_string(h.bytes));
  }
  return FlatScanLfu(base);
}

LfuAccess FlatScanLfu::Access(CacheKey key) {
  State s(base_);
  LfuAccess r;
  if (s.h().detect_scans != 0) s.Observe(key);
  uint32_t n = s.Find(key);
  if (n != kNoSlot && s.node(n).where == kPinned) return {true, n, false, {}};
  s.sketch().Increment(key);
  if (n != kNoSlot) {
    s.Hit(n);
    return {true, n, false, {}};
  }
  if (s.h().capacity - s.pinned() == 0 || (s.h().scanning != 0 && s.full())) return r;
  n = s.Alloc(key);
  s.Admit(n, nullptr, &r);
  r.slot = n;
  return r;
}

uint32_t FlatScanLfu::Insert(CacheKey key, std::vector<LfuEviction>* evicted) {
  State s(base_);
  uint32_t n = s.Find(key);
  if (n != kNoSlot) return n;
  if (s.h().capacity - s.pinned() == 0 || (s.h().scanning != 0 && s.full())) return kNoSlot;
  n = s.Alloc(key);
  s.Admit(n, evicted, nullptr);
  return n;
}

uint32_t FlatScanLfu::Find(CacheKey key) const { return State(base_).Find(key); }

bool FlatScanLfu::Erase(CacheKey key) {
  State s(base_);
  const uint32_t n = s.Find(key);
  if (n == kNoSlot) return false;
  const bool was_pinned = s.node(n).where == kPinned;
  s.Evict(n, nullptr, nullptr);
  if (was_pinned) s.Resize(nullptr);
  return true;
}

bool FlatScanLfu::Pin(CacheKey key, std::vector<LfuEviction>* evicted) {
  State s(base_);
  uint32_t n = s.Find(key);
  if (n != kNoSlot && s.node(n).where == kPinned) return true;
  if (s.pinned() + 1 >= s.h().capacity) return false;
  if (n != kNoSlot) {
    s.MoveToFront(kPinned, n);
  } else {
    s.PushFront(kPinned, s.Alloc(key));
  }
  s.Resize(evicted);
  return true;
}

void FlatScanLfu::Unpin(CacheKey key, std::vector<LfuEviction>* evicted) {
  State s(base_);
  const uint32_t n = s.Find(key);
  if (n == kNoSlot || s.node(n).where != kPinned) return;
  s.Unlink(n);
  s.Resize(evicted);
  s.Admit(n, evicted, nullptr);  // stays cached, now evictable
}

size_t FlatScanLfu::size() const { return State(base_).held(); }
size_t FlatScanLfu::capacity() const { return h().capacity; }
bool FlatScanLfu::scanning() const { return h().scanning != 0; }

std::string FlatScanLfu::Check() const {
  State s(base_);
  const Header& h = s.h();
  const uint64_t slots = h.capacity + 1;
  std::vector<uint8_t> seen(slots, 0);
  uint64_t total = 0;
  for (int w = 0; w < kLists; ++w) {
    uint64_t len = 0;
    uint32_t prev = kNoSlot;
    for (uint32_t n = h.lists[w].head; n != kNoSlot; n = s.node(n).next) {
      if (n >= slots || seen[n] != 0 || len > slots) return "list " + std::to_string(w) + " links";
      seen[n] = 1;
      if (s.node(n).where != w || s.node(n).prev != prev) {
        return "list " + std::to_string(w) + ": node " + std::to_string(n) + " misfiled";
      }
      prev = n;
      ++len;
    }
    if (prev != h.lists[w].tail || len != h.lists[w].size) {
      return "list " + std::to_string(w) + ": tail or size";
    }
    total += len;
  }
  if (total != slots) return "nodes lost: " + std::to_string(slots - total);
  if (s.held() > h.capacity) return "held > capacity";
  const uint64_t eff = h.capacity - s.pinned();
  if (h.lists[kWindow].size > h.window_cap) return "window over its cap";
  if (h.lists[kProtected].size > h.protected_cap) return "protected over its cap";
  if (h.lists[kProbation].size + h.lists[kProtected].size > eff - h.window_cap) {
    return "main space over its cap";
  }
  uint64_t indexed = 0;
  for (uint64_t i = 0; i <= h.index_mask; ++i) {
    const uint32_t n = s.index()[i];
    if (n == kNoSlot) continue;
    ++indexed;
    if (n >= slots || s.node(n).where == kFree) return "index names a free node";
    if (s.Find(s.node(n).key) != n) return "index: key " + std::to_string(s.node(n).key);
  }
  if (indexed != s.held()) return "index holds " + std::to_string(indexed) + " keys";
  uint64_t repeats = 0;
  for (uint64_t i = 0; i < h.ring_filled; ++i) repeats += s.ring()[i].repeat;
  if (repeats != h.repeats) return "scan detector: repeat count";
  uint64_t counted = 0;
  for (uint64_t i = 0; i <= h.window_mask; ++i) counted += s.window()[i].count;
  if (counted != h.ring_filled) return "scan detector: window counts";
  return {};
}

}  // namespace seedance::control
