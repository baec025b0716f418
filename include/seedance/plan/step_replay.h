// The fragmentation margin of a training plan, from a replay (feature MEM-5 with MEM-3/MEM-4):
// the buffers the memory model counts for one GPU, laid out on the step's timeline, replayed
// through the caching allocator (mem/replay.h) on its virtual back end; the margin is what the
// allocator reserves beyond what is live at the peak.
//
// The GPU is the one of the pipeline stage the memory model finds fullest (memory_model.h). One
// time unit is one layer's forward or backward pass (or the LM head's). Micro-batches run in
// 1F1B order on that stage: k = ceil(in-flight micro-batches) forwards, then one backward and one
// forward alternately, then the remaining backwards; k + 2 micro-batches (at most m) are enough
// to reach the steady pattern. Buffers:
//   model states   per layer and for the stage's embedding / head: weights, gradients, master
//                  weights + optimizer states (sharded per ZeRO stage; absent with offload),
//                  live the whole step
//   activations    per micro-batch and layer, the memory model's parts (the layer's input, the
//                  attention block, the MLP, the norms) from the layer's forward to its backward
//                  pass; with full recomputation only the input, the other parts re-created for
//                  the backward pass alone; with selective recomputation no s x s scores
//   logits         per micro-batch on the stage with the head: 16-bit and fp32, from the head's
//                  forward to its backward pass
//   gradient flow  the activation gradient of each backward step
//   temporaries    ZeRO 0-2: two 25 MiB buckets through each backward; ZeRO 3: each layer's
//                  gathered weights over its pass and the next (prefetch), its unsharded
//                  gradients over its backward pass, one gathered copy of the root unit's
//                  weights from the step's first forward pass to its last backward pass, and
//                  the root's unsharded gradients over each micro-batch's backward pass
//
// margin fraction = reserved peak / requested peak - 1 (requested peak: the most bytes live at
// once, the replay's lower bound). The buffers are the model's, not every tensor a framework
// allocates: workspaces, autograd's small tensors and a framework's own buffers are not in them.
//
// Thread safety: pure functions.
#pragma once

#include <vector>

#include "seedance/base/report.h"
#include "seedance/base/status.h"
#include "seedance/mem/caching_allocator.h"
#include "seedance/mem/lifetime.h"
#include "seedance/plan/job_spec.h"
#include "seedance/plan/model_figures.h"
#include "seedance/plan/parallelism.h"

namespace seedance::plan {

// The planned step of `c` (valid for `spec`) as buffers with lifetimes.
base::StatusOr<std::vector<mem::Buffer>> PlannedStepBuffers(const JobSpec& spec,
                                                            const ModelFigures& figures,
                                                            const ParallelConfig& c);

struct StepReplay {
  mem::AllocatorPolicy policy = mem::AllocatorPolicy::kCaching2MiB;
  int64_t buffers = 0;
  int64_t requested_peak_bytes = 0;
  int64_t reserved_peak_bytes = 0;
  double margin_fraction = 0;  // reserved / requested - 1
};

// Replays the planned step of `c` through `policy` (PyTorch's caching rules by default).
base::StatusOr<StepReplay> ReplayPlannedStep(
    const JobSpec& spec, const ModelFigures& figures, const ParallelConfig& c,
    mem::AllocatorPolicy policy = mem::AllocatorPolicy::kCaching2MiB);

base::Report StepReplayToReport(const StepReplay& r);

}  // namespace seedance::plan
