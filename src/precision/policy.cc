#include "seedance/precision/policy.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "seedance/base/enum_names.h"
#include "seedance/base/yaml_map.h"

namespace seedance::precision {
namespace {

// The policy's choices, as YAML accepts them (GetChoice lists them in its error).
constexpr std::array<std::string_view, 4> kPrecisionNames = {"fp8", "fp16", "bf16", "fp32"};
inline constexpr base::EnumTable<ModuleClass, 5> kModuleClassNames = {{
    {ModuleClass::kQkv, "qkv"},
    {ModuleClass::kFfn, "ffn"},
    {ModuleClass::kNorm, "norm"},
    {ModuleClass::kIo, "io"},
    {ModuleClass::kOther, "other"},
}};
constexpr auto kClassNames = [] {
  std::array<std::string_view, kModuleClassNames.size()> names{};
  for (size_t i = 0; i < names.size(); ++i) names[i] = kModuleClassNames[i].name;
  return names;
}();

// A name of kPrecisionNames (GetChoice checked it) as its format.
Precision PolicyPrecision(std::string_view name) { return *base::ParseNumericFormat(name); }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The dot-separated parts of a qualified module name.
std::vector<std::string> Parts(std::string_view name) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= name.size()) {
    const size_t dot = name.find('.', start);
    const size_t end = dot == std::string_view::npos ? name.size() : dot;
    parts.push_back(Lower(name.substr(start, end - start)));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts;
}

bool AnyPartIs(const std::vector<std::string>& parts, std::initializer_list<std::string_view> set) {
  for (const auto& p : parts) {
    for (std::string_view s : set) {
      if (p == s) return true;
    }
  }
  return false;
}

bool AnyPartStartsWith(const std::vector<std::string>& parts,
                       std::initializer_list<std::string_view> prefixes) {
  for (const auto& p : parts) {
    for (std::string_view s : prefixes) {
      if (p.starts_with(s)) return true;
    }
  }
  return false;
}

}  // namespace

Precision RaisePrecision(Precision p) {
  for (size_t i = 0; i + 1 < kPolicyPrecisions.size(); ++i) {
    if (kPolicyPrecisions[i] == p) return kPolicyPrecisions[i + 1];
  }
  return p;
}

std::string_view ModuleClassName(ModuleClass c) { return base::EnumName(kModuleClassNames, c); }

base::StatusOr<ModuleClass> ParseModuleClass(std::string_view name, std::string_view where) {
  return base::ParseEnum(kModuleClassNames, name, where);
}

ModuleClass ClassifyModule(std::string_view name, std::string_view type) {
  const std::string t = Lower(type);
  const auto parts = Parts(name);
  if (t.find("norm") != std::string::npos || AnyPartStartsWith(parts, {"ln_", "norm"}) ||
      AnyPartIs(parts, {"ln", "ln1", "ln2", "ln_f", "layernorm", "rmsnorm"})) {
    return ModuleClass::kNorm;
  }
  if (t.find("embedding") != std::string::npos || AnyPartStartsWith(parts, {"embed"}) ||
      AnyPartIs(parts, {"wte", "wpe", "lm_head", "classifier", "output", "head"})) {
    return ModuleClass::kIo;
  }
  if (AnyPartIs(parts, {"q_proj", "k_proj", "v_proj", "qkv", "qkv_proj", "query", "key", "value",
                        "c_attn", "in_proj", "wq", "wk", "wv", "wqkv"})) {
    return ModuleClass::kQkv;
  }
  if (AnyPartIs(parts, {"mlp", "ffn", "feed_forward", "fc1", "fc2", "gate_proj", "up_proj",
                        "down_proj", "w1", "w2", "w3", "c_fc", "intermediate"})) {
    return ModuleClass::kFfn;
  }
  return ModuleClass::kOther;
}

