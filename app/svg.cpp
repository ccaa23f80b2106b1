#include "app/svg.hpp"

#include <algorithm>
#include <cmath>

namespace gp::app {

Axis::Axis(double min_v, double max_v) {
  if (!(max_v > min_v)) {  // one value: a band around it
    min_v = min_v > 0 ? min_v * 0.8 : 0;
    max_v = max_v > 0 ? max_v * 1.25 : 1;
  }
  log = min_v > 0 && max_v / min_v >= 10;
  if (log) {
    lo = std::pow(10, std::floor(std::log10(min_v)));
    hi = std::pow(10, std::ceil(std::log10(max_v)));
    for (double d = lo; d <= hi * 1.0001; d *= 10) {
      for (double m : {1.0, 2.0, 5.0}) {
        if (d * m <= hi * 1.0001 && (m == 1.0 || hi / lo <= 1000)) ticks.push_back(d * m);
      }
    }
  } else {
    const double raw = (max_v - min_v) / 5;
    const double mag = std::pow(10, std::floor(std::log10(raw)));
    const double step = raw / mag < 1.5 ? mag : raw / mag < 3.5 ? 2 * mag : raw / mag < 7.5 ? 5 * mag : 10 * mag;
    lo = std::floor(min_v / step) * step;
    hi = std::ceil(max_v / step) * step;
    if (lo < 0 && min_v >= 0) lo = 0;
    for (double t = lo; t <= hi + step * 1e-6; t += step) ticks.push_back(t);
  }
}

double Axis::frac(double v) const {
  if (log) return (std::log10(std::max(v, lo * 1e-3)) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
  return (v - lo) / (hi - lo);
}

}  // namespace gp::app
