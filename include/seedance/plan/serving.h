// The serving half of the planner (feature CLI-1): for a serving job, every tensor-parallel
// degree of a model replica (dividing the heads and key/value heads, inside a node, dividing the
// GPUs) and every KV-cache width the job admits (kv_precision.h), evaluated for memory and decode
// throughput, and the verdict — fits, the largest concurrency and context that fit, the TP
// degree, the KV width, tokens/s and cost per million tokens.
//
// Memory per GPU of a replica with TP t serving b requests of c tokens of context:
//   weights / t + b x c x (KV bytes per token at the width's bits per value) / t + a decode step's
//   activations and logits
//   + the fragmentation margin and runtime reserve of the training model (memory_model.h).
// Requests are spread over the replicas (GPUs / t): b = ceil(concurrent_requests / replicas).
// Decode step of a replica: the larger of reading the GPU's weights and the batch's KV cache
// (half the context on average: requests are at every point of their generation) at the HBM's
// achievable bandwidth and the step's FLOPs (2 x parameters / t x b) at the GEMM fraction of the
// peak, plus a kernel overhead per launch and two all-reduces per layer of b x h values over
// the intra-node link when t > 1 (the time model's constants, links.h). A quantized cache is read
// at its packed size: the dequantization is taken to be fused into the attention kernel and hidden
// behind the read (the KV engine's fused 4-bit scores run at over half the read bandwidth on a
// CPU, docs/benchmarks.md). The largest context that fits is capped at the model's
// sequence_length.
// Prefill of one request's prompt (serving.prompt_length tokens), alone on a replica: the larger
// of its FLOPs (2 x parameters x p plus causal attention's 2 x layers x p^2 x h) at the GEMM rate
// and one read of the weights, plus the kernels and TP's two all-reduces per layer of p x h
// values: the time to first token, and the prompt tokens per second per GPU back to back.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "seedance/base/report.h"
#include "seedance/cost/gpu_catalog.h"
#include "seedance/plan/job_spec.h"
#include "seedance/plan/kv_precision.h"
#include "seedance/plan/links.h"
#include "seedance/plan/memory_model.h"

namespace seedance::plan {

struct ServingEvaluation {
  int64_t tensor = 1;
  KvPrecision kv;  // the cache's width and its measured quality
  double kv_bits_per_value = 0;
  int64_t replicas = 1;
  int64_t requests_per_replica = 0;
  int64_t memory_bytes_per_gpu = 0;
  bool fits = false;
  int64_t max_concurrent_requests = 0;  // over all replicas, at the spec's context
  int64_t max_context_length = 0;       // at the spec's concurrency
  double decode_step_s = 0;
  double tokens_per_s = 0;  // output tokens, all replicas
  double tokens_per_s_per_gpu = 0;
  double cost_per_million_tokens_usd = 0;
  double prefill_s = 0;  // one request's prompt, alone on a replica: its time to first token
  double prefill_tokens_per_s_per_gpu = 0;  // prompt tokens a GPU prefills a second, back to back
};

ServingEvaluation EvaluateServing(const JobSpec& spec, const cost::GpuSpec& gpu, int64_t tensor,
                                  const KvPrecision& kv, const MemorySettings& memory = {},
                                  const HardwareModel& hw = {});
// The KV formats the spec admits, of `serving.engine` only: the one `serving.kv_precision` names,
// or (auto) every measured one whose KL is at most `serving.max_kv_kl` ("weights" only for 16-
// and 32-bit weights).
std::vector<KvPrecision> AdmittedKvPrecisions(const ServingSpec& serving);
// Every valid TP degree with every admitted KV width, evaluated; the fitting ones first, then by
// tokens/s per GPU, then by the lower KL.
std::vector<ServingEvaluation> SearchServing(const JobSpec& spec, const cost::GpuSpec& gpu);

base::Report ServingEvaluationToReport(const ServingEvaluation& e);

}  // namespace seedance::plan
