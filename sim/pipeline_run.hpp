// One measured single-GPU training run whose pace the CPU data pipeline may set (the reference runs'
// `data: cpu-jpeg-pipeline` records), simulated through the step simulation: `gpuplan calibrate check`
// predicts those records with it (calibrate/loader_check).
#pragma once

#include <cstdint>

#include "models/compute_model.hpp"
#include "models/units.hpp"

namespace gp::sim {

struct PipelineRun {
  Seconds sample_cpu;        // single-thread CPU time per sample (sample_cpu_ms_1thread)
  double sample_cpu_cv = 0;  // its coefficient of variation across samples
  double host_cores = 0;     // CPUs of the host (host.cpu_cores)
  int batch = 1;             // samples per step
  int num_workers = 0;
  bool pin_memory = true;
  int prefetch_factor = 2;
  Bytes sample_bytes;        // one sample as copied to the GPU
  ByteRate h2d_pinned;       // from the GPU profile
  ByteRate host_copy;        // host memcpy rate (sim/job_inputs.hpp: host_copy_rate)
  StepPrediction gpu;        // the compute model's step for the same model, batch and precision
  double all_core_slowdown = 0;  // SimConstants::cpu_all_core_slowdown
};

struct PipelineRunResult {
  Seconds step_time;
  double samples_per_s = 0;
  double gpu_busy_frac = 0;
};

// Simulates 200 steady-state steps. Preconditions: batch >= 1, host_cores > 0, h2d_pinned > 0.
PipelineRunResult simulate_pipeline_run(const PipelineRun& run, std::uint64_t seed = 1);

}  // namespace gp::sim
