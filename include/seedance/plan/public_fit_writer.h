// The public fit as C++ source (feature CLI-1): what `build/bench/published_runs --fit --write
// src/plan/public_fit.cc` writes, so the library carries the fit without reading files at run
// time. Every double is printed with 17 significant digits (it reads back exactly).
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "seedance/plan/coefficients.h"

namespace seedance::plan {

std::string PublicFitSource(const PublicFit& fit);

}  // namespace seedance::plan
