// Order statistics used by the symmetry shortcut: the slowest of N ranks drawn in O(1).
//
// If X_1..X_M are i.i.d. with CDF F, their maximum has CDF F^M, so F^-1(U^(1/M)) with U uniform on
// (0,1] is one draw of the maximum. For a log-normal per-step factor this is exp(mu + sigma * z) with
// z = Phi^-1(U^(1/M)).
#pragma once

#include <cstdint>

#include "sim/random.hpp"

namespace gp::sim {

// Inverse of the standard normal CDF, p in (0, 1). Acklam's rational approximation refined by one
// Halley step: |error| < 1e-12 over the range. Precondition: 0 < p < 1.
double normal_quantile(double p);

// One draw of the maximum of `m` (>= 1) i.i.d. log-normal factors with mean 1 and coefficient of
// variation `cv` (>= 0). cv = 0 gives 1.
double max_lognormal_factor(Rng& rng, double cv, std::int64_t m);

// One log-normal factor with mean 1 and coefficient of variation cv (cv = 0 gives 1).
double lognormal_factor(Rng& rng, double cv);

}  // namespace gp::sim
