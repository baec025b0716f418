#include "seedance/mem/lifetime.h"

#include <algorithm>
#include <unordered_map>

#include "seedance/base/csv.h"
#include "seedance/base/enum_names.h"

namespace seedance::mem {

using base::InvalidArgumentError;
using base::Status;
using base::StatusOr;

namespace {

constexpr base::EnumTable<BufferKind, 6> kKindNames = {
    {{BufferKind::kUnspecified, "unspecified"},
     {BufferKind::kWeight, "weight"},
     {BufferKind::kActivation, "activation"},
     {BufferKind::kGradient, "gradient"},
     {BufferKind::kOptimizerState, "optimizer_state"},
     {BufferKind::kWorkspace, "workspace"}}};

Status CheckOne(const Buffer& b, const std::string& where_lower, const std::string& where_size) {
  if (b.lower >= b.upper) {
    return InvalidArgumentError("'lower' (" + std::to_string(b.lower) +
                                    ") must be less than 'upper' (" + std::to_string(b.upper) +
                                    ") for buffer '" + b.id + "'",
                                where_lower);
  }
  if (b.size <= 0) {
    return InvalidArgumentError(
        "'size' must be positive, got " + std::to_string(b.size) + " for buffer '" + b.id + "'",
        where_size);
  }
  if (b.size > kMaxBufferSize) {
    return InvalidArgumentError(
        "'size' " + std::to_string(b.size) + " exceeds the largest supported buffer (2^50 bytes)",
        where_size);
  }
  return base::OkStatus();
}

// Quotes a CSV field when it holds a comma, a quote or a line break.
std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

}  // namespace

std::string_view BufferKindName(BufferKind kind) { return base::EnumName(kKindNames, kind); }

base::StatusOr<BufferKind> ParseBufferKind(std::string_view name, std::string_view where) {
  return base::ParseEnum(kKindNames, name, where);
}

StatusOr<LifetimeFile> ParseLifetimeCsv(std::string_view text, const std::string& file) {
  SEEDANCE_ASSIGN_OR_RETURN(base::CsvTable table, base::CsvTable::Parse(text, file));
  SEEDANCE_RETURN_IF_ERROR(table.CheckColumns({"id", "lower", "upper", "size"},
                                              {"id", "lower", "upper", "size", "kind", "offset"}));
  const size_t c_id = *table.Column("id");
  const size_t c_lower = *table.Column("lower");
  const size_t c_upper = *table.Column("upper");
  const size_t c_size = *table.Column("size");
  const std::optional<size_t> c_kind = table.Column("kind");
  const std::optional<size_t> c_offset = table.Column("offset");

  LifetimeFile out;
  out.has_offsets = c_offset.has_value();
  int64_t total_size = 0;
  out.buffers.reserve(table.records().size());
  std::unordered_map<std::string, int> first_line;
  first_line.reserve(table.records().size());
  for (const base::CsvRecord& r : table.records()) {
    Buffer b;
    b.id = r.fields[c_id];
    if (b.id.empty()) return InvalidArgumentError("'id' is empty", table.Where(r, c_id));
    auto [it, inserted] = first_line.emplace(b.id, r.line);
    if (!inserted) {
      return InvalidArgumentError(
          "duplicate id '" + b.id + "' (first on line " + std::to_string(it->second) + ")",
          table.Where(r, c_id));
    }
    SEEDANCE_ASSIGN_OR_RETURN(b.lower, table.Int(r, c_lower));
    SEEDANCE_ASSIGN_OR_RETURN(b.upper, table.Int(r, c_upper));
    SEEDANCE_ASSIGN_OR_RETURN(b.size, table.Int(r, c_size));
    if (c_kind) {
      SEEDANCE_ASSIGN_OR_RETURN(b.kind,
                                ParseBufferKind(r.fields[*c_kind], table.Where(r, *c_kind)));
    }
    SEEDANCE_RETURN_IF_ERROR(CheckOne(b, table.Where(r, c_lower), table.Where(r, c_size)));
    if (__builtin_add_overflow(total_size, b.size, &total_size) || total_size > kMaxArenaBytes) {
      return InvalidArgumentError(
          "the sizes up to this row add up to more than the supported arena (2^62 bytes)",
          table.Where(r, c_size));
    }
    if (c_offset) {
      SEEDANCE_ASSIGN_OR_RETURN(int64_t offset, table.Int(r, *c_offset));
      if (offset < 0) {
        return InvalidArgumentError("'offset' must not be negative", table.Where(r, *c_offset));
      }
      if (offset > kMaxArenaBytes - b.size) {
        return InvalidArgumentError("'offset' + 'size' exceeds the supported arena (2^62 bytes)",
                                    table.Where(r, *c_offset));
      }
      out.offsets.push_back(offset);
    }
    out.buffers.push_back(std::move(b));
    out.lines.push_back(r.line);
  }
  return out;
}

namespace {

// The sum of all sizes is at most kMaxArenaBytes (checked arithmetic: each size is already at most
// kMaxBufferSize, but a million of them are not).
Status CheckTotalSize(std::span<const Buffer> buffers, const std::string& where) {
  int64_t total = 0;
  for (const Buffer& b : buffers) {
    if (__builtin_add_overflow(total, b.size, &total) || total > kMaxArenaBytes) {
      return InvalidArgumentError(
          "the buffers' sizes add up to more than the supported arena (2^62 bytes)", where);
    }
  }
  return base::OkStatus();
}

}  // namespace

Status ValidateBuffers(std::span<const Buffer> buffers, std::string_view where) {
  std::unordered_map<std::string_view, size_t> seen;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const std::string at = std::string(where) + ": buffer " + std::to_string(i);
    if (!seen.emplace(buffers[i].id, i).second) {
      return InvalidArgumentError("duplicate id '" + buffers[i].id + "'", at);
    }
    SEEDANCE_RETURN_IF_ERROR(CheckOne(buffers[i], at, at));
  }
  return CheckTotalSize(buffers, std::string(where));
}

