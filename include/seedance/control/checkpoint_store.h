// A directory of checkpoints (feature CTRL-3's storage half): each checkpoint one file,
// `ckpt-<step, 12 digits>.sdck`, written atomically (Env::WriteFileAtomic: a temporary file,
// fsync, rename, directory fsync) in a versioned format that is validated before anything is
// trusted:
//
//   offset  bytes  field
//   0       4      magic "SDCK"
//   4       4      version (1), little-endian
//   8       8      step                (the optimizer steps done)
//   16      8      next_sample         (the first sample the resumed run reads)
//   24      8      payload bytes N
//   32      4      CRC-32 (IEEE 802.3, as zlib's crc32) of the payload
//   36      N      payload             (the framework's serialized state)
//
// Newest() returns the newest checkpoint that validates — a file whose name, header, length or
// CRC is wrong is skipped (and named in `skipped`), temporary files are ignored — so a crash at
// any point of a save leaves the previous checkpoint loadable.
//
// Thread safety: functions of the directory's contents; concurrent writers of one step race on
// the rename (one wins, both complete).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/env.h"
#include "seedance/base/status.h"

namespace seedance::control {

struct Checkpoint {
  int64_t step = 0;
  int64_t next_sample = 0;
  std::string payload;
  std::string path;
};

inline constexpr int32_t kCheckpointVersion = 1;

// CRC-32 (reflected polynomial 0xEDB88320, initial and final XOR 0xFFFFFFFF).
uint32_t Crc32(std::string_view data);

// The encoded file.
std::string EncodeCheckpoint(int64_t step, int64_t next_sample, std::string_view payload);
// Validates then decodes; errors name `file` and the field.
base::StatusOr<Checkpoint> DecodeCheckpoint(std::string_view bytes, const std::string& file);

std::string CheckpointFileName(int64_t step);

// Writes step's checkpoint into `dir` (which must exist).
base::Status WriteCheckpoint(base::Env& env, const std::string& dir, int64_t step,
                             int64_t next_sample, std::string_view payload);

struct NewestResult {
  std::optional<Checkpoint> checkpoint;  // none when no file validates
  std::vector<std::string> skipped;      // "file: reason" of each invalid checkpoint file
};
base::StatusOr<NewestResult> NewestCheckpoint(base::Env& env, const std::string& dir);

// The steps of the valid-looking checkpoint names in `dir`, ascending (contents not read).
base::StatusOr<std::vector<int64_t>> CheckpointSteps(base::Env& env, const std::string& dir);

}  // namespace seedance::control
