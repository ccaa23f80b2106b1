// Transformer steps as operators. GPT follows shared/reference-runs/README.md (nanoGPT-style block:
// LayerNorm -> fused QKV Linear -> causal SDPA (flash) -> proj Linear -> residual; LayerNorm -> Linear d->4d
// -> GELU -> Linear 4d->d -> residual; learned positions; final LayerNorm; vocabulary head; fp32
// cross-entropy). ViT follows torchvision's VisionTransformer (patch conv, class token, non-causal
// nn.MultiheadAttention, 1000-class head). Under autocast the residual stream stays fp32 (embeddings are
// fp32 and type promotion keeps the sum fp32), LayerNorm runs in fp32, and Linear inputs/weights are cast.
#include <algorithm>
#include <cmath>

#include "models/step_ops.hpp"

namespace gp {
namespace {

struct Block {
  double b = 1, s = 1, d = 1, heads = 1, ff = 4;
  bool causal = true;
  bool mha_copies = false;  // nn.MultiheadAttention packs/unpacks q,k,v with contiguous copies
  double layers = 1;
  bool ckpt = false;
  // Bytes an element of the residual stream and its LayerNorms (param_bytes): fp32 under autocast, whose embeddings
  // and LayerNorms stay fp32 (type promotion keeps the sum fp32), and in fp32 / TF32; 16-bit when FSDP's
  // MixedPrecision casts the parameters and inputs, so that LayerNorm, the residual adds and the embeddings read and
  // write 16-bit tensors.
  double stream = 4;
};

Op attention_op(std::string name, Phase ph, Dtype dt, Flops f, Bytes bytes, double count, int kernels,
                bool recompute) {
  Op op;
  op.name = std::move(name);
  op.kind = OpKind::attention;
  op.phase = ph;
  op.dtype = dt;
  op.flops = f;
  op.bytes = bytes;
  op.count = count;
  op.kernels = kernels;
  op.recompute = recompute;
  return op;
}

// Dtype the fused attention kernel computes in: flash (16-bit) under autocast; fp32 inputs fall back to
// the memory-efficient kernel, which runs fp32 arithmetic.
Dtype attention_dtype(Precision p) { return is_autocast(p) ? gemm_dtype(p) : Dtype::fp32; }

// Whether the fused attention kernel's output is already laid out token-major (batch, seq, heads, head_dim), so
// that the output projection reads it without a copy (see add_block's saved bytes).
bool attention_output_shared(const Block& k, Precision p) { return !k.mha_copies || is_autocast(p); }

// Appends one transformer block's forward and backward ops (count = layers). Returns the bytes it saves
// for backward per layer.
double add_block(std::vector<Op>& ops, const Block& k, Precision p) {
  const double a = activation_bytes(p);
  const double N = k.b * k.s, d = k.d, ff = k.ff;
  const bool ac = is_autocast(p);
  const double L = k.layers;
  const bool rc = k.ckpt;
  const double sb = k.stream;
  // --- forward
  add_memory(ops, "ln1.fwd", Phase::forward, Bytes(2 * sb * N * d), L, 1, rc);
  ops.back().rows = N;
  ops.back().channels = d;
  ops.back().norm_elem_bytes = sb;
  add_linear(ops, {"qkv", N, d, 3 * d, L, true, ac, true, rc}, p);
  if (k.mha_copies) {
    // nn.MultiheadAttention (batch_first) works on a (seq, batch, d) transpose: the projection input is
    // made contiguous, the packed q/k/v are re-laid out, and the block output returns transposed, so the
    // next LayerNorm copies it back to contiguous (fp32).
    add_memory(ops, "mha.in_copy", Phase::forward, Bytes(2 * a * N * d), L, 1, rc);
    ops.back().transpose = true;
    // F.linear on the 3-D transposed input runs a bare mm and adds the bias in a separate strided pass
    // (profiled: aten::add_ [[197,128,2304],[2304]], 161 us per layer for ViT-B/16 b128, a transpose's rate).
    add_memory(ops, "qkv.bias_add", Phase::forward, Bytes(2 * a * 3 * N * d), L, 1, rc);
    ops.back().transpose = true;
    add_memory(ops, "qkv.pack", Phase::forward, Bytes(2 * a * 3 * N * d), L, 1, rc);
    ops.back().transpose = true;
    add_memory(ops, "mha.ln_copy", Phase::forward, Bytes(2 * sb * N * d), L, 1, rc);
    ops.back().transpose = true;
    add_memory(ops, "mha.in_copy.bwd", Phase::backward, Bytes(2 * a * N * d), L, 1);
    ops.back().transpose = true;
    add_memory(ops, "mha.ln_copy.bwd", Phase::backward, Bytes(2 * sb * N * d), L, 1);
    ops.back().transpose = true;
  }
  // Attention FLOPs: QK^T and PV, 2*s*s*hd each per head = 4*b*s^2*d; a causal mask skips half.
  const double att_f = 4 * k.b * k.s * k.s * d * (k.causal ? 0.5 : 1.0);
  // Flash attention computes whole tiles of kAttentionTile queries by kAttentionTile keys (FlashAttention-2,
  // Dao 2023, sec. 3; PyTorch's and cuDNN's SM90 kernels use 64 to 128): a sequence is padded to whole tiles,
  // and under a causal mask the diagonal tiles run in full. Timing uses that work; the FLOPs stay the model's.
  constexpr double kAttentionTile = 128;
  const double tiles = std::ceil(k.s / kAttentionTile);
  const double padded_s = tiles * kAttentionTile;
  const double att_work = 4 * k.b * padded_s * padded_s * d * (k.causal ? (tiles + 1) / (2 * tiles) : 1.0);
  const double work_factor = att_f > 0 ? att_work / att_f : 1.0;
  ops.push_back(attention_op("attn.fwd", Phase::forward, attention_dtype(p), Flops(att_f),
                             Bytes(a * 4 * N * d), L, 1, rc));
  ops.back().work_factor = work_factor;
  // y.transpose(1, 2).contiguous().view(b, s, d): a copy kernel unless the attention output is already token-major;
  // then the calls remain (views, charged as one framework call as before) and no kernel runs.
  if (attention_output_shared(k, p)) {
    add_memory(ops, "attn.out_view", Phase::forward, Bytes(0), L, 0, rc);
  } else {
    add_memory(ops, "attn.out_copy", Phase::forward, Bytes(2 * a * N * d), L, 1, rc);
  }
  add_linear(ops, {"proj", N, d, d, L, true, false, true, rc}, p);
  add_memory(ops, "residual1.fwd", Phase::forward, Bytes((2 * sb + a) * N * d), L, 1, rc);
  if (a < sb) unrolled_path(ops.back());  // the fp32 stream plus a 16-bit branch: a cast inside the kernel
  // nn.MultiheadAttention(batch_first) returns its output as a transposed view: the residual add reads it
  // strided (profiled: a non-vectorised add kernel at about a transpose's rate).
  ops.back().transpose = k.mha_copies;
  add_memory(ops, "ln2.fwd", Phase::forward, Bytes(2 * sb * N * d), L, 1, rc);
  ops.back().rows = N;
  ops.back().channels = d;
  ops.back().norm_elem_bytes = sb;
  add_linear(ops, {"fc", N, d, ff, L, true, ac, true, rc}, p);
  add_memory(ops, "gelu.fwd", Phase::forward, Bytes(2 * a * N * ff), L, 1, rc);
  gelu_path(ops.back());
  // Checkpointing recomputes a block only until every tensor its backward saved is back (PyTorch's
  // non-reentrant checkpoint stops early by default): the last saved one is proj2's input, the GELU output, so
  // proj2 and the residual add after it are not run again.
  add_linear(ops, {"proj2", N, ff, d, L, true, false, true, false}, p);
  add_memory(ops, "residual2.fwd", Phase::forward, Bytes((2 * sb + a) * N * d), L, 1, false);
  if (a < sb) unrolled_path(ops.back());
  // --- backward (linear backward ops were added by add_linear)
  // Flash backward recomputes QK^T and runs dV, dP, dQ, dK: 2.5x the forward FLOPs; 3 kernels.
  ops.push_back(attention_op("attn.bwd", Phase::backward, attention_dtype(p), Flops(2.5 * att_f),
                             Bytes(a * 8 * N * d), L, 1, false));
  ops.back().work_factor = work_factor;
  // Flash backward's two memory passes around the main kernel (FlashAttention-2, Dao 2023, alg. 2; the
  // kernels flash_bwd_dot_do_o / flash_bwd_convert_dq, in cuDNN compute_dot_do_o / convert_dq_to_16bits):
  // D = rowsum(dO * O) reads dO and O and writes one fp32 per row and head; dQ is accumulated in a zeroed
  // fp32 buffer that is then read and written back in 16 bits.
  add_memory(ops, "attn.bwd_dot_do_o", Phase::backward, Bytes(2 * a * N * d + 4 * N * k.heads), L, 1);
  add_memory(ops, "attn.bwd_dq_convert", Phase::backward, Bytes((4 + 4 + a) * N * d), L, 1);
  if (k.mha_copies) {
    // q, k, v are selected from the packed projection (proj[0], proj[1], proj[2]): each select's backward
    // zero-fills a full (3, s, b, d) gradient and the three are summed by autograd (profiled: 3 aten::fill_
    // and 2 aten::add_ of [3,197,128,768] per layer for ViT-B/16 b128, 3.2 ms of the step; no cat).
    add_memory(ops, "qkv.select_grad_fill", Phase::backward, Bytes(3 * a * 3 * N * d), L, 3);
    add_memory(ops, "qkv.select_grad_sum", Phase::backward, Bytes(2 * 3 * a * 3 * N * d), L, 2);
  } else {
    add_memory(ops, "qkv.grad_cat", Phase::backward, Bytes(2 * a * 3 * N * d), L, 1);
  }
  // The grad of the output transpose arrives strided and is made contiguous.
  add_memory(ops, "attn.grad_out_copy", Phase::backward, Bytes(2 * a * N * d), L, 1);
  if (k.mha_copies) {
    add_memory(ops, "qkv.unpack_grad", Phase::backward, Bytes(2 * a * 3 * N * d), L, 1);
    ops.back().transpose = true;
  }
  add_memory(ops, "gelu.bwd", Phase::backward, Bytes(3 * a * N * ff), L, 1);
  gelu_path(ops.back());
  // LayerNorm backward: dx kernel (x, dy -> dx) and dgamma/dbeta kernel (x, dy again).
  add_memory(ops, "ln.bwd", Phase::backward, Bytes(5 * sb * N * d), 2 * L, 2);
  ops.back().rows = N;
  ops.back().channels = d;
  ops.back().norm_elem_bytes = sb;
  // Residual joins: branch grad cast to 16-bit (autocast) and skip + branch grad sum in the stream's dtype.
  if (ac) {
    add_memory(ops, "residual.grad_cast", Phase::backward, Bytes(6 * N * d), 2 * L, 1);
    ops.back().autocast_cast = true;
  }
  add_memory(ops, "residual.grad_sum", Phase::backward, Bytes(3 * sb * N * d), 2 * L, 1);
  ops.back().engine_issued = true;
  // Saved per layer: LN inputs (fp32), Linear inputs, q/k/v and attention output, GELU input. The output
  // projection's input is the attention output itself when the fused kernel writes it token-major, so that
  // transpose(1, 2).contiguous() is a no-op: a GPT block always (flash / cuDNN under autocast, the memory-efficient
  // kernel in fp32), nn.MultiheadAttention under autocast; measured as distinct saved storages per block
  // (tools/measure_saved_tensors.py, calibrate/probes/results/saved-tensors-2026-12-04.jsonl): 36.1 bytes per
  // token and width (GPT and ViT-B, bf16), 64.1 (GPT, TF32), 68.1 (ViT-B, TF32).
  const double proj_input = attention_output_shared(k, p) ? 0.0 : a * N * d;
  return 4 * N * d * 2 + a * N * (d + d + ff) + proj_input + 4 * a * N * d + a * N * ff;
}

// What a block saves that tensor parallelism (Megatron's column / row split of the QKV, projection and MLP
// linears) does not split: the two LayerNorm inputs (fp32) and their outputs, the inputs of the column-parallel
// QKV and first MLP linears, which every rank holds whole; q/k/v, the attention output and the MLP's hidden
// tensors are split by heads or columns. Of the 36 bytes per token and width a block saves under autocast, 12.
double replicated_under_tp(double N, double d, Precision p) { return 2 * 4 * N * d + 2 * activation_bytes(p) * N * d; }

// Cross-entropy over `classes` in fp32 on `rows` rows. Under autocast the 16-bit logits are cast to fp32
// first. log_softmax over a long row reads it three times (max, sum, write); its backward twice.
void add_cross_entropy(std::vector<Op>& ops, double rows, double classes, Precision p) {
  const double nv = rows * classes;
  const bool ac = is_autocast(p);
  if (ac) {
    add_memory(ops, "ce.cast", Phase::forward, Bytes(6 * nv), 1);
    unrolled_path(ops.back());  // 16-bit logits -> fp32: the cast runs in the copy kernel
  }
  add_memory(ops, "ce.log_softmax", Phase::forward, Bytes(16 * nv), 1);
  add_memory(ops, "ce.nll", Phase::forward, Bytes(4 * rows * 2), 1, 2);
  add_memory(ops, "ce.nll.bwd", Phase::backward, Bytes(4 * nv), 1, 2);
  add_memory(ops, "ce.log_softmax.bwd", Phase::backward, Bytes(16 * nv), 1);
  if (ac) add_memory(ops, "ce.cast.bwd", Phase::backward, Bytes(6 * nv), 1);
}

// Parameters of one pre-LN block: two LayerNorms, QKV, projection, two MLP linears (all with biases).
double block_params(const TransformerDims& t) {
  const double d = t.d_model, ff = t.d_ff > 0 ? t.d_ff : 4.0 * d;
  return 4 * d + (3 * d * d + 3 * d) + (d * d + d) + (d * ff + ff) + (ff * d + d);
}

double gpt_params(const TransformerDims& t) {
  const double d = t.d_model;
  const double block = block_params(t);
  const double emb = t.vocab * d + t.seq * d;
  return t.layers * block + emb + 2 * d + (t.tied_embeddings ? 0 : t.vocab * d);
}

}  // namespace

StepOps build_gpt_ops(const StepConfig& step) {
  StepOps out;
  const TransformerDims& t = step.model.dims;
  if (t.layers <= 0 || t.d_model <= 0 || t.heads <= 0 || t.seq <= 0 || t.vocab <= 0) {
    out.not_expressible = "transformer needs positive layers, d_model, heads, seq and vocab";
    return out;
  }
  const Precision p = step.precision;
  const double a = activation_bytes(p);
  const double b = step.micro_batch, s = t.seq, d = t.d_model, V = t.vocab;
  const double N = b * s;
  const double ff = t.d_ff > 0 ? t.d_ff : 4 * d;
  Block k{b, s, d, static_cast<double>(t.heads), ff, true, false,
          static_cast<double>(t.layers), step.activation_checkpointing, param_bytes(step)};
  auto& ops = out.micro;
  // Embeddings: token gather, position gather, add, in the parameters' dtype (the stream's); backward: dense
  // embedding grads (sort + reduce).
  add_memory(ops, "embed.fwd", Phase::forward, Bytes(4 * k.stream * N * d), 1, 3);
  add_memory(ops, "embed.bwd", Phase::backward, Bytes(k.stream * V * d + 4 * k.stream * N * d), 1, 10);
  const double per_layer_saved = add_block(ops, k, p);
  add_memory(ops, "lnf.fwd", Phase::forward, Bytes(2 * k.stream * N * d), 1);
  ops.back().rows = N;
  ops.back().channels = d;
  ops.back().norm_elem_bytes = k.stream;
  add_memory(ops, "lnf.bwd", Phase::backward, Bytes(5 * k.stream * N * d), 1, 2);
  ops.back().rows = N;
  ops.back().channels = d;
  ops.back().norm_elem_bytes = k.stream;
  add_linear(ops, {"head", N, d, V, 1, false, is_autocast(p), true, false}, p);
  if (t.tied_embeddings) {
    add_memory(ops, "tied.grad_sum", Phase::backward, Bytes(3 * k.stream * V * d), 1);
    ops.back().engine_issued = true;
  }
  add_cross_entropy(ops, N, V, p);

  out.params = gpt_params(t);
  out.block_params = block_params(t);
  out.param_tensors = 12.0 * t.layers + 4 + (t.tied_embeddings ? 0 : 1);
  // With checkpointing only the block inputs stay saved; the block being recomputed holds its own saved tensors
  // during its backward, after the loss transient is gone (backward_transient): the larger of the two counts.
  // Counted on top of the loss transient, gpt-1.3b b111 checkpointed was 6.8% over its measured 111.6 GiB.
  const bool ckpt = step.activation_checkpointing;
  const double saved_layers = ckpt ? t.layers * 4 * N * d : t.layers * per_layer_saved;
  out.activations = Bytes(saved_layers + 4 * N * d /*lnf input*/ + a * N * d /*head input*/);
  const double layer_replicated = replicated_under_tp(N, d, p);
  out.activations_tp_replicated =
      Bytes((ckpt ? t.layers * 4 * N * d : t.layers * layer_replicated) + 4 * N * d + a * N * d);
  out.backward_transient_tp_replicated = Bytes(ckpt ? layer_replicated : 0.0);
  // fp32 under autocast: a checkpointed block's input or a block's two LayerNorm inputs, and the final LayerNorm's.
  out.activations_fp32_stream = Bytes(is_autocast(p) ? t.layers * (ckpt ? 4 : 8) * N * d + 4 * N * d : 0.0);
  out.backward_transient_fp32_stream = Bytes(is_autocast(p) && ckpt ? 8 * N * d : 0.0);
  const double logit_elem = is_autocast(p) ? 2.0 : 4.0;
  // At the start of backward: logits (kept by the loop), log_softmax output, its grad and nll's grad.
  out.loss_transient = Bytes((4 + 4 + 4) * N * V);
  out.outputs_alive = Bytes(logit_elem * N * V);
  out.backward_transient = Bytes(2 * a * N * ff + (ckpt ? per_layer_saved : 0.0));
  out.largest_tensor = Bytes(std::max(4 * N * V, a * N * std::max(ff, 3 * d)));
  // Dense fp32 gradient of the token embedding, summed into the tied head gradient.
  out.backward_tail = Bytes(4 * V * d);
  return out;
}

// torchvision ViT variants by name: (layers, hidden, heads, mlp, patch).
StepOps build_vit_ops(const StepConfig& step) {
  StepOps out;
  const TransformerDims& t = step.model.dims;
  const int img = step.model.input_shape.size() == 3 ? step.model.input_shape[1] : 224;
  const int patch = t.patch > 0 ? t.patch : 16;
  if (t.layers <= 0 || t.d_model <= 0 || t.heads <= 0) {
    out.not_expressible = "vision transformer needs layers, d_model and heads";
    return out;
  }
  const Precision p = step.precision;
  const double a = activation_bytes(p);
  const double grid = std::floor(img / static_cast<double>(patch));
  const double s = grid * grid + 1;  // patches + class token
  const double b = step.micro_batch, d = t.d_model, N = b * s;
  const double ff = t.d_ff > 0 ? t.d_ff : 4 * d;
  auto& ops = out.micro;
  // Patch embedding: conv with kernel = stride = patch is a GEMM over patches; its input needs no grad.
  const double pix = 3.0 * img * img;
  if (is_autocast(p)) add_memory(ops, "image.cast", Phase::forward, Bytes(6 * b * pix), 1);
  LinearSpec pe{"patch_embed", b * grid * grid, 3.0 * patch * patch, d, 1, true, false, false, false};
  add_linear(ops, pe, p);
  // The patch convolution is the network's first, on the 3-channel image: cuDNN runs it far below the GEMM
  // surface, as it does a CNN's stem (ViT-B/16 b128: 59 GFLOP in 1.16 ms, ViT-B/32 b128: 2.46 ms, aten profile
  // calibrate/probes/results/vit-aten-2026-12-02.jsonl), so it takes the stem class.
  for (auto& op : ops)
    if (op.kind == OpKind::gemm) op.conv = op.stem = true;
  add_memory(ops, "tokens.cat_pos", Phase::forward, Bytes((a + 4 + 8) * N * d), 1, 3);
  add_memory(ops, "tokens.bwd", Phase::backward, Bytes((4 + a) * N * d), 1, 2);
  Block k{b, s, d, static_cast<double>(t.heads), ff, false, true, static_cast<double>(t.layers),
          step.activation_checkpointing, param_bytes(step)};
  const double per_layer_saved = add_block(ops, k, p);
  add_memory(ops, "lnf.fwd", Phase::forward, Bytes(2 * k.stream * N * d), 1);
  ops.back().rows = N;
  ops.back().channels = d;
  ops.back().norm_elem_bytes = k.stream;
  add_memory(ops, "lnf.bwd", Phase::backward, Bytes(5 * k.stream * N * d), 1, 2);
  ops.back().rows = N;
  ops.back().channels = d;
  ops.back().norm_elem_bytes = k.stream;
  add_linear(ops, {"head", b, d, 1000, 1, true, is_autocast(p), true, false}, p);
  add_cross_entropy(ops, b, 1000, p);
  out.block_params = block_params(t);
  out.params = t.layers * out.block_params + 3.0 * patch * patch * d + d + s * d + d + 2 * d + d * 1000 + 1000;
  if (step.model.params > 0) out.params = step.model.params;
  out.param_tensors = 12.0 * t.layers + 8;
  const bool ckpt = step.activation_checkpointing;  // as build_gpt_ops: the recomputed block is a backward transient
  const double saved_layers = ckpt ? t.layers * 4 * N * d : t.layers * per_layer_saved;
  out.activations = Bytes(saved_layers + a * b * pix + 4 * N * d);
  const double layer_replicated = replicated_under_tp(N, d, p);
  out.activations_tp_replicated =
      Bytes((ckpt ? t.layers * 4 * N * d : t.layers * layer_replicated) + a * b * pix + 4 * N * d);
  out.backward_transient_tp_replicated = Bytes(ckpt ? layer_replicated : 0.0);
  out.backward_transient = Bytes(2 * a * N * ff + (ckpt ? per_layer_saved : 0.0));
  out.largest_tensor = Bytes(a * N * std::max(ff, 3 * d));
  return out;
}

}  // namespace gp
