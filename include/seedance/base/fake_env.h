// FakeEnv: an in-memory Env for tests. Files live in a map, the clock moves
// only when the test (or SleepFor) advances it, and environment variables are
// a map too. Paths are used exactly as given ("/sys/x" and "sys/x" differ).
//
// Thread safety: all methods may be called concurrently.
#pragma once

#include <map>
#include <mutex>

#include "seedance/base/env.h"

namespace seedance::base {

class FakeEnv final : public Env {
 public:
  FakeEnv() = default;

  // Test set-up.
  void SetFile(const std::string& path, std::string contents);
  void RemoveFile(const std::string& path);
  // Makes `path` a symbolic link to `target` (ReadLink only: reads through
  // `path` are not redirected).
  void SetLink(const std::string& path, std::string target);
  void SetVar(const std::string& name, std::string value);
  void UnsetVar(const std::string& name);
  void AdvanceClock(std::chrono::nanoseconds duration);
  void SetMemory(MemoryFacts facts);  // default: 4 KiB pages, 16 GiB, no address-space limit
  // Makes ReadFile/WriteFileAtomic of `path` fail with `status` (fault injection).
  void FailPath(const std::string& path, Status status);

  int64_t NowMonotonicNanos() override;
  int64_t NowUnixNanos() override;
  void SleepFor(std::chrono::nanoseconds duration) override;
  StatusOr<std::string> ReadFile(const std::string& path) override;
  StatusOr<std::vector<std::string>> ListDirectory(const std::string& path) override;
  bool FileExists(const std::string& path) override;
  StatusOr<std::string> ReadLink(const std::string& path) override;
  Status WriteFileAtomic(const std::string& path, std::string_view contents) override;
  std::optional<std::string> GetVar(const std::string& name) override;
  MemoryFacts Memory() override;

  // Fake clock start: 2026-01-01T00:00:00Z, so Unix time looks plausible.
  static constexpr int64_t kStartUnixNanos = 1767225600LL * 1'000'000'000LL;

 private:
  std::mutex mu_;
  std::map<std::string, std::string> files_;
  std::map<std::string, std::string> links_;
  std::map<std::string, Status> failures_;
  std::map<std::string, std::string> vars_;
  int64_t elapsed_nanos_ = 0;
  MemoryFacts memory_{4096, int64_t{16} << 30, std::nullopt};
};

}  // namespace seedance::base
