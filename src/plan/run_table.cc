#include "seedance/plan/run_table.h"

#include <array>
#include <cmath>
#include <cstdio>

#include "seedance/base/csv.h"
#include "seedance/base/parse.h"
#include "seedance/plan/model_figures.h"
#include "seedance/plan/parallelism.h"

namespace seedance::plan {
namespace {

using base::CsvRecord;
using base::CsvTable;
using base::InvalidArgumentError;
using base::StatusOr;

// Columns, in the order FormatRunRow writes them, with the job spec section each belongs to
// ("" for the row's own fields and the measurements).
struct Column {
  std::string_view name, section;
};
constexpr std::array<Column, 43> kColumns = {{
    {"kind", ""},
    {"id", ""},
    {"group", ""},
    {"source", ""},
    {"family", "model"},
    {"layers", "model"},
    {"hidden_size", "model"},
    {"attention_heads", "model"},
    {"kv_heads", "model"},
    {"ffn_size", "model"},
    {"vocab_size", "model"},
    {"sequence_length", "model"},
    {"tie_embeddings", "model"},
    {"gpu", "hardware"},
    {"gpus_per_node", "hardware"},
    {"nodes", "hardware"},
    {"inter_node_gbytes_per_s", "hardware.interconnect"},
    {"global_batch", "training"},
    {"micro_batch", "training"},
    {"tensor", "parallelism"},
    {"pipeline", "parallelism"},
    {"virtual_stages", "parallelism"},
    {"sequence_parallel", "parallelism"},
    {"context_parallel", "parallelism"},
    {"zero_stage", "parallelism"},
    {"recompute", "parallelism"},
    {"recompute_layers", "parallelism"},
    {"first_stage_layers", "parallelism"},
    {"last_stage_layers", "parallelism"},
    {"precision", "training"},
    {"optimizer", "training"},
    {"attention", "training"},
    {"framework", "job"},
    {"parameters", ""},
    {"data_parallel", ""},
    {"published_step_s", ""},
    {"published_tokens_per_s_per_gpu", ""},
    {"published_tflops_per_gpu", ""},
    {"published_mfu", ""},
    {"published_gb_per_gpu", ""},
    {"flops_formula", ""},
    {"notes", ""},
    {"measured_by", ""},
}};

// A YAML scalar that stays a string (quoted, escaped) or a number/bool as written.
std::string Scalar(std::string_view column, const std::string& value) {
  static constexpr std::string_view kStrings[] = {
      "family", "gpu", "precision", "optimizer", "attention", "recompute", "framework"};
  for (std::string_view s : kStrings) {
    if (column != s) continue;
    std::string q = "\"";
    for (char c : value) {
      if (c == '"' || c == '\\') q += '\\';
      q += c;
    }
    return q + "\"";
  }
  return value;
}

StatusOr<std::optional<double>> Measurement(const CsvTable& t, const CsvRecord& r,
                                            std::string_view column) {
  const auto index = t.Column(column);
  if (!index || r.fields[*index].empty()) return std::optional<double>{};
  const std::optional<double> v = base::ParseFiniteDouble(r.fields[*index]);
  if (!v || !(*v > 0)) {
    return InvalidArgumentError(
        std::string(column) + " must be a positive number, got '" + r.fields[*index] + "'",
        t.Where(r, *index));
  }
  return std::optional<double>{*v};
}

std::string Field(const CsvTable& t, const CsvRecord& r, std::string_view column) {
  const auto index = t.Column(column);
  return index ? r.fields[*index] : std::string();
}

// The row as a job spec, so the spec's own parser validates it; an error names the column.
StatusOr<JobSpec> SpecOf(const CsvTable& t, const CsvRecord& r, const cost::GpuCatalog& catalog) {
  std::string model, training, hardware, interconnect, parallelism, job;
  for (const Column& c : kColumns) {
    if (c.section.empty()) continue;
    const std::string value = Field(t, r, c.name);
    if (value.empty()) continue;
    const std::string line = "  " + std::string(c.name) + ": " + Scalar(c.name, value) + "\n";
    if (c.section == "model") model += line;
    if (c.section == "training") training += line;
    if (c.section == "hardware") hardware += line;
    if (c.section == "hardware.interconnect") interconnect += "  " + line;
    if (c.section == "parallelism") parallelism += line;
    if (c.section == "job") job += std::string(c.name) + ": " + Scalar(c.name, value) + "\n";
  }
  std::string yaml = "name: \"" + Field(t, r, "id") + "\"\n" + job + "model:\n" + model +
                     "training:\n" + training + "hardware:\n" + hardware;
  if (!interconnect.empty()) yaml += "  interconnect:\n" + interconnect;
  if (!parallelism.empty()) yaml += "parallelism:\n" + parallelism;
  auto spec = ParseJobSpec(yaml, t.file(), catalog);
  if (spec.ok()) return spec;
  // Point the error at the row and the column the key came from.
  const std::string where(spec.status().where());
  const size_t colon = where.rfind(": ");
  std::string key = colon == std::string::npos ? where : where.substr(colon + 2);
  key = key.substr(key.rfind('.') + 1);
  const auto index = t.Column(key);
  return base::Status(spec.status().code(), std::string(spec.status().message()),
                      index ? t.Where(r, *index) : t.file() + ":" + std::to_string(r.line));
}

}  // namespace

double FlopsPerToken(const ModelSpec& model, FlopsFormula formula) {
  const ModelFigures f = ComputeModelFigures(model);
  const double n = static_cast<double>(f.matmul_parameters);
  const double lhs = static_cast<double>(model.layers) * static_cast<double>(model.hidden_size) *
                     static_cast<double>(model.sequence_length);
  switch (formula) {
    case FlopsFormula::kPalm:
      return 6 * n + 12 * lhs;
    case FlopsFormula::kPalmCausal:
      return 6 * n + 6 * lhs;
    case FlopsFormula::kMegatronRecompute:
      return 8 * n + 16 * lhs;
  }
  return 0;
}

StatusOr<std::vector<RunRecord>> ParseRunTable(std::string_view csv, const std::string& file,
                                               const cost::GpuCatalog& catalog) {
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::Parse(csv, file));
  for (const char* required : {"kind", "id"}) {
    if (!t.Column(required)) {
      return base::InvalidArgumentError(std::string("missing column '") + required + "'",
                                        file + ":1");
    }
  }
  for (const std::string& name : t.header()) {
    bool known = false;
    for (const Column& c : kColumns) known = known || c.name == name;
    if (!known) {
      std::string list;
      for (const Column& c : kColumns) list += (list.empty() ? "" : ", ") + std::string(c.name);
      return InvalidArgumentError("unknown column '" + name + "' (expected: " + list + ")",
                                  file + ":1");
    }
  }
  std::vector<RunRecord> out;
  for (const CsvRecord& r : t.records()) {
    RunRecord rec;
    rec.id = Field(t, r, "id");
    rec.group = Field(t, r, "group");
    rec.source = Field(t, r, "source");
    rec.where = file + ":" + std::to_string(r.line);
    const std::string kind = Field(t, r, "kind");
    if (kind == "run") {
      rec.kind = RunKind::kRun;
    } else if (kind == "memory") {
      rec.kind = RunKind::kMemory;
    } else if (kind == "model_states") {
      rec.kind = RunKind::kModelStates;
    } else {
      return InvalidArgumentError("kind must be run, memory or model_states, got '" + kind + "'",
                                  t.Where(r, *t.Column("kind")));
    }
    if (rec.id.empty()) {
      return InvalidArgumentError("id must not be empty", t.Where(r, *t.Column("id")));
    }
    for (const RunRecord& other : out) {
      if (other.id == rec.id) {
        return InvalidArgumentError("id '" + rec.id + "' repeats " + other.where,
                                    t.Where(r, *t.Column("id")));
      }
    }
    SEEDANCE_ASSIGN_OR_RETURN(rec.step_s, Measurement(t, r, "published_step_s"));
    SEEDANCE_ASSIGN_OR_RETURN(rec.tokens_per_s_per_gpu,
                              Measurement(t, r, "published_tokens_per_s_per_gpu"));
    SEEDANCE_ASSIGN_OR_RETURN(rec.tflops_per_gpu, Measurement(t, r, "published_tflops_per_gpu"));
    SEEDANCE_ASSIGN_OR_RETURN(rec.mfu, Measurement(t, r, "published_mfu"));
    SEEDANCE_ASSIGN_OR_RETURN(rec.gb_per_gpu, Measurement(t, r, "published_gb_per_gpu"));
    if (rec.mfu && *rec.mfu > 1) {
      return InvalidArgumentError("published_mfu is a fraction (0.43, not 43)",
                                  t.Where(r, *t.Column("published_mfu")));
    }
    const std::string formula = Field(t, r, "flops_formula");
    if (formula.empty() || formula == "palm") {
      rec.formula = FlopsFormula::kPalm;
    } else if (formula == "palm-causal") {
      rec.formula = FlopsFormula::kPalmCausal;
    } else if (formula == "megatron-recompute") {
      rec.formula = FlopsFormula::kMegatronRecompute;
    } else {
      return InvalidArgumentError(
          "flops_formula must be palm, palm-causal or megatron-recompute, got '" + formula + "'",
          t.Where(r, *t.Column("flops_formula")));
    }
    if (rec.kind == RunKind::kModelStates) {
      for (const char* column : {"parameters", "data_parallel", "zero_stage", "precision"}) {
        if (!t.Column(column)) {
          return InvalidArgumentError(std::string("a model_states row needs the column ") + column,
                                      file + ":1");
        }
      }
      for (const char* column : {"parameters", "data_parallel", "zero_stage"}) {
        SEEDANCE_RETURN_IF_ERROR(t.Int(r, *t.Column(column)).status());
      }
      rec.parameters = *t.Int(r, *t.Column("parameters"));
      rec.data_parallel = *t.Int(r, *t.Column("data_parallel"));
      const std::string precision = Field(t, r, "precision");
      auto p = base::ParseNumericFormat(precision, t.Where(r, *t.Column("precision")));
      if (!p.ok()) return p.status();
      rec.spec.training.precision = *p;
      rec.spec.training.optimizer = Field(t, r, "optimizer");
      rec.spec.parallelism.zero_stage = static_cast<int>(*t.Int(r, *t.Column("zero_stage")));
      if (!rec.gb_per_gpu) {
        return InvalidArgumentError("a model_states row needs published_gb_per_gpu", rec.where);
      }
    } else {
      SEEDANCE_ASSIGN_OR_RETURN(rec.spec, SpecOf(t, r, catalog));
      if (rec.kind == RunKind::kRun && !rec.step_s && !rec.tokens_per_s_per_gpu && !rec.mfu &&
          !rec.tflops_per_gpu) {
        return InvalidArgumentError(
            "a run row needs a measurement: published_step_s, published_tokens_per_s_per_gpu, "
            "published_mfu or published_tflops_per_gpu",
            rec.where);
      }
      if (rec.kind == RunKind::kMemory && !rec.gb_per_gpu) {
        return InvalidArgumentError("a memory row needs published_gb_per_gpu", rec.where);
      }
    }
    out.push_back(std::move(rec));
  }
  return out;
}

