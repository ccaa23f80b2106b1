// What gpuplan predicts for one configuration (documented in docs/output.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/memory_model.hpp"
#include "models/units.hpp"

namespace gp {

// Where the job's wall time goes, summed over the whole job; the parts add up to time_to_train.
struct TimeBreakdown {
  Seconds compute;            // GPU compute of the steps (including compute-bound communication waits hidden)
  Seconds dataloader_stall;   // GPUs waiting for input batches
  Seconds comm_exposed;       // communication not hidden behind compute
  Seconds checkpoint;         // GPUs stalled by checkpoint writes
  Seconds startup;            // container pull/start, CUDA init, worker start-up
  Seconds failures;           // lost work and restarts after failures
  [[nodiscard]] Seconds total() const {
    return compute + dataloader_stall + comm_exposed + checkpoint + startup + failures;
  }
};

// One steady-state step, per rank on average (the step ends when the slowest rank is done).
struct StepBreakdown {
  Seconds compute, dataloader_stall, comm_exposed;  // add up to the step time
  Seconds comm_hidden;   // collective time overlapped with the rank's own compute (not in the sum)
  Seconds straggler;     // slowest rank's forward+backward minus the mean rank's (the others wait it out)
};

struct JobResult {
  std::int64_t steps = 0;              // optimizer steps to train
  Seconds step_time;                   // mean steady-state optimizer step (slowest rank)
  double throughput_samples_per_s = 0; // global samples per second in steady state
  Seconds time_to_train;               // wall time including start-up, checkpoints, failures
  double gpu_busy_frac = 0;            // fraction of step time the GPU executes kernels
  double mfu = 0;                      // model FLOPs / (step time x peak dense FLOP/s of the precision)
  Bytes memory_per_gpu;                // predicted peak allocated memory per GPU
  Bytes memory_capacity;               // usable memory per GPU (HBM minus CUDA context)
  Bytes memory_needed;                 // peak + the allocator's headroom (MemoryPrediction::needed); fits if <= capacity
  MemoryParts memory_parts;            // memory_per_gpu part by part, at its moment:
  std::string memory_peak_at;          // "start of backward" or "end of backward"
  bool fits = true;
  std::string bottleneck;              // gpu-compute, gpu-memory, launch-overhead, dataloader, communication, ...
  TimeBreakdown breakdown;             // job totals
  StepBreakdown step_breakdown;        // one steady-state step
  Dollars cost;                        // whole job
  Dollars cost_per_1k_steps;           // steady-state cost of 1,000 steps
  Dollars price_per_hour;              // whole cluster
  std::vector<std::string> advice;     // concrete suggestions for this configuration
  // The 80% range (10th to 90th percentile) of the step over hosts and the model's measured error (StepSpread), and
  // the job's time and cost with every step at that percentile. Equal to the point figures without a spread.
  Seconds step_time_p10, step_time_p90;
  Seconds time_to_train_p10, time_to_train_p90;
  Dollars cost_p10, cost_p90;
};

}  // namespace gp
