// The time model's pipeline and data-parallel terms per framework, checked against the formulas
// written out by hand from the links, the fitted link curves and the layout.
#include "seedance/plan/time_model.h"

#include <gtest/gtest.h>

#include <string>

namespace seedance::plan {
namespace {

// A GPT of 24 layers x 6,144 on two nodes of 8 A100s: TP 4 inside a node, 2 stages, so each
// node holds one stage's two data-parallel replicas and the stage boundary crosses the network.
JobSpec PipelineJob(const std::string& framework) {
  const std::string yaml =
      "name: pipe\n"
      "framework: " +
      framework +
      "\n"
      "model: {family: gpt, layers: 24, hidden_size: 6144, attention_heads: 48, kv_heads: 48,\n"
      "        ffn_size: 24576, vocab_size: 51200, sequence_length: 2048}\n"
      "training: {global_batch: 64, micro_batch: 2, precision: fp16, optimizer: adam}\n"
      "hardware: {gpu: A100-80GB, gpus_per_node: 8, nodes: 2,\n"
      "           interconnect: {inter_node_gbytes_per_s: 12.5}}\n";
  auto spec = ParseJobSpec(yaml, "pipe.yaml", cost::GpuCatalog::BuiltIn());
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return *spec;
}

const cost::GpuSpec& A100() { return **cost::GpuCatalog::BuiltIn().Get("A100-80GB"); }

const ParallelConfig kLayout{
    .tensor = 4, .pipeline = 2, .zero_stage = 1, .recompute = Recompute::kFull, .micro_batch = 2};

// The layout's step under `framework`, with the public fit.
StepTime StepOf(const std::string& framework) {
  const JobSpec spec = PipelineJob(framework);
  return EstimateStepTime(spec, ComputeModelFigures(spec.model), kLayout, A100(),
                          ResolveLinks(spec.hardware, A100()));
}

const double kActivationBytes = 2.0 * 2 * 2048 * 6144;  // fp16, one micro-batch of 2 x 2,048
const double kMicroBatches = 16;                        // 64 sequences over 2 replicas of 2
const double kStages = 2;

// DeepSpeed's engine runs its schedule one instruction at a time: per micro-batch a middle
// stage sends its 1/t partition twice and receives twice, each receive followed by the
// all-gather over the tensor-parallel group; fill and drain pass both through the p - 1
// boundaries. Its reduction after the flush and ZeRO 1's gather in the step hide behind nothing.
TEST(TimeModelTest, DeepSpeedsPipelineWaitsOnEveryTransferAndReduction) {
  const StepTime st = StepOf("deepspeed");
  const KernelCurves curves = HardwareModel{}.curves;
  const double t = 4, bytes = kActivationBytes;
  const double nvlink_bytes_per_s =
      ResolveLinks(PipelineJob("deepspeed").hardware, A100()).intra_node_gbytes_per_s * 1e9;
  const double send =
      curves.network.latency_s + bytes / t / (12.5e9 * curves.network.busbw_fraction);
  const double gather =
      curves.nvlink_ampere.latency_s +
      (t - 1) / t * bytes / (nvlink_bytes_per_s * curves.nvlink_ampere.busbw_fraction);
  EXPECT_NEAR(st.pp_p2p_s,
              2 * (kStages - 1) * (send + gather) + kMicroBatches * (4 * send + 2 * gather), 1e-9);
  EXPECT_GT(st.dp_comm_s, 0);
  EXPECT_DOUBLE_EQ(st.dp_exposed_s, st.dp_comm_s);
}

// Megatron-Core on the same layout: the steady state pays only each transfer's latency, and the
// reduce-scatter and all-gather hide behind a backward and a forward pass, costing only the
// fitted overlap loss.
TEST(TimeModelTest, MegatronOverlapsWhatDeepSpeedsPipelineWaitsFor) {
  const StepTime st = StepOf("megatron");
  const HardwareModel hw;
  const LinkCurve& net = hw.curves.network;
  const double one = net.latency_s + kActivationBytes / (12.5e9 * net.busbw_fraction);
  EXPECT_NEAR(st.pp_p2p_s, 2 * ((kStages - 1) * one + kMicroBatches * net.latency_s), 1e-9);
  EXPECT_NEAR(st.dp_exposed_s, hw.coefficients[Coef::kOverlapLoss] * st.dp_comm_s, 1e-9);

  const StepTime ds = StepOf("deepspeed");
  EXPECT_GT(ds.pp_p2p_s, 4 * st.pp_p2p_s);
  EXPECT_DOUBLE_EQ(ds.dp_comm_s, st.dp_comm_s);  // the same bytes, only their overlap differs
}

}  // namespace
}  // namespace seedance::plan
