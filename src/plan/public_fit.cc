// Written by `build/bench/published_runs --fit --write src/plan/public_fit.cc`: the public fit
// of the time model to bench/plan/published_runs.csv and bench/plan/kernel_refs.csv. Do not
// edit by hand; PublicFitTest.MatchesTheCalibrationSet re-runs the fit and compares.
#include "seedance/plan/coefficients.h"

namespace seedance::plan {

const PublicFit& BuiltInFit() {
  static const PublicFit fit = [] {
    PublicFit f;
    f.curves.gemm_half_dim = 158.02401368237292;
    f.curves.gemm_fixed_s = 6.0743526286358316e-06;
    f.curves.attention_half_seq = 437.91285781552193;
    f.curves.attention_half_dim = 12.012795376373226;
    f.curves.stream_fraction = 0.84999999999999998;
    f.curves.nvlink_ampere = {7.4088363162310783e-05, 0.69054609333325079};
    f.curves.nvlink_hopper = {4.1758991336786859e-05, 0.98695484098548525};
    f.curves.network = {5.8199999999999998e-05, 0.91217499999999996};
    // gemm
    f.coefficients.value[0] = 0.72243576297759893;
    f.coefficients.standard_error[0] = 0.01305112542418119;
    // fp8_gemm
    f.coefficients.value[1] = 0.6659995887894562;
    f.coefficients.standard_error[1] = 0.019048066091654155;
    // attention
    f.coefficients.value[2] = 0.99525597796661569;
    f.coefficients.standard_error[2] = 0.062287125873469483;
    // memory_bound
    f.coefficients.value[3] = 1.061274748226317;
    f.coefficients.standard_error[3] = 0.14847055313195706;
    // overlap_loss
    f.coefficients.value[4] = 0.19827987279815093;
    f.coefficients.standard_error[4] = 0.11165774255743638;
    // tp_overlap
    f.coefficients.value[5] = 0.88808555015332469;
    f.coefficients.standard_error[5] = 0.11180090479895437;
    // kernel_gap_s
    f.coefficients.value[6] = 3.8054503369067899e-06;
    f.coefficients.standard_error[6] = 2.4796270905379195e-06;
    // step_fixed_s
    f.coefficients.value[7] = 0.072324665894473547;
    f.coefficients.standard_error[7] = 0.03442250079977207;
    // network
    f.coefficients.value[8] = 1;
    f.coefficients.standard_error[8] = 0.29999999999999999;
    // bubble
    f.coefficients.value[9] = 0.9446637698367859;
    f.coefficients.standard_error[9] = 0.12321713355082246;
    // cp_overlap
    f.coefficients.value[10] = 0.80674333320032388;
    f.coefficients.standard_error[10] = 0.21038481723157787;
    // single-node data-parallel
    f.step_time[0] = {-0.10354464583978035, -0.062628098767452636, 6};
    // single-node model-parallel
    f.step_time[1] = {-0.1901250846754407, 0.27980934965475746, 14};
    // multi-node data-parallel
    f.step_time[2] = {-0.033737711639932277, 0.0071832377394759591, 3};
    // multi-node model-parallel
    f.step_time[3] = {-0.13811581615626711, 0.19468053319439421, 371};
    f.step_time_all = {-0.14927956831244515, 0.19763521415635096, 394};
    f.step_time_widening = 1.55;
    f.paired = {-0.1726753530627062, 0.17267535306270618, 1864};
    f.memory = {-0.098845106107633876, 0.053604538530321107, 69};
    f.max_sequence_length = 1048576;
    f.max_gpus = 12288;
    f.frameworks_with_rows = 5;
    f.memory_frameworks_with_rows = 1;
    // deepspeed
    f.memory_overhead[0] = 0.19334047870968951;
    f.memory_overhead_se[0] = 0.01271116472377435;
    return f;
  }();
  return fit;
}

}  // namespace seedance::plan
