#include "seedance/probe/doctor.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <set>
#include <utility>

#include "seedance/base/yaml_map.h"

namespace seedance::probe {
namespace {

constexpr std::array<std::string_view, 10> kComponents = {
    "driver", "cuda_runtime", "cudnn",       "cublas",     "nccl",
    "torch",  "torch_cuda",   "torch_cudnn", "torch_nccl", "transformers"};

bool Known(std::string_view name) {
  return std::find(kComponents.begin(), kComponents.end(), name) != kComponents.end();
}

std::string Under(const std::string& root, const std::string& path) {
  if (root.empty() || root == "/") return path;
  std::string r = root;
  while (r.size() > 1 && r.back() == '/') r.pop_back();
  return r + path;
}

std::vector<std::string> Split(std::string_view text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(sep, start), text.size());
    if (end > start) out.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

// The newer of two findings; of versions equal as far as both go, the more precise ("8.9.2"
// over "8").
bool Better(const Version& a, const Version& b) {
  const int head = CompareVersions(a, b, std::min(a.parts.size(), b.parts.size()));
  return head != 0 ? head > 0 : a.parts.size() > b.parts.size();
}

class Finder {
 public:
  Finder(base::Env& env, const DoctorOptions& o) : env_(env), o_(o) {}

  void Add(const std::string& component, const Version& v, const std::string& where) {
    auto it = stack_.find(component);
    if (it == stack_.end()) {
      stack_[component] = Found{v, {where}};
      return;
    }
    if (Better(v, it->second.version)) {
      it->second.version = v;
      it->second.where.insert(it->second.where.begin(), where);
    } else {
      it->second.where.push_back(where);
    }
  }

  std::optional<std::string> Read(const std::string& path) {
    auto text = env_.ReadFile(Under(o_.root, path));
    if (!text.ok()) {
      if (text.status().code() != base::StatusCode::kNotFound) {
        Unreadable(path, std::string(text.status().message()));
      }
      return std::nullopt;
    }
    return std::move(*text);
  }
  void Unreadable(const std::string& path, const std::string& why) {
    unreadable_.push_back(path + ": " + why);
  }
  std::vector<std::string> List(const std::string& path) {
    auto names = env_.ListDirectory(Under(o_.root, path));
    return names.ok() ? std::move(*names) : std::vector<std::string>{};
  }

  void Driver() {
    if (auto text = Read("/proc/driver/nvidia/version")) {
      // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 ..." or
      // "... Open Kernel Module for x86_64  550.54.14  Release Build ...".
      const size_t at = text->find("Kernel Module");
      if (at != std::string::npos) {
        for (const std::string& word : Split(text->substr(at + 13, 80), ' ')) {
          auto v = ParseVersion(word);
          if (v && v->parts.size() >= 2 && v->text == word) {
            Add("driver", *v, "/proc/driver/nvidia/version");
            return;
          }
        }
      }
      Unreadable("/proc/driver/nvidia/version", "no driver version after \"Kernel Module\"");
    }
    if (auto text = Read("/sys/module/nvidia/version")) {
      if (auto v = ParseVersion(Trim(*text)); v && v->parts.size() >= 2) {
        Add("driver", *v, "/sys/module/nvidia/version");
      } else {
        Unreadable("/sys/module/nvidia/version", "not a driver version");
      }
    }
  }

  std::vector<std::string> LibraryDirs() {
    std::vector<std::string> dirs;
    if (auto path = env_.GetVar("LD_LIBRARY_PATH")) dirs = Split(*path, ':');
    for (const std::string& conf : List("/etc/ld.so.conf.d")) {
      if (conf.size() < 5 || conf.substr(conf.size() - 5) != ".conf") continue;
      if (auto text = Read("/etc/ld.so.conf.d/" + conf)) {
        for (const std::string& line : Split(*text, '\n')) {
          const std::string dir = Trim(line);
          if (!dir.empty() && dir[0] == '/') dirs.push_back(dir);
        }
      }
    }
    for (const char* d :
         {"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
          "/usr/lib64", "/usr/lib", "/usr/local/cuda/lib64",
          "/usr/local/cuda/targets/x86_64-linux/lib", "/usr/local/nvidia/lib64"}) {
      dirs.emplace_back(d);
    }
    std::vector<std::string> unique;
    std::set<std::string> seen;
    for (auto& d : dirs) {
      while (d.size() > 1 && d.back() == '/') d.pop_back();
      if (seen.insert(d).second) unique.push_back(d);
    }
    return unique;
  }

