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
    f.coefficients.value[0] = 0.71362747045571051;
    f.coefficients.standard_error[0] = 0.012465130137529519;
    // fp8_gemm
    f.coefficients.value[1] = 0.67361831239217007;
    f.coefficients.standard_error[1] = 0.01915198427549434;
    // attention
    f.coefficients.value[2] = 0.71054865425866243;
    f.coefficients.standard_error[2] = 0.04239903099800249;
    // memory_bound
    f.coefficients.value[3] = 1.1566276962637783;
    f.coefficients.standard_error[3] = 0.18571239937790013;
    // overlap_loss
    f.coefficients.value[4] = 0.1204269044031427;
    f.coefficients.standard_error[4] = 0.077684978592206091;
    // tp_overlap
    f.coefficients.value[5] = 1;
    f.coefficients.standard_error[5] = 0.10774576291997444;
    // kernel_gap_s
    f.coefficients.value[6] = 3.7745913559854753e-06;
    f.coefficients.standard_error[6] = 2.4610603846960403e-06;
    // step_fixed_s
    f.coefficients.value[7] = 0.10942283243927405;
    f.coefficients.standard_error[7] = 0.03650353978224756;
    // network
    f.coefficients.value[8] = 1;
    f.coefficients.standard_error[8] = 0.29999999999999999;
    // bubble
    f.coefficients.value[9] = 0.9696327787836172;
    f.coefficients.standard_error[9] = 0.13235319515748123;
    // cp_overlap
    f.coefficients.value[10] = 0.48135154128712121;
    f.coefficients.standard_error[10] = 0.17692144215287481;
    // single-node data-parallel
    f.step_time[0] = {-0.15524771535076809, 0.010384379530156205, 6};
    // single-node model-parallel
    f.step_time[1] = {-0.16535809922435796, 0.58169891281259289, 14};
    // multi-node data-parallel
    f.step_time[2] = {0.0046523751579435751, 0.045778957448806064, 3};
    // multi-node model-parallel
    f.step_time[3] = {-0.10115392583811922, 0.28315142222228762, 371};
    f.step_time_all = {-0.10553440952598099, 0.29095646519935364, 394};
    f.paired = {-0.1813742322043459, 0.18137423220434579, 1864};
    f.memory = {-0.11297439370021962, 0.055025469641201578, 69};
    f.max_sequence_length = 1048576;
    f.max_gpus = 12288;
    f.frameworks_with_rows = 5;
    f.memory_frameworks_with_rows = 1;
    // deepspeed
    f.memory_overhead[0] = 0.19164602824721988;
    f.memory_overhead_se[0] = 0.013061145521270825;
    return f;
  }();
  return fit;
}

}  // namespace seedance::plan
