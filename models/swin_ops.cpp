// Swin Transformer steps as operators, following torchvision/models/swin_transformer.py (SwinTransformer,
// SwinTransformerBlock(V2), PatchMerging(V2), shifted_window_attention) as it runs eagerly under autocast:
//
// - Patch embedding: Conv2d(3, C, 4, stride 4) -> Permute -> LayerNorm. LayerNorm runs and outputs fp32 under
//   autocast, so stage 1's residual stream is fp32; V1's PatchMerging ends in a Linear, so stages 2-4 carry a
//   16-bit stream (a LayerNorm on it casts its input to fp32 first); V2's ends in a LayerNorm (fp32 stream).
// - Attention is not fused (no SDPA): q @ k^T and attn @ v are batched GEMMs of one window x head each
//   (window^2 x window^2 x head_dim), with the relative-position bias add (fp32 table: the scores become
//   fp32), the shifted-window mask add, an fp32 softmax and its cast back for attn @ v as memory-bound ops.
//   F.pad always copies (constant_pad_nd clones when no pad is positive); torch.roll, the window partition and
//   its reverse are copies; matmul copies q, k and v to contiguous 3-D batches; the shifted blocks rebuild
//   their mask every call (about 16 tiny kernels).
// - Dropouts are 0 (no kernels); stochastic depth's probability grows linearly from 0 at the first block.
#include "models/swin_ops.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace gp {
namespace {

class SwinBuilder {
 public:
  SwinBuilder(const StepConfig& s, const SwinDims& d, StepOps& out)
      : step_(s), d_(d), out_(out), p_(s.precision), a_(activation_bytes(s.precision)),
        ac_(is_autocast(s.precision)), b_(s.micro_batch) {
    if (s.model.input_shape.size() == 3) {
      h_ = s.model.input_shape[1];
      w_ = s.model.input_shape[2];
    }
  }

  void build() {
    patch_embed();
    double c = d_.embed;
    double stream = 4;  // LayerNorm output: fp32 under autocast and in fp32 modes alike
    int block_id = 0;
    for (int st = 0; st < 4; ++st) {
      if (st > 0) {
        stream = patch_merging(c, stream);
        c *= 2;
      }
      const double ws = d_.window;
      const double hp = std::ceil(h_ / ws) * ws, wp = std::ceil(w_ / ws) * ws;
      // torchvision: a window as large as the (padded) map makes the shift 0.
      const bool can_shift = ws < hp || ws < wp;
      const int depth = d_.depths[st];
      const int shifted = can_shift ? depth / 2 : 0;
      const int plain = depth - shifted;
      // Only the very first block has stochastic-depth probability 0 (no kernels).
      const int plain_sd = plain - (block_id == 0 ? 1 : 0);
      block(c, d_.heads[st], false, plain, plain_sd, stream);
      if (shifted > 0) block(c, d_.heads[st], true, shifted, shifted, stream);
      block_id += depth;
    }
    // Final LayerNorm, permute (a view), AdaptiveAvgPool2d(1) over the fp32 map, flatten, head.
    const double n = b_ * h_ * w_;
    layer_norm("norm", n, c, stream, 1);
    mem("avgpool.fwd", Phase::forward, 4 * n * c, 1);
    mem("avgpool.bwd", Phase::backward, 4 * n * c, 1);
    linear({"head", b_, c, 1000, 1, true, ac_, true, false});
    params_ += c * 1000 + 1000;
    tensors_ += 2;
    mem("ce", Phase::forward, 8.0 * b_ * 1000, 1, 3);
    mem("ce.bwd", Phase::backward, 8.0 * b_ * 1000, 1, 3);
    out_.params = params_;
    out_.param_tensors = tensors_;
    out_.activations = Bytes(saved_);
    out_.largest_tensor = Bytes(largest_);
  }

