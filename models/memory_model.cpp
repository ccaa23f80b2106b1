#include "models/memory_model.hpp"

#include <algorithm>

namespace gp {

int sharding_units(const ModelSpec& m) {
  const int layers = m.dims.layers > 0 && m.dims.d_model > 0 ? m.dims.layers : m.layers_hint;
  return std::max(1, layers);
}

MemoryPrediction predict_memory_from_ops(const StepOps& ops, const StepConfig& step, const ParallelConfig& par,
                                         Bytes device_memory, Bytes context, const MemoryConstants& mc) {
  MemoryPrediction m;
  if (!ops.not_expressible.empty()) {
    m.not_expressible = ops.not_expressible;
    return m;
  }
  const double dp = std::max(1, par.dp);
  const double tp = std::max(1, par.tp);
  const double model_split = tp * std::max(1, par.pp);
  const double P = ops.params / model_split;
  m.weights = Bytes(4.0 * P / (shards_weights(par.strategy) ? dp : 1.0));
  m.grads = Bytes(4.0 * P / (shards_grads(par.strategy) ? dp : 1.0));
  m.optimizer_states =
      Bytes(optimizer_state_bytes_per_param(step.optimizer) * P / (shards_states(par.strategy) ? dp : 1.0));
  // Sharded weights are gathered unit by unit: the unsharded copy of the whole model is never resident, but
  // FSDP (FULL_SHARD, one unit per block) holds during backward the unit it computes, the next one it has
  // prefetched (BACKWARD_PRE) and the computed unit's unsharded gradient before its reduce-scatter, all fp32 as
  // the parameters are, and keeps the root unit (embeddings, final norm, head) unsharded from forward to the end
  // of backward. Measured on an H100 with PyTorch's fake process group (tools/measure_dp_memory.py): GPT-6.7B
  // at dp 32 was 2.2-3.4 GiB over the prediction without these, GPT-1.3B at dp 16 0.6-0.8 GiB.
  // One rank alone keeps its parameters unsharded (FSDP skips the gathers at world size 1).
  // With FSDP's MixedPrecision the gathered units and their unsharded gradients are 16-bit (param_dtype and
  // reduce_dtype), and no autocast copies are made: the forward computes with the gathered 16-bit parameters.
  const bool mixed = on_16bit_params(step) && shards_weights(par.strategy);
  if (shards_weights(par.strategy) && par.dp > 1 && P > 0) {
    // A stage holds whole blocks, each split over tp.
    const int units = sharding_units(step.model);
    const double unit = ops.block_params > 0 ? ops.block_params : ops.params / units;
    const double root = std::max(0.0, ops.params - units * unit);
    m.gathered = Bytes((mixed ? 2.0 : 4.0) * (root / model_split + 3.0 * unit / tp));
  }
  m.autocast_copies =
      Bytes(is_autocast(step.precision) && !mixed && !step.activation_checkpointing ? 2.0 * P : 0.0);
  // A pipeline stage holds 1/pp of the layers; under 1F1B the first stage keeps the activations of as many
  // micro-batches as are in flight, min(grad_accum, pp) (Narayanan et al. 2021): pp of them make one whole
  // model's worth, fewer make that share of it.
  const int pp = std::max(1, par.pp);
  const double in_flight = pp > 1 ? static_cast<double>(std::min(std::max(1, step.grad_accum), pp)) / pp : 1.0;
  // Tensor parallelism splits what each rank saves, but for the LayerNorm and residual tensors every rank holds
  // whole unless sequence parallelism splits them too (Korthikanti et al. 2022: sbh(10 + 24/t) per layer, and
  // sbh·34/t with sequence parallelism). The vocabulary-parallel loss is split.
  const auto tp_share = [&](Bytes all, Bytes replicated) {
    return par.sequence_parallel || tp == 1 ? all / tp : replicated + (all - replicated) / tp;
  };
  // Under FSDP's MixedPrecision the residual stream is 16-bit: half of what autocast holds in fp32 (all of it
  // replicated under tp). The loss is the same: the logits are cast to fp32 for it either way.
  const double stream_cut = mixed ? 0.5 : 0.0;
  const Bytes acts = ops.activations - ops.activations_fp32_stream * stream_cut;
  const Bytes acts_replicated = ops.activations_tp_replicated - ops.activations_fp32_stream * stream_cut;
  const Bytes bwd = ops.backward_transient - ops.backward_transient_fp32_stream * stream_cut;
  const Bytes bwd_replicated = ops.backward_transient_tp_replicated - ops.backward_transient_fp32_stream * stream_cut;
  m.activations = tp_share(acts, acts_replicated) * in_flight;
  m.loss_transient = ops.loss_transient / tp;
  m.backward_transient = tp_share(bwd, bwd_replicated);
  m.outputs_alive = step.logits_kept ? ops.outputs_alive : Bytes(0);
  m.backward_tail = ops.backward_tail;
  m.workspace = mc.workspace;
  // DDP's reducer (also under ZeRO-1, which PyTorch runs inside DDP) allocates its all-reduce buckets, one fp32
  // copy of every gradient, when the model is wrapped, and keeps them; with gradient_as_bucket_view the gradients
  // are those buckets ("the saved memory size will be equal to the total gradients size", PyTorch's DDP
  // documentation). Measured on an H100 with the fake process group: GPT-1.3B at dp 8 held 19.64 GiB between steps
  // (W 4.89 + S 9.79 + buckets 4.89), and its peak was 4.9 GiB above the one-GPU step's.
  const bool reducer = ddp_rank(par).reducer != DdpReducer::none;
  m.grad_buckets = Bytes(reducer ? 4.0 * P : 0.0);
  const Bytes grads_beyond_buckets = reducer && par.gradient_as_bucket_view ? Bytes(0) : m.grads;
  // Within backward, a single micro-batch's unsharded gradients grow as its activations are freed
  // (StepOps::backward_walk_peak); with accumulation the gradients are all there from the start.
  const bool walk = step.grad_accum == 1 && !shards_grads(par.strategy) && ops.backward_walk_peak > ops.activations;
  const Bytes saved =
      walk ? ops.backward_walk_peak * in_flight / tp : m.activations;
  const Bytes accumulated = step.grad_accum > 1 ? grads_beyond_buckets : Bytes(0);
  MemoryParts start{m.weights, accumulated, m.optimizer_states, m.grad_buckets, m.gathered, m.autocast_copies,
                    saved, std::max(m.loss_transient, m.backward_transient), m.outputs_alive, m.workspace};
  MemoryParts end{m.weights, grads_beyond_buckets, m.optimizer_states, m.grad_buckets, m.gathered, Bytes(0),
                  Bytes(0), m.backward_tail, m.outputs_alive, m.workspace};
  const Bytes start_bwd = start.total();
  const Bytes end_bwd = end.total();
  m.peak_device = std::max(start_bwd, end_bwd);
  m.peak_at = start_bwd >= end_bwd ? "start of backward" : "end of backward";
  m.at_peak = start_bwd >= end_bwd ? start : end;
  if (tp > 1 && !par.sequence_parallel && start_bwd >= end_bwd)
    m.sequence_parallel_saving = acts_replicated * in_flight * (1.0 - 1.0 / tp);
  // With a CUDA graph what max_memory_allocated sees is the state outside the graph's pool: the end of backward
  // less the outputs the loop keeps, which the captured step allocates in the pool.
  m.peak_allocated = step.cuda_graphs ? end_bwd - m.outputs_alive : m.peak_device;
  if (shards_weights(par.strategy) && par.dp > 1 && is_autocast(step.precision) && !step.params_16bit) {
    StepConfig with = step;
    with.params_16bit = true;
    m.fsdp_mixed_precision_saving =
        m.peak_device - predict_memory_from_ops(ops, with, par, device_memory, context, mc).peak_device;
  }
  m.capacity = device_memory - (context.value() > 0 ? context : mc.context_default);
  m.largest_tensor = ops.largest_tensor / tp;
  m.needed = m.peak_device + m.largest_tensor * mc.largest_block_share + mc.reserve;
  m.fits = m.needed <= m.capacity;
  return m;
}

MemoryPrediction predict_memory(const StepConfig& step, const ParallelConfig& par, const GpuProfile& profile,
                                const MemoryConstants& mc) {
  return predict_memory_from_ops(build_step_ops(step), step, par, profile.memory_total, profile.context_memory, mc);
}

}  // namespace gp
