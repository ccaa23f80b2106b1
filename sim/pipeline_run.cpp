#include "sim/pipeline_run.hpp"

#include <algorithm>
#include <cmath>

#include "sim/job_inputs.hpp"
#include "sim/step_sim.hpp"

namespace gp::sim {

PipelineRunResult simulate_pipeline_run(const PipelineRun& run, std::uint64_t seed) {
  StepSimInput in;
  in.compute = compute_work(run.gpu, 1, 1.0, 1, 1.0, 0.0);
  in.cluster.ranks = 1;
  in.cluster.ranks_per_node = 1;
  in.cluster.cpu_cores = run.host_cores;
  LoaderWork& L = in.loader;
  L.synthetic = false;
  L.num_workers = run.num_workers;
  L.pin_memory = run.pin_memory;
  L.prefetch_factor = std::max(1, run.prefetch_factor);
  // The training process and the workers are the busy threads (sim/job_inputs.hpp: all_core_factor).
  L.batch_cpu = run.sample_cpu * (run.batch * all_core_factor(run.num_workers + 1.0, run.host_cores,
                                                               run.all_core_slowdown));
  L.batch_cpu_cv = run.sample_cpu_cv / std::sqrt(static_cast<double>(run.batch));
  L.batch_bytes = run.sample_bytes * run.batch;
  L.h2d_pinned = run.h2d_pinned;
  if (run.host_copy.value() > 0) {
    L.collate_cpu = L.batch_bytes / run.host_copy;
    L.pin_cpu = L.batch_bytes / run.host_copy;
    L.pageable_staging_cpu = L.batch_bytes / run.host_copy;
  }
  StepSimOptions o;
  o.seed = seed;
  const StepSimResult r = simulate_steps(in, o);
  PipelineRunResult out;
  out.step_time = r.step_time;
  out.samples_per_s = run.batch / r.step_time.value();
  out.gpu_busy_frac = r.gpu_busy / r.step_time;
  return out;
}

}  // namespace gp::sim
