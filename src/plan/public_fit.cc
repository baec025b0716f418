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
    f.coefficients.value[0] = 0.74383941323919689;
    f.coefficients.standard_error[0] = 0.014284479023781238;
    // fp8_gemm
    f.coefficients.value[1] = 0.69734047829554668;
    f.coefficients.standard_error[1] = 0.021577179914902784;
    // attention
    f.coefficients.value[2] = 0.99590824841546632;
    f.coefficients.standard_error[2] = 0.062600493030039936;
    // memory_bound
    f.coefficients.value[3] = 0.85546357347843616;
    f.coefficients.standard_error[3] = 0.09672793555766028;
    // overlap_loss
    f.coefficients.value[4] = 0.20926585040533296;
    f.coefficients.standard_error[4] = 0.11503464659696964;
    // tp_overlap
    f.coefficients.value[5] = 0.72404983246594712;
    f.coefficients.standard_error[5] = 0.11374447858519415;
    // kernel_gap_s
    f.coefficients.value[6] = 3.7926576719233231e-06;
    f.coefficients.standard_error[6] = 2.4717354576536263e-06;
    // step_fixed_s
    f.coefficients.value[7] = 0.055795764684010464;
    f.coefficients.standard_error[7] = 0.031341787800504804;
    // network
    f.coefficients.value[8] = 1;
    f.coefficients.standard_error[8] = 0.29999999999999999;
    // bubble
    f.coefficients.value[9] = 0.99519207882592042;
    f.coefficients.standard_error[9] = 0.12712647453515602;
    // cp_overlap
    f.coefficients.value[10] = 0.8132866197087546;
    f.coefficients.standard_error[10] = 0.21086464471416891;
    // single-node data-parallel
    f.step_time[0] = {-0.10076299344528412, -0.054523783967322666, 6};
    // single-node model-parallel
    f.step_time[1] = {-0.1694573950706515, 0.25837366393040451, 14};
    // multi-node data-parallel
    f.step_time[2] = {-0.016173436185934347, 0.024747513193473836, 3};
    // multi-node model-parallel
    f.step_time[3] = {-0.12439437520444914, 0.1915193501874837, 371};
    f.step_time_all = {-0.13006217293632807, 0.1935535128577954, 394};
    f.step_time_widening = 1.5700000000000001;
    f.paired = {-0.14770730026313769, 0.14770730026313766, 1864};
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