 private:
  const StepConfig& step_;
  const SwinDims& d_;
  StepOps& out_;
  Precision p_;
  double a_;
  bool ac_;
  double b_;
  double h_ = 224, w_ = 224;
  double params_ = 0, tensors_ = 0, saved_ = 0;
  double largest_ = 0;  // StepOps::largest_tensor

  Op& mem(std::string name, Phase ph, double bytes, double count, int kernels = 1, bool transpose = false) {
    add_memory(out_.micro, std::move(name), ph, Bytes(bytes), count, kernels);
    out_.micro.back().transpose = transpose;
    return out_.micro.back();
  }
  void linear(const LinearSpec& l) { add_linear(out_.micro, l, p_); }
  void bmm(std::string name, Phase ph, double batches, double m, double n, double k, double count) {
    add_small_bmm(out_.micro, std::move(name), ph, batches, m, n, k, count, p_);
  }
  // LayerNorm over `dim` on `rows` rows whose input elements are `in_bytes` wide: under autocast a 16-bit
  // input is cast to fp32 first (and its gradient back); output fp32 (activation width in fp32 modes).
  void layer_norm(const std::string& name, double rows, double dim, double in_bytes, double count) {
    const double n = rows * dim;
    if (ac_ && in_bytes < 4) {
      unrolled_path(mem(name + ".cast", Phase::forward, 6 * n, count));  // 16-bit -> fp32
      mem(name + ".cast.bwd", Phase::backward, 6 * n, count);
    }
    Op& fwd = mem(name + ".fwd", Phase::forward, 8 * n, count);
    fwd.rows = rows;
    fwd.channels = dim;
    Op& bwd = mem(name + ".bwd", Phase::backward, 20 * n, count, 2);
    bwd.rows = rows;
    bwd.channels = dim;
    saved_ += 4 * n * count;
    params_ += 2 * dim * count;
    tensors_ += 2 * count;
  }
  // StochasticDepth("row") on a branch of `n` elements, each `br` bytes wide: noise [B,1,1,1] (bernoulli_, div_)
  // and a multiply.
  void stochastic_depth(const std::string& name, double n, double br, double count) {
    if (count <= 0) return;
    broadcast_path(mem(name + ".fwd", Phase::forward, 2 * br * n, count, 3));  // x * noise[B, 1, 1, 1]
    broadcast_path(mem(name + ".bwd", Phase::backward, 3 * br * n, count));
  }
  // x = x + branch over `n` elements: the stream (`s` bytes each) plus the branch output (`br` bytes); backward
  // sums the two gradients (a branch narrower than the stream first gets its gradient cast down).
  void residual(const std::string& name, double n, double s, double br, double count) {
    Op& add = mem(name + ".fwd", Phase::forward, (2 * s + br) * n, count);
    if (s != br) unrolled_path(add);  // an fp32 stream plus a 16-bit branch: one operand cast in the kernel
    if (s > br) mem(name + ".grad_cast", Phase::backward, (s + br) * n, count);
    mem(name + ".grad_sum", Phase::backward, 3 * s * n, count).engine_issued = true;
  }

  void patch_embed() {
    const double pix = 3.0 * h_ * w_;
    if (ac_) mem("image.cast", Phase::forward, 6 * b_ * pix, 1);
    saved_ += a_ * b_ * pix;
    const double patch = d_.patch;
    h_ = std::floor(h_ / patch);
    w_ = std::floor(w_ / patch);
    const double n = b_ * h_ * w_, c = d_.embed;
    const std::size_t from = out_.micro.size();
    linear({"patch_embed", n, 3 * patch * patch, c, 1, true, false, false, false});
    for (std::size_t i = from; i < out_.micro.size(); ++i)  // the first convolution, on the image: the stem class
      if (out_.micro[i].kind == OpKind::gemm) out_.micro[i].conv = out_.micro[i].stem = true;
    params_ += 3 * patch * patch * c + c;
    tensors_ += 2;
    // NCHW conv output permuted to NHWC: already contiguous when channels_last, else LayerNorm copies it.
    if (!step_.channels_last) {
      mem("patch_embed.permute_copy", Phase::forward, 2 * a_ * n * c, 1, 1, true);
      mem("patch_embed.permute_copy.bwd", Phase::backward, 2 * a_ * n * c, 1, 1, true);
    }
    layer_norm("patch_embed.norm", n, c, a_, 1);
  }

