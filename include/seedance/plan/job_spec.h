// The job spec: what `seedancectl optimize` plans for. A YAML document that
// describes one training or serving job (schema: docs/job-spec.md):
//
//   name: llama-7b-pretrain
//   model:    {family, layers, hidden_size, attention_heads, kv_heads,
//              ffn_size, vocab_size, sequence_length, tie_embeddings?}
//   training: {global_batch, micro_batch, precision, optimizer, attention?, optimizer_states?,
//              search_precisions?, search_optimizer_states?}         # or
//   serving:  {context_length, concurrent_requests, precision, prompt_length?, engine?,
//              kv_precision?, max_kv_kl?}
//   hardware: {gpu, gpus_per_node, nodes, interconnect?: {intra_node, inter_node,
//              intra_node_gbytes_per_s?, inter_node_gbytes_per_s?},
//              host?: {memory_gbytes, memory_gbytes_per_s, pcie_gbytes_per_s}}
//   parallelism: {tensor, pipeline, virtual_stages, sequence_parallel,  # optional, training:
//                 zero_stage, recompute, offload_optimizer,  # how the job runs today ("before")
//                 gradient_compression}
//   reliability: {gpu_mtbf_hours, checkpoint_write_gbytes_per_s,       # optional, training:
//                 restart_s?}                              # the checkpoint interval
//   price_per_gpu_hour_usd: 2.5                                      # optional
//
// Parsing is strict: an unknown key, a wrong type, a negative or zero count,
// an unknown GPU, or a precision the GPU cannot run is an error whose `where`
// is "<file>:<line>: <key.path>".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/numeric_format.h"
#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/cost/gpu_catalog.h"
#include "seedance/plan/checkpoint.h"
#include "seedance/plan/framework.h"
#include "seedance/plan/kv_precision.h"
#include "seedance/plan/parallelism.h"

namespace seedance::plan {

enum class JobKind { kTraining, kServing };

struct ModelSpec {
  // "llama" (RMSNorm, SwiGLU, no biases), "gpt" (LayerNorm, GELU, biases) or "nemotron"
  // (LayerNorm, squared-ReLU MLP of two matrices, no biases, rotary).
  std::string family;
  int64_t layers = 0;
  int64_t hidden_size = 0;
  int64_t attention_heads = 0;
  int64_t kv_heads = 0;  // == attention_heads: MHA; fewer: GQA; 1: MQA
  int64_t ffn_size = 0;
  int64_t vocab_size = 0;
  int64_t sequence_length = 0;
  bool tie_embeddings = false;  // default: false for llama and nemotron, true for gpt

