// The time model's pipeline and data-parallel terms per framework, checked against the formulas
// written out by hand from the links, the fitted link curves and the layout.
#include "seedance/plan/time_model.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace seedance::plan {
namespace {

// A GPT of 24 layers x 6,144 (embeddings `tied` or not) on `stages` nodes of 8 A100s: TP 4
// inside a node, one pipeline stage a node, so each node holds a stage's two data-parallel
// replicas and every stage boundary crosses the network.
JobSpec PipelineJob(const std::string& framework, int stages, bool tied = false) {
  const std::string yaml =
      "name: pipe\n"
      "framework: " +
      framework +
      "\n"
      "model: {family: gpt, layers: 24, hidden_size: 6144, attention_heads: 48, kv_heads: 48,\n"
      "        ffn_size: 24576, vocab_size: 51200, sequence_length: 2048, tie_embeddings: " +
      std::string(tied ? "true" : "false") +
      "}\n"
      "training: {global_batch: 96, micro_batch: 2, precision: fp16, optimizer: adam}\n"
      "hardware: {gpu: A100-80GB, gpus_per_node: 8, nodes: " +
      std::to_string(stages) +
      ",\n"
      "           interconnect: {inter_node_gbytes_per_s: 12.5}}\n";
  auto spec = ParseJobSpec(yaml, "pipe.yaml", cost::GpuCatalog::BuiltIn());
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return *spec;
}

const cost::GpuSpec& A100() { return **cost::GpuCatalog::BuiltIn().Get("A100-80GB"); }

// TP 4 x `stages` stages x DP 2, ZeRO 1, micro-batch 2: 96 / (2 x 2) = 24 micro-batches.
// (DeepSpeed's own model code has no tensor parallelism: BLOOM ran this through Megatron's.)
ParallelConfig Layout(int stages) {
  return {.tensor = 4,
          .pipeline = stages,
          .zero_stage = 1,
          .recompute = Recompute::kFull,
          .micro_batch = 2};
}

// The layout's step under `framework`, with the public fit.
StepTime StepOf(const std::string& framework, int stages, bool tied = false) {
  const JobSpec spec = PipelineJob(framework, stages, tied);
  return EstimateStepTime(spec, ComputeModelFigures(spec.model), Layout(stages), A100(),
                          ResolveLinks(spec.hardware, A100()));
}

const double kActivationBytes = 2.0 * 2 * 2048 * 6144;  // fp16, one micro-batch of 2 x 2,048
const double kMicroBatches = 24;

// One transfer of DeepSpeed's partitioned activation (its metadata, then 1/4 of the tensor)
// across the network, and one all-gather of the whole over NVLink.
double Send() {
  const LinkCurve net = HardwareModel{}.curves.network;
  return 2 * net.latency_s + kActivationBytes / 4 / (12.5e9 * net.busbw_fraction);
}
double Gather() {
  const LinkCurve nvlink = HardwareModel{}.curves.nvlink_ampere;
  const double bytes_per_s =
      ResolveLinks(PipelineJob("deepspeed", 2).hardware, A100()).intra_node_gbytes_per_s * 1e9;
  return nvlink.latency_s + 0.75 * kActivationBytes / (bytes_per_s * nvlink.busbw_fraction);
}

// DeepSpeed's engine runs its schedule one instruction at a time (runtime/pipe/schedule.py):
// a middle stage receives and sends the activation and the gradient of every micro-batch and
// all-gathers three tensors (its input, its output again for the backward pass, the received
// gradient); the first and last stages do two transfers each. The waits stretch each of the
// m + p - 1 slots. Its reduction after the flush and ZeRO 1's gather in the step hide behind
// nothing.
TEST(TimeModelTest, DeepSpeedsPipelineWaitsOnEveryTransferAndReduction) {
  const StepTime three = StepOf("deepspeed", 3);
  EXPECT_NEAR(three.pp_p2p_s, (kMicroBatches + 2) * (4 * Send() + 3 * Gather()), 1e-9);
  const StepTime two = StepOf("deepspeed", 2);
  EXPECT_NEAR(two.pp_p2p_s, (kMicroBatches + 1) * (2 * Send() + 2 * Gather()), 1e-9);
  EXPECT_GT(two.dp_comm_s, 0);
  EXPECT_DOUBLE_EQ(two.dp_exposed_s, two.dp_comm_s);
}

// A tied embedding's gradient (51,200 x 6,144 / 4 fp16 values a GPU) is all-reduced between the
// first and last stage after the flush, whatever the framework.
TEST(TimeModelTest, TiedEmbeddingsAddTheirAllReduceBetweenTheEndStages) {
  const LinkCurve net = HardwareModel{}.curves.network;
  const double bytes = 51200.0 * 6144 / 4 * 2;
  const double all_reduce = net.latency_s + bytes / (12.5e9 * net.busbw_fraction);  // 2 ranks
  for (const char* framework : {"deepspeed", "megatron"}) {
    EXPECT_NEAR(StepOf(framework, 2, true).pp_p2p_s - StepOf(framework, 2).pp_p2p_s, all_reduce,
                1e-9)
        << framework;
  }
}

// Megatron-Core on the same layout: the steady state pays only each transfer's latency, and the
// reduce-scatter and all-gather hide behind a backward and a forward pass, costing only the
// fitted overlap loss.
TEST(TimeModelTest, MegatronOverlapsWhatDeepSpeedsPipelineWaitsFor) {
  const StepTime st = StepOf("megatron", 2);
  const HardwareModel hw;
  const LinkCurve& net = hw.curves.network;
  const double one = net.latency_s + kActivationBytes / (12.5e9 * net.busbw_fraction);
  EXPECT_NEAR(st.pp_p2p_s, 2 * (one + kMicroBatches * net.latency_s), 1e-9);
  EXPECT_NEAR(st.dp_exposed_s, hw.coefficients[Coef::kOverlapLoss] * st.dp_comm_s, 1e-9);

  // DeepSpeed's ZeRO 1 all-reduces the fp16 gradients where Megatron reduce-scatters them: over
  // the stage's two replicas (inside a node), all of them on the wire instead of half.
  const StepTime ds = StepOf("deepspeed", 2);
  EXPECT_GT(ds.pp_p2p_s, 4 * st.pp_p2p_s);
  const JobSpec spec = PipelineJob("megatron", 2);
  const double params =
      static_cast<double>(StageParameters(spec.model, ComputeModelFigures(spec.model), Layout(2)));
  const double bytes_per_s = ResolveLinks(spec.hardware, A100()).intra_node_gbytes_per_s * 1e9 *
                             hw.curves.nvlink_ampere.busbw_fraction;
  EXPECT_NEAR(ds.dp_comm_s - st.dp_comm_s, 0.5 * params * 2 / bytes_per_s, 1e-9);
}

// A Llama of 16 layers x 2,048 in bf16 on one node of 8 H100s under `framework`, 2 micro-batches
// of 2 a step at data parallelism 8.
JobSpec NodeJob(const std::string& framework) {
  auto spec = ParseJobSpec(
      "name: node\nframework: " + framework +
          "\nmodel: {family: llama, layers: 16, hidden_size: 2048, attention_heads: 16,\n"
          "        kv_heads: 16, ffn_size: 5632, vocab_size: 32000, sequence_length: 2048}\n"
          "training: {global_batch: 32, micro_batch: 2, precision: bf16, optimizer: adamw}\n"
          "hardware: {gpu: H100-SXM, gpus_per_node: 8,\n"
          "           host: {memory_gbytes: 2048, memory_gbytes_per_s: 200, pcie_gbytes_per_s: "
          "25}}\n",
      "node.yaml", cost::GpuCatalog::BuiltIn());
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return *spec;
}

// Without a pipeline too, DeepSpeed at ZeRO 0-1 reduces once the backward passes are over and
// gathers in the optimizer's step, in the compute precision (the engine's
// communication_data_type: bf16 here, whatever buffer BF16_Optimizer accumulates in): the whole
// gradient all-reduced, or with the optimizer offloaded each partition reduced to its owner.
// In bf16 ZeRO 0 runs BF16_Optimizer, which gathers the updated weights as ZeRO 1 does; in fp16
// it is plain data parallelism. ZeRO 2 keeps the overlapped reduction. Data parallelism over the
// 8 H100s of a node.
TEST(TimeModelTest, DeepSpeedReducesItsGradientsAfterTheBackwardPasses) {
  const cost::GpuSpec& h100 = **cost::GpuCatalog::BuiltIn().Get("H100-SXM");
  const JobSpec spec = NodeJob("deepspeed");
  const ModelFigures f = ComputeModelFigures(spec.model);
  const Links links = ResolveLinks(spec.hardware, h100);
  const LinkCurve nvlink = HardwareModel{}.curves.nvlink_hopper;
  const double bytes_per_s = links.intra_node_gbytes_per_s * 1e9 * nvlink.busbw_fraction;
  const double params = static_cast<double>(f.parameters);
  const double all_reduce = nvlink.latency_s + 2 * 7.0 / 8 * params * 2 / bytes_per_s;
  const double shard = nvlink.latency_s + 7.0 / 8 * params * 2 / bytes_per_s;  // RS, AG, reduce
  auto step = [&](int zero, bool offload) {
    const ParallelConfig c{.zero_stage = zero, .micro_batch = 2, .offload_optimizer = offload};
    return EstimateStepTime(spec, f, c, h100, links);
  };
  const StepTime zero0 = step(0, false);
  EXPECT_NEAR(zero0.dp_comm_s, all_reduce + shard, 1e-9);
  EXPECT_DOUBLE_EQ(zero0.dp_exposed_s, zero0.dp_comm_s);
  ParallelConfig fp16{.zero_stage = 0, .micro_batch = 2};
  fp16.precision = base::NumericFormat::kFp16;
  const StepTime plain = EstimateStepTime(spec, f, fp16, h100, links);
  EXPECT_NEAR(plain.dp_comm_s, all_reduce, 1e-9);
  EXPECT_DOUBLE_EQ(plain.dp_exposed_s, plain.dp_comm_s);
  const StepTime zero1 = step(1, false);
  EXPECT_NEAR(zero1.dp_comm_s, all_reduce + shard, 1e-9);
  EXPECT_DOUBLE_EQ(zero1.dp_exposed_s, zero1.dp_comm_s);
  const StepTime offloaded = step(1, true);
  EXPECT_NEAR(offloaded.dp_comm_s, 2 * shard, 1e-9);
  EXPECT_DOUBLE_EQ(offloaded.dp_exposed_s, offloaded.dp_comm_s);
  const StepTime zero2 = step(2, false);
  EXPECT_LT(zero2.dp_exposed_s, zero2.dp_comm_s);
}

// DeepSpeed accumulates its gradients outside the GEMMs, a pass over the parameters counted in
// compute_s: BF16_Optimizer (bf16, ZeRO 0) every micro-batch, 18 bytes a parameter (cast to an
// fp32 temporary, add into the fp32 accumulator); at ZeRO 1 autograd's in-place add from the
// second micro-batch on, 3 x 2 bytes; at ZeRO 2 and 3 the copy into the reduce bucket every
// micro-batch, 2 x 2 bytes, and the add into the rank's eighth from the second on (ZeRO 2 copies
// its eighth into a fresh partition buffer too, 2 x 2 / 8 every micro-batch). Megatron fuses the
// accumulation into the weight-gradient GEMM. Two micro-batches a step against one.
// BF16_Optimizer's step streams its shard (master and moments read and written, the 6-byte
// gradient read twice, the bf16 weights written: 38 / 8 bytes a parameter) and reads and zeroes
// the whole fp32 accumulator (8).
// Seconds an H100 takes to stream one byte for each of `f`'s parameters at the fitted
// memory-bound rate: the unit of the passes over the parameters below.
double SecondsPerByteOfEachParameter(const ModelFigures& f) {
  const cost::GpuSpec& h100 = **cost::GpuCatalog::BuiltIn().Get("H100-SXM");
  const HardwareModel hw;
  return static_cast<double>(f.parameters) /
         (h100.memory_bandwidth_gbytes_per_s * 1e9 * hw.curves.stream_fraction *
          hw.coefficients[Coef::kMemoryBound]);
}

TEST(TimeModelTest, DeepSpeedAccumulatesItsGradientsOutsideTheGemms) {
  const cost::GpuSpec& h100 = **cost::GpuCatalog::BuiltIn().Get("H100-SXM");
  const ModelFigures f = ComputeModelFigures(NodeJob("deepspeed").model);
  const Links links = ResolveLinks(NodeJob("deepspeed").hardware, h100);
  const HardwareModel hw;
  const double pass = SecondsPerByteOfEachParameter(f);
  auto compute = [&](const std::string& framework, int zero, int64_t global_batch) {
    JobSpec spec = NodeJob(framework);
    spec.training.global_batch = global_batch;  // 16: one micro-batch a step, 32: two
    const ParallelConfig c{.zero_stage = zero, .micro_batch = 2};
    return EstimateStepTime(spec, f, c, h100, links).compute_s;
  };
  const double one = compute("deepspeed", 1, 16);  // nothing to add up
  EXPECT_NEAR(compute("deepspeed", 0, 32) - 2 * one, 2 * 18 * pass, 1e-12);
  EXPECT_NEAR(compute("deepspeed", 1, 32) - 2 * one, 1 * 6 * pass, 1e-12);
  EXPECT_NEAR(compute("deepspeed", 2, 32) - 2 * one, (2 * (4 + 4.0 / 8) + 6.0 / 8) * pass, 1e-12);
  EXPECT_NEAR(compute("deepspeed", 3, 32) - 2 * one, (2 * 4 + 6.0 / 8) * pass, 1e-12);
  const JobSpec bf16 = NodeJob("deepspeed");
  const StepTime zero0 =
      EstimateStepTime(bf16, f, ParallelConfig{.zero_stage = 0, .micro_batch = 2}, h100, links);
  EXPECT_NEAR(zero0.optimizer_s, (38.0 / 8 + 8) * pass + 8 * hw.coefficients[Coef::kKernelGap],
              1e-12);
  EXPECT_DOUBLE_EQ(compute("megatron", 1, 32), 2 * compute("megatron", 1, 16));
}

// FSDP and torchtitan all-gather the weights cast to bf16, not their fp32 shards; FSDP's plan
// reduces the gradients in bf16, torchtitan in fp32. ZeRO 3 on one node of 8 H100s: per
// micro-batch two gathers (forward, backward) and a reduce-scatter of the whole model, each
// moving 7/8 of it over NVLink; torchtitan keeps its head gathered for the backward pass, so its
// second gather leaves the 32,000 x 2,048 head out.
TEST(TimeModelTest, FsdpGathersInTheComputePrecisionAndReducesAsItsPlanSays) {
  const cost::GpuSpec& h100 = **cost::GpuCatalog::BuiltIn().Get("H100-SXM");
  const LinkCurve nvlink = HardwareModel{}.curves.nvlink_hopper;
  for (const auto& [framework, reduce_bytes] :
       {std::pair<std::string, double>{"fsdp", 2}, {"torchtitan", 4}}) {
    const JobSpec spec = NodeJob(framework);
    const ModelFigures f = ComputeModelFigures(spec.model);
    const ParallelConfig c{.zero_stage = 3, .micro_batch = 2};
    const Links links = ResolveLinks(spec.hardware, h100);
    const StepTime st = EstimateStepTime(spec, f, c, h100, links);
    const double bytes_per_s = links.intra_node_gbytes_per_s * 1e9 * nvlink.busbw_fraction;
    const double params = static_cast<double>(f.parameters);
    const double gather = nvlink.latency_s + 7.0 / 8 * params * 2 / bytes_per_s;
    const double regathered = framework == "torchtitan" ? params - 32'000.0 * 2'048 : params;
    const double gather_bwd = nvlink.latency_s + 7.0 / 8 * regathered * 2 / bytes_per_s;
    const double reduce = nvlink.latency_s + 7.0 / 8 * params * reduce_bytes / bytes_per_s;
    EXPECT_NEAR(st.dp_comm_s, 2 * (gather + gather_bwd + reduce), 1e-9)
        << framework;  // 2 micro-batches
    // ZeRO 2 (reshard_after_forward=False) reshards after each backward pass all the same: a
    // gather and a reduce-scatter every micro-batch.
    const ParallelConfig zero2{.zero_stage = 2, .micro_batch = 2};
    EXPECT_NEAR(EstimateStepTime(spec, f, zero2, h100, links).dp_comm_s, 2 * (gather + reduce),
                1e-9)
        << framework;
    // ZeRO 0 is DDP under autocast, all-reducing the fp32 gradients: once a step as the FSDP
    // plan's script runs it, every micro-batch under torchtitan (no no_sync).
    const ParallelConfig ddp{.zero_stage = 0, .micro_batch = 2};
    EXPECT_NEAR(EstimateStepTime(spec, f, ddp, h100, links).dp_comm_s,
                (framework == "torchtitan" ? 2 : 1) *
                    (nvlink.latency_s + 2 * 7.0 / 8 * params * 4 / bytes_per_s),
                1e-9)
        << framework;
  }
}

// PyTorch's data parallelism passes over the parameters outside the GEMMs, on the compute
// stream (FrameworkTraits::ParameterPasses::kPyTorch), in bytes a micro-batch. FSDP2, a byte a
// parameter: each gather's copy-out (2 x 2 in bf16; two gathers at ZeRO 3, one at ZeRO 2) and the
// reduce-scatter's copy-in (2 read, then 2 written by FSDP's plan or 4 by torchtitan). DDP under
// autocast: the layers' and the head's weights cast (4 read, 2 written) on each forward pass and
// recomputation and their gradients cast back (2 read, 4 written); the FSDP plan's DDP adds into
// .grad every micro-batch (3 x 4 a parameter) and zeroes (4) and divides (2 x 4) it once a step;
// torchtitan's copies into its buckets, divided, and back every micro-batch (2 x 2 x 4) and adds
// from the second micro-batch; Accelerate's the same copies once a step. Eight H100s, micro-batches
// of 2, 16 or 32 sequences a step: one or two micro-batches.
TEST(TimeModelTest, PyTorchDataParallelismPassesOverTheParameters) {
  const cost::GpuSpec& h100 = **cost::GpuCatalog::BuiltIn().Get("H100-SXM");
  const JobSpec node = NodeJob("fsdp");
  const ModelFigures f = ComputeModelFigures(node.model);
  const Links links = ResolveLinks(node.hardware, h100);
  const double pass = SecondsPerByteOfEachParameter(f);
  const double params = static_cast<double>(f.parameters);
  // The weights autocast casts, in parameters' seconds: 16 layers and the 32,000 x 2,048 head.
  const double layers = 16.0 * static_cast<double>(f.layer_parameters) / params * pass;
  const double head = 32'000.0 * 2'048 / params * pass;
  auto step = [&](const std::string& framework, int zero, int64_t global_batch,
                  Recompute recompute = Recompute::kNone) {
    // Accelerate is no job spec's framework, only what `--emit accelerate` counts a layout as.
    JobSpec spec = NodeJob(framework == "accelerate" ? "fsdp" : framework);
    if (framework == "accelerate") spec.framework = Framework::kAccelerate;
    spec.training.global_batch = global_batch;
    const ParallelConfig c{.zero_stage = zero, .recompute = recompute, .micro_batch = 2};
    return EstimateStepTime(spec, f, c, h100, links);
  };
  auto compute = [&](const std::string& framework, int zero, int64_t global_batch) {
    return step(framework, zero, global_batch).compute_s;
  };
  // One micro-batch: ZeRO 3 streams 2 x 2 x 2 + 2 + 2 = 12 bytes a parameter, ZeRO 2 one gather
  // less (8), torchtitan's fp32 reduce buffer 2 more (14) and its head's second gather less (4
  // a head parameter); DDP 12 + 4 + 8 = 24 and the casts' 2 x 6 a layer and head parameter,
  // torchtitan's DDP 16 and the casts.
  EXPECT_NEAR(compute("fsdp", 3, 16) - compute("fsdp", 2, 16), 4 * pass, 1e-12);
  EXPECT_NEAR(compute("torchtitan", 3, 16) - compute("fsdp", 3, 16), 2 * pass - 4 * head, 1e-12);
  EXPECT_NEAR(compute("fsdp", 0, 16) - compute("fsdp", 3, 16), 12 * pass + 12 * (layers + head),
              1e-12);
  EXPECT_NEAR(compute("torchtitan", 0, 16) - compute("fsdp", 0, 16), -8 * pass, 1e-12);
  // FSDP2's passes and the casts repeat every micro-batch; the FSDP plan's DDP zeroes and
  // divides once a step (12 of its 24 bytes), torchtitan's adds from the second micro-batch on.
  EXPECT_NEAR(compute("fsdp", 3, 32) - 2 * compute("fsdp", 3, 16), 0, 1e-12);
  EXPECT_NEAR(compute("fsdp", 0, 32) - 2 * compute("fsdp", 0, 16), -12 * pass, 1e-12);
  EXPECT_NEAR(compute("torchtitan", 0, 32) - 2 * compute("torchtitan", 0, 16), 12 * pass, 1e-12);
  // Full recomputation casts the layers' weights once more.
  const StepTime full = step("fsdp", 0, 16, Recompute::kFull);
  EXPECT_NEAR(full.compute_s - full.recompute_s - compute("fsdp", 0, 16), 6 * layers, 1e-12);
  // torchtitan's DDP all-reduces every micro-batch, the FSDP plan's once a step.
  EXPECT_NEAR(step("torchtitan", 0, 32).dp_comm_s, 2 * step("fsdp", 0, 32).dp_comm_s, 1e-12);
  // Accelerate's DDP (DDP's default buckets, no_sync through the accumulation, .grad set to
  // None): the copies into the buckets, divided, and back once a step (2 x 2 x 4) and the adds
  // from the second micro-batch (3 x 4); its FSDP2 is the FSDP plan's.
  EXPECT_NEAR(compute("accelerate", 0, 16) - compute("fsdp", 0, 16), -8 * pass, 1e-12);
  EXPECT_NEAR(compute("accelerate", 0, 32) - 2 * compute("accelerate", 0, 16), -4 * pass, 1e-12);
  EXPECT_DOUBLE_EQ(step("accelerate", 0, 32).dp_comm_s, step("fsdp", 0, 32).dp_comm_s);
  EXPECT_DOUBLE_EQ(step("accelerate", 3, 32).step_s, step("fsdp", 3, 32).step_s);
  // Megatron makes no such pass: its accumulation is fused into the GEMMs.
  EXPECT_DOUBLE_EQ(compute("megatron", 0, 32), 2 * compute("megatron", 0, 16));
}

// torchtitan's FSDP2 under a pipeline (GathersOnceAStep), ZeRO 2 and 3 alike: the stage's
// weights gathered once a step in bf16 and its accumulated gradients reduce-scattered once in
// fp32, after its last backward pass with nothing to hide behind (interleaved, each model
// chunk after its own, the first chunk's last). Its passes over the stage's
// parameters a step, in bytes a parameter: the first micro-batch's gradients cast into the
// accumulator (2 read, 4 written), every later one's added with the cast fused (2 + 4 read, 4
// written), one gather's copy-out (2 x 2) and one copy-in (2 x 4): 10 m + 8 for m micro-batches.
// Two stages on a node of 8 H100s: four data-parallel ranks, 4 or 8 micro-batches of 2.
TEST(TimeModelTest, TorchtitanUnderAPipelineGathersAndReducesOnceAStep) {
  const cost::GpuSpec& h100 = **cost::GpuCatalog::BuiltIn().Get("H100-SXM");
  const LinkCurve nvlink = HardwareModel{}.curves.nvlink_hopper;
  JobSpec spec = NodeJob("torchtitan");
  const ModelFigures f = ComputeModelFigures(spec.model);
  const Links links = ResolveLinks(spec.hardware, h100);
  const double bytes_per_s = links.intra_node_gbytes_per_s * 1e9 * nvlink.busbw_fraction;
  auto step = [&](int zero, int64_t global_batch) {
    spec.training.global_batch = global_batch;
    const ParallelConfig c{.pipeline = 2, .zero_stage = zero, .micro_batch = 2};
    return EstimateStepTime(spec, f, c, h100, links);
  };
  const ParallelConfig c{.pipeline = 2, .zero_stage = 3, .micro_batch = 2};
  const double stage = static_cast<double>(StageParameters(spec.model, f, c));
  const double gather = nvlink.latency_s + 3.0 / 4 * stage * 2 / bytes_per_s;
  const double reduce = nvlink.latency_s + 3.0 / 4 * stage * 4 / bytes_per_s;
  for (int zero : {2, 3}) {
    const StepTime st = step(zero, 32);
    EXPECT_NEAR(st.dp_comm_s, gather + reduce, 1e-9) << zero;
    EXPECT_GE(st.dp_exposed_s, reduce) << zero;
    EXPECT_DOUBLE_EQ(st.step_s, step(3, 32).step_s) << zero;
    EXPECT_DOUBLE_EQ(step(zero, 64).dp_comm_s, st.dp_comm_s) << zero;
  }
  const double pass = SecondsPerByteOfEachParameter(f) * stage / static_cast<double>(f.parameters);
  EXPECT_NEAR(step(3, 64).compute_s - 2 * step(3, 32).compute_s, -8 * pass, 1e-12);
  // Interleaved, each model chunk reduces after its own last backward pass: only the first
  // chunk's half is left with no compute after it.
  spec.training.global_batch = 32;
  const ParallelConfig interleaved{
      .pipeline = 2, .virtual_stages = 2, .zero_stage = 3, .micro_batch = 2};
  const StepTime chunks = EstimateStepTime(spec, f, interleaved, h100, links);
  EXPECT_NEAR(chunks.dp_comm_s, gather + reduce, 1e-9);
  EXPECT_GE(chunks.dp_exposed_s, reduce / 2);
  EXPECT_LT(chunks.dp_exposed_s, step(3, 32).dp_exposed_s);
}

// torchtitan's float8 (torchao's Float8Linear, tensorwise) at torchao's roofline counts, summed
// cast by cast for Llama-3-8B's q, k, v, output, gate, up and down projections and one sequence
// of 8,192 tokens: an activation 6 bytes an element (three kernels), a weight 5 forward (three)
// and 3 backward (one). Without TP every linear casts its own input; under TP 2 torchtitan casts
// the attention's and the MLP's input once on the sequence shard (PrepareFloat8ModuleInput), and
// the row-parallel output and down projections' output gradients on the shard.
TEST(TimeModelTest, TorchtitansFloat8CastsAreTorchaosRooflineCounts) {
  auto parsed = ParseJobSpec(
      "name: float8\nframework: torchtitan\n"
      "model: {family: llama, layers: 32, hidden_size: 4096, attention_heads: 32, kv_heads: 8,\n"
      "        ffn_size: 14336, vocab_size: 128256, sequence_length: 8192}\n"
      "training: {global_batch: 8, micro_batch: 1, precision: fp8, optimizer: adamw}\n"
      "hardware: {gpu: H100-SXM, gpus_per_node: 8}\n",
      "float8.yaml", cost::GpuCatalog::BuiltIn());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  JobSpec spec = *parsed;
  const double tokens = 8192, h = 4096, kv = 1024, f = 14336;
  struct Weight {
    double in, out;
  };
  // t: this GPU's weights (in x out), the activations cast forward and the gradients cast
  // backward (elements a token).
  auto expect = [&](double t, const std::vector<double>& inputs,
                    const std::vector<double>& gradients) {
    const std::vector<Weight> weights = {{h, h / t}, {h, kv / t}, {h, kv / t}, {h / t, h},
                                         {h, f / t}, {h, f / t},  {f / t, h}};
    double forward = 0, backward = 0;
    for (const Weight& w : weights) {
      forward += 5 * w.in * w.out;
      backward += 3 * w.in * w.out;
    }
    for (double x : inputs) forward += 6 * tokens * x;
    for (double x : gradients) backward += 6 * tokens * x;
    const ParallelConfig c{.tensor = static_cast<int64_t>(t),
                           .sequence_parallel = t > 1,
                           .zero_stage = 3,
                           .micro_batch = 1};
    const Fp8Casts casts = TorchaoFloat8Casts(spec.model, c);
    EXPECT_DOUBLE_EQ(casts.forward_bytes, forward) << "TP " << t;
    EXPECT_DOUBLE_EQ(casts.backward_bytes, backward) << "TP " << t;
    EXPECT_DOUBLE_EQ(casts.forward_kernels, 3.0 * static_cast<double>(inputs.size()) + 3 * 7);
    EXPECT_DOUBLE_EQ(casts.backward_kernels, 3.0 * static_cast<double>(gradients.size()) + 7);
  };
  expect(1, {h, h, h, h, h, h, f}, {h, kv, kv, h, f, f, h});
  expect(2, {h / 2, h / 2, h / 2, f / 2}, {h / 2, kv / 2, kv / 2, h / 2, f / 2, f / 2, h / 2});

  // In the step, at this size, the float8 GEMMs gain more than these casts cost.
  const cost::GpuSpec& h100 = **cost::GpuCatalog::BuiltIn().Get("H100-SXM");
  const Links links = ResolveLinks(spec.hardware, h100);
  const ModelFigures figures = ComputeModelFigures(spec.model);
  const ParallelConfig tp2{
      .tensor = 2, .sequence_parallel = true, .zero_stage = 3, .micro_batch = 1};
  const StepTime titan = EstimateStepTime(spec, figures, tp2, h100, links);
  spec.training.precision = base::NumericFormat::kBf16;
  const StepTime bf16 = EstimateStepTime(spec, figures, tp2, h100, links);
  EXPECT_LT(titan.compute_s, bf16.compute_s);
}

}  // namespace
}  // namespace seedance::plan