std::optional<double> MeasuredStepSeconds(const RunRecord& r, const cost::GpuSpec& gpu) {
  const JobSpec& s = r.spec;
  const double gpus = static_cast<double>(s.hardware.total_gpus());
  const double tokens =
      static_cast<double>(s.training.global_batch) * static_cast<double>(s.model.sequence_length);
  if (r.step_s) return *r.step_s;
  if (r.tokens_per_s_per_gpu) return tokens / (*r.tokens_per_s_per_gpu * gpus);
  const double flops = FlopsPerToken(s.model, r.formula) * tokens;
  if (r.mfu) {
    const double peak = gpu.DenseTflops(s.training.precision).value_or(0) * 1e12;
    if (peak > 0) return flops / (*r.mfu * peak * gpus);
  }
  if (r.tflops_per_gpu) return flops / (*r.tflops_per_gpu * 1e12 * gpus);
  return std::nullopt;
}

std::string_view MeasuredFigure(const RunRecord& r) {
  if (r.step_s) return "step_s";
  if (r.tokens_per_s_per_gpu) return "tokens_per_s_per_gpu";
  if (r.mfu) return "mfu";
  if (r.tflops_per_gpu) return "tflops_per_gpu";
  return "";
}

std::string RunTableHeader() {
  std::string h;
  for (const Column& c : kColumns) h += (h.empty() ? "" : ",") + std::string(c.name);
  return h + "\n";
}

