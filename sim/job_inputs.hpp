// From one resolved configuration (models/job.hpp) and its compute prediction to the numbers the
// simulation runs on: the step simulation's input (sim/step_sim.hpp) and the job-level events
// (start-up, checkpoints, failures; sim/job_sim.hpp). Pure functions.
#pragma once

#include <string>
#include <vector>

#include "models/compute_model.hpp"
#include "models/gpu_profile.hpp"
#include "models/job.hpp"
#include "sim/job_sim.hpp"
#include "sim/step_sim.hpp"

namespace gp::sim {

// Constants of the simulation that are neither scenario inputs nor catalog hardware, each with where it
// came from (calibrate/profiles/sim-constants.json, read by app/).
struct SimConstants {
  double compute_step_cv = 0;       // per-step, per-rank variation of compute time (coefficient of variation)
  double numa_remote_penalty = 0;   // slowdown of loader work on a remote NUMA node (0.2 = 20% slower)
  ByteRate image_pull_rate;         // registry download rate per node when the image gives none
  ByteRate image_unpack_rate;       // single-core layer decompression rate (compressed bytes per second)
  Seconds framework_import;         // `import torch` in a fresh process, before CUDA initialisation
  ByteRate checkpoint_d2h_rate;     // torch.save's device-to-host copy (0: the profile's pinned rate)
  double checkpoint_write_efficiency = 0;  // achieved / raw storage write rate (0: 1)
  double cpu_all_core_slowdown = 0;  // extra CPU time per sample with every core busy (0.2 = 20% slower)
  StepSpread step_spread;           // how far measured steps fall from the compute model's (the 80% range)
  double step_derived_gpu_log_sd = 0;  // the extra GPU-side spread of a profile derived by datasheet ratios
  double step_known_host_cpu_log_sd = 0;  // the host's spread once its CPU factor is measured (within one host)
  double loader_log_sd = 0;         // the data-loader simulation's spread (log sd of measured / predicted samples/s)
  std::string source, as_of;
};

// The step spread for a prediction: the host-blind one, the GPU side widened in quadrature for a profile derived by
// datasheet ratios, and the host side narrowed to the within-host spread when the host's CPU factor was measured.
StepSpread step_spread_for(const SimConstants& k, bool derived_profile, bool host_measured);

// How much longer a CPU-bound task takes when `busy` of the host's `cores` are busy than when it runs alone
// (as the loader's single-thread sample cost is measured): 1 + slowdown * (busy - 1) / (cores - 1), busy
// clamped to [1, cores]. Linear in the busy cores, as the all-core turbo frequency and the shared L3 and
// memory bandwidth are (docs/simulation.md, "CPU slowdown under load").
double all_core_factor(double busy, double cores, double slowdown);

// Host memory copy rate implied by the profile: a pageable host-to-device copy is a CPU staging copy
// followed by the pinned DMA, so 1/pageable = 1/staging + 1/pinned. 0 when the profile lacks either.
ByteRate host_copy_rate(const GpuProfile& p);

// Per-rank compute of one step predicted for the whole model on one GPU (`pred`, all `m` micro-batches),
// split by tensor x pipeline parallelism (`split`, the kernels' work), `pp` (the kernels issued) and
// `opt_split` (the optimizer's share of the parameters). CPU issue time is spread over the phases in
// proportion to their GPU time, so max(CPU, GPU) per phase adds up to the compute model's step.
ComputeWork compute_work(const StepPrediction& pred, int m, double split, int pp, double opt_split, double step_cv);

// The step simulation's input for `job`, whose one-GPU step (whole model, all micro-batches) is `pred`.
// `notes` receives one line per simplification applied (e.g. "tensor parallelism needs a transformer").
StepSimInput make_step_input(const JobConfig& job, const StepPrediction& pred, const GpuProfile& profile,
                             const SimConstants& k, std::vector<std::string>& notes);

// Job-level inputs: start-up, checkpoint stalls and failure rate for `job`, given its simulated step.
JobEvents make_job_events(const JobConfig& job, const GpuProfile& profile, const SimConstants& k,
                          Seconds step_time);

// Bytes of one checkpoint: fp32 weights and optimizer states of the whole model.
Bytes checkpoint_bytes(const JobConfig& job);
// Nodes that write a checkpoint, each its share of checkpoint_bytes: every node when the state is sharded
// (FSDP / ZeRO), else one (DDP replicas hold the same state; rank 0 saves it).
int checkpoint_writer_nodes(const JobConfig& job);

}  // namespace gp::sim
