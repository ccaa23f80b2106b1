// The data-loader side of `gpuplan calibrate check`: predicts `data: cpu-jpeg-pipeline` train records by
// simulating them (sim/pipeline_run.hpp) from their input fields only: sample_cpu_ms_1thread, the host's
// cpu_cores, batch, num_workers, pin_memory, prefetch_factor and image_hw, plus the modelled GPU step.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "calibrate/check.hpp"
#include "models/gpu_profile.hpp"

namespace gp::calibrate {

// The predictor to pass to run_check / predict_train_record for CPU-pipeline records on `profile`.
// It returns nullopt for records lacking a needed field.
// `all_core_slowdown`: sim-constants.json's cpu_all_core_slowdown (0: workers run at the single-thread cost).
PipelinePredictor loader_pipeline(const GpuProfile& profile, double all_core_slowdown = 0);

// Samples per second of the CPU-pipeline records of a check: measured vs predicted.
struct LoaderRecordError {
  std::string id;
  double measured_samples_per_s = 0;
  double predicted_samples_per_s = 0;
  double err_pct = 0;  // (predicted - measured) / measured
};
struct LoaderCheckSummary {
  std::vector<LoaderRecordError> records;
  int within_20 = 0;
  double mean_abs_err_pct = 0;
};
LoaderCheckSummary summarize_loader(const CheckReport& rep);

}  // namespace gp::calibrate
