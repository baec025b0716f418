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
    f.coefficients.value[0] = 0.71398758990092326;  // gemm
    f.coefficients.standard_error[0] = 0.012612796483587005;
    f.coefficients.value[1] = 0.67567622400908312;  // fp8_gemm
    f.coefficients.standard_error[1] = 0.01931126458014654;
    f.coefficients.value[2] = 0.71787229273249331;  // attention
    f.coefficients.standard_error[2] = 0.042892542264737051;
    f.coefficients.value[3] = 1.0764672580932062;  // memory_bound
    f.coefficients.standard_error[3] = 0.16278529172789885;
    f.coefficients.value[4] = 0.13673475381219799;  // overlap_loss
    f.coefficients.standard_error[4] = 0.086275682653706526;
    f.coefficients.value[5] = 1;  // tp_overlap
    f.coefficients.standard_error[5] = 0.10814487128013923;
    f.coefficients.value[6] = 3.5361843538642747e-06;  // kernel_gap_s
    f.coefficients.standard_error[6] = 2.3250343048015986e-06;
    f.coefficients.value[7] = 0.096564114954923189;  // step_fixed_s
    f.coefficients.standard_error[7] = 0.036277451822806422;
    f.coefficients.value[8] = 1;  // network
    f.coefficients.standard_error[8] = 0.29999999999999999;
    f.coefficients.value[9] = 1.1201963454004937;  // bubble
    f.coefficients.standard_error[9] = 0.13596429503058921;
    f.coefficients.value[10] = 0.45761087244796828;  // cp_overlap
    f.coefficients.standard_error[10] = 0.17424424213826101;
    f.step_time[0] = {-0.19339643872845275, 0.010881713382804806, 6};  // single-node data-parallel
    f.step_time[1] = {-0.16846004714872687, 0.58149441658845424, 14};  // single-node model-parallel
    f.step_time[2] = {0.0036825348960410629, 0.044809117186903419, 3};  // multi-node data-parallel
    f.step_time[3] = {-0.10315781179780763, 0.29640200422336771, 371};  // multi-node model-parallel
    f.step_time_all = {-0.11143453270238582, 0.30566450162026154, 394};
    f.paired = {-0.16996007881306727, 0.1699600788130671, 1864};
    f.memory = {0.0050535553113421061, 0.17566348698569162, 69};
    f.max_sequence_length = 1048576;
    f.max_gpus = 12288;
    f.frameworks_with_rows = 5;
    f.memory_frameworks_with_rows = 1;
    return f;
  }();
  return fit;
}

}  // namespace seedance::plan
