// Layer-wise precision policy (feature PREC-4): which number format each module
// of a model computes in, and why.
//
// A decision is made per module from its qualified name ("layers.0.attn.q_proj")
// and type ("Linear"), in this order (the first that applies wins):
//
//  1. small-batch rule: micro-batch <= small_batch_fp32 (8)
//     keeps every module in fp32 — the casts cost more than they save;
//  2. the policy's own rules, in file order: `name` (a glob: * and ? match
//     any characters, dots included), `type` (exact class name) and/or
//     `class` (a sensitivity class below); all given keys must match;
//  3. the sensitivity ordering (QKV > FFN > Norm), applied
//     by class: qkv -> bf16 (gradients grow with d_k; bf16's range avoids
//     overflow), ffn -> fp8 when the policy allows fp8, else fp16, norm ->
//     fp32 (least sensitive but also the cheapest: nothing to gain; the same
//     choice torch.autocast makes), io (embeddings, output head) -> bf16
//     (input/output layers stay out of fp8);
//  4. the policy's default (bf16) for everything else.
//
// Classes come from names and types: qkv (q_proj, k_proj, v_proj, qkv,
// query, key, value, c_attn, in_proj, wq, wk, wv), ffn (mlp, ffn, fc1, fc2,
// gate_proj, up_proj, down_proj, w1, w2, w3, c_fc, intermediate), norm (a type
// or name containing "norm", ln_*), io (embed*, wte, wpe, lm_head, classifier,
// output), other.
//
// Thread safety: a PrecisionPolicy is immutable once parsed.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/numeric_format.h"
#include "seedance/base/report.h"
#include "seedance/base/status.h"

namespace seedance::precision {

// A compute precision is a base::NumericFormat — the one family of format names that the GPU
// catalog, job specs and this policy share (base::NumericFormatName gives "fp8", "bf16", ...).
// A policy chooses among four of them, from lowest to highest: fp8, fp16, bf16, fp32.
using Precision = base::NumericFormat;
inline constexpr std::array<Precision, 4> kPolicyPrecisions = {Precision::kFp8, Precision::kFp16,
                                                               Precision::kBf16, Precision::kFp32};
// One level up the ladder fp8 -> fp16 -> bf16 -> fp32 (fp32, and a format off the ladder, stay).
Precision RaisePrecision(Precision p);

enum class ModuleClass { kQkv, kFfn, kNorm, kIo, kOther };
std::string_view ModuleClassName(ModuleClass c);  // "qkv", "ffn", "norm", "io", "other"
base::StatusOr<ModuleClass> ParseModuleClass(std::string_view name, std::string_view where);
ModuleClass ClassifyModule(std::string_view name, std::string_view type);

// Glob match: '*' any run of characters (dots included), '?' one character.
bool GlobMatch(std::string_view pattern, std::string_view text);

struct PolicyRule {
  std::optional<std::string> name;  // glob
  std::optional<std::string> type;
  std::optional<ModuleClass> module_class;
  Precision precision = Precision::kBf16;
  std::string where;  // file:line of the rule, for the report
};

struct PrecisionPolicy {
  Precision default_precision = Precision::kBf16;
  int64_t small_batch_fp32 = 8;  // 0 turns the small-batch rule off
  bool allow_fp8 = false;
  std::vector<PolicyRule> rules;
  std::string source = "<built-in>";
};

// Parses a policy file; every error names file:line: key.
//
//   precision_policy:
//     default: bf16
//     small_batch_fp32: 8
//     fp8: false
//     rules:
//       - {name: "encoder.*.q_proj", precision: fp32}
//       - {type: LayerNorm, precision: fp32}
//       - {class: ffn, precision: fp8}
base::StatusOr<PrecisionPolicy> ParsePolicyYaml(std::string_view text, const std::string& file);

struct ModuleRef {
  std::string name;
  std::string type;
};

struct PrecisionDecision {
  std::string name;
  std::string type;
  ModuleClass module_class = ModuleClass::kOther;
  Precision precision = Precision::kBf16;
  std::string rule;    // "small-batch", "rule 2 (policy.yaml:7)", "sensitivity", "default"
  std::string reason;  // one sentence
};

// micro_batch <= 0 means unknown (the small-batch rule does not apply).
std::vector<PrecisionDecision> DecidePrecisions(const PrecisionPolicy& policy,
                                                const std::vector<ModuleRef>& modules,
                                                int64_t micro_batch);

base::Report DecisionsToReport(const std::vector<PrecisionDecision>& decisions);

}  // namespace seedance::precision
