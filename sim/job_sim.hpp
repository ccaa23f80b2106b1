// The job around the steady state: start-up, checkpoints and failures turn the simulated step into the
// job's wall time, split into the TimeBreakdown parts (models/job_result.hpp) that add up to it.
//
// Failures: with failures at rate lambda (Poisson) and work cut into segments of length tau between
// checkpoints (a restart costs R and resumes from the last checkpoint), the expected wall time of one
// segment is (1/lambda + R)(e^(lambda tau) - 1) (the classical result for restart from checkpoint; see
// docs/simulation.md). The excess over tau, summed over segments, is the `failures` part.
#pragma once

#include <cstdint>
#include <optional>

#include "models/job_result.hpp"
#include "models/units.hpp"

namespace gp::sim {

struct JobEvents {
  Seconds startup;                     // image pull and unpack, CUDA context, worker start-up
  Seconds image_startup;               // the image's pull and unpack, part of startup
  Seconds per_epoch_restart;           // non-persistent workers: start-up again at each later epoch
  std::int64_t epochs = 1;             // epochs the run spans (>= 1)
  Seconds checkpoint_stall;            // GPUs stalled per checkpoint (all of it unless async)
  std::optional<std::int64_t> checkpoint_every_steps;
  std::optional<Seconds> checkpoint_every;  // wall-clock interval
  double failures_per_hour = 0;        // whole cluster (GPU, node and spot interruptions)
  Seconds restart;                     // detection, restart, reload
};

struct StepParts {
  Seconds step_time, compute, dataloader_stall, comm_exposed;  // per steady-state step
};

struct JobTimes {
  TimeBreakdown breakdown;             // job totals; breakdown.total() is the time to train
  std::int64_t checkpoints = 0;
  double expected_failures = 0;
  bool diverges = false;               // failures arrive faster than the work between checkpoints completes
  Seconds image_startup;               // of breakdown.startup, the image's pull and unpack (JobEvents)
};

// Totals for `steps` optimizer steps. Preconditions: steps >= 0, times >= 0.
JobTimes job_times(std::int64_t steps, const StepParts& step, const JobEvents& ev);

}  // namespace gp::sim
