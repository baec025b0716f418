#include "seedance/plan/kernel_fit.h"

#include <cmath>
#include <functional>

#include "seedance/base/csv.h"
#include "seedance/base/parse.h"

namespace seedance::plan {
namespace {

using Loss = std::function<double(double, double)>;

// Minimises loss(x, y) over x in [x0, x1] and y in [y0, y1] on a log grid, then twice more on a
// grid around the best point.
std::pair<double, double> GridSearch(const Loss& loss, double x0, double x1, double y0, double y1) {
  double bx = x0, by = y0, best = INFINITY;
  for (int round = 0; round < 3; ++round) {
    const int steps = 40;
    for (int i = 0; i <= steps; ++i) {
      const double x = x0 * std::pow(x1 / x0, static_cast<double>(i) / steps);
      for (int j = 0; j <= steps; ++j) {
        const double y = y0 * std::pow(y1 / y0, static_cast<double>(j) / steps);
        const double l = loss(x, y);
        if (l < best) {
          best = l;
          bx = x;
          by = y;
        }
      }
    }
    const double fx = std::pow(x1 / x0, 2.0 / steps), fy = std::pow(y1 / y0, 2.0 / steps);
    x0 = bx / fx;
    x1 = bx * fx;
    y0 = by / fy;
    y1 = by * fy;
  }
  return {bx, by};
}

double Rms(double sum_squares, size_t n) {
  return n == 0 ? 0 : std::sqrt(sum_squares / static_cast<double>(n));
}

double Number(const base::CsvTable& t, const base::CsvRecord& r, std::string_view column) {
  const auto i = t.Column(column);
  if (!i || r.fields[*i].empty()) return 0;
  return base::ParseFiniteDouble(r.fields[*i]).value_or(-1);
}

std::string Text(const base::CsvTable& t, const base::CsvRecord& r, std::string_view column) {
  const auto i = t.Column(column);
  return i ? r.fields[*i] : std::string();
}

// MAMF fraction of a row's GPU and precision, as kernel_anchors.h holds it.
double MamfOf(const KernelRow& r) {
  cost::GpuSpec gpu;
  gpu.id = r.gpu;
  return MamfFraction(
      gpu, r.precision == "fp8" ? base::NumericFormat::kFp8 : base::NumericFormat::kBf16);
}

}  // namespace

base::StatusOr<std::vector<KernelRow>> ParseKernelTable(std::string_view csv,
                                                        const std::string& file) {
  SEEDANCE_ASSIGN_OR_RETURN(base::CsvTable t, base::CsvTable::Parse(csv, file));
  for (const char* required : {"kind", "id"}) {
    if (!t.Column(required)) {
      return base::InvalidArgumentError(std::string("missing column '") + required + "'",
                                        file + ":1");
    }
  }
  std::vector<KernelRow> rows;
  for (const base::CsvRecord& r : t.records()) {
    KernelRow k;
    k.kind = Text(t, r, "kind");
    k.id = Text(t, r, "id");
    k.group = Text(t, r, "group");
    k.gpu = Text(t, r, "gpu");
    k.precision = Text(t, r, "precision");
    k.kernel = Text(t, r, "kernel");
    k.pass = Text(t, r, "pass");
    k.link = Text(t, r, "link");
    k.op = Text(t, r, "op");
    k.causal = Text(t, r, "causal") == "true";
    k.m = Number(t, r, "m");
    k.n = Number(t, r, "n");
    k.k = Number(t, r, "k");
    k.head_dim = Number(t, r, "head_dim");
    k.sequence_length = Number(t, r, "sequence_length");
    k.gpus_per_node = Number(t, r, "gpus_per_node");
    k.nodes = Number(t, r, "nodes");
    k.message_bytes = Number(t, r, "message_bytes");
    k.tflops = Number(t, r, "published_tflops");
    k.datasheet_tflops = Number(t, r, "datasheet_tflops");
    k.busbw = Number(t, r, "published_busbw_gbytes_per_s");
    for (double v : {k.m, k.n, k.k, k.head_dim, k.sequence_length, k.tflops, k.busbw}) {
      if (v < 0) {
        return base::InvalidArgumentError("a number field is not a plain non-negative number",
                                          file + ":" + std::to_string(r.line));
      }
    }
    if (k.kind != "gemm" && k.kind != "attention" && k.kind != "collective") {
      return base::InvalidArgumentError(
          "kind must be gemm, attention or collective, got '" + k.kind + "'",
          t.Where(r, *t.Column("kind")));
    }
    rows.push_back(std::move(k));
  }
  return rows;
}

base::StatusOr<KernelFit> FitKernelCurves(const std::vector<KernelRow>& rows) {
  KernelFit fit;
  KernelCurves& c = fit.curves;
  fit.report = base::Report::object();

  // GEMMs: time = 2MNK / (peak x MAMF x g(M) g(N) g(K) / g(4096)^3) + fixed.
  std::vector<const KernelRow*> gemms;
  for (const KernelRow& r : rows) {
    if (r.kind == "gemm" && r.group == "azure-cublaslt" && r.m > 0 && r.tflops > 0 &&
        MamfOf(r) > 0) {
      gemms.push_back(&r);
    }
  }
  auto gemm_loss = [&](double half, double fixed) {
    double ss = 0;
    const double ref = std::pow(4096 / (4096 + half), 3);
    for (const KernelRow* r : gemms) {
      const double peak = (r->precision == "fp8" ? 1979.0 : 312.0) * 1e12;  // the rows' GPUs
      const double flops = 2 * r->m * r->n * r->k;
      const double g = r->m / (r->m + half) * r->n / (r->n + half) * r->k / (r->k + half) / ref;
      const double predicted = flops / (peak * MamfOf(*r) * std::min(g, 1.0)) + fixed;
      const double measured = flops / (r->tflops * 1e12);
      ss += std::pow(std::log(predicted / measured), 2);
    }
    return ss;
  };
  if (!gemms.empty()) {
    const auto [half, fixed] = GridSearch(gemm_loss, 8, 2048, 1e-7, 1e-4);
    c.gemm_half_dim = half;
    c.gemm_fixed_s = fixed;
  }
  fit.report["gemm"] = {
      {"half_dim", c.gemm_half_dim},
      {"fixed_s", c.gemm_fixed_s},
      {"rows", gemms.size()},
      {"rms_log_error", Rms(gemm_loss(c.gemm_half_dim, c.gemm_fixed_s), gemms.size())}};

  // Attention: throughput relative to the same kernel, pass and GPU at 16k and head dim 128.
  struct Point {
    double s, d, relative;
  };
  std::vector<Point> points;
  for (const KernelRow& r : rows) {
    if (r.kind != "attention" || !r.causal || r.tflops <= 0 || r.kernel == "pytorch") continue;
    for (const KernelRow& ref : rows) {
      if (ref.kind == "attention" && ref.causal && ref.gpu == r.gpu && ref.kernel == r.kernel &&
          ref.pass == r.pass && ref.precision == r.precision && ref.group == r.group &&
          ref.head_dim == 128 && ref.sequence_length == kAttentionAnchorLength && ref.tflops > 0) {
        points.push_back({r.sequence_length, r.head_dim, r.tflops / ref.tflops});
        break;
      }
    }
  }
  auto attention_loss = [&](double half_s, double half_d) {
    double ss = 0;
    for (const Point& p : points) {
      const double model = p.s / (p.s + half_s) * (kAttentionAnchorLength + half_s) /
                           kAttentionAnchorLength * p.d / (p.d + half_d) * (128 + half_d) / 128;
      ss += std::pow(std::log(model / p.relative), 2);
    }
    return ss;
  };
  if (!points.empty()) {
    const auto [half_s, half_d] = GridSearch(attention_loss, 16, 8192, 1, 512);
    c.attention_half_seq = half_s;
    c.attention_half_dim = half_d;
  }
  fit.report["attention"] = {
      {"half_seq", c.attention_half_seq},
      {"half_dim", c.attention_half_dim},
      {"rows", points.size()},
      {"rms_log_error",
       Rms(attention_loss(c.attention_half_seq, c.attention_half_dim), points.size())}};

  // NVLink: nccl-tests time of an all-reduce = busbw-normalised bytes / busbw.
  auto link_fit = [&](bool ampere, LinkCurve& curve, const char* name) {
    std::vector<const KernelRow*> link;
    for (const KernelRow& r : rows) {
      const bool gen = ampere ? r.gpu.find("A100") != std::string::npos
                              : (r.gpu == "H100-SXM" || r.gpu == "H200");
      if (r.kind == "collective" && r.link == "nvlink" && r.op == "all_reduce" && r.nodes == 1 &&
          r.gpus_per_node == 8 && gen && r.message_bytes >= (1 << 20) && r.busbw > 0 &&
          r.id.find("nvlsoff") == std::string::npos && r.id.find("-ring-") == std::string::npos) {
        link.push_back(&r);
      }
    }
    const double bandwidth = (ampere ? 300.0 : 450.0) * 1e9;
    auto loss = [&](double latency, double share) {
      double ss = 0;
      for (const KernelRow* r : link) {
        const double wire = 2 * 7.0 / 8 * r->message_bytes;
        const double measured = wire / (r->busbw * 1e9);
        ss += std::pow(std::log((latency + wire / (bandwidth * share)) / measured), 2);
      }
      return ss;
    };
    if (!link.empty()) {
      const auto [latency, share] = GridSearch(loss, 1e-6, 1e-3, 0.2, 1.5);
      curve = {latency, share};
    }
    fit.report[name] = {
        {"latency_s", curve.latency_s},
        {"busbw_fraction", curve.busbw_fraction},
        {"rows", link.size()},
        {"rms_log_error", Rms(loss(curve.latency_s, curve.busbw_fraction), link.size())}};
  };
  link_fit(true, c.nvlink_ampere, "nvlink_ampere");
  link_fit(false, c.nvlink_hopper, "nvlink_hopper");

  // The network: two named rows.
  c.network = {58.2e-6, 364.87 / 400};
  fit.report["network"] = {
      {"latency_s", c.network.latency_s},
      {"busbw_fraction", c.network.busbw_fraction},
      {"rows",
       "coreweave-22df9b7-a100-128gpu-ib-4 (58.2 us for 4 bytes over 128 GPUs); "
       "mlbook-h200-p5en-4node-allreduce-default-ring-4GiB (364.87 GB/s busbw of 3,200 Gb/s "
       "per node)"}};
  fit.report["stream"] = {{"fraction", c.stream_fraction},
                          {"rows", "none: an assumption (no streaming-kernel row)"}};
  return fit;
}

}  // namespace seedance::plan