  // PatchMerging(V2) of a map of `c` channels carried at `s` bytes; returns the new stream width.
  double patch_merging(double c, double s) {
    const double n_in = b_ * h_ * w_;
    h_ = std::ceil(h_ / 2);
    w_ = std::ceil(w_ / 2);
    const double n = b_ * h_ * w_;
    const double e = n * 4 * c;  // elements after the concat
    mem("merge.pad", Phase::forward, 2 * s * n_in * c, 1);
    // Four strided slices x[..., i::2, j::2, :] concatenated along channels (strided reads).
    mem("merge.cat", Phase::forward, 2 * s * e, 1, 1, true);
    // Each slice's backward zero-fills a full-size gradient and copies its part in; autograd sums the four.
    mem("merge.slice_grad", Phase::backward, 4 * s * n_in * c + 2 * s * e, 1, 8, true);
    mem("merge.slice_grad_sum", Phase::backward, 3 * 3 * s * n_in * c, 1, 3);
    double out_stream;
    if (!d_.v2) {
      layer_norm("merge.norm", n, 4 * c, s, 1);
      linear({"merge.reduction", n, 4 * c, 2 * c, 1, false, ac_, true, false});
      saved_ += a_ * e;
      out_stream = a_;
    } else {
      linear({"merge.reduction", n, 4 * c, 2 * c, 1, false, ac_ && s > a_, true, false});
      saved_ += a_ * e;
      layer_norm("merge.norm", n, 2 * c, a_, 1);
      out_stream = 4;
    }
    params_ += 4 * c * 2 * c;
    tensors_ += 1;
    return out_stream;
  }

