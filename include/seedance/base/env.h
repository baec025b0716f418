// Env: everything Seedance needs from the operating system, behind one
// interface so that tests can substitute a fake (see fake_env.h).
//
//  - time: a monotonic clock, the wall clock, sleeping;
//  - files: reading, listing, atomic writing. Every absolute path is resolved
//    under the Env's root, so an Env rooted at a small directory tree serves a
//    fake /sys and /proc to the topology and probe code. Relative paths are
//    relative to the working directory and are not re-rooted;
//  - environment variables.
//
// Ownership: Env::Default() is a process-wide singleton that lives forever;
// NewPosixEnv returns an object the caller owns.
// Thread safety: every method of every Env implementation in Seedance may be
// called concurrently.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/status.h"

namespace seedance::base {

// The largest file ReadFile returns (4 GiB): every input Seedance reads is far smaller.
inline constexpr int64_t kMaxReadFileBytes = int64_t{4} << 30;

class Env {
 public:
  virtual ~Env() = default;

  // Nanoseconds on a clock that never goes backwards (steady clock).
  virtual int64_t NowMonotonicNanos() = 0;
  // Nanoseconds since the Unix epoch (wall clock).
  virtual int64_t NowUnixNanos() = 0;
  // Blocks the calling thread (a fake Env advances its clock instead).
  virtual void SleepFor(std::chrono::nanoseconds duration) = 0;

  // The whole file. NotFound when it does not exist, IoError otherwise: a
  // directory, anything but a regular file (a device such as /dev/zero, a FIFO,
  // a socket: they are refused, never read or waited on), a file over
  // kMaxReadFileBytes, a failed read.
  virtual StatusOr<std::string> ReadFile(const std::string& path) = 0;
  // Names of the entries of a directory (not "." or ".."), sorted.
  virtual StatusOr<std::vector<std::string>> ListDirectory(const std::string& path) = 0;
  virtual bool FileExists(const std::string& path) = 0;
  // The target of a symbolic link, exactly as stored (sysfs links are relative,
  // /proc/PID/fd links absolute). NotFound when `path` does not exist,
  // InvalidArgument when it is not a link.
  virtual StatusOr<std::string> ReadLink(const std::string& path) = 0;
  // Writes `contents` to a temporary file next to `path`, flushes it (fsync), renames it over
  // `path` and flushes the directory: readers see the old file or the new one, never a
  // half-written one, and after a crash the new one is there once this returned.
  virtual Status WriteFileAtomic(const std::string& path, std::string_view contents) = 0;

  // The value of an environment variable, or nullopt when unset.
  virtual std::optional<std::string> GetVar(const std::string& name) = 0;

  // Memory facts of the machine and the process: the page size, the physical memory, and the
  // address-space limit (RLIMIT_AS's soft value; nullopt when unlimited).
  struct MemoryFacts {
    int64_t page_bytes = 4096;
    int64_t physical_bytes = 0;
    std::optional<int64_t> address_space_limit;
  };
  virtual MemoryFacts Memory() = 0;

  // The process-wide POSIX Env rooted at "/".
  static Env* Default();
};

struct PosixEnvOptions {
  // Absolute paths are read under this directory. "/" (or empty) means the
  // real file system.
  std::string root = "/";
};

std::unique_ptr<Env> NewPosixEnv(PosixEnvOptions options = {});

}  // namespace seedance::base
