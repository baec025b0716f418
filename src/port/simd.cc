// The process-wide SIMD kernel choice (see seedance/port/simd.h).
#include "seedance/port/simd.h"

#include <cpuid.h>

#include <atomic>
#include <string>

#include "seedance/base/enum_names.h"

namespace seedance::port {
namespace {

inline constexpr base::EnumTable<SimdKernel, 3> kSimdKernelNames = {{
    {SimdKernel::kAuto, "auto"},
    {SimdKernel::kScalar, "scalar"},
    {SimdKernel::kAvx2, "avx2"},
}};

std::atomic<SimdKernel> g_process_kernel{SimdKernel::kAuto};

}  // namespace

std::string_view SimdKernelName(SimdKernel kernel) {
  return base::EnumName(kSimdKernelNames, kernel);
}

base::StatusOr<SimdKernel> ParseSimdKernel(std::string_view text, std::string_view where) {
  return base::ParseEnum(kSimdKernelNames, text, where);
}

bool CpuHasAvx2F16c() {
  // F16C and FMA from CPUID leaf 1 (ECX bits 29 and 12): clang 14 does not know "f16c" in
  // __builtin_cpu_supports. AVX2 through the builtin, which also checks the OS saves YMM. The
  // kernels are compiled for avx2 and fma together (kv's dot product and scores), so a CPU or VM
  // that hides FMA gets the scalar code.
  static const bool has = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    const bool leaf1 = __get_cpuid(1, &eax, &ebx, &ecx, &edx);
    const bool f16c_fma = leaf1 && (ecx & bit_F16C) != 0 && (ecx & bit_FMA) != 0;
    return f16c_fma && __builtin_cpu_supports("avx2");
  }();
  return has;
}

base::Status CheckSimdKernel(SimdKernel kernel) {
  if (kernel == SimdKernel::kAvx2 && !CpuHasAvx2F16c()) {
    return base::FailedPreconditionError(
        "the avx2 kernels need AVX2 and F16C, which this CPU lacks");
  }
  return base::OkStatus();
}

SimdKernel ProcessSimdKernel() { return g_process_kernel.load(std::memory_order_relaxed); }

base::Status SetSimdKernel(SimdKernel kernel) {
  SEEDANCE_RETURN_IF_ERROR(CheckSimdKernel(kernel));
  g_process_kernel.store(kernel, std::memory_order_relaxed);
  return base::OkStatus();
}

base::StatusOr<SimdKernel> SimdKernelFromEnv(base::Env& env) {
  const auto value = env.GetVar("SEEDANCE_SIMD");
  if (!value || value->empty()) return SimdKernel::kAuto;
  SEEDANCE_ASSIGN_OR_RETURN(const SimdKernel kernel, ParseSimdKernel(*value, "SEEDANCE_SIMD"));
  const base::Status ok = CheckSimdKernel(kernel);
  if (!ok.ok()) return base::FailedPreconditionError(std::string(ok.message()), "SEEDANCE_SIMD");
  return kernel;
}

bool UseAvx2(SimdKernel requested) {
  const SimdKernel k = requested == SimdKernel::kAuto ? ProcessSimdKernel() : requested;
  switch (k) {
    case SimdKernel::kScalar:
      return false;
    case SimdKernel::kAvx2:
      return true;
    case SimdKernel::kAuto:
      break;
  }
  return CpuHasAvx2F16c();
}

std::string_view ActiveSimdName() { return UseAvx2() ? "avx2+f16c" : "scalar"; }

base::Report SimdToReport() {
  base::Report r = base::Report::object();
  r["choice"] = SimdKernelName(ProcessSimdKernel());
  r["active"] = ActiveSimdName();
  r["cpu_avx2_f16c"] = CpuHasAvx2F16c();
  return r;
}

}  // namespace seedance::port
