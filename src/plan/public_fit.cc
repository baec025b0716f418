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
    f.coefficients.value[0] = 0.72457747167247122;
    f.coefficients.standard_error[0] = 0.013252294258355819;
    // fp8_gemm
    f.coefficients.value[1] = 0.67170986018246248;
    f.coefficients.standard_error[1] = 0.019718126169359106;
    // attention
    f.coefficients.value[2] = 1.0022959584889022;
    f.coefficients.standard_error[2] = 0.063047567981179248;
    // memory_bound
    f.coefficients.value[3] = 0.99112407337895547;
    f.coefficients.standard_error[3] = 0.13746326272615381;
    // overlap_loss
    f.coefficients.value[4] = 0.19313804513074012;
    f.coefficients.standard_error[4] = 0.10964462179983737;
    // tp_overlap
    f.coefficients.value[5] = 0.86565020036718421;
    f.coefficients.standard_error[5] = 0.1126867366596557;
    // kernel_gap_s
    f.coefficients.value[6] = 3.7769336729941227e-06;
    f.coefficients.standard_error[6] = 2.4635441790562905e-06;
    // step_fixed_s
    f.coefficients.value[7] = 0.070146358451070909;
    f.coefficients.standard_error[7] = 0.034219261211154664;
    // network
    f.coefficients.value[8] = 1;
    f.coefficients.standard_error[8] = 0.29999999999999999;
    // bubble
    f.coefficients.value[9] = 0.95092607138256602;
    f.coefficients.standard_error[9] = 0.12361145405867825;
    // cp_overlap
    f.coefficients.value[10] = 0.78888969980380674;
    f.coefficients.standard_error[10] = 0.20970530752771191;
    // single-node data-parallel
    f.step_time[0] = {-0.099734920715286932, -0.063311201592067476, 6};
    // single-node model-parallel
    f.step_time[1] = {-0.17729205163069628, 0.28077731243473997, 14};
    // multi-node data-parallel
    f.step_time[2] = {-0.035103458656387393, 0.005817490723020906, 3};
    // multi-node model-parallel
    f.step_time[3] = {-0.13522841886295389, 0.19519550500356989, 371};
    f.step_time_all = {-0.14200629027501679, 0.19860807227948812, 394};
    f.step_time_widening = 1.53;
    f.paired = {-0.17299558307106239, 0.17299558307106233, 1864};
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
