// Concrete suggestions for one simulated configuration ("num_workers=0 starves the GPU: set
// num_workers>=6", "enable CUDA graphs: launch-bound", ...). Pure function of the configuration and
// what the models and the simulation found; thresholds are about shares of time, not hardware facts.
#pragma once

#include <string>
#include <vector>

#include "models/compute_model.hpp"
#include "models/job.hpp"
#include "models/memory_model.hpp"
#include "sim/job_sim.hpp"
#include "sim/step_sim.hpp"

namespace gp::sim {

struct AdviceInputs {
  const JobConfig* job = nullptr;
  const StepPrediction* compute = nullptr;
  const MemoryPrediction* memory = nullptr;
  const StepSimInput* input = nullptr;
  const StepSimResult* step = nullptr;
  const JobTimes* times = nullptr;
  // The step's 80% range over hosts and the model's measured error (JobResult); 0 = not known.
  Seconds step_p10, step_p90;
};

// Suggestions, most important first. Preconditions: every pointer set.
std::vector<std::string> advise(const AdviceInputs& a);

// Workers per GPU that would let the loader keep up with compute: ceil(batch CPU / step compute
// per micro-batch), at least 1.
int workers_needed(const StepSimInput& in, const StepSimResult& r);

}  // namespace gp::sim
