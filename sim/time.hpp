// Simulated time: integer nanoseconds since the start of a run.
//
// SimTime is a signed 64-bit count of nanoseconds, so it spans +-9.22e18 ns = +-292 years with exact
// arithmetic: adding delays never loses precision the way a double clock does after long runs, and
// equal times compare equal, which the FIFO tie rule of the event queue relies on.
// Conversions from gp::Seconds round to the nearest nanosecond.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "models/units.hpp"

namespace gp::sim {

// Nanoseconds since the start of the simulation (or a duration in nanoseconds).
using SimTime = std::int64_t;

inline constexpr SimTime kNanosecond = 1;
inline constexpr SimTime kMicrosecond = 1'000;
inline constexpr SimTime kMillisecond = 1'000'000;
inline constexpr SimTime kSecond = 1'000'000'000;
// Largest representable time; run_until(kTimeMax) is run().
inline constexpr SimTime kTimeMax = std::numeric_limits<SimTime>::max();

// Seconds -> nanoseconds, rounded to nearest. Precondition: |s| < 9.2e9 s (292 years).
[[nodiscard]] inline SimTime to_sim_time(Seconds s) {
  return static_cast<SimTime>(std::llround(s.value() * 1e9));
}

// Nanoseconds -> Seconds (exact up to 2^53 ns = 104 days, then within 1 part in 2^53).
[[nodiscard]] constexpr Seconds to_seconds(SimTime t) { return Seconds(static_cast<double>(t) * 1e-9); }

}  // namespace gp::sim