  void Libraries() {
    // libNAME.so.VERSION -> component; libcuda (the driver's own library) backs up the driver.
    const std::array<std::pair<std::string_view, std::string_view>, 5> libs = {{
        {"libcudart.so.", "cuda_runtime"},
        {"libcudnn.so.", "cudnn"},
        {"libcublas.so.", "cublas"},
        {"libnccl.so.", "nccl"},
        {"libcuda.so.", "driver"},
    }};
    const bool driver_known = stack_.count("driver") != 0;
    for (const std::string& dir : LibraryDirs()) {
      for (const std::string& name : List(dir)) {
        for (const auto& [prefix, component] : libs) {
          if (name.rfind(prefix, 0) != 0) continue;
          if (component == "driver" && driver_known) continue;
          const std::string suffix = name.substr(prefix.size());
          auto v = ParseVersion(suffix);
          if (v && v->text == suffix && (component != "driver" || v->parts.size() >= 2)) {
            Add(std::string(component), *v, dir + "/" + name);
          }
        }
      }
    }
  }

  // "#define NAME 8" in a header: the number, if present.
  static std::optional<int> Define(const std::string& text, const std::string& name) {
    const std::string key = "#define " + name;
    size_t at = text.find(key);
    while (at != std::string::npos) {
      const size_t after = at + key.size();
      if (after < text.size() && (text[after] == ' ' || text[after] == '\t')) {
        auto v = ParseVersion(Trim(text.substr(after, 16)));
        if (v && !v->parts.empty()) return v->parts[0];
      }
      at = text.find(key, after);
    }
    return std::nullopt;
  }

  void Headers() {
    for (const char* dir :
         {"/usr/include", "/usr/include/x86_64-linux-gnu", "/usr/local/cuda/include"}) {
      for (const auto& [file, component, prefix, patch] : std::array<std::array<std::string, 4>, 3>{
               {{"cudnn_version.h", "cudnn", "CUDNN", "PATCHLEVEL"},
                {"cudnn.h", "cudnn", "CUDNN", "PATCHLEVEL"},
                {"nccl.h", "nccl", "NCCL", "PATCH"}}}) {
        const std::string path = std::string(dir) + "/" + file;
        auto text = Read(path);
        if (!text) continue;
        auto major = Define(*text, prefix + "_MAJOR");
        auto minor = Define(*text, prefix + "_MINOR");
        auto pl = Define(*text, prefix + "_" + patch);
        if (!major || !minor) continue;
        const std::string s = std::to_string(*major) + "." + std::to_string(*minor) +
                              (pl ? "." + std::to_string(*pl) : "");
        Add(component, *ParseVersion(s), path);
      }
    }
    if (auto text = Read("/usr/local/cuda/version.json")) {
      // {"cuda": {"name": "CUDA SDK", "version": "12.2.2"}, ...}: the first "version" value.
      const size_t cuda = text->find("\"cuda\"");
      const size_t key = cuda == std::string::npos ? cuda : text->find("\"version\"", cuda);
      if (key != std::string::npos) {
        const size_t open = text->find('"', text->find(':', key) + 1);
        const size_t close = open == std::string::npos ? open : text->find('"', open + 1);
        if (close != std::string::npos) {
          if (auto v = ParseVersion(text->substr(open + 1, close - open - 1))) {
            Add("cuda_runtime", *v, "/usr/local/cuda/version.json");
          }
        }
      }
    }
  }

  std::vector<std::string> SitePackages() {
    std::vector<std::string> out;
    auto python_dirs = [&](const std::string& lib, std::initializer_list<const char*> leaves) {
      for (const std::string& name : List(lib)) {
        if (name.rfind("python3", 0) != 0) continue;
        for (const char* leaf : leaves) out.push_back(lib + "/" + name + "/" + leaf);
      }
    };
    for (std::string prefix : o_.python_prefixes) {
      while (prefix.size() > 1 && prefix.back() == '/') prefix.pop_back();
      python_dirs(prefix + "/lib", {"site-packages"});
    }
    out.emplace_back("/usr/lib/python3/dist-packages");
    python_dirs("/usr/local/lib", {"dist-packages", "site-packages"});
    python_dirs("/usr/lib", {"site-packages"});
    return out;
  }

