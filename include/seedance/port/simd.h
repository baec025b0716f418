// Which vector kernels run: one choice for the whole process, read by every module that has
// SIMD kernels — precision (format conversions), comm (gradient quantizers and their payloads),
// kv (attention scores from packed keys) and mem (the planner's exact search).
//
//   auto    the AVX2/F16C kernels when the CPU has them, else the scalar code (the default)
//   scalar  the scalar reference code everywhere
//   avx2    the AVX2/F16C kernels; choosing it on a CPU without them is an error
//
// Each kernel computes what its scalar reference computes — bit for bit where the reference
// rounds once (conversions, quantizers, sign bits), within rounding where it sums in another
// order (absolute sums, dot products); a NaN code decodes to a NaN either way, though F16C keeps
// its payload bits — and each module's tests compare the two on the same input, so the choice
// changes speed only. The process starts at `auto`;
// the CLI and the Python module set it from the environment variable SEEDANCE_SIMD
// (SimdKernelFromEnv) before any work. A call may also ask for a kernel itself (for example
// precision::ConvertFromFloat(..., SimdKernel::kScalar) in a benchmark): `auto` there defers to
// the process choice.
//
// Thread safety: the process choice is an atomic; set it before starting threads that convert,
// because a change is not ordered with calls already running.
#pragma once

#include <string_view>

#include "seedance/base/env.h"
#include "seedance/base/report.h"
#include "seedance/base/status.h"

namespace seedance::port {

enum class SimdKernel { kAuto, kScalar, kAvx2 };

std::string_view SimdKernelName(SimdKernel kernel);  // "auto", "scalar", "avx2"
base::StatusOr<SimdKernel> ParseSimdKernel(std::string_view text, std::string_view where);

// The CPU has AVX2, F16C and FMA, and the OS saves the YMM registers.
bool CpuHasAvx2F16c();

// kAvx2 on a CPU without AVX2/F16C: FailedPrecondition; otherwise OK.
base::Status CheckSimdKernel(SimdKernel kernel);

// The process choice (auto until set). SetSimdKernel refuses kAvx2 where the CPU lacks it.
SimdKernel ProcessSimdKernel();
base::Status SetSimdKernel(SimdKernel kernel);

// SEEDANCE_SIMD from `env` (unset or empty: auto), checked; the error names the variable.
base::StatusOr<SimdKernel> SimdKernelFromEnv(base::Env& env);

// Whether a call that asks for `requested` runs the AVX2 kernels: kScalar never, kAvx2 always
// (check it first with CheckSimdKernel), kAuto as the process choice says, the CPU deciding
// when that is auto too.
bool UseAvx2(SimdKernel requested = SimdKernel::kAuto);

// What UseAvx2() picks now: "avx2+f16c" or "scalar".
std::string_view ActiveSimdName();

// {"choice": "auto", "active": "avx2+f16c", "cpu_avx2_f16c": true}: the "simd" object of
// `seedancectl version` and of seedance.simd() in Python.
base::Report SimdToReport();

}  // namespace seedance::port
