#include "models/step_ops.hpp"

#include <algorithm>
#include <cmath>

#include "models/memory_model.hpp"

namespace gp {

double activation_bytes(Precision p) { return is_autocast(p) ? 2.0 : 4.0; }

Dtype gemm_dtype(Precision p) {
  switch (p) {
    case Precision::bf16: return Dtype::bf16;
    case Precision::fp16: return Dtype::fp16;
    case Precision::tf32: return Dtype::tf32;
    case Precision::fp32: return Dtype::fp32;
  }
  return Dtype::fp32;
}

bool is_autocast(Precision p) { return p == Precision::bf16 || p == Precision::fp16; }

bool on_16bit_params(const StepConfig& step) { return step.params_16bit && is_autocast(step.precision); }

double param_bytes(const StepConfig& step) { return on_16bit_params(step) ? activation_bytes(step.precision) : 4.0; }

void add_small_bmm(std::vector<Op>& ops, std::string name, Phase ph, double batches, double m, double n, double k,
                   double count, Precision p) {
  Op op;
  op.name = std::move(name);
  op.kind = OpKind::gemm;
  op.phase = ph;
  op.dtype = gemm_dtype(p);
  op.shape = {batches * m, n, k};  // FLOPs and waves of the whole batch; k sets the k-loop efficiency
  op.flops = gemm_flops(op.shape);
  op.bytes = Bytes(activation_bytes(p) * batches * (m * k + k * n + m * n));
  op.count = count;
  op.small_bmm = true;
  op.bmm_aligned = std::fmod(m, 8) == 0 && std::fmod(n, 8) == 0 && std::fmod(k, 8) == 0;
  ops.push_back(op);
}

void add_memory(std::vector<Op>& ops, std::string name, Phase ph, Bytes bytes, double count, int kernels,
                bool recompute) {
  Op op;
  op.name = std::move(name);
  op.kind = OpKind::memory;
  op.phase = ph;
  op.bytes = bytes;
  op.count = count;
  op.kernels = kernels;
  op.recompute = recompute;
  ops.push_back(op);
}

namespace {

Op gemm_op(std::string name, Phase ph, Dtype d, GemmShape s, double a, double count, bool recompute) {
  Op op;
  op.name = std::move(name);
  op.kind = OpKind::gemm;
  op.phase = ph;
  op.dtype = d;
  op.shape = s;
  op.flops = gemm_flops(s);
  op.bytes = Bytes(a * (s.m * s.k + s.k * s.n + s.m * s.n));
  op.count = count;
  op.recompute = recompute;
  return op;
}

}  // namespace

Flops forward_flops(const StepOps& ops) {
  double f = 0;
  for (const Op& op : ops.micro)
    if (op.phase == Phase::forward && op.kind != OpKind::memory) f += op.flops.value() * op.count;
  return Flops(f);
}

// Forward: [cast weight and input to 16-bit] + GEMM (bias fused by addmm).
// Backward: dgrad GEMM, wgrad GEMM, bias-grad reduction, [cast dW to fp32, cast dX back to fp32].
void add_linear(std::vector<Op>& ops, const LinearSpec& l, Precision p) {
  const double a = activation_bytes(p);
  const Dtype d = gemm_dtype(p);
  const double w = l.in * l.out;
  const bool ac = is_autocast(p);
  // Under autocast weight and bias are cast separately (two kernels), and so are their gradients.
  const int param_kernels = l.bias ? 2 : 1;
  if (ac) {
    add_memory(ops, l.name + ".w_cast", Phase::forward, Bytes(6.0 * w), l.count, param_kernels, l.recompute);
    ops.back().autocast_cast = true;
    if (l.input_fp32) {
      add_memory(ops, l.name + ".x_cast", Phase::forward, Bytes(6.0 * l.tokens * l.in), l.count, 1, l.recompute);
      ops.back().autocast_cast = true;
    }
  }
  ops.push_back(gemm_op(l.name + ".fwd", Phase::forward, d, {l.tokens, l.out, l.in}, a, l.count, l.recompute));
  if (l.needs_dgrad)
    ops.push_back(gemm_op(l.name + ".dgrad", Phase::backward, d, {l.tokens, l.in, l.out}, a, l.count, false));
  ops.push_back(gemm_op(l.name + ".wgrad", Phase::backward, d, {l.out, l.in, l.tokens}, a, l.count, false));
  if (l.bias) {
    // The bias gradient sums the output gradient over its rows: the same [rows, C] reduction as a channels-last
    // convolution's bias gradient, timed by the probed per-channel-sum rate (below the copy bandwidth).
    add_memory(ops, l.name + ".bgrad", Phase::backward, Bytes(a * l.tokens * l.out), l.count);
    ops.back().channel_sum_rows = l.tokens;
    ops.back().channel_sum_channels = l.out;
    ops.back().channel_sum_nchw = false;
  }
  if (ac) {
    add_memory(ops, l.name + ".dw_cast", Phase::backward, Bytes(6.0 * w), l.count, param_kernels);
    ops.back().autocast_cast = true;
    if (l.input_fp32 && l.needs_dgrad) {
      add_memory(ops, l.name + ".dx_cast", Phase::backward, Bytes(6.0 * l.tokens * l.in), l.count);
      ops.back().autocast_cast = true;
    }
  }
}

double optimizer_state_bytes_per_param(OptimizerKind opt) {
  switch (opt) {
    case OptimizerKind::adamw:
    case OptimizerKind::adamw_fused:
    case OptimizerKind::adam:
    case OptimizerKind::adam_fused: return 8.0;
    case OptimizerKind::sgd_momentum: return 4.0;
    case OptimizerKind::sgd: return 0.0;
  }
  return 8.0;
}

namespace {
// multi_tensor_apply (the foreach optimizers, fused AdamW, the GradScaler's unscale): one launch per ~24 tensors or
// per ~20M elements, whichever needs more, and at least one.
int multi_tensor_launches(double params, double tensors) {
  return static_cast<int>(std::max({1.0, std::ceil(tensors / 24.0), std::ceil(params / 20e6)}));
}
}  // namespace

// Bytes moved per parameter and number of multi-tensor launches, from the update each optimizer runs:
// fused AdamW reads p, g, m, v and writes p, m, v (28 B); foreach SGD-momentum runs buf*=mu, buf+=g,
// p+=-lr*buf (32 B); plain SGD p+=-lr*g (12 B). Foreach (unfused, PyTorch's default on CUDA) AdamW, as
// torch/optim/adamw.py's _multi_tensor_adamw runs it (capturable off, so the step counts stay on the CPU):
// p*=(1-lr*wd) 8 B, lerp_(m, g) 12 B, v*=b2 8 B, addcmul_(v, g, g) 16 B, t=sqrt(v) 8 B, t/=bc2 8 B, t+=eps 8 B,
// addcdiv_(p, m, t) 16 B: eight list passes, 84 B per fp32 parameter. Adam with its default weight decay 0
// skips the first: seven passes, 76 B.
std::vector<Op> optimizer_ops(OptimizerKind opt, double params, double tensors) {
  double bytes_per_param = 28, list_ops = 1;
  switch (opt) {
    // One fused kernel reads p, g, m, v and writes p, m, v (7 x 4 B); Adam's L2 term (g + wd p) and AdamW's
    // decoupled decay (p - lr wd p) are arithmetic inside it (_fused_adam_ / _fused_adamw_).
    case OptimizerKind::adamw_fused:
    case OptimizerKind::adam_fused: bytes_per_param = 28; list_ops = 1; break;
    case OptimizerKind::adamw: bytes_per_param = 84; list_ops = 8; break;
    case OptimizerKind::adam: bytes_per_param = 76; list_ops = 7; break;
    case OptimizerKind::sgd_momentum: bytes_per_param = 32; list_ops = 3; break;
    case OptimizerKind::sgd: bytes_per_param = 12; list_ops = 1; break;
  }
  // bytes_per_param is the whole update, spread over its list_ops passes: each pass is one op of
  // bytes_per_param / list_ops per parameter (count multiplies the op's bytes as well as its launches).
  std::vector<Op> ops;
  add_memory(ops, "optimizer.update", Phase::optimizer, Bytes(bytes_per_param / list_ops * params), list_ops,
             multi_tensor_launches(params, tensors));
  return ops;
}

namespace {
// PyTorch FSDP's gradient path in every micro-batch (torch/distributed/fsdp/_runtime_utils.py, _reduce_grad; a unit's
// parameters are views of one flat parameter): autograd assembles the unit's flat gradient from its parameters'
// (the split's backward, a cat: CatArrayBatchedCopy), and FSDP divides it by its pre-divide factor before the
// reduce-scatter (_div_if_needed; the factor is above 1 for any world of 2 or more). Each reads and writes the
// unsharded gradient once, in the parameters' dtype: fp32 under autocast, 16-bit with MixedPrecision. One kernel per
// unit each. Profiled on an H100 (GPT-6.7B, 8 micro-batches, calibrate/probes/results/fsdp-kernels-h100-2026-12-08.jsonl):
// cat 154.8 ms and divide 148.9 ms a step in fp32, 81.3 and 73.1 ms with MixedPrecision. The divide runs on FSDP's
// post-backward stream; it is counted here as GPU time of the backward, as the cat is.
void add_fsdp_gradient_ops(StepOps& ops, const StepConfig& step) {
  if (step.grad_shards <= 1 || ops.params <= 0) return;
  const double g = param_bytes(step);
  const int units = sharding_units(step.model) + 1;  // one per block, and the root
  add_memory(ops.micro, "fsdp.grad_flatten", Phase::backward, Bytes(2 * g * ops.params), 1, units);
  add_memory(ops.micro, "fsdp.grad_predivide", Phase::backward, Bytes(2 * g * ops.params), 1, units);
}

// DDP's reducer (torch/csrc/distributed/c10d/reducer.cpp, PyTorch's default: no comm hook, batched_grad_copy off) in
// each micro-batch whose gradients are all-reduced: the last one of a step, the others running under no_sync, where
// its hooks return at once; every one when accumulation skips no_sync (StepConfig::Ddp::sync_every_micro_batch).
// As each parameter's gradient is ready, mark_variable_ready_dense copies it into its bucket, divided by the world
// size on the way (at::mul_out, "torch::distributed::reducer::mul_out"); after the all-reduce, finalize_bucket_dense
// copies the bucket back into the gradient ("copy_bucket_to_grad"). With gradient_as_bucket_view the gradient is
// the bucket: one in-place div_ instead of both copies. Each pass reads and writes the fp32 gradient once (8 B a
// parameter) in one kernel per parameter tensor, launched from the autograd engine's hooks (a bare launch each).
// Charged to the backward at 1/grad_accum per micro-batch, so that a step carries them once (at 1 per micro-batch
// without no_sync); the copy back runs after the all-reduce, which the step simulation ends the backward with, so
// its place in the step is about the same.
void add_ddp_reducer_ops(StepOps& ops, const StepConfig& step) {
  if (step.ddp.reducer == DdpReducer::none || ops.params <= 0) return;
  const double once = step.ddp.sync_every_micro_batch ? 1.0 : 1.0 / std::max(1, step.grad_accum);
  const int launches = static_cast<int>(std::max(1.0, ops.param_tensors));
  const Bytes pass(8.0 * ops.params);
  auto add = [&](const char* name) {
    add_memory(ops.micro, name, Phase::backward, pass, once, launches);
    ops.micro.back().engine_issued = true;
  };
  if (step.ddp.reducer == DdpReducer::copy) {
    add("ddp.bucket_copy");
    add("ddp.bucket_copy_back");
  } else {
    add("ddp.bucket_divide");
  }
}

// DDP's broadcast of the module buffers (torch/nn/parallel/distributed.py: with broadcast_buffers, PyTorch's default,
// _pre_forward calls _sync_buffers when the previous forward synchronised gradients, so once a step, before the first
// micro-batch after a synchronised one; it runs dist._broadcast_coalesced, torch/csrc/distributed/c10d/comm.cpp
// broadcast_coalesced). The buffers are grouped by dtype (BatchNorm's fp32 statistics, its int64 counters), each group
// flattened into one tensor (a cat kernel), broadcast from rank 0 and copied back into every buffer (a copy_ kernel
// each, from C++: a bare launch). Charged to the forward once a step (1/grad_accum per micro-batch). The broadcasts
// themselves, a few hundred kilobytes for a ResNet, are latency (tens of microseconds) and are left out.
void add_ddp_buffer_ops(StepOps& ops, const StepConfig& step) {
  if (!step.ddp.broadcast_buffers || ops.buffer_tensors <= 0) return;
  const double once = 1.0 / std::max(1, step.grad_accum);
  add_memory(ops.micro, "ddp.buffer_flatten", Phase::forward, ops.buffer_bytes * 2.0, once, 2);
  ops.micro.back().engine_issued = true;
  add_memory(ops.micro, "ddp.buffer_copy_back", Phase::forward, ops.buffer_bytes * 2.0, once,
             static_cast<int>(ops.buffer_tensors));
  ops.micro.back().engine_issued = true;
}

// fp16 autocast trains with a GradScaler (PyTorch's AMP recipe), which adds per step, as profiled
// (calibrate/probes/results/fp16-kernels-2026-12-03.jsonl, ResNet-50 b128): one
// _amp_foreach_non_finite_check_and_unscale_ over every fp32 gradient (read and written in place, 8 B per
// parameter, multi-tensor launches; fused AdamW runs it too, with scale 1, to find infs), and five one-kernel
// calls: the loss scaling (mul), the found_inf fill, the scale's reciprocal, the found_inf read back
// (_local_scalar_dense) and _amp_update_scale_. All are charged to the optimizer phase.
void add_grad_scaler_ops(StepOps& ops) {
  add_memory(ops.optimizer, "amp.unscale", Phase::optimizer, Bytes(8.0 * ops.params), 1,
             multi_tensor_launches(ops.params, ops.param_tensors));
  add_memory(ops.optimizer, "amp.bookkeeping", Phase::optimizer, Bytes(0), 5, 1);
}
}  // namespace

StepOps build_step_ops(const StepConfig& step) {
  StepOps ops;
  switch (step.model.family) {
    case ModelFamily::gpt: ops = build_gpt_ops(step); break;
    case ModelFamily::vit: ops = build_vit_ops(step); break;
    case ModelFamily::swin: ops = build_swin_ops(step); break;
    case ModelFamily::cnn: ops = build_cnn_ops(step); break;
    case ModelFamily::generic: ops = build_generic_ops(step); break;
  }
  if (step.micro_batch < 1 || step.grad_accum < 1)
    ops.not_expressible = "micro_batch and grad_accum must be at least 1";
  // Activation checkpointing recomputes the blocks the builders mark (Op::recompute): GPT's and ViT's transformer
  // blocks. A CNN (torchvision's have no checkpointed blocks; which segments a user wraps is not in the record) and a
  // model known only by parameters and FLOPs have none, and predicting them as if not checkpointed would be silent.
  // (Swin says so itself.)
  if (step.activation_checkpointing && ops.not_expressible.empty() &&
      std::none_of(ops.micro.begin(), ops.micro.end(), [](const Op& o) { return o.recompute; }))
    ops.not_expressible = "activation checkpointing is not modelled for " + step.model.id +
                          ": the model recomputes transformer blocks (GPT, ViT) only, and this one has none";
  // On 16-bit parameters (FSDP's MixedPrecision) nothing is cast per op: the weights arrive 16-bit, and so does
  // the residual stream (whose kernels build_gpt_ops and build_vit_ops count in 16 bits, param_bytes).
  if (on_16bit_params(step))
    std::erase_if(ops.micro, [](const Op& o) { return o.autocast_cast; });
  if (ops.not_expressible.empty()) {
    add_fsdp_gradient_ops(ops, step);
    add_ddp_reducer_ops(ops, step);
    add_ddp_buffer_ops(ops, step);
    ops.optimizer = optimizer_ops(step.optimizer, ops.params, ops.param_tensors);
    if (step.precision == Precision::fp16) add_grad_scaler_ops(ops);
  }
  return ops;
}

}  // namespace gp
