#include "seedance/plan/verdict.h"

#include <cmath>
#include <string>
#include <vector>

namespace seedance::plan {
namespace {

using base::Report;

std::string Fixed(double v, int digits) { return base::FixedText(v, digits); }
std::string Sig(double v) { return base::SignificantText(v); }

std::string Usd(double v) {
  if (std::fabs(v) >= 100) return "$" + Fixed(v, 0);
  if (std::fabs(v) >= 1) return "$" + Fixed(v, 2);
  return "$" + Sig(v);
}

double Num(const Report& r, const char* key) {
  return r.contains(key) && r[key].is_number() ? r[key].get<double>() : std::nan("");
}

std::string Str(const Report& r, const char* key) {
  return r.contains(key) && r[key].is_string() ? r[key].get<std::string>() : "";
}

std::string MemoryOf(const Report& evaluation, const Report& report) {
  return base::HumanBytes(Num(evaluation, "memory_bytes_per_gpu")) + " of " +
         base::HumanBytes(Num(report, "gpu_memory_bytes")) + " per GPU";
}

// The three reasons that matter most: those where another value was possible come first (a
// dimension with no other valid value explains nothing), in the planner's order.
void AddReasons(const Report& report, Report& out) {
  if (!report.contains("reasons")) return;
  std::vector<std::string> informative, forced;
  for (const Report& reason : report["reasons"]) {
    const std::string& text = reason.get_ref<const std::string&>();
    (text.find("no other value makes a valid layout") == std::string::npos ? informative : forced)
        .push_back(text);
  }
  informative.insert(informative.end(), forced.begin(), forced.end());
  for (size_t i = 0; i < informative.size() && i < 3; ++i) out.push_back("Why: " + informative[i]);
}

std::string SmallestChangeText(const Report& does_not_fit) {
  if (!does_not_fit.contains("smallest_change")) return "";
  std::string out;
  for (auto it = does_not_fit["smallest_change"].begin();
       it != does_not_fit["smallest_change"].end(); ++it) {
    if (it.key() == "none_found") return " " + it.value().get<std::string>() + ".";
    out += (out.empty() ? "" : ", ") + it.key() + ": " + it.value().dump();
  }
  return out.empty() ? "" : " Smallest change that fits: " + out + ".";
}

Report TrainingVerdict(const Report& report) {
  Report out = Report::array();
  const Report& before = report["before"];
  const bool searched = report.contains("search");
  if (!searched) {  // --evaluate-only: the stated layout alone
    const bool fits = report["fits"].get<bool>();
    out.push_back(std::string(fits ? "Fits" : "Does not fit") + ": the stated layout needs " +
                  MemoryOf(before, report) + " (" + Str(before, "memory_fit") + ").");
    out.push_back("Step " + Sig(Num(before, "step_time_s")) + " s, " +
                  Fixed(Num(before, "tokens_per_s_per_gpu"), 0) + " tokens/s per GPU, MFU " +
                  Fixed(Num(before, "mfu"), 2) + ": " + LayoutLine(before["parallelism"]) + ".");
    return out;
  }
  if (!report["fits"].get<bool>()) {
    out.push_back("Does not fit: " + Str(report["does_not_fit"], "reason") + "." +
                  SmallestChangeText(report["does_not_fit"]));
    return out;
  }
  const Report& after = report["after"];
  out.push_back("Fits: the plan needs " + MemoryOf(after, report) + " (" +
                Str(after, "memory_fit") + ").");
  const Report& saving = report["saving"];
  if (saving.contains("step_time_pct")) {
    const double pct = Num(saving, "step_time_pct");
    const Report& range = saving["step_time_pct_interval"];
    std::string line = "Step " + Sig(Num(before, "step_time_s")) + " s → " +
                       Sig(Num(after, "step_time_s")) + " s: " + Fixed(std::fabs(pct), 0) +
                       (pct >= 0 ? "% faster" : "% slower") + " (90% interval " +
                       Fixed(range[0].get<double>(), 0) + " to " +
                       Fixed(range[1].get<double>(), 0) + "%)";
    const double usd = Num(saving, "cost_per_step_usd");
    if (std::isfinite(usd) && usd != 0) {
      line += ", " + Usd(std::fabs(usd)) + (usd > 0 ? " less" : " more") + " per step";
    }
    out.push_back(line + "; MFU " + Fixed(Num(before, "mfu"), 2) + " → " +
                  Fixed(Num(after, "mfu"), 2) + ".");
  } else {
    out.push_back("The stated layout does not fit (" + MemoryOf(before, report) +
                  "); the plan's step takes " + Sig(Num(after, "step_time_s")) + " s.");
  }
  const std::string recommendation = Str(report, "recommendation");
  out.push_back("Do: " + (recommendation.empty() ? std::string("run") : recommendation) + ": " +
                LayoutLine(after["parallelism"]) + ".");
  AddReasons(report, out);
  return out;
}

Report ServingVerdict(const Report& report) {
  Report out = Report::array();
  if (!report["fits"].get<bool>()) {
    std::string line = "Does not fit: " + Str(report["does_not_fit"], "reason") + ".";
    const Report& d = report["does_not_fit"];
    if (d.contains("max_concurrent_requests")) {
      line += " At most " + d["max_concurrent_requests"].dump() + " concurrent requests, or a " +
              "context of " + d["max_context_length"].dump() + " tokens, fit.";
    }
    out.push_back(line);
    return out;
  }
  const Report& a = report["after"];
  out.push_back("Fits: TP " + a["tensor"].dump() + " with a " + Str(a, "kv_precision") +
                " KV cache needs " + MemoryOf(a, report) + ", " + a["replicas"].dump() +
                " replica(s).");
  out.push_back("Decode " + Fixed(Num(a, "tokens_per_s"), 0) + " tokens/s (" +
                Fixed(Num(a, "tokens_per_s_per_gpu"), 0) + " per GPU), " +
                Usd(Num(a, "cost_per_million_tokens_usd")) + " per million output tokens; " +
                "first token of a prompt in " + Sig(Num(a, "prefill_s")) + " s.");
  out.push_back("KV cache: " + Str(a, "kv_precision") + " on " + Str(a, "engine") + ", KL " +
                Sig(Num(a, "kv_kl_mean")) + " and top-1 agreement " +
                Fixed(Num(a, "kv_top1_agreement"), 3) + " against its unquantized cache.");
  return out;
}

}  // namespace

std::string LayoutLine(const Report& p) {
  auto i = [&](const char* key) -> int64_t {
    return p.contains(key) && p[key].is_number() ? p[key].get<int64_t>() : 0;
  };
  std::string out = "tp " + std::to_string(i("tensor")) + " · pp " + std::to_string(i("pipeline")) +
                    " · dp " + std::to_string(i("data_parallel"));
  if (i("virtual_stages") > 1) out += " · " + std::to_string(i("virtual_stages")) + " virtual";
  if (i("context_parallel") > 1) out += " · cp " + std::to_string(i("context_parallel"));
  if (p.value("sequence_parallel", false)) out += " · sequence-parallel";
  out += " · ZeRO-" + std::to_string(i("zero_stage"));
  out += " · micro-batch " + std::to_string(i("micro_batch"));
  if (i("gradient_accumulation_steps") > 1) {
    out += " × " + std::to_string(i("gradient_accumulation_steps")) + " steps";
  }
  const std::string recompute = p.value("recompute", std::string("none"));
  out += " · recompute " + recompute;
  if (p.value("offload_optimizer", false)) out += " · optimizer offloaded";
  const std::string compression = p.value("gradient_compression", std::string("none"));
  if (compression != "none") out += " · " + compression + " gradients";
  return out;
}

namespace {

// "tp1 pp1 dp16 Z3 mb2 rc-full": a layout in a table cell.
std::string LayoutCell(const Report& p) {
  auto i = [&](const char* key) {
    return p.contains(key) && p[key].is_number() ? std::to_string(p[key].get<int64_t>()) : "?";
  };
  std::string out = "tp" + i("tensor") + " pp" + i("pipeline");
  if (p.value("virtual_stages", 1) > 1) out += "x" + i("virtual_stages");
  if (p.value("context_parallel", 1) > 1) out += " cp" + i("context_parallel");
  out += " dp" + i("data_parallel") + " Z" + i("zero_stage") + " mb" + i("micro_batch");
  if (p.value("sequence_parallel", false)) out += " sp";
  out += " rc-" + p.value("recompute", std::string("none"));
  if (p.value("offload_optimizer", false)) out += " offload";
  const std::string compression = p.value("gradient_compression", std::string("none"));
  if (compression != "none") out += " " + compression;
  return out;
}

Report SummaryRows(const Report& list) {
  Report rows = Report::array();
  for (const Report& e : list) {
    Report row = Report::object();
    row["layout"] = LayoutCell(e["parallelism"]);
    Report interval = e.value("interval", Report::object());
    constexpr double kGib = 1024.0 * 1024 * 1024;
    for (const char* key : {"step_time_s", "memory_bytes_per_gpu", "tokens_per_s_per_gpu", "mfu",
                            "memory_fit", "power_w"}) {
      if (!e.contains(key)) continue;
      if (std::string(key) == "memory_bytes_per_gpu") {  // GiB: a short cell
        row["memory_gib"] = std::round(e[key].get<double>() / kGib * 10) / 10;
        if (interval.contains(key) && interval[key].is_array()) {
          interval["memory_gib"] = {interval[key][0].get<double>() / kGib,
                                    interval[key][1].get<double>() / kGib};
          interval.erase(key);
        }
        continue;
      }
      row[key] = e[key];
    }
    if (!interval.empty()) row["interval"] = interval;
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

Report OptimizeTableView(const Report& report) {
  Report view = report;
  if (view.contains("alternatives") && view["alternatives"].is_array()) {
    view["alternatives"] = SummaryRows(view["alternatives"]);
  }
  if (view.contains("pareto_front") && view["pareto_front"].contains("layouts")) {
    view["pareto_front"]["layouts"] = SummaryRows(view["pareto_front"]["layouts"]);
  }
  return view;
}

Report OptimizeVerdict(const Report& report) {
  if (!report.contains("fits")) return Report::array();  // --dry-run: nothing planned
  const bool serving = report.contains("job") && report["job"].value("kind", "") == "serving";
  return serving ? ServingVerdict(report) : TrainingVerdict(report);
}

Report WithVerdictFirst(const Report& report) {
  const Report verdict = OptimizeVerdict(report);
  if (verdict.empty()) return report;
  Report out = Report::object();
  out["verdict"] = verdict;
  for (auto it = report.begin(); it != report.end(); ++it) out[it.key()] = it.value();
  return out;
}

}  // namespace seedance::plan
