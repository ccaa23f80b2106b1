#include "sim/job_sim.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gp::sim {

namespace {
// lambda * tau beyond which the expected time is reported as divergent (e^50 ~ 5e21).
constexpr double kDivergent = 50.0;
}  // namespace

JobTimes job_times(std::int64_t steps, const StepParts& step, const JobEvents& ev) {
  JobTimes out;
  TimeBreakdown& b = out.breakdown;
  const auto n = static_cast<double>(steps);
  b.compute = step.compute * n;
  b.dataloader_stall = step.dataloader_stall * n + ev.per_epoch_restart * static_cast<double>(std::max<std::int64_t>(0, ev.epochs - 1));
  b.comm_exposed = step.comm_exposed * n;
  b.startup = ev.startup;
  out.image_startup = ev.image_startup;
  const Seconds work = b.compute + b.dataloader_stall + b.comm_exposed;

  if (ev.checkpoint_every_steps && *ev.checkpoint_every_steps > 0) {
    out.checkpoints = steps / *ev.checkpoint_every_steps;
  } else if (ev.checkpoint_every && ev.checkpoint_every->value() > 0) {
    out.checkpoints = static_cast<std::int64_t>(std::floor(work.value() / ev.checkpoint_every->value()));
  }
  b.checkpoint = ev.checkpoint_stall * static_cast<double>(out.checkpoints);

  const double lambda = ev.failures_per_hour / 3600.0;  // per second
  if (lambda > 0) {
    const double useful = (work + b.checkpoint).value();
    const double segments = static_cast<double>(out.checkpoints + 1);
    const double tau = useful / segments;
    if (lambda * tau > kDivergent) {
      // Never finishes: failures come faster than the work between checkpoints. Infinite, so that it ranks
      // behind every job that finishes (a million times the work, as before, ranked it ahead of slow finite
      // ones, and restart time and more steps stopped mattering).
      out.diverges = true;
      b.failures = Seconds(std::numeric_limits<double>::infinity());
    } else {
      const double per_segment = (1.0 / lambda + ev.restart.value()) * std::expm1(lambda * tau);
      b.failures = Seconds(std::max(0.0, segments * per_segment - useful));
    }
    out.expected_failures = lambda * (useful + b.failures.value());
  }
  return out;
}

}  // namespace gp::sim