bool GlobMatch(std::string_view pattern, std::string_view text) {
  // Iterative matcher with one backtrack point: linear in practice.
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

base::StatusOr<PrecisionPolicy> ParsePolicyYaml(std::string_view text, const std::string& file) {
  SEEDANCE_ASSIGN_OR_RETURN(YAML::Node doc, base::ParseYaml(text, file));
  SEEDANCE_ASSIGN_OR_RETURN(base::YamlMap root, base::YamlMap::FromNode(doc, file, ""));
  SEEDANCE_RETURN_IF_ERROR(root.CheckKeys({"precision_policy"}));
  SEEDANCE_ASSIGN_OR_RETURN(base::YamlMap m, root.GetMap("precision_policy"));
  SEEDANCE_RETURN_IF_ERROR(m.CheckKeys({"default", "small_batch_fp32", "fp8", "rules"}));
  PrecisionPolicy policy;
  policy.source = file;
  SEEDANCE_ASSIGN_OR_RETURN(std::string def, m.GetChoice("default", kPrecisionNames, "bf16"));
  policy.default_precision = PolicyPrecision(def);
  SEEDANCE_ASSIGN_OR_RETURN(policy.small_batch_fp32, m.GetInt("small_batch_fp32", 8, 0));
  SEEDANCE_ASSIGN_OR_RETURN(policy.allow_fp8, m.GetBool("fp8", false));
  if (m.Has("rules")) {
    SEEDANCE_ASSIGN_OR_RETURN(std::vector<base::YamlMap> rules, m.GetMapList("rules"));
    for (const base::YamlMap& r : rules) {
      SEEDANCE_RETURN_IF_ERROR(r.CheckKeys({"name", "type", "class", "precision"}));
      PolicyRule rule;
      rule.where = r.WhereSelf();
      if (r.Has("name")) {
        SEEDANCE_ASSIGN_OR_RETURN(std::string v, r.GetString("name"));
        rule.name = v;
      }
      if (r.Has("type")) {
        SEEDANCE_ASSIGN_OR_RETURN(std::string v, r.GetString("type"));
        rule.type = v;
      }
      if (r.Has("class")) {
        SEEDANCE_ASSIGN_OR_RETURN(std::string v, r.GetChoice("class", kClassNames));
        SEEDANCE_ASSIGN_OR_RETURN(rule.module_class, ParseModuleClass(v, r.Where("class")));
      }
      if (!rule.name && !rule.type && !rule.module_class) {
        return base::InvalidArgumentError("a rule needs at least one of name, type, class",
                                          r.WhereSelf());
      }
      SEEDANCE_ASSIGN_OR_RETURN(std::string p, r.GetChoice("precision", kPrecisionNames));
      rule.precision = PolicyPrecision(p);
      if (rule.precision == Precision::kFp8 && !policy.allow_fp8) {
        return base::InvalidArgumentError("fp8 rules need 'fp8: true' in the policy",
                                          r.Where("precision"));
      }
      policy.rules.push_back(std::move(rule));
    }
  }
  return policy;
}

std::vector<PrecisionDecision> DecidePrecisions(const PrecisionPolicy& policy,
                                                const std::vector<ModuleRef>& modules,
                                                int64_t micro_batch) {
  std::vector<PrecisionDecision> out;
  out.reserve(modules.size());
  const bool small_batch =
      policy.small_batch_fp32 > 0 && micro_batch > 0 && micro_batch <= policy.small_batch_fp32;
  for (const ModuleRef& m : modules) {
    PrecisionDecision d;
    d.name = m.name;
    d.type = m.type;
    d.module_class = ClassifyModule(m.name, m.type);
    if (small_batch) {
      d.precision = Precision::kFp32;
      d.rule = "small-batch";
      d.reason = "micro-batch " + std::to_string(micro_batch) +
                 " <= " + std::to_string(policy.small_batch_fp32) +
                 ": casts would cost more than they save";
      out.push_back(std::move(d));
      continue;
    }
    bool decided = false;
    for (size_t i = 0; i < policy.rules.size() && !decided; ++i) {
      const PolicyRule& r = policy.rules[i];
      if (r.name && !GlobMatch(*r.name, m.name)) continue;
      if (r.type && *r.type != m.type) continue;
      if (r.module_class && *r.module_class != d.module_class) continue;
      d.precision = r.precision;
      d.rule = "rule " + std::to_string(i + 1) + " (" + r.where + ")";
      d.reason = "matched the policy's rule";
      decided = true;
    }
    if (!decided) {
      switch (d.module_class) {
        case ModuleClass::kQkv:
          d.precision = Precision::kBf16;
          d.reason = "QKV projections are the most precision-sensitive";
          break;
        case ModuleClass::kFfn:
          d.precision = policy.allow_fp8 ? Precision::kFp8 : Precision::kFp16;
          d.reason = "feed-forward layers tolerate low precision";
          break;
        case ModuleClass::kNorm:
          d.precision = Precision::kFp32;
          d.reason = "norms are cheap: fp32 costs nothing measurable";
          break;
        case ModuleClass::kIo:
          d.precision = Precision::kBf16;
          d.reason = "input/output layers stay 16-bit";
          break;
        case ModuleClass::kOther:
          d.precision = policy.default_precision;
          d.rule = "default";
          d.reason = "no rule or sensitivity class applies";
          break;
      }
      if (d.rule.empty()) d.rule = "sensitivity";
    }
    out.push_back(std::move(d));
  }
  return out;
}

base::Report DecisionsToReport(const std::vector<PrecisionDecision>& decisions) {
  base::Report r = base::Report::array();
  for (const auto& d : decisions) {
    r.push_back({{"module", d.name},
                 {"type", d.type},
                 {"class", std::string(ModuleClassName(d.module_class))},
                 {"precision", std::string(base::NumericFormatName(d.precision))},
                 {"rule", d.rule},
                 {"reason", d.reason}});
  }
  return r;
}

}  // namespace seedance::precision
