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
//   torchtitan torchtitan's TOML job config (v0.2, the last release configured by TOML):
//              [model] name and flavor (float8 converter for fp8), [training] batch sizes,
//              sequence, mixed precision, [parallelism] replicate/shard/TP/PP/CP degrees and the
//              schedule, [activation_checkpoint].
//   accelerate `accelerate launch --config_file` YAML: FSDP2 through its FSDP plugin, or its
//              DeepSpeed plugin when the spec names deepspeed; processes and machines.
//
// A framework runs only some layouts; Inexpressible (framework.h, with the table) says why one
// cannot be written, so the planner emits the fastest layout that fits and that the framework
// runs.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/plan/framework.h"
#include "seedance/plan/job_spec.h"
#include "seedance/plan/parallelism.h"

namespace seedance::plan {

// The framework's configuration for `c` (which must be expressible): a JSON object for
// deepspeed and fsdp, the argument list (an array of strings) for megatron.
base::Report EmitContent(Framework framework, const JobSpec& spec, const ParallelConfig& c);

// What the user must do beyond the file for `framework` to run it ("" when nothing): torchtitan
// names its models by flavor, and a shape that is none of llama3's 8B, 70B and 405B needs one
// registered.
std::string EmitNote(Framework framework, const JobSpec& spec);

// The file's text: the JSON object indented by 2, or one Megatron flag (with its value) per
// line, ready for `$(cat FILE)`.
std::string EmitText(Framework framework, const base::Report& content);

}  // namespace seedance::plan
