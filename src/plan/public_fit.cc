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
    f.coefficients.value[0] = 0.7136405306079342;  // gemm
    f.coefficients.standard_error[0] = 0.012465829282189471;
    f.coefficients.value[1] = 0.67363712500005024;  // fp8_gemm
    f.coefficients.standard_error[1] = 0.019153311781750719;
    f.coefficients.value[2] = 0.71054883080968334;  // attention
    f.coefficients.standard_error[2] = 0.042399752994374283;
    f.coefficients.value[3] = 1.1563042493878031;  // memory_bound
    f.coefficients.standard_error[3] = 0.18562154703221637;
    f.coefficients.value[4] = 0.12047998080795076;  // overlap_loss
    f.coefficients.standard_error[4] = 0.07770854029946149;
    f.coefficients.value[5] = 1;  // tp_overlap
    f.coefficients.standard_error[5] = 0.10774840496035125;
    f.coefficients.value[6] = 3.7735589599008361e-06;  // kernel_gap_s
    f.coefficients.standard_error[6] = 2.4604781836619899e-06;
    f.coefficients.value[7] = 0.10934051197031175;  // step_fixed_s
    f.coefficients.standard_error[7] = 0.036506043729442869;
    f.coefficients.value[8] = 1;  // network
    f.coefficients.standard_error[8] = 0.29999999999999999;
    f.coefficients.value[9] = 0.96962178429940749;  // bubble
    f.coefficients.standard_error[9] = 0.13235278875646786;
    f.coefficients.value[10] = 0.48135451077737018;  // cp_overlap
    f.coefficients.standard_error[10] = 0.17692269723613049;
    f.step_time[0] = {-0.15525229849135355, 0.010393253832469489, 6};  // single-node data-parallel
    f.step_time[1] = {-0.16534721716935355, 0.5817116565182372, 14};  // single-node model-parallel
    f.step_time[2] = {0.0046249607047492893, 0.045751542995611648, 3};  // multi-node data-parallel
    f.step_time[3] = {-0.10115762472697999, 0.28316346082997534, 371};  // multi-node model-parallel
    f.step_time_all = {-0.10553265721731298, 0.29097001000384531, 394};
    f.paired = {-0.18137719016828946, 0.18137719016828935, 1864};
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
