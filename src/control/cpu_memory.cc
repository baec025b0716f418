#include "seedance/control/cpu_memory.h"

#include <optional>
#include <string_view>

#include "seedance/base/parse.h"

namespace seedance::control {
namespace {

constexpr char kStatm[] = "/proc/self/statm";

// Field `index` (0: size, 1: resident) of statm, in pages.
base::StatusOr<int64_t> StatmPages(base::Env& env, int index) {
  SEEDANCE_ASSIGN_OR_RETURN(const std::string text, env.ReadFile(kStatm));
  std::string_view rest = text;
  for (int i = 0;; ++i) {
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    const size_t end = rest.find_first_of(" \n");
    const std::string_view field = rest.substr(0, end);
    if (i == index) {
      const std::optional<int64_t> pages = base::ParseInt64(field);
      if (!pages || *pages < 0) {
        return base::InvalidArgumentError("expected page counts, got '" + text + "'", kStatm);
      }
      return *pages;
    }
    if (end == std::string_view::npos) {
      return base::InvalidArgumentError("expected page counts, got '" + text + "'", kStatm);
    }
    rest.remove_prefix(end);
  }
}

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> MemoryCgroupFiles(base::Env& env) {
  std::vector<std::pair<std::string, std::string>> found;
  auto text = env.ReadFile("/proc/self/cgroup");
  if (!text.ok()) return found;
  std::string_view rest = *text;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    // hierarchy-ID:controllers:path
    const size_t a = line.find(':');
    const size_t b = a == std::string_view::npos ? a : line.find(':', a + 1);
    if (b == std::string_view::npos) continue;
    const std::string_view controllers = line.substr(a + 1, b - a - 1);
    const std::string path(line.substr(b + 1));
    std::pair<std::string, std::string> files;
    if (controllers.empty()) {  // v2
      files = {"/sys/fs/cgroup" + path + "/memory.current",
               "/sys/fs/cgroup" + path + "/memory.max"};
    } else {
      bool memory = false;
      std::string_view list = controllers;
      while (true) {
        const size_t comma = list.find(',');
        memory = memory || list.substr(0, comma) == "memory";
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
      }
      if (!memory) continue;
      const std::string base = "/sys/fs/cgroup/memory" + path;
      files = {base + "/memory.usage_in_bytes", base + "/memory.limit_in_bytes"};
    }
    if (env.FileExists(files.first) && env.FileExists(files.second)) found.push_back(files);
  }
  return found;
}

base::StatusOr<CpuMemory> ReadCpuMemory(base::Env& env, int64_t budget_bytes) {
  const base::Env::MemoryFacts facts = env.Memory();
  if (budget_bytes > 0) {
    SEEDANCE_ASSIGN_OR_RETURN(const int64_t resident, StatmPages(env, 1));
    return CpuMemory{resident * facts.page_bytes, budget_bytes, "budget"};
  }
  for (const auto& [usage_file, limit_file] : MemoryCgroupFiles(env)) {
    auto usage = env.ReadFile(usage_file);
    auto limit = env.ReadFile(limit_file);
    if (!usage.ok() || !limit.ok()) continue;
    const std::string l = Trimmed(*limit);
    if (l == "max") continue;
    const std::optional<int64_t> limit_bytes = base::ParseInt64(l);
    const std::optional<int64_t> usage_bytes = base::ParseInt64(Trimmed(*usage));
    if (!limit_bytes || !usage_bytes) continue;
    if (*limit_bytes >= (int64_t{1} << 60)) continue;  // v1 writes "no limit" as about 2^63
    const bool v2 = limit_file.ends_with("memory.max");
    return CpuMemory{*usage_bytes, *limit_bytes, v2 ? "cgroup v2" : "cgroup v1"};
  }
  if (facts.address_space_limit) {
    SEEDANCE_ASSIGN_OR_RETURN(const int64_t size, StatmPages(env, 0));
    return CpuMemory{size * facts.page_bytes, *facts.address_space_limit, "rlimit"};
  }
  SEEDANCE_ASSIGN_OR_RETURN(const int64_t resident, StatmPages(env, 1));
  return CpuMemory{resident * facts.page_bytes, facts.physical_bytes, "ram"};
}

}  // namespace seedance::control
