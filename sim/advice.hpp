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
  // GPU time per step that FSDP's MixedPrecision would save (the compute model on 16-bit parameters against this
  // step's); 0 = not computed (the option does not apply).
  Seconds mixed_precision_gpu_saving;
};
// Whether FSDP's MixedPrecision applies to the job and it does not use it: FSDP or ZeRO-3 over more than one rank,
// under 16-bit autocast, on fp32 parameters.
bool fsdp_mixed_precision_applies(const JobConfig& j);

// One rank's step as the simulation runs it: the host's issue time and the GPU's kernel time per optimizer step,
// after tensor and pipeline parallelism divided the work (a tp rank issues every kernel of its shard, so its GPU
// time halves with tp = 2 while its issue time does not). Launch-bound when the issue time is the longer.
struct RankPace {
  Seconds cpu_issue, gpu_busy;
  [[nodiscard]] bool launch_bound() const { return cpu_issue > gpu_busy; }
};
RankPace rank_pace(const StepSimInput& in);

// Which part of the exposed (not overlapped) step time each source accounts for, per step: the pipeline bubble as
// simulated, the pipeline sends and the tensor-parallel all-reduces as the simulation adds them (blocking, per
// micro-batch), and the rest (gradient collectives, FSDP gathers, the ZeRO parameter all-gather).
struct ExposedParts {
  Seconds bubble, pp_p2p, tensor_parallel, data_parallel;
};
ExposedParts exposed_parts(const StepSimInput& in, const StepSimResult& r);

// Suggestions, most important first. Preconditions: every pointer set.
std::vector<std::string> advise(const AdviceInputs& a);

// Workers per GPU that would let the loader keep up with compute: ceil(batch CPU / step compute
// per micro-batch), at least 1.
int workers_needed(const StepSimInput& in, const StepSimResult& r);

}  // namespace gp::sim
