// Peak device memory of one training step, comparable with torch.cuda.max_memory_allocated, and whether
// the step fits the GPU next to its CUDA context.
//
// Resident: fp32 weights W = 4P, gradients G = 4P, optimizer states S = s*P (AdamW 8, SGD-momentum 4,
// SGD 0 bytes/param), each divided over data-parallel ranks by ZeRO stage / FSDP, and over tp*pp. FSDP / ZeRO-3
// also hold gathered units through forward and backward: 4 bytes x (root + 3 x block) parameters (the block
// computed, the one prefetched, the computed block's unsharded gradient; the root unit stays gathered). Activations
// are divided by tp (all but the LayerNorm and residual tensors, unless sequence-parallel) and, with a pipeline,
// are the first stage's: min(grad_accum, pp) micro-batches of 1/pp of
// the layers (1F1B).
// The peak is the larger of two moments (both also hold the library workspace):
//   start of backward: W + S + [G if accumulating] + [2P autocast weight copies, no checkpointing]
//                      + saved activations + the larger of the loss transient (logits, log-softmax output
//                        and grads) and the last layer's backward working set
//   end of backward:   W + S + G + outputs kept alive by the loop + backward tail (dense embedding grad)
// With CUDA graphs the activations live in the graph's private pool, which max_memory_allocated does
// not report once replaying: the comparable peak is then the resident state, while `fits` still counts
// the pool. `fits`: the device peak, plus a share of the step's largest tensor (PyTorch's caching allocator
// splits freed large blocks for smaller requests, so the next request of that size may need fresh memory) and a
// fixed reserve, within device memory minus the CUDA context. The share and the reserve are fitted to measured
// out-of-memory verdicts (calibrate/fit.hpp `fit_oom_rule`, docs/calibration.md section 5).
#pragma once

#include <string>

#include "models/gpu_profile.hpp"
#include "models/step_ops.hpp"
#include "models/units.hpp"
#include "models/workload.hpp"

namespace gp {

// Assumptions of the memory model that are not hardware facts (stored with the fitted constants).
struct MemoryConstants {
  // Defaults: the H200 fit (calibrate/profiles/fit-h200.json `memory`, which gpuplan reads with the constants).
  double largest_block_share = 0.86;  // share of the largest tensor needed beyond the peak
  Bytes reserve = Bytes::gib(2.46);   // device memory the peak can never use besides the context
  Bytes context_default = Bytes::gib(0.5);  // CUDA context when the profile does not say
  Bytes workspace = Bytes::mib(32);         // cuBLAS workspace PyTorch allocates through its allocator (Hopper)
};

// What the peak moment holds, part by part (they add up to MemoryPrediction::peak_device).
struct MemoryParts {
  Bytes weights, grads, optimizer_states;  // grads: those alive at that moment (none at the start of backward
                                           // without accumulation)
  Bytes grad_buckets, gathered, autocast_copies;
  Bytes activations;  // saved for backward (0 at the end of backward)
  Bytes transient;    // start: the larger of the loss transient and the last block's backward; end: its tail
  Bytes outputs_alive, workspace;
  [[nodiscard]] Bytes total() const {
    return weights + grads + optimizer_states + grad_buckets + gathered + autocast_copies + activations + transient +
           outputs_alive + workspace;
  }
};

struct MemoryPrediction {
  Bytes weights, grads, optimizer_states, autocast_copies;
  Bytes gathered;        // FSDP / ZeRO-3: unsharded units held while computing (0 for other strategies)
  Bytes grad_buckets;    // DDP / ZeRO-1 with dp > 1: the reducer's fp32 all-reduce buckets (4 bytes per parameter)
  Bytes activations, loss_transient, backward_transient, outputs_alive, backward_tail, workspace;
  Bytes largest_tensor;  // StepOps::largest_tensor
  Bytes peak_allocated;  // comparable with torch.cuda.max_memory_allocated
  Bytes peak_device;     // everything that must be resident at the peak (graph pool included)
  Bytes capacity;        // device memory minus CUDA context
  Bytes needed;          // peak_device + largest_block_share * largest_tensor + reserve
  bool fits = true;      // needed <= capacity
  std::string peak_at;   // "start of backward" or "end of backward"
  MemoryParts at_peak;   // peak_device, part by part
  // What sequence parallelism would take off the activations at the peak (tp > 1 without it; else 0).
  Bytes sequence_parallel_saving;
  // FSDP / ZeRO-3 under autocast: how much lower the peak would be with FSDP's MixedPrecision (0 otherwise).
  Bytes fsdp_mixed_precision_saving;
  std::string not_expressible;
};

// The units FSDP / ZeRO-3 gathers one at a time: a transformer's layers (given by its dimensions), else the
// model's layers_hint, at least 1 (the whole model as one unit). The simulation's gathers use the same count.
int sharding_units(const ModelSpec& m);

// Memory from prebuilt operators. `device_memory` is the GPU's total memory, `context` the CUDA context.
MemoryPrediction predict_memory_from_ops(const StepOps& ops, const StepConfig& step, const ParallelConfig& par,
                                         Bytes device_memory, Bytes context, const MemoryConstants& mc = {});
// Memory of `step` on the GPU of `profile` (memory_total, context_memory).
MemoryPrediction predict_memory(const StepConfig& step, const ParallelConfig& par, const GpuProfile& profile,
                                const MemoryConstants& mc = {});

}  // namespace gp
