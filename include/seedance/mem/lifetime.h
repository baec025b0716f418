// The buffer model of the memory engine (feature MEM-1, MEM-4): each buffer is
// live over a half-open interval of abstract time [lower, upper) and needs
// `size` bytes. Two buffers conflict when their lifetimes intersect:
//   a.lower < b.upper && b.lower < a.upper.
//
// The CSV form is MiniMalloc's: a header `id,lower,upper,size` (any order),
// optionally `kind` (weight, activation, gradient, optimizer_state,
// workspace) and `offset`. The reader is strict: a duplicate id, lower >=
// upper, a zero, negative or too large size, a missing column or field, or a
// non-number is an error naming the file, line and field.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/status.h"

namespace seedance::mem {

enum class BufferKind {
  kUnspecified,
  kWeight,
  kActivation,
  kGradient,
  kOptimizerState,
  kWorkspace
};

std::string_view BufferKindName(BufferKind kind);
base::StatusOr<BufferKind> ParseBufferKind(std::string_view name, std::string_view where = "kind");

struct Buffer {
  std::string id;
  int64_t lower = 0;  // first time step at which the buffer is live
  int64_t upper = 0;  // first time step at which it is dead again (exclusive)
  int64_t size = 0;   // bytes
  BufferKind kind = BufferKind::kUnspecified;
};

// Sizes above 2^50 bytes (1 PiB) are rejected.
inline constexpr int64_t kMaxBufferSize = int64_t{1} << 50;

// The supported arena: every offset + size, and the sum of all sizes of one
// input, is at most 2^62 bytes. Inputs past it are rejected, so no offset,
// end, peak or live-byte sum computed from an accepted input can overflow
// int64 (which holds 2^63 - 1).
inline constexpr int64_t kMaxArenaBytes = int64_t{1} << 62;

// A lifetime CSV with its optional offset column (a plan, when present).
struct LifetimeFile {
  std::vector<Buffer> buffers;
  bool has_offsets = false;      // the file has an `offset` column
  std::vector<int64_t> offsets;  // offsets[i] of buffers[i] when it has
  std::vector<int> lines;        // lines[i]: the 1-based line of buffers[i] in the file
};

base::StatusOr<LifetimeFile> ParseLifetimeCsv(std::string_view text, const std::string& file);

// The same checks as the CSV reader (each buffer, unique ids, the sum of all
// sizes within kMaxArenaBytes), for buffers built in code. `where`
// prefixes the errors (e.g. the step name of a recorded trace).
base::Status ValidateBuffers(std::span<const Buffer> buffers, std::string_view where);

// The max-live lower bound: the largest total size live at one time. No
// placement can have a smaller peak. O(n log n).
int64_t MaxLiveBytes(std::span<const Buffer> buffers);

// One allocation (at `lower`) or free (at `upper`) of buffers[index].
struct LifetimeEvent {
  int64_t time = 0;
  bool is_alloc = false;
  size_t index = 0;
};

// The 2n events in time order; at equal times frees come before allocations
// (lifetimes are half-open), then by buffer index.
std::vector<LifetimeEvent> OrderedEvents(std::span<const Buffer> buffers);

// CSV text `id,lower,upper,size[,kind]`; `kind` is written when any buffer
// has one.
std::string LifetimesToCsv(std::span<const Buffer> buffers);
// The same with an `offset` column (a plan); offsets[i] belongs to buffers[i].
std::string PlanToCsv(std::span<const Buffer> buffers, std::span<const int64_t> offsets);

}  // namespace seedance::mem