  // `count` identical blocks of one stage (shifted or not), `sd` of them with stochastic depth.
  void block(double c, double heads, bool shifted, double count, double sd, double s) {
    if (count <= 0) return;
    const double L = count;
    const double ws = d_.window, ws2 = ws * ws, hd = c / heads;
    const double hp = std::ceil(h_ / ws) * ws, wp = std::ceil(w_ / ws) * ws;
    const bool padded = hp != h_ || wp != w_;
    const double n = b_ * h_ * w_, np = b_ * hp * wp;
    const double windows = hp * wp / ws2;       // per image
    const double bc = b_ * windows * heads;     // batched (window, head) products
    const double e = bc * ws2 * ws2;            // attention score elements
    const double a = a_;
    largest_ = std::max({largest_, a * n * 4 * c, a * e});  // the MLP's hidden map, the attention scores
    const std::string pre = shifted ? "swa." : "wa.";
    const double tab = heads * ws2 * ws2;       // gathered bias [heads, ws^2, ws^2]
    const double table_rows = (2 * ws - 1) * (2 * ws - 1);

    // --- attention branch input: V1 normalises first (pre-norm); V2 attends on the raw stream.
    double attn_in = 4;  // element width of what is padded / partitioned
    if (!d_.v2) {
      layer_norm("norm1", n, c, s, L);
    } else {
      attn_in = s;
    }
    mem(pre + "pad", Phase::forward, 2 * attn_in * np * c, L);  // F.pad clones even with zero padding
    if (padded) mem(pre + "pad.grad_copy", Phase::backward, 2 * attn_in * n * c, L);
    if (shifted) {
      mem(pre + "roll", Phase::forward, 2 * attn_in * np * c, L).roll_elements = np * c;
      mem(pre + "roll.bwd", Phase::backward, 2 * attn_in * np * c, L).roll_elements = np * c;
    }
    mem(pre + "partition", Phase::forward, 2 * attn_in * np * c, L, 1, true);
    mem(pre + "partition.bwd", Phase::backward, 2 * attn_in * np * c, L, 1, true);
    // qkv Linear (bias) over the padded windows.
    linear({pre + "qkv", np, c, 3 * c, L, true, ac_ && attn_in > a, true, false});
    saved_ += a * np * c * L;
    params_ += (3 * c * c + 3 * c + c * c + c) * L;  // qkv and proj
    tensors_ += 4 * L;
    // q, k, v = qkv[0], qkv[1], qkv[2] of a permuted view: each select's backward zero-fills a full gradient
    // and autograd sums them; the permuted gradient is made contiguous for the Linear's backward.
    mem(pre + "qkv.select_grad_fill", Phase::backward, 3 * a * 3 * np * c, L, 3);
    mem(pre + "qkv.select_grad_sum", Phase::backward, 2 * 3 * a * 3 * np * c, L, 2);
    mem(pre + "qkv.unpack_grad", Phase::backward, 2 * a * 3 * np * c, L, 1, true);
    if (!d_.v2) {
      mem(pre + "q_scale", Phase::forward, 2 * a * np * c, L);
      mem(pre + "q_scale.bwd", Phase::backward, 2 * a * np * c, L);
    } else {
      // qkv bias cloned with its k third zeroed; F.normalize(q), F.normalize(k): norm (fp32), clamp, div
      // (fp32 out) and autocast's cast back to 16 bits for the matmul.
      mem(pre + "qkv_bias_clone", Phase::forward, 3 * 4 * 3 * c, L, 2);
      // x / norm.expand_as(x) reads the norm through a stride-0 view: PyTorch's broadcast path. Its backward,
      // per tensor (the profile of SwinV2-S b64, holdout9-kernels-2026-12-03.jsonl: ten kernels each): the cast's
      // gradient up to fp32; g / n (broadcast); for n's gradient -g x / n^2: n * n (broadcast), g * x (an fp32 and a
      // 16-bit operand: unrolled), the division and the negation, summed back over the expanded width; the
      // norm's own backward x / norm times its gradient (two broadcast kernels); the two gradients of x added.
      const double m = np * c;
      Op& nf = mem(pre + "qk_normalize", Phase::forward, 2 * (a + a + 4 + (ac_ ? 6 : 0)) * m, L, ac_ ? 8 : 6);
      nf.broadcast_bytes = 2 * (a + 4) * m;
      // Bytes per element of each tensor: the cast 6; plain 36 (the division by n^2 12, the negation 8, the sum 4,
      // the add 12); broadcast 24 + a (g / n 8, n * n 4, x / norm a + 4, times its gradient 8); unrolled 8 + a.
      Op& nb = mem(pre + "qk_normalize.bwd", Phase::backward, 2 * ((ac_ ? 6 : 0) + 36 + 24 + a + 8 + a) * m, L,
                   ac_ ? 20 : 18);
      nb.broadcast_bytes = 2 * (24 + a) * m;
      nb.unrolled_bytes = 2 * (8 + a) * m;
      saved_ += 2 * 4 * np * c * L;
      params_ += heads * L;  // logit_scale
      tensors_ += L;
    }
    // matmul reshapes the 4-D q, k^T (and later v) into 3-D batches: contiguous copies inside the call.
    mem(pre + "qk.batch_copy", Phase::forward, 2 * 2 * a * np * c, L, 2, true).nested = true;
    bmm(pre + "qk.fwd", Phase::forward, bc, ws2, ws2, hd, L);
    bmm(pre + "qk.bwd_dq", Phase::backward, bc, ws2, hd, ws2, L);
    bmm(pre + "qk.bwd_dk", Phase::backward, bc, hd, ws2, ws2, L);
    saved_ += 2 * a * np * c * L;
    if (!d_.v2) {
      // Relative-position bias: gather the [(2w-1)^2, heads] table by index, permute, contiguous.
      mem(pre + "rel_bias.gather", Phase::forward, 3 * 4 * tab, L, 2);
      mem(pre + "rel_bias.gather.bwd", Phase::backward, 3 * 4 * tab + 8 * table_rows * heads, L, 4);
      params_ += table_rows * heads * L;
      tensors_ += L;
      // 16-bit scores + fp32 bias -> fp32 scores.
      broadcast_path(mem(pre + "rel_bias.add", Phase::forward, (a + 4) * e, L));  // [1, heads, w^2, w^2]
      if (ac_) mem(pre + "rel_bias.add.grad_cast", Phase::backward, 6 * e, L);
    } else {
      // logit_scale.clamp().exp(), scores * logit_scale (fp32 out); its backward: grad * scale, the cast of
      // the scores' gradient, and grad * scores summed for logit_scale's gradient.
      mem(pre + "logit_scale", Phase::forward, 8 * heads, L, 2);
      mem(pre + "logit_scale.mul", Phase::forward, (a + 4) * e, L);
      mem(pre + "logit_scale.mul.bwd", Phase::backward, (8 + 6 + 4 + a) * e, L, 3);
      saved_ += a * e * L;
      // Continuous position bias: MLP (2 -> 512, ReLU, 512 -> heads) over the (2w-1)^2 relative coordinates,
      // gathered, permuted, 16 * sigmoid.
      linear({pre + "cpb.fc1", table_rows, 2, 512, L, true, ac_, false, false});
      mem(pre + "cpb.relu", Phase::forward, 2 * a * table_rows * 512, L);
      mem(pre + "cpb.relu.bwd", Phase::backward, 3 * a * table_rows * 512, L);
      linear({pre + "cpb.fc2", table_rows, 512, heads, L, false, false, true, false});
      mem(pre + "cpb.gather_sigmoid", Phase::forward, 4 * 4 * tab, L, 4);
      mem(pre + "cpb.gather_sigmoid.bwd", Phase::backward, 4 * 4 * tab + 8 * table_rows * heads, L, 6);
      saved_ += (a * table_rows * (2 + 512 + 512) + 4 * tab) * L;
      params_ += (2 * 512 + 512 + 512 * heads) * L;
      tensors_ += 3 * L;
      broadcast_path(mem(pre + "rel_bias.add", Phase::forward, 8 * e, L));
    }
    // The bias gradient: the score gradient summed over batch and windows (inside the add's autograd node).
    mem(pre + "rel_bias.grad_sum", Phase::backward, 4 * e, L).nested = true;
    if (shifted) {
      // Mask rebuilt per call: new_zeros, nine slice fills, permute/reshape, difference, two compares, two
      // masked_fills; then added to the fp32 scores (its backward passes the gradient through).
      const double map = hp * wp;
      mem(pre + "mask.build", Phase::forward, 4 * (10 * map + 6 * windows * ws2 * ws2), L, 16);
      broadcast_path(mem(pre + "mask.add", Phase::forward, 8 * e, L));  // [windows, 1, w^2, w^2]
    }
    // fp32 softmax (saved output), autocast's cast of the probabilities to 16 bits for attn @ v.
    mem(pre + "softmax", Phase::forward, 8 * e, L);
    mem(pre + "softmax.bwd", Phase::backward, 12 * e, L);
    saved_ += 4 * e * L;
    if (ac_) {
      mem(pre + "probs.cast", Phase::forward, 6 * e, L);
      mem(pre + "probs.cast.bwd", Phase::backward, 6 * e, L);
      saved_ += a * e * L;
    }
    mem(pre + "v.batch_copy", Phase::forward, 2 * a * np * c, L, 1, true).nested = true;
    bmm(pre + "av.fwd", Phase::forward, bc, ws2, hd, ws2, L);
    bmm(pre + "av.bwd_dp", Phase::backward, bc, ws2, ws2, hd, L);
    bmm(pre + "av.bwd_dv", Phase::backward, bc, ws2, hd, ws2, L);
    saved_ += a * np * c * L;
    // transpose(1, 2).reshape of the heads' outputs, and its gradient.
    mem(pre + "heads.merge", Phase::forward, 2 * a * np * c, L, 1, true);
    mem(pre + "heads.merge.bwd", Phase::backward, 2 * a * np * c, L, 1, true);
    linear({pre + "proj", np, c, c, L, true, false, true, false});
    saved_ += a * np * c * L;
    mem(pre + "reverse", Phase::forward, 2 * a * np * c, L, 1, true);
    mem(pre + "reverse.bwd", Phase::backward, 2 * a * np * c, L, 1, true);
    if (shifted) {
      mem(pre + "roll_back", Phase::forward, 2 * a * np * c, L).roll_elements = np * c;
      mem(pre + "roll_back.bwd", Phase::backward, 2 * a * np * c, L).roll_elements = np * c;
    }
    if (padded) {
      mem(pre + "crop", Phase::forward, 2 * a * n * c, L);
      mem(pre + "crop.bwd", Phase::backward, a * np * c + 2 * a * n * c, L, 2);
    }
    double branch = a;  // element width of the branch output joining the residual
    if (d_.v2) {
      layer_norm("norm1", n, c, a, L);
      branch = 4;
    }
    stochastic_depth(pre + "stochastic_depth", n * c, branch, sd);
    residual(pre + "residual", n * c, s, branch, L);

    // --- MLP branch: Linear(C, 4C) -> GELU -> Linear(4C, C) (dropouts 0).
    double mlp_in = s;
    if (!d_.v2) {
      layer_norm("norm2", n, c, s, L);
      mlp_in = 4;
    }
    linear({"mlp.fc1", n, c, 4 * c, L, true, ac_ && mlp_in > a, true, false});
    gelu_path(mem("mlp.gelu.fwd", Phase::forward, 2 * a * n * 4 * c, L));
    gelu_path(mem("mlp.gelu.bwd", Phase::backward, 3 * a * n * 4 * c, L));
    linear({"mlp.fc2", n, 4 * c, c, L, true, false, true, false});
    saved_ += (a * n * c + 2 * a * n * 4 * c) * L;
    params_ += (8 * c * c + 5 * c) * L;
    tensors_ += 4 * L;
    if (d_.v2) layer_norm("norm2", n, c, a, L);
    stochastic_depth("mlp.stochastic_depth", n * c, branch, sd);
    residual("mlp.residual", n * c, s, branch, L);
  }
};

}  // namespace

