// Turns each configuration of a scenario into a JobResult: picks the GPU profile, runs the compute and memory
// models, simulates the job (sim/step_sim, sim/job_sim) and prices it.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app/progress.hpp"
#include "app/report.hpp"
#include "app/scenario.hpp"
#include "sim/step_sim.hpp"

namespace gp::app {

struct EvaluateOptions {
  std::string trace_path;   // --trace FILE: Chrome trace JSON of the first steps of the first configuration
  Progress progress;        // after each configuration (done, total)
  std::string profiles_dir; // GPU profiles and constants; empty: default_profiles_dir()
  int sim_steps = 200;      // measured steps per configuration
  int trace_steps = 3;      // steps written to the trace
  int trace_max_ranks = 16; // ranks written to the trace (plus the straggler proxy)
  std::vector<std::string>* warnings = nullptr;  // receives notes (derived profiles, simplifications)
  std::string* trace_error = nullptr;  // set to one line when the trace cannot be written (else a warning)
};

// Deterministic: the same scenario (seeds included) gives the same results. Problems that stop one
// configuration from being predicted become that configuration's bottleneck "not-predicted" and advice.
std::vector<ConfigOutcome> evaluate(const Scenario& sc, const Catalog& cat, const EvaluateOptions& opts);

// What the simulation saw for one configuration, beyond JobResult (tests, benchmarks).
struct ConfigDetail {
  sim::StepSimInput input;
  sim::StepSimResult step;
};

class ProfileCache;

// Evaluates configurations one by one, loading each GPU type's profile and constants once.
class Evaluator {
 public:
  Evaluator(const Catalog& cat, EvaluateOptions opts);
  ~Evaluator();
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;
  // `trace` receives the Chrome trace JSON and `detail` the simulation's input and result when non-null.
  JobResult run(const JobConfig& job, std::string* trace = nullptr, ConfigDetail* detail = nullptr);
  // Notes gathered so far (derived profiles, simplifications), sorted and unique.
  [[nodiscard]] std::vector<std::string> notes() const;

 private:
  EvaluateOptions opts_;
  std::unique_ptr<ProfileCache> cache_;
  std::vector<std::string> notes_;
};

// One configuration (used by tests and benchmarks). `trace` receives the Chrome trace JSON and `detail`
// the simulation's input and result when non-null.
JobResult evaluate_config(const JobConfig& job, const Catalog& cat, const EvaluateOptions& opts,
                          std::string* trace = nullptr, ConfigDetail* detail = nullptr);

}  // namespace gp::app