  int64_t head_dim() const { return hidden_size / attention_heads; }
  // The MLP's input projections: 2 for SwiGLU's gate and up (llama), 1 otherwise.
  int64_t mlp_in_projections() const { return family == "llama" ? 2 : 1; }
};

struct TrainingSpec {
  int64_t global_batch = 0;  // sequences per optimizer step, over all GPUs
  int64_t micro_batch = 0;   // sequences per GPU per forward/backward pass
  base::NumericFormat precision = base::NumericFormat::kBf16;
  std::string optimizer;  // adamw, adam, sgd, sgd-momentum, lion
  // The attention kernel: "flash" (a fused kernel, the framework's default: no s x s score tensor
  // is kept), "flash2" (FlashAttention-2: the flash-attn package, PyTorch SDPA's flash backend,
  // Transformer Engine with NVTE_FUSED_ATTN=0), "cudnn" (cuDNN's fused attention: Transformer
  // Engine's FusedAttention), "eager" (softmax scores kept for the backward pass; Megatron's
  // fused softmax kernel where it takes the shape) or "eager-unfused" (the same with the softmax
  // in fp32 PyTorch operators: Megatron-DeepSpeed's --no-masked-softmax-fusion);
  // attention_softmax.h.
  std::string attention = "flash";
  // The optimizer's moments: fp32 or bf16 (half the bytes).
  base::NumericFormat optimizer_states = base::NumericFormat::kFp32;
  // What the search may choose besides the stated precision and optimizer states (opt-in: either
  // changes the numerics, so the user names the ones acceptable). Empty: the stated one only.
  std::vector<base::NumericFormat> search_precisions;
  std::vector<base::NumericFormat> search_optimizer_states;
};

struct ServingSpec {
  int64_t context_length = 0;  // tokens of context per request (prompt and output), <= the model's
  int64_t concurrent_requests = 0;                             // requests resident at once
  base::NumericFormat precision = base::NumericFormat::kBf16;  // weights (and an unquantized KV)
  // The prompt's tokens, prefilled before the first output token (0: half the context).
  int64_t prompt_length = 0;
  ServingEngine engine = ServingEngine::kVllm;  // whose KV formats are weighed
  // The KV cache's format: a name `engine` offers in plan/kv_precision.h's table, or "auto" (the
  // fewest bytes whose measured KL divergence is at most max_kv_kl).
  std::string kv_precision = "auto";
  double max_kv_kl = 1e-3;  // KV-1's target for the 8-bit cache
};

// A node's host side, for optimizer-state offload: how much memory the node has, how fast it
// streams, and each GPU's PCIe bandwidth to it (one direction). All three are given together, or
// the section is absent and offload is not planned.
struct HostSpec {
  double memory_gbytes = 0;        // per node
  double memory_gbytes_per_s = 0;  // per node, what a streaming loop over all cores reaches
  double pcie_gbytes_per_s = 0;    // per GPU, one direction
  bool given() const { return memory_gbytes > 0; }
};

struct HardwareSpec {
  std::string gpu;  // catalog id, normalised to the catalog's spelling
  int64_t gpus_per_node = 0;
  int64_t nodes = 0;
  std::string intra_node;  // nvlink, xgmi, pcie
  std::string inter_node;  // infiniband, roce, ethernet, none
  // Per-GPU bandwidth in one direction; 0: the planner's default for the link (plan/links.h).
  double intra_node_gbytes_per_s = 0;
  double inter_node_gbytes_per_s = 0;
  HostSpec host;
  int64_t total_gpus() const { return gpus_per_node * nodes; }
};

// How the plan chooses (`planning:`): the memory share a recommendation leaves free, and the
// least step-time gain a change must promise — beyond the prediction interval's noise — to be
// recommended (docs/design/plan.md, "Recommendations").
struct PlanningSpec {
  double headroom = 0.10;  // of the GPU's memory
  double min_gain = 0.0;   // fraction of step time, on top of significance
};

struct JobSpec {
  std::string name;
  std::string source;  // the file it came from, or "built-in default"
  JobKind kind = JobKind::kTraining;
  ModelSpec model;
  TrainingSpec training;  // meaningful when kind == kTraining
  // How the job runs today (the spec's `parallelism:` section with training.micro_batch; pure
  // data parallelism, ZeRO 0 and no recomputation when the section is absent).
  ParallelConfig parallelism;
  bool parallelism_given = false;
  ServingSpec serving;  // meaningful when kind == kServing
  // Training: the framework the job runs on (`framework:`); the search weighs only the layouts
  // it runs, and the time and memory models count its kernels and copies (framework.h).
  // nullopt: not stated — every layout is weighed, with Megatron-Core's fused kernels.
  std::optional<Framework> framework;
  PlanningSpec planning;
  HardwareSpec hardware;
  ReliabilitySpec reliability;  // training: the checkpoint interval's inputs, when given
  double price_per_gpu_hour_usd = 0;
  std::string price_origin;  // "job spec", or the catalog's source and date
};

// Parses and validates a job spec. `file` names the source in errors.
base::StatusOr<JobSpec> ParseJobSpec(std::string_view yaml, const std::string& file,
                                     const cost::GpuCatalog& catalog);

// The built-in default job: the text of examples/default-job.yaml, compiled in.
std::string_view DefaultJobYaml();
inline constexpr std::string_view kDefaultJobSource =
    "built-in default (examples/default-job.yaml)";

// The spec with every default filled in, in the schema's key order:
// sections job (name, kind, source), model, training or serving, hardware, price.
base::Report JobSpecToReport(const JobSpec& spec);

std::string_view JobKindName(JobKind kind);

}  // namespace seedance::plan
