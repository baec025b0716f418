// Linux pressure stall information for I/O (/proc/pressure/io, kernel 4.20+), read through Env:
//
//   some avg10=1.23 avg60=0.50 avg300=0.10 total=123456
//   full avg10=0.80 avg60=0.30 avg300=0.05 total=65432
//
// `some`: the share of wall time at least one task waited on I/O; `full`: all non-idle tasks
// did. avgN are percentages over N seconds; total is the cumulative stall in microseconds, so the
// stall share over any interval is Δtotal / Δwall. The parser is strict: both lines, every field,
// finite non-negative numbers; an error names the file, the line and the field.
//
// Thread safety: pure functions (ReadIoPressure reads through the Env).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "seedance/base/env.h"
#include "seedance/base/status.h"

namespace seedance::control {

struct PressureLine {
  double avg10 = 0, avg60 = 0, avg300 = 0;  // percent
  int64_t total_us = 0;
};

struct IoPressure {
  PressureLine some, full;
};

base::StatusOr<IoPressure> ParseIoPressure(std::string_view text, const std::string& file);

inline constexpr const char* kIoPressurePath = "/proc/pressure/io";

// Reads kIoPressurePath; NotFound where the kernel has no PSI (older kernels, some containers).
base::StatusOr<IoPressure> ReadIoPressure(base::Env& env);

// The `some` stall share between two readings taken `wall_s` apart, in [0, 1].
double StallShare(const IoPressure& before, const IoPressure& after, double wall_s);

}  // namespace seedance::control
