#include "src/topo/sysfs.h"

#include <cctype>
#include <charconv>

#include "seedance/topo/topology.h"

namespace seedance::topo::internal {

namespace {

std::string Trim(std::string s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

}  // namespace

std::optional<std::string> ReadTrimmed(base::Env& env, const std::string& path, Notes& notes) {
  auto text = env.ReadFile(path);
  if (!text.ok()) {
    if (text.status().code() != base::StatusCode::kNotFound) {
      notes.Add(path + ": cannot read (" + std::string(text.status().message()) + ")");
    }
    return std::nullopt;
  }
  return Trim(std::move(*text));
}

std::optional<int64_t> ReadInteger(base::Env& env, const std::string& path, Notes& notes) {
  auto text = ReadTrimmed(env, path, notes);
  if (!text) return std::nullopt;
  const std::string& s = *text;
  int base = 10;
  size_t start = 0;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    start = 2;
  }
  int64_t value = 0;
  const char* first = s.data() + start;
  const char* last = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(first, last, value, base);
  if (s.empty() || ec != std::errc() || ptr != last) {
    notes.Add(path + ": expected an integer, got '" + s.substr(0, 40) + "'");
    return std::nullopt;
  }
  return value;
}

std::optional<std::vector<int>> ReadCpuList(base::Env& env, const std::string& path, Notes& notes,
                                            int limit) {
  auto text = ReadTrimmed(env, path, notes);
  if (!text) return std::nullopt;
  auto cpus = ParseCpuList(*text, path, limit);
  if (!cpus.ok()) {
    notes.Add(path + ": " + std::string(cpus.status().message()));
    return std::nullopt;
  }
  return *cpus;
}

std::string JoinLink(const std::string& dir, const std::string& target) {
  std::vector<std::string> parts;
  auto push = [&parts](const std::string& path) {
    size_t i = 0;
    while (i <= path.size()) {
      size_t j = path.find('/', i);
      if (j == std::string::npos) j = path.size();
      std::string part = path.substr(i, j - i);
      if (part == "..") {
        if (!parts.empty()) parts.pop_back();
      } else if (!part.empty() && part != ".") {
        parts.push_back(part);
      }
      i = j + 1;
    }
  };
  if (target.empty() || target.front() != '/') push(dir);
  push(target);
  std::string out;
  for (const auto& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

bool IsPciAddress(const std::string& s) {
  // dddd:bb:dd.f, hex digits.
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11}) {
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

std::vector<std::string> PciChain(const std::string& resolved_path) {
  std::vector<std::string> chain;
  size_t i = 0;
  while (i < resolved_path.size()) {
    size_t j = resolved_path.find('/', i);
    if (j == std::string::npos) j = resolved_path.size();
    std::string part = resolved_path.substr(i, j - i);
    if (chain.empty()) {
      if (part.rfind("pci", 0) == 0 && part.size() > 3) chain.push_back(part);
    } else if (IsPciAddress(part)) {
      chain.push_back(part);
    }
    i = j + 1;
  }
  return chain;
}

}  // namespace seedance::topo::internal
