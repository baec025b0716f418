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
    f.coefficients.value[0] = 0.71412847462153306;  // gemm
    f.coefficients.standard_error[0] = 0.014336327971266214;
    f.coefficients.value[1] = 0.68345370627837965;  // fp8_gemm
    f.coefficients.standard_error[1] = 0.024966910008296508;
    f.coefficients.value[2] = 0.86648262133962184;  // attention
    f.coefficients.standard_error[2] = 0.059150717024515492;
    f.coefficients.value[3] = 0.68678076186829629;  // memory_bound
    f.coefficients.standard_error[3] = 0.093742391856187615;
    f.coefficients.value[4] = 0.18363079857790041;  // overlap_loss
    f.coefficients.standard_error[4] = 0.11647144711070663;
    f.coefficients.value[5] = 0.99894242629695329;  // tp_overlap
    f.coefficients.standard_error[5] = 0.12497268389757665;
    f.coefficients.value[6] = 3.0277001309824389e-06;  // kernel_gap_s
    f.coefficients.standard_error[6] = 2.0155008226780874e-06;
    f.coefficients.value[7] = 0.05161860813359731;  // step_fixed_s
    f.coefficients.standard_error[7] = 0.034532793403307539;
    f.coefficients.value[8] = 1;  // network
    f.coefficients.standard_error[8] = 0.29999999999999999;
    f.coefficients.value[9] = 1.1605803975902451;  // bubble
    f.coefficients.standard_error[9] = 0.11793712727100797;
    f.coefficients.value[10] = 0.2794912088455781;  // cp_overlap
    f.coefficients.standard_error[10] = 0.1489918596692654;
    f.step_time[0] = {-0.12377546209356138, -0.035851945961187529, 6};  // single-node data-parallel
    f.step_time[1] = {-0.20445274617020523, 0.59332636883833501, 14};  // single-node model-parallel
    f.step_time[2] = {-0.042354523711638295, -0.0012279414207758341,
                      3};                                              // multi-node data-parallel
    f.step_time[3] = {-0.1401006495343966, 0.29486800942490199, 371};  // multi-node model-parallel
    f.step_time_all = {-0.14669905986580348, 0.30254700665456474, 394};
    f.paired = {-0.18129228564649075, 0.18129228564649072, 1864};
    f.memory = {-0.00011941486754513417, 0.2175333607754853, 69};
    f.max_sequence_length = 1048576;
    f.max_gpus = 12288;
    f.frameworks_with_rows = 5;
    return f;
  }();
  return fit;
}

}  // namespace seedance::plan
