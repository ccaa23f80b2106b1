// Turns each configuration of a scenario into a JobResult: picks the GPU profile, runs the compute and memory
// models, simulates the job and prices it.
#pragma once

#include <functional>
#include <vector>

#include "app/report.hpp"
#include "app/scenario.hpp"

namespace gp::app {

// Called after each configuration with (done, total) — drives the progress bar.
using Progress = std::function<void(std::size_t, std::size_t)>;

struct EvaluateOptions {
  std::string trace_path;   // --trace FILE: Chrome trace JSON of the first steps of every (or sampled) rank
  Progress progress;
};

std::vector<ConfigOutcome> evaluate(const Scenario& sc, const Catalog& cat, const EvaluateOptions& opts);

}  // namespace gp::app
