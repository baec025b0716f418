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
    f.coefficients.value[0] = 0.7200370087913196;
    f.coefficients.standard_error[0] = 0.012962043579120912;
    // fp8_gemm
    f.coefficients.value[1] = 0.66429037391737034;
    f.coefficients.standard_error[1] = 0.018962009039366082;
    // attention
    f.coefficients.value[2] = 1.0026322111342467;
    f.coefficients.standard_error[2] = 0.062891294159051411;
    // memory_bound
    f.coefficients.value[3] = 1.0355948142536042;
    f.coefficients.standard_error[3] = 0.14157815176341199;
    // overlap_loss
    f.coefficients.value[4] = 0.1959262551624614;
    f.coefficients.standard_error[4] = 0.11073897462939764;
    // tp_overlap
    f.coefficients.value[5] = 0.90598748833906484;
    f.coefficients.standard_error[5] = 0.11176790829887662;
    // kernel_gap_s
    f.coefficients.value[6] = 3.8314921390779898e-06;
    f.coefficients.standard_error[6] = 2.4943175046146871e-06;
    // step_fixed_s
    f.coefficients.value[7] = 0.068211822487917684;
    f.coefficients.standard_error[7] = 0.033990955771703329;
    // network
    f.coefficients.value[8] = 1;
    f.coefficients.standard_error[8] = 0.29999999999999999;
    // bubble
    f.coefficients.value[9] = 0.91867061818950946;
    f.coefficients.standard_error[9] = 0.1210133005687338;
    // cp_overlap
    f.coefficients.value[10] = 0.7854181005732902;
    f.coefficients.standard_error[10] = 0.20924883223227483;
    // single-node data-parallel
    f.step_time[0] = {-0.10924221503123727, -0.064030370815183035, 6};
    // single-node model-parallel
    f.step_time[1] = {-0.2008887639409454, 0.53700996943640311, 14};
    // multi-node data-parallel
    f.step_time[2] = {-0.033802166377447811, 0.0071187830019603842, 3};
    // multi-node model-parallel
    f.step_time[3] = {-0.14292301236716282, 0.19434449255442818, 371};
    f.step_time_all = {-0.14860621655007389, 0.19744080919845641, 394};
    f.step_time_widening = 1.55;
    f.paired = {-0.1726753530627062, 0.17267535306270618, 1864};
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