int64_t MaxLiveBytes(std::span<const Buffer> buffers) {
  // Events (time, +size) at lower and (time, -size) at upper. At equal times
  // the frees come first: lifetimes are half-open.
  std::vector<std::pair<int64_t, int64_t>> events;
  events.reserve(2 * buffers.size());
  for (const Buffer& b : buffers) {
    events.emplace_back(b.lower, b.size);
    events.emplace_back(b.upper, -b.size);
  }
  std::sort(events.begin(), events.end());  // (t, negative) sorts before (t, positive)
  int64_t live = 0;
  int64_t peak = 0;
  for (const auto& [t, delta] : events) {
    live += delta;
    peak = std::max(peak, live);
  }
  return peak;
}

std::vector<LifetimeEvent> OrderedEvents(std::span<const Buffer> buffers) {
  std::vector<LifetimeEvent> events;
  events.reserve(2 * buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    events.push_back({buffers[i].lower, true, i});
    events.push_back({buffers[i].upper, false, i});
  }
  std::sort(events.begin(), events.end(), [](const LifetimeEvent& a, const LifetimeEvent& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.is_alloc != b.is_alloc) return !a.is_alloc;
    return a.index < b.index;
  });
  return events;
}

namespace {

std::string ToCsv(std::span<const Buffer> buffers, const std::span<const int64_t>* offsets) {
  const bool with_kind = std::any_of(buffers.begin(), buffers.end(), [](const Buffer& b) {
    return b.kind != BufferKind::kUnspecified;
  });
  std::string out = "id,lower,upper,size";
  if (with_kind) out += ",kind";
  if (offsets) out += ",offset";
  out += '\n';
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& b = buffers[i];
    out += CsvField(b.id) + ',' + std::to_string(b.lower) + ',' + std::to_string(b.upper) + ',' +
           std::to_string(b.size);
    if (with_kind) out += ',' + std::string(BufferKindName(b.kind));
    if (offsets) out += ',' + std::to_string((*offsets)[i]);
    out += '\n';
  }
  return out;
}

}  // namespace

std::string LifetimesToCsv(std::span<const Buffer> buffers) { return ToCsv(buffers, nullptr); }

std::string PlanToCsv(std::span<const Buffer> buffers, std::span<const int64_t> offsets) {
  return ToCsv(buffers, &offsets);
}

}  // namespace seedance::mem