std::string FormatRunRow(const RunRecord& r) {
  auto quote = [](const std::string& v) {
    if (v.find_first_of(",\"\n") == std::string::npos) return v;
    std::string q = "\"";
    for (char c : v) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  auto num = [](std::optional<double> v) {
    if (!v) return std::string();
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", *v);
    return std::string(buf);
  };
  const JobSpec& s = r.spec;
  const ParallelConfig& c = s.parallelism;
  auto i = [](int64_t v) { return std::to_string(v); };
  const std::vector<std::string> values = {
      "run",
      quote(r.id),
      quote(r.group),
      quote(r.source),
      s.model.family,
      i(s.model.layers),
      i(s.model.hidden_size),
      i(s.model.attention_heads),
      i(s.model.kv_heads),
      i(s.model.ffn_size),
      i(s.model.vocab_size),
      i(s.model.sequence_length),
      s.model.tie_embeddings ? "true" : "false",
      s.hardware.gpu,
      i(s.hardware.gpus_per_node),
      i(s.hardware.nodes),
      s.hardware.inter_node_gbytes_per_s > 0 ? num(s.hardware.inter_node_gbytes_per_s) : "",
      i(s.training.global_batch),
      i(c.micro_batch),
      i(c.tensor),
      i(c.pipeline),
      i(c.virtual_stages),
      c.sequence_parallel ? "true" : "false",
      i(c.context_parallel),
      i(c.zero_stage),
      std::string(RecomputeName(c.recompute)),
      c.recompute_layers > 0 ? i(c.recompute_layers) : "",
      c.first_stage_layers > 0 ? i(c.first_stage_layers) : "",
      c.last_stage_layers > 0 ? i(c.last_stage_layers) : "",
      std::string(base::NumericFormatName(s.training.precision)),
      s.training.optimizer,
      s.training.attention,
      s.framework ? std::string(FrameworkName(*s.framework)) : "",
      "",
      "",
      num(r.step_s),
      num(r.tokens_per_s_per_gpu),
      num(r.tflops_per_gpu),
      num(r.mfu),
      num(r.gb_per_gpu),
      "",
      "",
      "",
  };
  std::string line;
  for (const std::string& v : values) line += (line.empty() ? "" : ",") + v;
  return line + "\n";
}

}  // namespace seedance::plan
