// The training workload and its software configuration, as value types. Produced from a scenario
// (app/scenario) or a measured-run record (calibrate/reference_runs); consumed by the models and sim.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "models/hardware.hpp"
#include "models/units.hpp"

namespace gp {

// Autocast precision mode of the training step (see shared/reference-runs/README.md).
enum class Precision { fp32, tf32, bf16, fp16 };

// PyTorch's optimizers by the names the scenarios and measured runs use: adamw / adam are torch.optim.AdamW / Adam
// with their CUDA default (foreach, multi-tensor), the -fused ones the same with fused=True.
enum class OptimizerKind { adamw, adamw_fused, adam, adam_fused, sgd, sgd_momentum };
inline constexpr OptimizerKind kOptimizers[] = {OptimizerKind::adamw, OptimizerKind::adamw_fused,
                                                OptimizerKind::adam,  OptimizerKind::adam_fused,
                                                OptimizerKind::sgd,   OptimizerKind::sgd_momentum};

enum class DataParallel { ddp, fsdp, zero1, zero2, zero3 };

// DDP's reducer (torch/csrc/distributed/c10d/reducer.cpp; also under ZeRO-1, which runs inside DDP) on the rank's
// step: none (one GPU, or a strategy without it), copy (the default: each gradient is copied into its all-reduce
// bucket and back), view (gradient_as_bucket_view: the gradients are the buckets, divided in place).
enum class DdpReducer { none, copy, view };

// One step of one data-parallel replica: what runs on each GPU.
struct StepConfig {
  ModelSpec model;              // resolved model (catalog entry, dims or generic)
  int micro_batch = 1;          // samples per micro-batch per GPU
  int grad_accum = 1;           // micro-batches per optimizer step
  Precision precision = Precision::bf16;
  OptimizerKind optimizer = OptimizerKind::adamw_fused;
  bool activation_checkpointing = false;
  bool cuda_graphs = false;
  bool channels_last = true;    // CNNs
  // The training loop holds the model's output (the logits) until backward is done, as nanoGPT's
  // `logits, loss = model(x, y)` and Hugging Face's `outputs` do, and as the reference runs' peak memory shows;
  // false when the forward returns only the loss.
  bool logits_kept = true;
  // FSDP / ZeRO-3 with PyTorch FSDP's MixedPrecision(param_dtype, reduce_dtype) in the step's 16-bit dtype (the
  // scenario's parallelism.fsdp_mixed_precision): units are gathered, computed on and their gradients reduce-scattered
  // in 16 bits, and the forward runs without autocast, so no per-op casts of weights or the residual stream. Without
  // it (PyTorch's default) the gathered parameters are fp32 and autocast casts them op by op.
  bool params_16bit = false;
  // Data-parallel ranks the gradients are reduce-scattered over in every micro-batch: dp for FSDP, ZeRO-2 and ZeRO-3
  // with dp > 1 (PyTorch FSDP's FULL_SHARD and SHARD_GRAD_OP; gradient_shards() of the parallel config), else 1.
  // FSDP sets the unit's unsharded gradient to None after each reduce-scatter, so micro-batches after the first
  // accumulate into the 1/grad_shards shard; and each micro-batch first flattens the unit's gradients and divides
  // them (models/step_ops.cpp, fsdp_gradient_ops).
  int grad_shards = 1;
  // DDP's own work on this rank (ddp_rank() of the parallel config; models/step_ops.cpp, add_ddp_reducer_ops and
  // add_ddp_buffer_ops).
  struct Ddp {
    // The reducer's per-parameter kernels in each micro-batch whose gradients are all-reduced.
    DdpReducer reducer = DdpReducer::none;
    // The broadcast of the module buffers before each step's forward (broadcast_buffers=True, PyTorch's default).
    bool broadcast_buffers = false;
    // Every micro-batch all-reduces its gradients: accumulation without no_sync() (false: only the last one).
    bool sync_every_micro_batch = false;
  } ddp;
};

// What a data-parallel strategy divides over its ranks: the optimizer states (all but DDP), the gradients (ZeRO-2,
// ZeRO-3, FSDP) and the weights (ZeRO-3, FSDP).
bool shards_states(DataParallel d);
bool shards_grads(DataParallel d);
bool shards_weights(DataParallel d);

// How the job is split over GPUs.
struct ParallelConfig;
// StepConfig::grad_shards for this split.
int gradient_shards(const ParallelConfig& p);
// StepConfig::ddp for this split: for DDP and ZeRO-1 with dp > 1 the reducer (copy, or view with
// gradient_as_bucket_view), the buffer broadcast unless turned off, and whether accumulation skips no_sync(); else
// none of them.
StepConfig::Ddp ddp_rank(const ParallelConfig& p);

struct ParallelConfig {
  int dp = 1;                   // data-parallel replicas
  int tp = 1;                   // tensor-parallel size
  int pp = 1;                   // pipeline-parallel stages
  DataParallel strategy = DataParallel::ddp;
  // DDP's gradient_as_bucket_view: the gradients are views into the reducer's all-reduce buckets instead of a
  // second fp32 copy of them (PyTorch DistributedDataParallel; default false).
  bool gradient_as_bucket_view = false;
  // DDP's broadcast_buffers: the module buffers (BatchNorm's running statistics) are broadcast from rank 0 before
  // every step's forward (PyTorch's default true).
  bool broadcast_buffers = true;
  // Gradient accumulation under DDP / ZeRO-1 runs the micro-batches before the last inside model.no_sync(), so only
  // the last one all-reduces (true); false: every micro-batch's backward all-reduces its gradients, a common mistake.
  bool no_sync = true;
  // Megatron's sequence parallelism: with tp > 1 the LayerNorm and residual activations are split over the
  // tensor-parallel ranks too (the all-reduces become reduce-scatter + all-gather of the same volume).
  bool sequence_parallel = false;
};

const char* to_string(Precision p);
// "fp32", "tf32", "bf16" or "fp16" (the names to_string gives); nullopt for any other.
std::optional<Precision> parse_precision(std::string_view s);
const char* to_string(OptimizerKind o);
// One of the names to_string gives ("adamw-fused", ...); nullopt for any other.
std::optional<OptimizerKind> parse_optimizer(std::string_view s);
const char* to_string(DataParallel d);

}  // namespace gp
