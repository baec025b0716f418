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
    f.coefficients.value[0] = 0.74118702794349367;
    f.coefficients.standard_error[0] = 0.014100457268248606;
    // fp8_gemm
    f.coefficients.value[1] = 0.69105648337495051;
    f.coefficients.standard_error[1] = 0.020949856593684632;
    // attention
    f.coefficients.value[2] = 0.99080628376324942;
    f.coefficients.standard_error[2] = 0.062058713633000556;
    // memory_bound
    f.coefficients.value[3] = 0.90005675159702236;
    f.coefficients.standard_error[3] = 0.1032933583160462;
    // overlap_loss
    f.coefficients.value[4] = 0.21485369958629377;
    f.coefficients.standard_error[4] = 0.11699235455154711;
    // tp_overlap
    f.coefficients.value[5] = 0.74952136239704581;
    f.coefficients.standard_error[5] = 0.11312500607628644;
    // kernel_gap_s
    f.coefficients.value[6] = 3.8172528079896719e-06;
    f.coefficients.standard_error[6] = 2.4855953289268302e-06;
    // step_fixed_s
    f.coefficients.value[7] = 0.056515979647365544;
    f.coefficients.standard_error[7] = 0.031584778659867953;
    // network
    f.coefficients.value[8] = 1;
    f.coefficients.standard_error[8] = 0.29999999999999999;
    // bubble
    f.coefficients.value[9] = 0.98528322390277723;
    f.coefficients.standard_error[9] = 0.12637370688960886;
    // cp_overlap
    f.coefficients.value[10] = 0.82570271692082953;
    f.coefficients.standard_error[10] = 0.21135769803348417;
    // single-node data-parallel
    f.step_time[0] = {-0.10617282543587005, -0.054983042552850227, 6};
    // single-node model-parallel
    f.step_time[1] = {-0.18228111821756299, 0.25853986488780967, 14};
    // multi-node data-parallel
    f.step_time[2] = {-0.01570074306776802, 0.02522020631164015, 3};
    // multi-node model-parallel
    f.step_time[3] = {-0.12776643610978206, 0.19354131254661669, 371};
    f.step_time_all = {-0.13801484373450412, 0.19560359338863834, 394};
    f.step_time_widening = 1.5700000000000001;
    f.paired = {-0.14933896742747887, 0.14933896742747885, 1864};
    f.memory = {-0.099513513488495506, 0.051419392753971484, 69};
    f.max_sequence_length = 1048576;
    f.max_gpus = 12288;
    f.frameworks_with_rows = 5;
    f.memory_frameworks_with_rows = 1;
    // deepspeed
    f.memory_overhead[0] = 0.19334047870968951;
    f.memory_overhead_se[0] = 0.012629388036489705;
    return f;
  }();
  return fit;
}

}  // namespace seedance::plan