  void Python() {
    for (const std::string& sp : SitePackages()) {
      for (const std::string& entry : List(sp)) {
        if (entry.size() < 11 || entry.substr(entry.size() - 10) != ".dist-info") continue;
        auto meta = Read(sp + "/" + entry + "/METADATA");
        if (!meta) continue;
        std::string name, version;
        for (const std::string& line : Split(*meta, '\n')) {
          if (line.rfind("Name:", 0) == 0 && name.empty()) name = Trim(line.substr(5));
          if (line.rfind("Version:", 0) == 0 && version.empty()) version = Trim(line.substr(8));
          if (line.empty() || (!name.empty() && !version.empty())) break;
        }
        std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) {
          return c == '_' ? '-' : static_cast<char>(std::tolower(c));
        });
        std::string component;
        if (name == "torch") component = "torch";
        if (name == "transformers") component = "transformers";
        if (name.rfind("nvidia-cudnn-cu", 0) == 0) component = "torch_cudnn";
        if (name.rfind("nvidia-nccl-cu", 0) == 0) component = "torch_nccl";
        auto v = ParseVersion(version);
        if (component.empty() || !v) continue;
        Add(component, *v, sp + "/" + entry + "/METADATA");
        if (component == "torch") TorchCuda(sp);
      }
    }
  }

  // torch/version.py: `cuda: Optional[str] = '12.1'` (or `cuda = "12.1"`); None for a CPU build.
  void TorchCuda(const std::string& sp) {
    const std::string path = sp + "/torch/version.py";
    auto text = Read(path);
    if (!text) return;
    for (const std::string& line : Split(*text, '\n')) {
      if (line.rfind("cuda", 0) != 0 || (line.size() > 4 && std::isalnum(line[4]))) continue;
      const size_t eq = line.find('=');
      if (eq == std::string::npos) continue;
      std::string value = Trim(line.substr(eq + 1));
      if (value.size() >= 2 && (value[0] == '\'' || value[0] == '"')) {
        value = value.substr(1, value.size() - 2);
        if (auto v = ParseVersion(value)) Add("torch_cuda", *v, path);
      }
      return;
    }
  }

  Stack Take() { return std::move(stack_); }
  std::vector<std::string> TakeUnreadable() { return std::move(unreadable_); }

 private:
  base::Env& env_;
  const DoctorOptions& o_;
  Stack stack_;
  std::vector<std::string> unreadable_;
};

// One clause, checked at parse time.
struct Side {
  std::string component;  // empty: a literal
  size_t keep = 0;        // .major: 1, .minor: 2, else 0 (all)
  Version literal;
};
struct Clause {
  Side left;
  std::string op;  // == != < <= > >= missing present
  Side right;
};

base::StatusOr<Side> ParseSide(const std::string& token, bool literal_ok,
                               const std::string& where) {
  Side s;
  std::string name = token;
  for (const auto& [suffix, keep] : {std::pair<std::string, size_t>{".major", 1}, {".minor", 2}}) {
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      name.resize(name.size() - suffix.size());
      s.keep = keep;
    }
  }
  if (Known(name)) {
    s.component = name;
    return s;
  }
  auto v = ParseVersion(token);
  if (literal_ok && v && v->text == token) {
    s.literal = *v;
    return s;
  }
  std::string names;
  for (auto c : kComponents) names += (names.empty() ? "" : ", ") + std::string(c);
  return base::InvalidArgumentError("'" + token + "' is neither a component (" + names +
                                        ", optionally .major or .minor)" +
                                        (literal_ok ? " nor a version" : ""),
                                    where);
}

