#include <catch2/catch.hpp>

#include <cmath>

#include "sim/job_sim.hpp"

using gp::Seconds;
using namespace gp::sim;

TEST_CASE("sim::job: without failures the parts are steps x step parts plus start-up and checkpoints") {
  StepParts st{Seconds(1.0), Seconds(0.7), Seconds(0.2), Seconds(0.1)};
  JobEvents ev;
  ev.startup = Seconds(100);
  ev.checkpoint_stall = Seconds(30);
  ev.checkpoint_every_steps = 1000;
  const JobTimes t = job_times(10000, st, ev);
  CHECK(t.checkpoints == 10);
  CHECK(t.breakdown.compute.value() == Approx(7000));
  CHECK(t.breakdown.dataloader_stall.value() == Approx(2000));
  CHECK(t.breakdown.comm_exposed.value() == Approx(1000));
  CHECK(t.breakdown.checkpoint.value() == Approx(300));
  CHECK(t.breakdown.total().value() == Approx(10000 + 100 + 300));
}

TEST_CASE("sim::job: failures follow (1/lambda + R)(e^(lambda tau) - 1) per checkpoint segment") {
  StepParts st{Seconds(1.0), Seconds(1.0), Seconds(0), Seconds(0)};
  JobEvents ev;
  ev.failures_per_hour = 1.0;         // lambda = 1/3600 s
  ev.restart = Seconds(600);
  ev.checkpoint_stall = Seconds(0);
  ev.checkpoint_every_steps = 3600;   // one-hour segments
  const JobTimes t = job_times(36000, st, ev);  // 10 hours of work, 10 checkpoints -> 11 segments
  const double tau = 36000.0 / 11;
  const double expect = 11 * (3600 + 600) * std::expm1(tau / 3600) - 36000;
  CHECK(t.breakdown.failures.value() == Approx(expect).epsilon(1e-9));
  // Failures arrive at lambda over the whole wall time (work plus what failures add): 1 per hour.
  CHECK(t.expected_failures == Approx((36000 + expect) / 3600).epsilon(1e-9));
}

TEST_CASE("sim::job: more frequent failures never shorten the job (monotone)") {
  StepParts st{Seconds(1.0), Seconds(1.0), Seconds(0), Seconds(0)};
  JobEvents ev;
  ev.restart = Seconds(300);
  double prev = 0;
  for (double rate : {0.0, 0.01, 0.1, 0.5}) {
    ev.failures_per_hour = rate;
    const double total = job_times(10000, st, ev).breakdown.total().value();
    CHECK(total >= prev);
    prev = total;
  }
}
