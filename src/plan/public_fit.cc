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
    f.coefficients.value[0] = 0.71670656427835233;
    f.coefficients.standard_error[0] = 0.01253632439195072;
    // fp8_gemm
    f.coefficients.value[1] = 0.67486585341056804;
    f.coefficients.standard_error[1] = 0.019265044022377571;
    // attention
    f.coefficients.value[2] = 0.7075455805570452;
    f.coefficients.standard_error[2] = 0.042157125378126235;
    // memory_bound
    f.coefficients.value[3] = 1.1799999999999999;
    f.coefficients.standard_error[3] = 0.19244600074456081;
    // overlap_loss
    f.coefficients.value[4] = 0.12043495791071912;
    f.coefficients.standard_error[4] = 0.077705941209902971;
    // tp_overlap
    f.coefficients.value[5] = 1;
    f.coefficients.standard_error[5] = 0.10766741901071182;
    // kernel_gap_s
    f.coefficients.value[6] = 3.9717301001663335e-06;
    f.coefficients.standard_error[6] = 2.5707738686868748e-06;
    // step_fixed_s
    f.coefficients.value[7] = 0.11628285545671224;
    f.coefficients.standard_error[7] = 0.036662756604439573;
    // network
    f.coefficients.value[8] = 1;
    f.coefficients.standard_error[8] = 0.29999999999999999;
    // bubble
    f.coefficients.value[9] = 1.0340926061895606;
    f.coefficients.standard_error[9] = 0.1315815702848572;
    // cp_overlap
    f.coefficients.value[10] = 0.48888826549817721;
    f.coefficients.standard_error[10] = 0.17776041501235215;
    // single-node data-parallel
    f.step_time[0] = {-0.15277423882252139, 0.011309315078454091, 6};
    // single-node model-parallel
    f.step_time[1] = {-0.16173584567153168, 0.58169891281259289, 14};
    // multi-node data-parallel
    f.step_time[2] = {0.005653653631472336, 0.046780235922334851, 3};
    // multi-node model-parallel
    f.step_time[3] = {-0.09850503186665531, 0.27071929688354757, 371};
    f.step_time_all = {-0.10385045605783512, 0.2798807355424896, 394};
    f.paired = {-0.17717538109633624, 0.17717538109633624, 1864};
    f.memory = {-0.11439532479789802, 0.053604538530321107, 69};
    f.max_sequence_length = 1048576;
    f.max_gpus = 12288;
    f.frameworks_with_rows = 5;
    f.memory_frameworks_with_rows = 1;
    // deepspeed
    f.memory_overhead[0] = 0.19334047870968951;
    f.memory_overhead_se[0] = 0.013054889058878838;
    return f;
  }();
  return fit;
}

}  // namespace seedance::plan
