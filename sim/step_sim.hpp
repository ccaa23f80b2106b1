// The steady state of a synchronous data-parallel training job, simulated step by step on the event
// engine: per rank a DataLoader (workers sharing the node's cores with the training processes, prefetch
// queue, pin-memory thread, host-to-device copies over PCIe switches), compute phases from the compute
// model with per-step noise, and communication (DDP buckets overlapping backward, ZeRO/FSDP per-layer
// gathers, tensor-parallel all-reduces, the 1F1B pipeline bubble). A step ends when its collectives end,
// i.e. when the slowest rank is done. docs/simulation.md describes the model and what it leaves out.
//
// Symmetry shortcut: with more ranks than StepSimOptions::full_ranks_limit only one node is simulated in
// detail (two with one GPU per node), and one of its ranks draws its per-step compute factor as the
// maximum of the factors of all ranks not simulated plus its own (sim/order_stats.hpp), so the slowest
// rank of the whole job is represented at a cost independent of the rank count.
//
// Input is plain numbers (no JobConfig): sim/job_inputs.hpp builds it from a configuration.
#pragma once

#include <cstdint>
#include <vector>

#include "models/units.hpp"
#include "sim/trace.hpp"

namespace gp::sim {

// GPU and CPU work of one rank, noise-free. The CPU time is what the training process needs to issue
// the phase's kernels; a phase lasts max(GPU, CPU issue / CPU share), the CPU-GPU pipeline of the
// compute model.
struct ComputeWork {
  Seconds gpu_forward, gpu_backward;     // per micro-batch
  Seconds cpu_forward, cpu_backward;     // per micro-batch
  Seconds gpu_optimizer, cpu_optimizer;  // per optimizer step
  double step_cv = 0;                    // coefficient of variation of a rank's per-step compute factor
};

// The DataLoader of one rank (torch.utils.data.DataLoader semantics).
struct LoaderWork {
  bool synthetic = true;         // inputs already on the GPU: nothing below applies
  int num_workers = 0;           // 0: the training process loads, overlapping only the GPU's async tail
  bool pin_memory = true;
  int prefetch_factor = 2;       // batches in flight per worker
  Seconds batch_cpu;             // mean single-thread CPU time to produce one micro-batch (NUMA penalty applied)
  double batch_cpu_cv = 0;       // coefficient of variation of that time
  Seconds collate_cpu;           // CPU time to collate a batch into one tensor (in the worker)
  Seconds pin_cpu;               // CPU time of the pin-memory thread's copy of one batch
  Bytes batch_bytes;             // bytes of one micro-batch copied to the GPU
  ByteRate h2d_pinned;           // one GPU's pinned host-to-device rate (also a PCIe switch uplink)
  Seconds pageable_staging_cpu;  // pageable memory: CPU staging copy per batch (blocks the training process)
};

// Communication of one rank. Collective durations come from the closed-form model (models/collective).
struct CommWork {
  std::vector<Seconds> grad_buckets;   // DDP / ZeRO-1/2: one collective per bucket, in the order buckets fill
  bool overlap = true;                 // buckets start as they fill during backward (else after backward)
  // DDP / ZeRO-1 accumulating without no_sync(): every micro-batch's backward all-reduces its buckets and waits for
  // them (the reducer's finalize), not only the last one's.
  bool every_micro_batch = false;
  Seconds after_optimizer;             // ZeRO-1/2: parameter all-gather after the update (exposed)
  int layer_units = 0;                 // FSDP / ZeRO-3: sharded units (0: not sharded)
  Seconds unit_allgather;              // per unit, before its forward and again before its backward
  Seconds unit_reduce_scatter;         // per unit, after its backward
  Seconds tp_forward, tp_backward;     // tensor-parallel all-reduces per micro-batch (blocking)
  int pp_stages = 1;
  Seconds pp_p2p;                      // per micro-batch, activations and gradients between stages (exposed)
};

// The cluster as the simulation sees it.
struct ClusterShape {
  std::int64_t ranks = 1;         // total GPUs
  int ranks_per_node = 1;         // GPUs per node (<= ranks)
  double cpu_cores = 0;           // CPUs the container of one node may use; 0: unlimited (no CPU contention)
  int gpus_per_pcie_switch = 2;
};

struct StepSimInput {
  ComputeWork compute;
  LoaderWork loader;
  CommWork comm;
  ClusterShape cluster;
  int grad_accum = 1;             // micro-batches per optimizer step
};

// Measured micro-batches a simulation walks at most (StepSimOptions::steps x grad_accum, at least one step).
inline constexpr int kMicroBatchBudget = 20000;

struct StepSimOptions {
  int steps = 200;                // measured steps (after warm-up)
  int warmup_steps = -1;          // -1: 5 + the steps the prefetch queue needs to fill
  int full_ranks_limit = 64;      // simulate every rank up to this many, else the symmetry shortcut
  bool force_full = false;        // every rank regardless of the limit (tests, cross-checks)
  int trace_steps = 0;            // record spans of the first steps (0: no trace)
  int trace_max_ranks = 16;       // ranks recorded (the first ones, and the straggler proxy)
  std::uint64_t seed = 1;
};

// Input and communication are pipelined against compute: the GPU waiting for either this share of the step or
// more makes that one the bottleneck (`gpuplan run`, `gpuplan calibrate check`).
inline constexpr double kBottleneckWaitShare = 0.10;

// Per-step means over the measured steps. compute + dataloader_stall + comm_exposed = step_time.
struct StepSimResult {
  Seconds step_time;              // mean wall time of one optimizer step (ends when the slowest rank is done)
  Seconds step_p90;               // 90th percentile of the measured steps
  Seconds compute;                // mean over ranks of compute-phase time (GPU kernels or CPU issue)
  Seconds dataloader_stall;       // mean over ranks of time waiting for input batches and their copies
  Seconds comm_exposed;           // the rest: communication not hidden, waiting for stragglers, pipeline bubble
  Seconds gpu_busy;               // mean over ranks of GPU kernel time per step
  Seconds straggler;              // mean of (slowest rank's forward+backward - mean rank's) per step
  Seconds comm_total;             // collective time per step, hidden or not (one rank's view)
  Seconds comm_hidden;            // mean over ranks of collective time overlapped with their own compute
  Seconds pipeline_bubble;        // mean over ranks of the 1F1B bubble per step (part of comm_exposed)
  int simulated_ranks = 0;
  bool shortcut = false;          // symmetry shortcut used
  int measured_steps = 0;         // steps averaged (StepSimOptions::steps, fewer for a long accumulation)
  std::uint64_t events = 0;
  std::vector<TraceSpan> trace;
};

// Runs the simulation. Preconditions: grad_accum >= 1, ranks >= 1, 1 <= ranks_per_node <= ranks,
// prefetch_factor >= 1, times >= 0; with a CPU loader, h2d_pinned > 0. Deterministic for a seed.
// Cost: O((warm-up + steps) x simulated ranks x (micro-batches + buckets)) events and work.
StepSimResult simulate_steps(const StepSimInput& in, const StepSimOptions& opt);

}  // namespace gp::sim
