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
    f.coefficients.value[0] = 0.71551889896482124;  // gemm
    f.coefficients.standard_error[0] = 0.012542755089380582;
    f.coefficients.value[1] = 0.67507848465516118;  // fp8_gemm
    f.coefficients.standard_error[1] = 0.019269496196470816;
    f.coefficients.value[2] = 0.70964735458630357;  // attention
    f.coefficients.standard_error[2] = 0.042321449662168185;
    f.coefficients.value[3] = 1.1522232541121682;  // memory_bound
    f.coefficients.standard_error[3] = 0.18446052547448047;
    f.coefficients.value[4] = 0.120687055828989;  // overlap_loss
    f.coefficients.standard_error[4] = 0.077827506800588378;
    f.coefficients.value[5] = 1;  // tp_overlap
    f.coefficients.standard_error[5] = 0.10769534992346155;
    f.coefficients.value[6] = 3.8534245332458888e-06;  // kernel_gap_s
    f.coefficients.standard_error[6] = 2.5051639918976102e-06;
    f.coefficients.value[7] = 0.11079018346484169;  // step_fixed_s
    f.coefficients.standard_error[7] = 0.036563484083842177;
    f.coefficients.value[8] = 1;  // network
    f.coefficients.standard_error[8] = 0.29999999999999999;
    f.coefficients.value[9] = 1.0516207497348147;  // bubble
    f.coefficients.standard_error[9] = 0.13325597373853998;
    f.coefficients.value[10] = 0.48327621773039769;  // cp_overlap
    f.coefficients.standard_error[10] = 0.17713630686465567;
    f.step_time[0] = {-0.15524501321553497, 0.010358380330313126, 6};  // single-node data-parallel
    f.step_time[1] = {-0.16479980275818898, 0.58149441658845424, 14};  // single-node model-parallel
    f.step_time[2] = {0.0050451752346380154, 0.046171757525500519, 3};  // multi-node data-parallel
    f.step_time[3] = {-0.10030978117010347, 0.28219828150326887, 371};  // multi-node model-parallel
    f.step_time_all = {-0.10619009941742784, 0.29130201987319776, 394};
    f.paired = {-0.17741132298951104, 0.17741132298951101, 1864};
    f.memory = {-0.11297439370021962, 0.055025469641201578, 69};
    f.max_sequence_length = 1048576;
    f.max_gpus = 12288;
    f.frameworks_with_rows = 5;
    f.memory_frameworks_with_rows = 1;
    f.memory_overhead[0] = 0.19164602824721988;  // deepspeed
    f.memory_overhead_se[0] = 0.013061145521270825;
    return f;
  }();
  return fit;
}

}  // namespace seedance::plan
