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
    f.coefficients.value[0] = 0.71392674440988724;  // gemm
    f.coefficients.standard_error[0] = 0.012578610942647705;
    f.coefficients.value[1] = 0.67550057887805315;  // fp8_gemm
    f.coefficients.standard_error[1] = 0.019271816599023984;
    f.coefficients.value[2] = 0.71736651942772589;  // attention
    f.coefficients.standard_error[2] = 0.042870031427140062;
    f.coefficients.value[3] = 1.0829888720861007;  // memory_bound
    f.coefficients.standard_error[3] = 0.16496952391599459;
    f.coefficients.value[4] = 0.13653099642263219;  // overlap_loss
    f.coefficients.standard_error[4] = 0.086173106930958643;
    f.coefficients.value[5] = 1;  // tp_overlap
    f.coefficients.standard_error[5] = 0.10795667700547741;
    f.coefficients.value[6] = 3.5389230651548997e-06;  // kernel_gap_s
    f.coefficients.standard_error[6] = 2.3263868383822916e-06;
    f.coefficients.value[7] = 0.097528147099726931;  // step_fixed_s
    f.coefficients.standard_error[7] = 0.036335420171311479;
    f.coefficients.value[8] = 1;  // network
    f.coefficients.standard_error[8] = 0.29999999999999999;
    f.coefficients.value[9] = 1.1171794241118493;  // bubble
    f.coefficients.standard_error[9] = 0.13578791919196462;
    f.coefficients.value[10] = 0.45920803774512142;  // cp_overlap
    f.coefficients.standard_error[10] = 0.17445942965842495;
    f.step_time[0] = {-0.19267860994740815, 0.011127017742204181, 6};  // single-node data-parallel
    f.step_time[1] = {-0.16933190860238637, 0.58149441658845424, 14};  // single-node model-parallel
    f.step_time[2] = {0.0038546328697176991, 0.044981215160580137, 3};  // multi-node data-parallel
    f.step_time[3] = {-0.10303227980833321, 0.29631287000060369, 371};  // multi-node model-parallel
    f.step_time_all = {-0.11128870354982605, 0.30554862713066833, 394};
    f.paired = {-0.16996007881306727, 0.1699600788130671, 1864};
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
