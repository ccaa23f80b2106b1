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

TEST_CASE("sim::job: a job that never finishes ranks behind every one that does, across rates and lengths") {
  // Without checkpoints the whole job is one segment: the expected time (1/lambda + R)(e^(lambda tau) - 1) grows
  // without bound in tau and lambda. Past the divergence guard (lambda tau > 50) it was a million times the work,
  // so a longer job (or more failures) came out shorter than a shorter one just under the guard.
  StepParts st{Seconds(1.0), Seconds(1.0), Seconds(0), Seconds(0)};
  JobEvents ev;
  ev.restart = Seconds(60);
  ev.failures_per_hour = 1.0;  // lambda tau = steps / 3600
  double prev = 0;
  for (std::int64_t steps : {36000, 144000, 179000, 181000, 360000, 3600000}) {
    const JobTimes t = job_times(steps, st, ev);
    const double total = t.breakdown.total().value();
    INFO(steps);
    CHECK(total >= prev);
    CHECK(t.diverges == (steps / 3600.0 > 50));
    if (t.diverges) CHECK(std::isinf(total));
    prev = total;
  }
  prev = 0;
  for (double rate : {0.5, 1.0, 1.3, 1.5, 10.0}) {  // 36 h of work: lambda tau = 18 ... 360
    ev.failures_per_hour = rate;
    const double total = job_times(129600, st, ev).breakdown.total().value();
    INFO(rate);
    CHECK(total >= prev);
    prev = total;
  }
}
