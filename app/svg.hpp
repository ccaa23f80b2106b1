// Small pieces shared by gpuplan's SVG plots (run --plot, comm --plot; calibrate check --plot draws its own).
#pragma once

#include <string>
#include <vector>

namespace gp::app {

// One axis of a plot: logarithmic when the data span a factor of 10 or more, linear otherwise, with "nice" ticks
// (1, 2, 5 per decade on a log axis; steps of 1, 2 or 5 times a power of ten on a linear one).
struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  std::vector<double> ticks;

  Axis(double min_v, double max_v);
  // Where v lies along the axis: 0 at lo, 1 at hi.
  [[nodiscard]] double frac(double v) const;
};

}  // namespace gp::app
