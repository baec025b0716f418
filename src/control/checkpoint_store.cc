#include "seedance/control/checkpoint_store.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>

#include "seedance/base/parse.h"
#include "src/control/little_endian.h"

namespace seedance::control {
namespace {

using internal::GetLe;
using internal::PutLe;

constexpr std::string_view kMagic = "SDCK";
constexpr size_t kHeaderBytes = 36;
constexpr std::string_view kPrefix = "ckpt-";
constexpr std::string_view kSuffix = ".sdck";

std::array<uint32_t, 256> CrcTable() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) != 0 ? 0xEDB88320U ^ (c >> 1) : c >> 1;
    t[i] = c;
  }
  return t;
}

std::optional<int64_t> StepOfName(std::string_view name) {
  if (!name.starts_with(kPrefix) || !name.ends_with(kSuffix)) return std::nullopt;
  const std::string_view digits =
      name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  if (digits.size() != 12) return std::nullopt;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  return base::ParseInt64(digits);
}

}  // namespace

uint32_t Crc32(std::string_view data) {
  static const std::array<uint32_t, 256> kTable = CrcTable();
  uint32_t c = 0xFFFFFFFFU;
  for (char ch : data) c = kTable[(c ^ static_cast<unsigned char>(ch)) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFU;
}

std::string EncodeCheckpoint(int64_t step, int64_t next_sample, std::string_view payload) {
  std::string out;
  out.reserve(kHeaderBytes + payload.size());
  out.append(kMagic);
  PutLe(out, kCheckpointVersion, 4);
  PutLe(out, static_cast<uint64_t>(step), 8);
  PutLe(out, static_cast<uint64_t>(next_sample), 8);
  PutLe(out, payload.size(), 8);
  PutLe(out, Crc32(payload), 4);
  out.append(payload);
  return out;
}

base::StatusOr<Checkpoint> DecodeCheckpoint(std::string_view bytes, const std::string& file) {
  auto bad = [&](const std::string& what) { return base::InvalidArgumentError(what, file); };
  if (bytes.size() < kHeaderBytes) return bad("header: shorter than 36 bytes (a torn write?)");
  if (bytes.substr(0, 4) != kMagic) return bad("magic: not a Seedance checkpoint");
  const uint64_t version = GetLe(bytes, 4, 4);
  if (version != kCheckpointVersion) {
    return bad("version: " + std::to_string(version) + ", this build reads " +
               std::to_string(kCheckpointVersion));
  }
  const uint64_t step = GetLe(bytes, 8, 8), next = GetLe(bytes, 16, 8);
  const uint64_t length = GetLe(bytes, 24, 8);
  if (step > static_cast<uint64_t>(INT64_MAX) || next > static_cast<uint64_t>(INT64_MAX)) {
    return bad("step or next_sample: out of range");
  }
  if (length != bytes.size() - kHeaderBytes) {
    return bad("payload: " + std::to_string(bytes.size() - kHeaderBytes) + " bytes, header says " +
               std::to_string(length));
  }
  const std::string_view payload = bytes.substr(kHeaderBytes);
  if (Crc32(payload) != static_cast<uint32_t>(GetLe(bytes, 32, 4))) {
    return bad("crc32: the payload does not match its checksum");
  }
  Checkpoint c;
  c.step = static_cast<int64_t>(step);
  c.next_sample = static_cast<int64_t>(next);
  c.payload = std::string(payload);
  c.path = file;
  return c;
}

std::string CheckpointFileName(int64_t step) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "ckpt-%012lld.sdck", static_cast<long long>(step));
  return buf;
}

base::Status WriteCheckpoint(base::Env& env, const std::string& dir, int64_t step,
                             int64_t next_sample, std::string_view payload) {
  if (step < 0 || step > 999'999'999'999 || next_sample < 0) {
    return base::InvalidArgumentError("step must be in 0..999999999999, next_sample >= 0",
                                      "checkpoint");
  }
  return env.WriteFileAtomic(dir + "/" + CheckpointFileName(step),
                             EncodeCheckpoint(step, next_sample, payload));
}

base::StatusOr<std::vector<int64_t>> CheckpointSteps(base::Env& env, const std::string& dir) {
  SEEDANCE_ASSIGN_OR_RETURN(std::vector<std::string> names, env.ListDirectory(dir));
  std::vector<int64_t> steps;
  for (const std::string& n : names) {
    if (auto s = StepOfName(n)) steps.push_back(*s);
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

base::StatusOr<NewestResult> NewestCheckpoint(base::Env& env, const std::string& dir) {
  SEEDANCE_ASSIGN_OR_RETURN(std::vector<int64_t> steps, CheckpointSteps(env, dir));
  NewestResult r;
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    const std::string path = dir + "/" + CheckpointFileName(*it);
    auto bytes = env.ReadFile(path);
    if (!bytes.ok()) {
      r.skipped.push_back(bytes.status().ToString());
      continue;
    }
    auto c = DecodeCheckpoint(*bytes, path);
    if (!c.ok()) {
      r.skipped.push_back(c.status().ToString());
      continue;
    }
    if (c->step != *it) {
      r.skipped.push_back(path + ": step " + std::to_string(c->step) + " in a file named " +
                          std::to_string(*it));
      continue;
    }
    r.checkpoint = std::move(*c);
    break;
  }
  return r;
}

}  // namespace seedance::control
