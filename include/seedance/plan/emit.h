// Runnable output of the planner (feature CLI-1, `optimize --emit FRAMEWORK FILE`): a layout
// written as the framework that runs it takes it.
//
//   deepspeed  DeepSpeed's config JSON: train_batch_size = micro_batch x accumulation x d,
//              the precision section, zero_optimization (stage, offload), activation
//              checkpointing, AutoTP's tensor_parallel.autotp_size, the pipeline stages.
//   fsdp       a plan a torchrun script reads (examples/fsdp_train.py): FSDP's sharding
//              strategy, its mixed-precision dtypes, the activation-checkpointing policy,
//              micro-batch and accumulation.
//   megatron   Megatron-LM's command-line flags (pretrain_gpt.py): parallel sizes, virtual
//              stages, sequence parallelism, the distributed optimizer, recomputation, batch
//              sizes, precision and the model's shape.
//
// A framework runs only some layouts; Inexpressible says why one cannot be written, so the
// planner emits the fastest layout that fits and that the framework runs:
//
//                  tensor        pipeline            ZeRO      recompute        precision
//   deepspeed      AutoTP, pp 1  1F1B, tp 1, ZeRO<=1 0..3      none, full       fp32/fp16/bf16
//                  (ZeRO <= 2)   no interleaving
//   fsdp           1             1                   0, 2, 3   none, full       fp32/fp16/bf16
//   megatron       any           any (interleaved)   0, 1      any              any (fp8: TE)
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/plan/job_spec.h"
#include "seedance/plan/parallelism.h"

namespace seedance::plan {

enum class Framework { kDeepSpeed, kFsdp, kMegatron };

std::string_view FrameworkName(Framework framework);
// "deepspeed", "fsdp" or "megatron"; the error lists them.
base::StatusOr<Framework> ParseFramework(std::string_view text, std::string_view where);

// Why `framework` cannot run `c` for `spec` (one sentence), or "" when it can.
std::string Inexpressible(Framework framework, const JobSpec& spec, const ParallelConfig& c);

// The framework's configuration for `c` (which must be expressible): a JSON object for
// deepspeed and fsdp, the argument list (an array of strings) for megatron.
base::Report EmitContent(Framework framework, const JobSpec& spec, const ParallelConfig& c);

// The file's text: the JSON object indented by 2, or one Megatron flag (with its value) per
// line, ready for `$(cat FILE)`.
std::string EmitText(Framework framework, const base::Report& content);

}  // namespace seedance::plan
