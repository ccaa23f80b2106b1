#include <catch2/catch.hpp>

#include <algorithm>

#include "sim/order_stats.hpp"

using namespace gp::sim;

TEST_CASE("sim::order_stats: normal quantiles match tables") {
  CHECK(normal_quantile(0.5) == Approx(0.0).margin(1e-12));
  CHECK(normal_quantile(0.975) == Approx(1.959963984540054).epsilon(1e-10));
  CHECK(normal_quantile(0.001) == Approx(-3.090232306167814).epsilon(1e-10));
  CHECK(normal_quantile(1 - 1e-9) == Approx(5.997807015007686).epsilon(1e-8));
}

TEST_CASE("sim::order_stats: max of m log-normal factors drawn at once matches brute force") {
  Rng a(3), b(4);
  const double cv = 0.1;
  const int m = 32, draws = 20000;
  double direct = 0, shortcut = 0;
  for (int i = 0; i < draws; ++i) {
    double mx = 0;
    for (int j = 0; j < m; ++j) mx = std::max(mx, lognormal_factor(a, cv));
    direct += mx;
    shortcut += max_lognormal_factor(b, cv, m);
  }
  CHECK(shortcut / draws == Approx(direct / draws).epsilon(0.003));
  CHECK(max_lognormal_factor(a, 0.0, 1000) == 1.0);
}
