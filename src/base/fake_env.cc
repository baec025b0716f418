#include "seedance/base/fake_env.h"

#include <set>

namespace seedance::base {

void FakeEnv::SetFile(const std::string& path, std::string contents) {
  std::lock_guard<std::mutex> lock(mu_);
  files_[path] = std::move(contents);
}

void FakeEnv::RemoveFile(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  files_.erase(path);
}

void FakeEnv::SetLink(const std::string& path, std::string target) {
  std::lock_guard<std::mutex> lock(mu_);
  links_[path] = std::move(target);
}

StatusOr<std::string> FakeEnv::ReadLink(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = links_.find(path); it != links_.end()) return it->second;
  if (files_.count(path)) return InvalidArgumentError("not a symbolic link", path);
  return NotFoundError("no such file", path);
}

void FakeEnv::SetVar(const std::string& name, std::string value) {
  std::lock_guard<std::mutex> lock(mu_);
  vars_[name] = std::move(value);
}

void FakeEnv::UnsetVar(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  vars_.erase(name);
}

void FakeEnv::AdvanceClock(std::chrono::nanoseconds duration) {
  std::lock_guard<std::mutex> lock(mu_);
  elapsed_nanos_ += duration.count();
}

void FakeEnv::FailPath(const std::string& path, Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  failures_[path] = std::move(status);
}

int64_t FakeEnv::NowMonotonicNanos() {
  std::lock_guard<std::mutex> lock(mu_);
  return elapsed_nanos_;
}

int64_t FakeEnv::NowUnixNanos() {
  std::lock_guard<std::mutex> lock(mu_);
  return kStartUnixNanos + elapsed_nanos_;
}

void FakeEnv::SleepFor(std::chrono::nanoseconds duration) { AdvanceClock(duration); }

StatusOr<std::string> FakeEnv::ReadFile(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto f = failures_.find(path); f != failures_.end()) return f->second;
  auto it = files_.find(path);
  if (it == files_.end()) return NotFoundError("no such file", path);
  return it->second;
}

StatusOr<std::vector<std::string>> FakeEnv::ListDirectory(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string prefix = path;
  if (prefix.empty() || prefix.back() != '/') prefix += '/';
  std::set<std::string> names;  // sorted and unique: a subdirectory shows up once
  for (auto it = files_.lower_bound(prefix); it != files_.end(); ++it) {
    if (it->first.compare(0, prefix.size(), prefix) != 0) break;
    std::string rest = it->first.substr(prefix.size());
    names.insert(rest.substr(0, rest.find('/')));
  }
  for (auto it = links_.lower_bound(prefix); it != links_.end(); ++it) {
    if (it->first.compare(0, prefix.size(), prefix) != 0) break;
    std::string rest = it->first.substr(prefix.size());
    names.insert(rest.substr(0, rest.find('/')));
  }
  if (names.empty()) return NotFoundError("no such directory", path);
  return std::vector<std::string>(names.begin(), names.end());
}

bool FakeEnv::FileExists(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  if (files_.count(path) || links_.count(path)) return true;
  const std::string prefix = path + "/";
  auto it = files_.lower_bound(prefix);
  return it != files_.end() && it->first.compare(0, prefix.size(), prefix) == 0;
}

Status FakeEnv::WriteFileAtomic(const std::string& path, std::string_view contents) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto f = failures_.find(path); f != failures_.end()) return f->second;
  files_[path] = std::string(contents);
  return OkStatus();
}

void FakeEnv::SetMemory(MemoryFacts facts) {
  std::lock_guard<std::mutex> lock(mu_);
  memory_ = facts;
}

Env::MemoryFacts FakeEnv::Memory() {
  std::lock_guard<std::mutex> lock(mu_);
  return memory_;
}

std::optional<std::string> FakeEnv::GetVar(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = vars_.find(name);
  if (it == vars_.end()) return std::nullopt;
  return it->second;
}

}  // namespace seedance::base