base::StatusOr<std::vector<Clause>> ParseWhen(const std::string& when, const std::string& where) {
  std::vector<Clause> out;
  std::vector<std::string> words = Split(when, ' ');
  std::vector<std::vector<std::string>> groups(1);
  for (const auto& w : words) {
    if (w == "and") {
      groups.emplace_back();
    } else {
      groups.back().push_back(w);
    }
  }
  for (const auto& g : groups) {
    Clause c;
    if (g.size() == 2 && (g[1] == "missing" || g[1] == "present")) {
      SEEDANCE_ASSIGN_OR_RETURN(c.left, ParseSide(g[0], false, where));
      c.op = g[1];
    } else if (g.size() == 3) {
      static const std::set<std::string> ops = {"==", "!=", "<", "<=", ">", ">="};
      if (ops.count(g[1]) == 0) {
        return base::InvalidArgumentError(
            "unknown operator '" + g[1] + "'; expected == != < <= > >=", where);
      }
      SEEDANCE_ASSIGN_OR_RETURN(c.left, ParseSide(g[0], false, where));
      c.op = g[1];
      SEEDANCE_ASSIGN_OR_RETURN(c.right, ParseSide(g[2], true, where));
    } else {
      std::string text;
      for (const auto& w : g) text += (text.empty() ? "" : " ") + w;
      return base::InvalidArgumentError(
          "expected 'COMPONENT OP VERSION', 'COMPONENT OP COMPONENT', 'COMPONENT missing' or "
          "'COMPONENT present', got '" +
              text + "'",
          where);
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

std::optional<Version> ParseVersion(std::string_view text) {
  Version v;
  size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    int64_t n = 0;
    const size_t start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && i - start < 9) {
      n = n * 10 + (text[i] - '0');
      ++i;
    }
    if (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) return std::nullopt;
    v.parts.push_back(static_cast<int>(n));
    if (i + 1 < text.size() && text[i] == '.' &&
        std::isdigit(static_cast<unsigned char>(text[i + 1]))) {
      ++i;
      continue;
    }
    break;
  }
  if (v.parts.empty()) return std::nullopt;
  v.text = std::string(text.substr(0, i));
  return v;
}

int CompareVersions(const Version& a, const Version& b, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const int x = i < a.parts.size() ? a.parts[i] : 0;
    const int y = i < b.parts.size() ? b.parts[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

Stack FindStack(base::Env& env, const DoctorOptions& options,
                std::vector<std::string>* unreadable) {
  Finder f(env, options);
  f.Driver();
  f.Libraries();
  f.Headers();
  f.Python();
  if (unreadable != nullptr) *unreadable = f.TakeUnreadable();
  return f.Take();
}

std::vector<std::string> DefaultPythonPrefixes(base::Env& env) {
  std::vector<std::string> out;
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
    if (auto v = env.GetVar(var); v && !v->empty()) out.push_back(*v);
  }
  return out;
}

base::StatusOr<std::vector<Problem>> ParseKnownProblems(std::string_view yaml,
                                                        const std::string& file) {
  SEEDANCE_ASSIGN_OR_RETURN(const YAML::Node doc, base::ParseYaml(yaml, file));
  SEEDANCE_ASSIGN_OR_RETURN(const base::YamlMap root, base::YamlMap::FromNode(doc, file, ""));
  SEEDANCE_RETURN_IF_ERROR(root.CheckKeys({"problems"}));
  SEEDANCE_ASSIGN_OR_RETURN(const auto rows, root.GetMapList("problems"));
  std::vector<Problem> out;
  std::set<std::string> ids;
  for (const base::YamlMap& row : rows) {
    SEEDANCE_RETURN_IF_ERROR(row.CheckKeys({"id", "when", "symptom", "fix", "source"}));
    Problem p;
    SEEDANCE_ASSIGN_OR_RETURN(p.id, row.GetString("id"));
    if (!ids.insert(p.id).second) {
      return base::InvalidArgumentError("id '" + p.id + "' is used twice", row.Where("id"));
    }
    SEEDANCE_ASSIGN_OR_RETURN(const std::string when, row.GetString("when"));
    SEEDANCE_RETURN_IF_ERROR(ParseWhen(when, row.Where("when")).status());
    std::string clause;  // kept as the clauses' text, one per entry
    for (const std::string& w : Split(when, ' ')) {
      if (w == "and") {
        p.when.push_back(clause);
        clause.clear();
      } else {
        clause += (clause.empty() ? "" : " ") + w;
      }
    }
    p.when.push_back(clause);
    SEEDANCE_ASSIGN_OR_RETURN(p.symptom, row.GetString("symptom"));
    SEEDANCE_ASSIGN_OR_RETURN(p.fix, row.GetString("fix"));
    SEEDANCE_ASSIGN_OR_RETURN(p.source, row.GetString("source"));
    out.push_back(std::move(p));
  }
  return out;
}

bool Matches(const Problem& problem, const Stack& stack, std::vector<std::string>* because) {
  std::vector<std::string> why;
  for (const std::string& text : problem.when) {
    auto clauses = ParseWhen(text, problem.id);
    if (!clauses.ok() || clauses->size() != 1) return false;  // checked at parse time
    const Clause& c = (*clauses)[0];
    auto left = stack.find(c.left.component);
    if (c.op == "missing" || c.op == "present") {
      const bool present = left != stack.end();
      if (present != (c.op == "present")) return false;
      why.push_back(c.left.component + " " +
                    (present ? left->second.version.text + " present" : "missing"));
      continue;
    }
    if (left == stack.end()) return false;
    Version right;
    size_t n = 0;
    std::string right_text;
    if (c.right.component.empty()) {
      right = c.right.literal;
      n = right.parts.size();
      right_text = right.text;
    } else {
      auto r = stack.find(c.right.component);
      if (r == stack.end()) return false;
      right = r->second.version;
      n = std::max(left->second.version.parts.size(), right.parts.size());
      right_text = c.right.component + " " + right.text;
      if (c.right.keep != 0) n = c.right.keep;
    }
    if (c.left.keep != 0) n = std::min(n == 0 ? c.left.keep : n, c.left.keep);
    const int cmp = CompareVersions(left->second.version, right, n);
    const bool holds = (c.op == "==" && cmp == 0) || (c.op == "!=" && cmp != 0) ||
                       (c.op == "<" && cmp < 0) || (c.op == "<=" && cmp <= 0) ||
                       (c.op == ">" && cmp > 0) || (c.op == ">=" && cmp >= 0);
    if (!holds) return false;
    why.push_back(c.left.component + " " + left->second.version.text + " " + c.op + " " +
                  right_text);
  }
  if (because != nullptr) *because = std::move(why);
  return true;
}

DoctorReport Diagnose(const Stack& stack, const std::vector<Problem>& table,
                      std::vector<std::string> unreadable) {
  DoctorReport r;
  r.stack = stack;
  r.unreadable = std::move(unreadable);
  r.driver = stack.count("driver") != 0;
  for (const char* c : {"cuda_runtime", "cudnn", "cublas", "nccl"}) {
    r.cuda_libraries = r.cuda_libraries || stack.count(c) != 0;
  }
  for (const Problem& p : table) {
    std::vector<std::string> because;
    if (Matches(p, stack, &because)) r.matched.emplace_back(&p, std::move(because));
  }
  return r;
}

base::Report DoctorToReport(const DoctorReport& d) {
  // What was found, in words: the driver, the CUDA runtime and PyTorch when present.
  std::string found;
  for (const auto& [name, label] : {std::pair<const char*, const char*>{"driver", "driver"},
                                    {"cuda_runtime", "CUDA runtime"},
                                    {"cudnn", "cuDNN"},
                                    {"torch", "PyTorch"}}) {
    auto it = d.stack.find(name);
    if (it == d.stack.end()) continue;
    found += (found.empty() ? "" : ", ") + std::string(label) + " " + it->second.version.text;
  }
  // A driver file that is there but could not be read: the driver's version is unknown, which
  // is not the same as no driver.
  std::string driver_file;
  for (const std::string& u : d.unreadable) {
    if (u.find("nvidia/version") == std::string::npos) continue;
    driver_file += (driver_file.empty() ? "" : "; ") + u;
  }
  std::string stack;
  if (!d.driver && !driver_file.empty()) {
    stack = "an NVIDIA driver is installed but its version is unknown (" + driver_file + ")" +
            (found.empty() ? std::string() : "; " + found);
  } else if (!d.driver && !d.cuda_libraries) {
    stack =
        "no GPU software stack on this machine: no NVIDIA driver (/proc/driver/nvidia/version, "
        "/sys/module/nvidia/version) and no CUDA runtime, cuDNN, cuBLAS or NCCL library";
  } else if (!d.driver) {
    stack =
        "no NVIDIA driver on this machine (/proc/driver/nvidia/version, "
        "/sys/module/nvidia/version), so no GPU program can run here; CUDA libraries only: " +
        found;
  } else {
    stack = found;
  }
  if (auto torch = d.stack.find("torch"); torch != d.stack.end() && !d.driver) {
    stack += (d.stack.count("torch_cuda") != 0
                  ? "; PyTorch " + torch->second.version.text + " is a CUDA build"
                  : "; PyTorch " + torch->second.version.text + " is a CPU build");
  }
  base::Report r = base::Report::object();
  const size_t n = d.matched.size();
  const std::string summary =
      (n == 0 ? std::string("No known problem matches")
              : std::to_string(n) + " known problem" + (n == 1 ? " matches" : "s match")) +
      "; " + stack;
  r["summary"] = summary;
  r["driver_found"] = d.driver;
  r["unreadable"] = d.unreadable;
  r["cuda_libraries_found"] = d.cuda_libraries;
  base::Report components = base::Report::array();
  for (std::string_view name : kComponents) {
    auto it = d.stack.find(name);
    base::Report row = base::Report::object();
    row["component"] = std::string(name);
    row["version"] = it == d.stack.end() ? std::string("not found") : it->second.version.text;
    std::string where;
    if (it != d.stack.end()) {
      for (const auto& w : it->second.where) where += (where.empty() ? "" : ", ") + w;
    }
    row["where"] = where;
    components.push_back(row);
  }
  r["components"] = components;
  base::Report problems = base::Report::array();
  for (const auto& [p, because] : d.matched) {
    base::Report row = base::Report::object();
    row["id"] = p->id;
    row["because"] = because;
    row["symptom"] = p->symptom;
    row["fix"] = p->fix;
    row["source"] = p->source;
    problems.push_back(row);
  }
  r["problems"] = problems;
  return r;
}

}  // namespace seedance::probe
