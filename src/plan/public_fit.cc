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
    f.coefficients.value[0] = 0.72271362462569;
    f.coefficients.standard_error[0] = 0.013175769187969876;
    // fp8_gemm
    f.coefficients.value[1] = 0.68009123390910975;
    f.coefficients.standard_error[1] = 0.020183443833949807;
    // attention
    f.coefficients.value[2] = 0.70720334945515206;
    f.coefficients.standard_error[2] = 0.041916278042026835;
    // memory_bound
    f.coefficients.value[3] = 1.0970797052885923;
    f.coefficients.standard_error[3] = 0.16102979647141449;
    // overlap_loss
    f.coefficients.value[4] = 0.12274712987199654;
    f.coefficients.standard_error[4] = 0.079020594610200057;
    // tp_overlap
    f.coefficients.value[5] = 1;
    f.coefficients.standard_error[5] = 0.11114427772307768;
    // kernel_gap_s
    f.coefficients.value[6] = 4.4322173341988529e-06;
    f.coefficients.standard_error[6] = 2.8176943248282711e-06;
    // step_fixed_s
    f.coefficients.value[7] = 0.11235889123919771;
    f.coefficients.standard_error[7] = 0.036177744047342718;
    // network
    f.coefficients.value[8] = 1;
    f.coefficients.standard_error[8] = 0.29999999999999999;
    // bubble
    f.coefficients.value[9] = 0.97792713682069421;
    f.coefficients.standard_error[9] = 0.12701995953941045;
    // cp_overlap
    f.coefficients.value[10] = 0.4882265747948944;
    f.coefficients.standard_error[10] = 0.17720677866527276;
    // single-node data-parallel
    f.step_time[0] = {-0.16274978507377671, 0.00042751815522275305, 6};
    // single-node model-parallel
    f.step_time[1] = {-0.18521285131610535, 0.54156926419381213, 14};
    // multi-node data-parallel
    f.step_time[2] = {0.0031687227213269371, 0.044295305012189423, 3};
    // multi-node model-parallel
    f.step_time[3] = {-0.095456353977701289, 0.26791398023172552, 371};
    f.step_time_all = {-0.10387833103753311, 0.27496370379501378, 394};
    f.paired = {-0.17643996473673357, 0.17643996473673354, 1864};
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