std::optional<SwinDims> swin_dims(const std::string& id) {
  // torchvision.models.swin_transformer: embed_dim, depths, num_heads, window_size (7; V2: 8).
  static const std::map<std::string, SwinDims> m = {
      {"swin_t", {{2, 2, 6, 2}, 96, {3, 6, 12, 24}, 7, 4, false}},
      {"swin_s", {{2, 2, 18, 2}, 96, {3, 6, 12, 24}, 7, 4, false}},
      {"swin_b", {{2, 2, 18, 2}, 128, {4, 8, 16, 32}, 7, 4, false}},
      {"swin_v2_t", {{2, 2, 6, 2}, 96, {3, 6, 12, 24}, 8, 4, true}},
      {"swin_v2_s", {{2, 2, 18, 2}, 96, {3, 6, 12, 24}, 8, 4, true}},
      {"swin_v2_b", {{2, 2, 18, 2}, 128, {4, 8, 16, 32}, 8, 4, true}},
  };
  auto it = m.find(id);
  if (it == m.end()) return std::nullopt;
  return it->second;
}

StepOps build_swin_ops(const StepConfig& step) {
  const auto dims = swin_dims(step.model.id);
  if (!dims) return build_generic_ops(step);
  StepOps out;
  if (step.activation_checkpointing) {
    out.not_expressible = "activation checkpointing is not modelled for Swin (torchvision has none)";
    return out;
  }
  SwinBuilder(step, *dims, out).build();
  return out;
}

}  // namespace gp
