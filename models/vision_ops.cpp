#include "models/vision_ops.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <utility>
#include <vector>

namespace gp {
namespace {

enum class Act { relu, relu6, hardswish, silu, gelu };

// Emits operators for a CNN as its layers are declared, tracking the current feature-map shape.
class CnnBuilder {
 public:
  // `network`: the builder starts at the network's input image (cast to 16-bit under autocast); false for a
  // layer built alone (build_conv_layer_ops).
  CnnBuilder(const StepConfig& s, StepOps& out, bool network = true) : step_(s), out_(out), b_(s.micro_batch) {
    a_ = activation_bytes(s.precision);
    if (s.model.input_shape.size() == 3) {
      h_ = s.model.input_shape[1];
      w_ = s.model.input_shape[2];
    }
    if (network && is_autocast(s.precision))
      add_memory(out_.micro, "image.cast", Phase::forward, Bytes(6 * b_ * 3 * h_ * w_), 1);
    nchw_ = !s.channels_last;
  }
  // From here on the activations are channels-last in memory whatever the model's format (ConvNeXt's
  // LayerNorm2d and blocks permute to NHWC and back as views, so cuDNN and the depthwise conv see NHWC strides).
  void channels_last_from_here() { nchw_ = false; }
  int c() const { return c_; }
  double size() const { return b_ * c_ * h_ * w_; }

  // A "same" convolution (padding k / 2, or none for a patchify k == stride): output ceil(h / stride).
  void conv(int cout, int k, int stride, int groups = 1) {
    conv_to(cout, k, k, groups, std::ceil(h_ / stride), std::ceil(w_ / stride));
  }
  // A kh x kw convolution with explicit padding (ph, pw), output size as nn.Conv2d computes it.
  void conv_padded(int cout, int kh, int kw, int stride, int ph, int pw) {
    conv_to(cout, kh, kw, 1, out_size(h_, kh, stride, ph, false), out_size(w_, kw, stride, pw, false));
  }
  // Any nn.Conv2d: kernel, stride and padding per dimension, groups.
  void conv_general(int cout, int kh, int kw, int sh, int sw, int ph, int pw, int groups) {
    conv_to(cout, kh, kw, groups, out_size(h_, kh, sh, ph, false), out_size(w_, kw, sw, pw, false));
  }
  // nn.MaxPool2d / nn.AvgPool2d (kernel, stride, padding, ceil_mode); max-pool saves int64 indices.
  void pool(bool max, int k, int stride, int pad, bool ceil_mode) {
    const double in = size();
    h_ = out_size(h_, k, stride, pad, ceil_mode);
    w_ = out_size(w_, k, stride, pad, ceil_mode);
    const double out = size();
    take(a_ * in);  // both pools keep their input (avg_pool2d_backward takes it too)
    if (max) {
      add_memory(out_.micro, "maxpool.fwd", Phase::forward, Bytes(a_ * in + (a_ + 8) * out), 1);
      mark_pool(1, in + out * k * k);
      out_.micro.back().index_elements = in;
      // One autograd node, two kernels: the input gradient's zero fill, then the scatter (or gather).
      add_memory(out_.micro, "maxpool.bwd", Phase::backward, Bytes(a_ * in * 2 + (a_ + 8) * out), 1, 2);
      mark_pool(1, max_pool_bwd_elements(in, out, k));
      saved_ += 8 * out;  // indices
    } else {
      add_memory(out_.micro, "avgpool.fwd", Phase::forward, Bytes(a_ * in + a_ * out), 1);
      mark_pool(2, in + out * k * k);
      add_memory(out_.micro, "avgpool.bwd", Phase::backward, Bytes(a_ * in + a_ * out), 1);
      mark_pool(2, in + out);
    }
  }
  // Adaptive average pool to hw x hw, without flattening (GoogLeNet's auxiliary heads).
  void adaptive_pool(int hw) {
    take_unsaved();
    const double in = size();
    h_ = w_ = hw;
    add_memory(out_.micro, "adaptive_pool.fwd", Phase::forward, Bytes(a_ * (in + size())), 1);
    add_memory(out_.micro, "adaptive_pool.bwd", Phase::backward, Bytes(a_ * (in + size())), 1);
  }
  // torch.flatten(x, 1): a view.
  void flatten() {
    c_ = static_cast<int>(c_ * h_ * w_);
    h_ = w_ = 1;
  }
  // x.chunk(2, dim=1), keeping the second half (ShuffleNetV2): a view, but cuDNN makes the channel slice
  // contiguous before its conv (a copy of the half); backward assembles both halves' gradients (a full copy).
  void channel_split() {
    take_unsaved();
    const double n = size();
    c_ /= 2;
    add_memory(out_.micro, "split.copy", Phase::forward, Bytes(a_ * n), 1);
    if (!nchw_) out_.micro.back().channel_copy = Op::ChannelCopy::split;
    add_memory(out_.micro, "split.grad_cat", Phase::backward, Bytes(2 * a_ * n), 1);
    if (!nchw_) out_.micro.back().channel_copy = Op::ChannelCopy::cat;
  }
  // channel_shuffle: view, transpose(1, 2).contiguous(), view: a strided copy, and the same in backward.
  void channel_shuffle() {
    take_unsaved();
    const double n = size();
    for (const auto& [name, phase] : {std::pair{"shuffle.fwd", Phase::forward}, {"shuffle.bwd", Phase::backward}}) {
      add_memory(out_.micro, name, phase, Bytes(2 * a_ * n), 1);
      out_.micro.back().transpose = true;
      if (!nchw_) out_.micro.back().channel_copy = Op::ChannelCopy::shuffle;
    }
  }
  // PyTorch's conv / pool output size: floor or ceil((in + 2 pad - k) / stride) + 1; with ceil_mode the last
  // window must start inside the input or left padding.
  static double out_size(double in, int k, int stride, int pad, bool ceil_mode) {
    const double q = (in + 2.0 * pad - k) / stride;
    double o = (ceil_mode ? std::ceil(q) : std::floor(q)) + 1;
    if (ceil_mode && (o - 1) * stride >= in + pad) o -= 1;
    return o;
  }
  // Parameters of a layer that does not run (Inception v3's auxiliary head when the map is too small for it).
  void idle_params(double n, double tensors) {
    params_ += n;
    tensors_ += tensors;
  }

  // A conv bias (VGG, ConvNeXt, AlexNet, SqueezeNet). cuDNN's convolution does not add it: aten::_convolution
  // adds it in place afterwards (add_ of a [1, C, 1, 1] tensor), after casting it under autocast, and
  // convolution_backward reduces the output gradient over batch and pixels for its gradient (sum), then casts that
  // back to fp32 (profile of ConvNeXt-T, calibrate/probes/results/convnext-aten-2026-12-02.jsonl: 22 such adds and
  // their sums per step). Both run inside the convolution's own call.
  void bias() {
    const double n = size();
    add_memory(out_.micro, "conv.bias_add", Phase::forward, Bytes(2 * a_ * n), 1, 2);
    broadcast_path(out_.micro.back()).nested = true;
    add_memory(out_.micro, "conv.bias_grad", Phase::backward, Bytes(a_ * n), 1, 2);
    out_.micro.back().nested = true;
    out_.micro.back().channel_sum_rows = b_ * h_ * w_;
    out_.micro.back().channel_sum_channels = c_;
    out_.micro.back().channel_sum_nchw = nchw_;
    params_ += c_;
    tensors_ += 1;
  }
  void bn() {
    const double n = size();
    // Training BatchNorm: statistics + normalise (2 kernels) and the num_batches_tracked increment.
    add_memory(out_.micro, "bn.fwd", Phase::forward, Bytes(3 * a_ * n), 1, 3);
    out_.micro.back().bn_elements = 3 * n;
    mark_bn(out_.micro.back(), n);
    out_.micro.back().index_elements = n;
    // Backward: reduce + elementwise kernels (channels-last); one kernel over each channel's plane in NCHW.
    add_memory(out_.micro, "bn.bwd", Phase::backward, Bytes(5 * a_ * n), 1, nchw_ ? 1 : 2);
    out_.micro.back().bn_elements = 5 * n;
    mark_bn(out_.micro.back(), n);
    out_.micro.back().index_elements = n;
    take(a_ * n);
    params_ += 2.0 * c_;
    out_.buffer_tensors += 3;  // running_mean, running_var (fp32, C each), num_batches_tracked (int64)
    out_.buffer_bytes += Bytes(8.0 * c_ + 8.0);
    tensors_ += 2;
  }
  void act(Act k) {
    const double n = size();
    add_memory(out_.micro, "act.fwd", Phase::forward, Bytes(2 * a_ * n), 1);
    if (k == Act::gelu) gelu_path(out_.micro.back());
    add_memory(out_.micro, "act.bwd", Phase::backward, Bytes(3 * a_ * n), 1);
    if (k == Act::gelu) gelu_path(out_.micro.back());
    take_unsaved();
    if (k == Act::relu) {
      // In-place ReLU keeps its output (which overwrote the BN output, which BN does not keep): free when the
      // next op saves that same tensor (a conv, a pool, a BatchNorm), kept when it goes to a concat, an add or a
      // dropout instead (SqueezeNet's expand branches, AlexNet's classifier).
      pending_relu_ = a_ * n;
    } else {
      // SiLU, GELU and Hardswish keep their input. So does in-place ReLU6 in effect: MobileNetV2 b256 keeps 9.36 GiB
      // after its forward against 6.2 GiB without a copy per ReLU6 (calibrate/probes/results/memory-h200-2026-12-03.jsonl,
      // tools/profile_memory.py); its ReLU-only twin MNASNet 1.0 keeps what the model says (5.31 GiB).
      saved_ += a_ * n;
    }
  }
  void residual_add() {
    take_unsaved();
    const double n = size();
    add_memory(out_.micro, "add.fwd", Phase::forward, Bytes(3 * a_ * n), 1);
    add_memory(out_.micro, "add.grad_sum", Phase::backward, Bytes(3 * a_ * n), 1);
    out_.micro.back().engine_issued = true;
  }
  void stochastic_depth() {
    take_unsaved();
    const double n = size();
    // The multiply by the [N, 1, 1, 1] noise, forward and backward: a broadcast operand.
    add_memory(out_.micro, "stochastic_depth.fwd", Phase::forward, Bytes(2 * a_ * n), 1, 3);
    broadcast_path(out_.micro.back());
    add_memory(out_.micro, "stochastic_depth.bwd", Phase::backward, Bytes(3 * a_ * n), 1);
    broadcast_path(out_.micro.back());
  }
  // nn.MaxPool2d(3, 2, 1): the stem pool of ResNet and its kin.
  void maxpool() { pool(true, 3, 2, 1, false); }
  // Squeeze-and-excitation: global pool, two 1x1 convs with activation, gate, channel-wise scale.
  void squeeze_excite(int squeeze) {
    const double n = size();
    const int ch = c_;
    add_memory(out_.micro, "se.pool", Phase::forward, Bytes(a_ * n), 1);
    add_memory(out_.micro, "se.fc", Phase::forward, Bytes(a_ * b_ * (ch + squeeze) * 4), 6);
    // x * s[N, C, 1, 1]: a broadcast operand; in backward the gradient times s is one too (the other kernel,
    // gradient times x for s's gradient, is same-shape).
    add_memory(out_.micro, "se.scale", Phase::forward, Bytes(2 * a_ * n), 1);
    broadcast_path(out_.micro.back());
    add_memory(out_.micro, "se.scale.bwd", Phase::backward, Bytes(5 * a_ * n), 2);
    out_.micro.back().broadcast_bytes = 2 * a_ * n;
    add_memory(out_.micro, "se.fc.bwd", Phase::backward, Bytes(a_ * b_ * (ch + squeeze) * 8 + a_ * n), 12);
    take(a_ * n);  // the scale's multiply keeps its input
    params_ += 2.0 * ch * squeeze + ch + squeeze;
    tensors_ += 4;
  }
  // torch.cat of the dense block's feature maps into `total` channels (a full copy each layer); its
  // backward slices the gradient and accumulates it into each of the `inputs` earlier feature maps.
  void concat(int total, int inputs) {
    take_unsaved();
    c_ = total;
    const double n = size();
    add_memory(out_.micro, "cat.fwd", Phase::forward, Bytes(2 * a_ * n), 1);
    if (!nchw_) out_.micro.back().channel_copy = Op::ChannelCopy::cat;
    add_memory(out_.micro, "cat.grad_sum", Phase::backward, Bytes(3 * a_ * n), 1, inputs);
    out_.micro.back().engine_issued = true;
  }
  // DenseNet's transition nn.AvgPool2d(2, 2), timed at the measured average-pool rates as pool() times every other
  // pool (its backward runs at about a twentieth of the bandwidth: DenseNet-121 b192's three take 3.3 ms on an
  // H100, where bytes over bandwidth gave 0.25).
  void avgpool2() {
    take_unsaved();
    const double in = size();
    h_ = std::ceil(h_ / 2);
    w_ = std::ceil(w_ / 2);
    const double out = size();
    add_memory(out_.micro, "avgpool2.fwd", Phase::forward, Bytes(a_ * in + a_ * out), 1);
    mark_pool(2, in + out * 4);
    add_memory(out_.micro, "avgpool2.bwd", Phase::backward, Bytes(a_ * in + a_ * out), 1);
    mark_pool(2, in + out);
    saved_ += a_ * out;
  }
  // LayerNorm over channels of a channels-last map; under autocast it runs and outputs in fp32. Its input is a
  // 16-bit convolution output (`from_16bit`: the stem's and every block's) or the fp32 residual stream. Autocast
  // puts layer_norm on its fp32 list, so a 16-bit input is first cast to fp32 (a copy kernel, and the gradient's
  // cast back in backward: ConvNeXt-T b128's aten profile, calibrate/probes/results/convnext-aten-2026-12-02.jsonl,
  // has 14 copies of the 56x56x96 map per step where the block structure alone makes 6) and the normalisation
  // then reads fp32 and saves that fp32 copy.
  void layer_norm(bool from_16bit) {
    const double n = size();
    const bool cast = from_16bit && is_autocast(step_.precision);
    if (cast) {
      add_memory(out_.micro, "ln.cast_in", Phase::forward, Bytes((a_ + 4) * n), 1);
      unrolled_path(out_.micro.back());  // 16-bit -> fp32: the cast runs in the copy kernel
      add_memory(out_.micro, "ln.cast_in.bwd", Phase::backward, Bytes((4 + a_) * n), 1);
    }
    const double in_bytes = cast ? 4 : a_;
    add_memory(out_.micro, "ln.fwd", Phase::forward, Bytes((in_bytes + 4) * n), 1);
    out_.micro.back().rows = n / c_;
    out_.micro.back().channels = c_;
    add_memory(out_.micro, "ln.bwd", Phase::backward, Bytes(4 * 4 * n), 1, 2);
    out_.micro.back().rows = n / c_;
    out_.micro.back().channels = c_;
    take(in_bytes * n);
    params_ += 2.0 * c_;
    tensors_ += 2;
  }
  // Linear over the channels of every pixel (cuBLAS, not cuDNN); input arrives fp32 from a LayerNorm.
  void pointwise_linear(int cout, bool input_fp32) {
    LinearSpec l{"pw_linear", b_ * h_ * w_, static_cast<double>(c_), static_cast<double>(cout), 1, true,
                 input_fp32 && is_autocast(step_.precision), true, false};
    add_linear(out_.micro, l, step_.precision);
    take(a_ * b_ * h_ * w_ * c_);
    params_ += static_cast<double>(c_) * cout + cout;
    tensors_ += 2;
    c_ = cout;
  }
  // Elementwise op on an fp32 residual stream (layer scale, residual add), `reads` inputs of it. `cast_down`:
  // the op is the stream's cast to the 16-bit block input under autocast, whose backward casts the 16-bit
  // gradient up to fp32 inside the copy kernel (the unrolled path).
  void fp32_elementwise(const char* name, double reads, bool cast_down = false) {
    take_unsaved();
    const double n = size();
    add_memory(out_.micro, std::string(name) + ".fwd", Phase::forward, Bytes(4 * (reads + 1) * n), 1);
    add_memory(out_.micro, std::string(name) + ".bwd", Phase::backward, Bytes(4 * (reads + 1) * n), 1);
    if (cast_down && is_autocast(step_.precision)) unrolled_path(out_.micro.back());
  }
  // ConvNeXt's layer scale: gamma [C, 1, 1] (fp32) times the block output (bf16 under autocast) -> fp32.
  // Backward (one autograd node): grad x gamma, its cast to the block's dtype, grad x block output and the sum
  // over batch and pixels for gamma's gradient (the profile's three muls and one sum per block).
  void layer_scale() {
    const double n = size();
    // gamma [C, 1, 1] is a broadcast operand; in backward grad x gamma is one too, the cast of that product is
    // vectorised, and grad (fp32) x block output (16-bit) casts an operand in the kernel.
    add_memory(out_.micro, "layer_scale.fwd", Phase::forward, Bytes((a_ + 4) * n), 1);
    broadcast_path(out_.micro.back());
    add_memory(out_.micro, "layer_scale.bwd", Phase::backward, Bytes((8 + (4 + a_) + (8 + a_)) * n), 1, 3);
    out_.micro.back().broadcast_bytes = 8 * n;
    if (a_ < 4) out_.micro.back().unrolled_bytes = (8 + a_) * n;
    // gamma's gradient: the fp32 product summed per channel over batch and pixels, a reduction that runs at the
    // probed per-channel-sum rate (as a convolution's bias gradient), far below the copy bandwidth.
    add_memory(out_.micro, "layer_scale.grad_sum", Phase::backward, Bytes(4 * n), 1);
    out_.micro.back().nested = true;
    out_.micro.back().channel_sum_rows = b_ * h_ * w_;
    out_.micro.back().channel_sum_channels = c_;
    out_.micro.back().channel_sum_nchw = false;
    take(a_ * n);
    params_ += c_;
    tensors_ += 1;
  }
  // MaxViT's PartitionAttentionLayer (torchvision maxvit.py) on the current map, window or grid partition alike
  // (7 x 7 = 49 tokens a partition): partition copy; LayerNorm (fp32, its 16-bit input cast first); qkv Linear;
  // k * scale; einsum q k^T as a batched matmul per (partition, head) after copying q to contiguous batches;
  // + the fp32 relative-position bias (fp32 scores); fp32 softmax, cast to 16 bits; einsum with v (copied);
  // heads merged (copy); merge Linear; stochastic depth and residual add; then LayerNorm, Linear(C, 4C), GELU,
  // Linear(4C, C), stochastic depth, residual add; departition copy. Each copy has a backward twin.
  // `sd`: stochastic depth runs (its probability is 0, no kernels, in the network's very first layer).
  void partition_attention(int head_dim, bool sd) {
    const double c = c_, t = b_ * h_ * w_, n = t * c;
    const double heads = c / head_dim, tokens = 49;
    const double bc = t / tokens * heads;     // batched (partition, head) products
    const double e = bc * tokens * tokens;    // attention score elements
    const double a = a_;
    const bool ac = is_autocast(step_.precision);
    auto mem = [&](const std::string& name, Phase ph, double bytes, int kernels = 1, bool transpose = false) {
      add_memory(out_.micro, "attn." + name, ph, Bytes(bytes), 1, kernels);
      out_.micro.back().transpose = transpose;
      return &out_.micro.back();
    };
    take_unsaved();
    mem("partition", Phase::forward, 2 * a * n, 1, true);
    mem("partition.bwd", Phase::backward, 2 * a * n, 1, true);
    layer_norm(true);
    pointwise_linear(static_cast<int>(3 * c), ac);  // to_qkv, bias; saves its 16-bit input
    c_ = static_cast<int>(c);
    mem("qkv.grad_cat", Phase::backward, 2 * a * 3 * n);  // chunk's backward: the three gradients concatenated
    mem("k_scale", Phase::forward, 2 * a * n);
    mem("k_scale.bwd", Phase::backward, 2 * a * n);
    mem("q.batch_copy", Phase::forward, 2 * a * n, 1, true)->nested = true;
    add_small_bmm(out_.micro, "attn.qk.fwd", Phase::forward, bc, tokens, tokens, head_dim, 1, step_.precision);
    add_small_bmm(out_.micro, "attn.qk.bwd_dq", Phase::backward, bc, tokens, head_dim, tokens, 1, step_.precision);
    add_small_bmm(out_.micro, "attn.qk.bwd_dk", Phase::backward, bc, head_dim, tokens, tokens, 1, step_.precision);
    saved_ += 2 * a * n;
    // The bias: the [(2 x 7 - 1)^2, heads] fp32 table gathered by index, permuted and made contiguous; added to the
    // 16-bit scores (fp32 out); its gradient summed over batch and partitions, then scattered back into the table.
    const double tab = heads * tokens * tokens;
    mem("rel_bias.gather", Phase::forward, 3 * 4 * tab, 2);
    mem("rel_bias.gather.bwd", Phase::backward, 3 * 4 * tab + 8 * 169 * heads, 4);
    broadcast_path(*mem("rel_bias.add", Phase::forward, (a + 4) * e));
    if (ac) mem("rel_bias.add.grad_cast", Phase::backward, 6 * e);
    mem("rel_bias.grad_sum", Phase::backward, 4 * e)->nested = true;
    mem("softmax", Phase::forward, 8 * e);
    mem("softmax.bwd", Phase::backward, 12 * e);
    saved_ += 4 * e;
    if (ac) {
      mem("probs.cast", Phase::forward, 6 * e);
      mem("probs.cast.bwd", Phase::backward, 6 * e);
      saved_ += a * e;
    }
    mem("v.batch_copy", Phase::forward, 2 * a * n, 1, true)->nested = true;
    add_small_bmm(out_.micro, "attn.av.fwd", Phase::forward, bc, tokens, head_dim, tokens, 1, step_.precision);
    add_small_bmm(out_.micro, "attn.av.bwd_dp", Phase::backward, bc, tokens, tokens, head_dim, 1, step_.precision);
    add_small_bmm(out_.micro, "attn.av.bwd_dv", Phase::backward, bc, tokens, head_dim, tokens, 1, step_.precision);
    saved_ += a * n;
    mem("heads.merge", Phase::forward, 2 * a * n, 1, true);
    mem("heads.merge.bwd", Phase::backward, 2 * a * n, 1, true);
    pointwise_linear(static_cast<int>(c), false);  // merge
    params_ += 169 * heads;  // relative_position_bias_table
    tensors_ += 1;
    if (sd) stochastic_depth();
    residual_add();
    layer_norm(true);
    pointwise_linear(static_cast<int>(4 * c), ac);
    act(Act::gelu);
    pointwise_linear(static_cast<int>(c), false);
    if (sd) stochastic_depth();
    residual_add();
    mem("departition", Phase::forward, 2 * a * n, 1, true);
    mem("departition.bwd", Phase::backward, 2 * a * n, 1, true);
  }
  // Adaptive average pool to `hw` x `hw` and flatten (VGG's 7x7 before its classifier).
  void pool_flatten(int hw) {
    take_unsaved();
    const double n = size();
    add_memory(out_.micro, "adaptive_pool.fwd", Phase::forward, Bytes(a_ * n), 1);
    add_memory(out_.micro, "adaptive_pool.bwd", Phase::backward, Bytes(a_ * n), 1);
    c_ = c_ * hw * hw;
    h_ = w_ = 1;
  }
  void dropout() {
    take_unsaved();
    const double n = size();
    add_memory(out_.micro, "dropout.fwd", Phase::forward, Bytes(3 * a_ * n), 1, 2);
    add_memory(out_.micro, "dropout.bwd", Phase::backward, Bytes(3 * a_ * n), 1);
    saved_ += n;  // the mask
  }
  void classifier(int classes) {
    take_unsaved();
    const double n = size();
    add_memory(out_.micro, "avgpool.fwd", Phase::forward, Bytes(a_ * n), 1);
    add_memory(out_.micro, "avgpool.bwd", Phase::backward, Bytes(a_ * n), 1);
    linear(classes);
  }
  void linear(int out, bool bias = true) {
    take(a_ * b_ * c_);
    add_linear(out_.micro, {"fc", static_cast<double>(b_), static_cast<double>(c_), static_cast<double>(out), 1,
                            bias, false, true, false}, step_.precision);
    params_ += static_cast<double>(c_) * out + (bias ? out : 0);
    tensors_ += bias ? 2 : 1;
    c_ = out;
    h_ = w_ = 1;
  }
  void finish(int classes) {
    take_unsaved();
    add_memory(out_.micro, "ce", Phase::forward, Bytes(8.0 * b_ * classes), 3);
    add_memory(out_.micro, "ce.bwd", Phase::backward, Bytes(8.0 * b_ * classes), 3);
    out_.params = params_;
    out_.param_tensors = tensors_;
    out_.activations = Bytes(saved_);
    out_.largest_tensor = Bytes(largest_);
    // Backward frees each op's saved inputs and makes its fp32 weight gradients as it passes it: at the point
    // between forward op k and k+1, what forward saved up to k is alive and the gradients of everything after.
    double walk = saved_;
    for (const auto& [saved, params] : trace_) walk = std::max(walk, saved + 4.0 * (params_ - params));
    out_.backward_walk_peak = Bytes(walk);
  }
  // A branch point: restore() goes back to the tensor state() saw (Inception branches, shortcuts); whoever
  // consumes it again does not save it twice.
  struct State { int c; double h, w; int tensor; };
  State state() const { return {c_, h_, w_, tensor_}; }
  // Starts from a c x h x w feature map; `first` = the network's first convolution (its input needs no gradient).
  void start_at(int c, double h, double w, bool first) {
    c_ = c; h_ = h; w_ = w; first_ = first;
  }
  void restore(State s) {
    take_unsaved();
    c_ = s.c; h_ = s.h; w_ = s.w; tensor_ = s.tensor;
  }

 private:
  // cuDNN runs its NHWC kernels on NCHW tensors between layout transforms (nchwToNhwc / nhwcToNchw; one
  // convolution at a time: calibrate/probes/results/conv-layout-2026-12-03.jsonl). A transformed pass moves its
  // two activation tensors (forward: input and output; input gradient: output gradient and input gradient;
  // weight gradient: input and output gradient) and, for a k x k filter, the filter (KCRS <-> KRSC; a 1x1
  // filter is the same in both); each transform reads and writes its tensor. Which passes are transformed is
  // cuDNN's choice per shape: op_count() takes the band's measured passes. As built (no measured passes): all
  // passes of a spatial convolution, none of a 1x1. Inside the convolution's call.
  void nchw_transforms(double in_elems, double out_elems, double weight_elems, int band) {
    const bool spatial = band == nchw_spatial || band == nchw_spatial_first;
    const double pass = 2 * a_ * (in_elems + out_elems + (spatial ? weight_elems : 0));
    const int kernels = spatial ? 3 : 2;
    const double bwd_passes = first_ ? 1 : 2;  // the first conv has no input gradient
    add_memory(out_.micro, "conv.nchw_transform", Phase::forward, Bytes(pass), spatial ? 1 : 0, kernels);
    Op& f = out_.micro.back();
    f.transpose = f.nchw = f.nested = true;
    f.nchw_band = band;
    add_memory(out_.micro, "conv.nchw_transform.bwd", Phase::backward, Bytes(pass), spatial ? bwd_passes : 0,
               kernels);
    Op& b = out_.micro.back();
    b.transpose = b.nchw = b.nested = true;
    b.nchw_band = band;
  }
  static int nchw_band(double k2, bool strided, bool first, double out_pixels) {
    if (k2 > 1) return first ? nchw_spatial_first : nchw_spatial;
    if (strided) return nchw_pointwise_strided;
    if (out_pixels <= 1) return -1;
    return out_pixels <= 100 ? nchw_pointwise_small : out_pixels <= 400 ? nchw_pointwise_mid : nchw_pointwise_large;
  }
  // Every op consumes the current tensor and makes a new one. take(bytes): the op keeps its input for backward
  // (counted once per tensor, however many branches consume it); take_unsaved(): it does not, so an in-place
  // ReLU's output that reached it is kept by the ReLU itself.
  void take(double input_bytes) {
    largest_ = std::max(largest_, a_ * size());
    trace_.push_back({saved_, params_});
    if (saved_tensors_.insert(tensor_).second) saved_ += input_bytes;
    pending_relu_ = 0;
    tensor_ = next_tensor_++;
  }
  void take_unsaved() {
    largest_ = std::max(largest_, a_ * size());
    trace_.push_back({saved_, params_});
    saved_ += pending_relu_;
    pending_relu_ = 0;
    tensor_ = next_tensor_++;
  }
  // Max-pool backward: in NCHW a scatter of each output's gradient to its argmax (input + output elements), in
  // channels-last a gather over each input's windows (input + output x k^2), as the probe's times follow.
  double max_pool_bwd_elements(double in, double out, int k) const {
    return nchw_ ? in + out : in + out * k * k;
  }
  // The op just added is a pool of `kind` (1 max, 2 average) walking `elements` (Op::pool_elements).
  void mark_pool(int kind, double elements) {
    Op& op = out_.micro.back();
    op.pool = kind;
    op.pool_elements = elements;
    op.pool_nchw = nchw_;
  }
  // A BatchNorm op's channels and map elements (its rate depends on both); NCHW ones also their layout and planes.
  void mark_bn(Op& op, double n) const {
    op.channels = c_;
    op.elements = n;
    op.dtype = gemm_dtype(step_.precision);  // the map's dtype picks PyTorch's or cuDNN's BatchNorm
    if (!nchw_) return;
    op.nchw = true;
    op.planes = b_ * c_;
  }
  void conv_to(int cout, int kh, int kw, int groups, double hout, double wout) {
    const double hin = h_, win = w_;
    const double in_elems = b_ * c_ * hin * win;
    h_ = hout;
    w_ = wout;
    const double k2 = static_cast<double>(kh) * kw;
    const double pixels = b_ * h_ * w_;
    const bool depthwise = groups > 1 && groups == c_;
    take(a_ * in_elems);
    params_ += static_cast<double>(cout) * (c_ / groups) * k2;
    tensors_ += 1;
    if (depthwise) {
      Op op;
      op.name = "dwconv";
      op.kind = OpKind::simt;
      op.dtype = gemm_dtype(step_.precision);  // the tensors' dtype; the arithmetic is fp32 on CUDA cores
      op.flops = Flops(2.0 * pixels * cout * k2);
      op.dw_input_flops = Flops(2.0 * in_elems * k2);
      op.dw_kernel = std::max(kh, kw);
      op.dw_output_elements = pixels * cout;
      op.bytes = Bytes(a_ * (in_elems + pixels * cout));
      op.nchw = nchw_;  // NCHW: PyTorch's native depthwise kernels instead of cuDNN's
      op.index_elements = std::max(in_elems, pixels * cout);
      out_.micro.push_back(op);
      op.phase = Phase::backward;
      op.count = 2;  // dgrad and wgrad
      op.name = "dwconv.bwd";
      out_.micro.push_back(op);
      if (is_autocast(step_.precision)) {
        add_memory(out_.micro, "dwconv.w_cast", Phase::forward, Bytes(6.0 * cout * k2), 1);
        add_memory(out_.micro, "dwconv.dw_cast", Phase::backward, Bytes(6.0 * cout * k2), 1);
      }
    } else {
      LinearSpec l{"conv", pixels, static_cast<double>(c_) / groups * k2, static_cast<double>(cout),
                   1, false, false, !first_, false};
      const std::size_t from = out_.micro.size();
      add_linear(out_.micro, l, step_.precision);
      // cuDNN's implicit GEMMs read the tensors themselves, never an im2col copy: each pass moves its input,
      // output and filter once (add_linear's A = tokens x in would count the input k x k times). The input
      // gradient is a convolution of the output gradient with the rotated filter: its reduction runs over
      // C_out x k x k, with C_in / groups outputs per pixel (a Linear's dgrad would reduce over C_out alone).
      const double conv_bytes = a_ * (in_elems + pixels * cout + static_cast<double>(cout) * (c_ / groups) * k2);
      for (std::size_t i = from; i < out_.micro.size(); ++i) {
        Op& op = out_.micro[i];
        if (op.kind != OpKind::gemm) continue;
        op.conv = true;
        op.stem = first_;
        op.bytes = Bytes(conv_bytes);
        if (op.name == "conv.dgrad") op.shape = {pixels, static_cast<double>(c_) / groups, cout * k2};
        if (groups > 1) {
          op.group_width = c_ / groups;
          op.group_strided = h_ < hin || w_ < win;
        }
        // Weight gradients reduce over batch x pixels: cuDNN splits that reduction (extra kernel).
        if (op.name == "conv.wgrad") op.kernels = 2;
      }
      const int band = nchw_band(k2, h_ < hin || w_ < win, first_, h_ * w_);
      if (nchw_ && k2 == 1 && band >= 0)  // NCHW 1x1 convolutions run cuDNN kernels of their own (probed factor)
        for (std::size_t i = from; i < out_.micro.size(); ++i)
          if (out_.micro[i].kind == OpKind::gemm) out_.micro[i].nchw_conv_band = band;
      if (nchw_ && band >= 0) nchw_transforms(in_elems, pixels * cout, cout * (c_ / groups) * k2, band);
    }
    first_ = false;
    c_ = cout;
  }

  const StepConfig& step_;
  StepOps& out_;
  double b_;
  double a_ = 2;
  int c_ = 3;
  double h_ = 224, w_ = 224;
  bool first_ = true;
  bool nchw_ = false;  // PyTorch's default layout (channels_last off)
  int tensor_ = 0, next_tensor_ = 1;  // the current activation, by id
  std::set<int> saved_tensors_;       // activations some op keeps for backward
  std::vector<std::pair<double, double>> trace_;  // (saved bytes, parameters) before each op, in forward order
  double pending_relu_ = 0;           // bytes of an in-place ReLU output not yet known to be kept by its consumer
  double saved_ = 0, params_ = 0, tensors_ = 0;
  double largest_ = 0;                // the largest feature map any op took (StepOps::largest_tensor)
};

// End of a bottleneck block (ResNet, RegNet): the shortcut from the block input `in` (a strided 1x1 conv + BN
// when the stride or the width changes), the residual add and ReLU.
void residual_join(CnnBuilder& nb, CnnBuilder::State in, int out, int stride) {
  if (stride != 1 || in.c != out) {
    const auto main = nb.state();
    nb.restore(in);
    nb.conv(out, 1, stride); nb.bn();
    nb.restore(main);
  }
  nb.residual_add(); nb.act(Act::relu);
}

// ResNet v1.5 and its grouped / wide variants: bottleneck width = planes * width_per_group / 64 * groups.
void resnet(CnnBuilder& nb, const std::vector<int>& depth, bool bottleneck, int groups = 1, int width_per_group = 64) {
  nb.conv(64, 7, 2); nb.bn(); nb.act(Act::relu); nb.maxpool();
  const int widths[4] = {64, 128, 256, 512};
  for (int st = 0; st < 4; ++st) {
    for (int i = 0; i < depth[st]; ++i) {
      const int stride = (i == 0 && st > 0) ? 2 : 1;
      const int planes = widths[st], out = bottleneck ? 4 * planes : planes;
      const int w = bottleneck ? planes * width_per_group / 64 * groups : planes;
      const auto in = nb.state();
      if (bottleneck) {
        nb.conv(w, 1, 1); nb.bn(); nb.act(Act::relu);
        nb.conv(w, 3, stride, groups); nb.bn(); nb.act(Act::relu);
        nb.conv(out, 1, 1); nb.bn();
      } else {
        nb.conv(w, 3, stride); nb.bn(); nb.act(Act::relu);
        nb.conv(w, 3, 1); nb.bn();
      }
      residual_join(nb, in, out, stride);
    }
  }
  nb.classifier(1000);
}

int make_divisible(double v, int divisor = 8) {
  int nv = std::max(divisor, static_cast<int>(v + divisor / 2.0) / divisor * divisor);
  if (nv < 0.9 * v) nv += divisor;
  return nv;
}

// Inverted residual block (MobileNetV2/V3, EfficientNet MBConv).
void inverted_residual(CnnBuilder& nb, int expanded, int out, int k, int stride, int se_squeeze, Act act,
                       bool stochastic) {
  const int in = nb.c();
  if (expanded != in) { nb.conv(expanded, 1, 1); nb.bn(); nb.act(act); }
  nb.conv(expanded, k, stride, expanded); nb.bn(); nb.act(act);
  if (se_squeeze > 0) nb.squeeze_excite(se_squeeze);
  nb.conv(out, 1, 1); nb.bn();
  if (stride == 1 && in == out) {
    if (stochastic) nb.stochastic_depth();
    nb.residual_add();
  }
}

// DenseNet-BC (Huang et al. 2017; torchvision densenet121/169/201): growth 32, bottleneck 4x, compression 0.5.
void densenet(CnnBuilder& nb, const std::vector<int>& blocks, int init = 64, int growth = 32) {
  nb.conv(init, 7, 2); nb.bn(); nb.act(Act::relu); nb.maxpool();
  int channels = init;
  for (std::size_t bi = 0; bi < blocks.size(); ++bi) {
    for (int i = 0; i < blocks[bi]; ++i) {
      nb.concat(channels, i + 1);
      nb.bn(); nb.act(Act::relu); nb.conv(4 * growth, 1, 1);
      nb.bn(); nb.act(Act::relu); nb.conv(growth, 3, 1);
      channels += growth;
    }
    nb.concat(channels, blocks[bi] + 1);
    if (bi + 1 < blocks.size()) {
      nb.bn(); nb.act(Act::relu); nb.conv(channels / 2, 1, 1); nb.avgpool2();
      channels /= 2;
    }
  }
  nb.bn(); nb.act(Act::silu);  // final ReLU is not in-place: it keeps its own output
  nb.classifier(1000);
}

// ConvNeXt (Liu et al. 2022; torchvision convnext_tiny/small/base): 7x7 depthwise conv, LayerNorm,
// pointwise Linear 4x with GELU, layer scale and stochastic depth on an fp32 residual stream.
void convnext(CnnBuilder& nb, const std::vector<int>& depths, const std::vector<int>& dims) {
  nb.conv(dims[0], 4, 4); nb.bias(); nb.layer_norm(true);
  nb.channels_last_from_here();
  for (std::size_t st = 0; st < depths.size(); ++st) {
    if (st > 0) { nb.layer_norm(false); nb.conv(dims[st], 2, 2); nb.bias(); }  // on the fp32 residual stream
    for (int i = 0; i < depths[st]; ++i) {
      nb.fp32_elementwise("cast_in", 0, true);
      nb.conv(dims[st], 7, 1, dims[st]); nb.bias();
      nb.layer_norm(true);
      nb.pointwise_linear(4 * dims[st], true);
      nb.act(Act::gelu);
      nb.pointwise_linear(dims[st], false);
      nb.layer_scale();
      nb.stochastic_depth();
      nb.fp32_elementwise("residual", 2);
    }
  }
  nb.layer_norm(false);
  nb.classifier(1000);
}

// VGG (Simonyan & Zisserman 2015; torchvision vgg11/13/16/19, and the _bn variants with BatchNorm after every
// conv, whose bias torchvision keeps): 3x3 conv + ReLU stacks, max-pools, then 25088 -> 4096 -> 4096 -> 1000
// with dropout.
void vgg(CnnBuilder& nb, const std::vector<int>& cfg, bool batch_norm = false) {
  for (int c : cfg) {
    if (c == 0) {
      nb.pool(true, 2, 2, 0, false);  // nn.MaxPool2d(kernel_size=2, stride=2)
    } else {
      nb.conv(c, 3, 1);
      nb.bias();
      if (batch_norm) nb.bn();
      nb.act(Act::relu);
    }
  }
  nb.pool_flatten(7);
  nb.linear(4096); nb.act(Act::relu); nb.dropout();
  nb.linear(4096); nb.act(Act::relu); nb.dropout();
  nb.linear(1000);
}

void mobilenet_v2(CnnBuilder& nb) {
  nb.conv(32, 3, 2); nb.bn(); nb.act(Act::relu6);
  const int cfg[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                         {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  for (const auto& r : cfg)
    for (int i = 0; i < r[2]; ++i)
      inverted_residual(nb, nb.c() * r[0], r[1], 3, i == 0 ? r[3] : 1, 0, Act::relu6, false);
  nb.conv(1280, 1, 1); nb.bn(); nb.act(Act::relu6);
  nb.classifier(1000);
}

void efficientnet(CnnBuilder& nb, double width, double depth) {
  auto ch = [&](int c) { return make_divisible(c * width); };
  nb.conv(ch(32), 3, 2); nb.bn(); nb.act(Act::silu);
  // expand, kernel, stride, in, out, layers (torchvision _efficientnet_conf, B0)
  const int cfg[7][6] = {{1, 3, 1, 32, 16, 1}, {6, 3, 2, 16, 24, 2},  {6, 5, 2, 24, 40, 2},  {6, 3, 2, 40, 80, 3},
                         {6, 5, 1, 80, 112, 3}, {6, 5, 2, 112, 192, 4}, {6, 3, 1, 192, 320, 1}};
  for (const auto& r : cfg) {
    const int layers = static_cast<int>(std::ceil(r[5] * depth));
    for (int i = 0; i < layers; ++i) {
      const int in = nb.c();
      inverted_residual(nb, in * r[0], ch(r[4]), r[1], i == 0 ? r[2] : 1, std::max(1, in / 4), Act::silu, true);
    }
  }
  nb.conv(4 * nb.c(), 1, 1); nb.bn(); nb.act(Act::silu);  // head: 4x the last block's width
  nb.classifier(1000);
}

// MobileNetV3 (Howard et al. 2019; torchvision _mobilenet_v3_conf): each row is in, kernel, expanded, out,
// squeeze-excite, hardswish, stride; the last conv widens to `last` channels, the classifier's hidden layer is
// `hidden` wide.
using MobileNetV3Row = std::array<int, 7>;
void mobilenet_v3(CnnBuilder& nb, const std::vector<MobileNetV3Row>& cfg, int last, int hidden) {
  nb.conv(16, 3, 2); nb.bn(); nb.act(Act::hardswish);
  for (const auto& r : cfg)
    inverted_residual(nb, r[2], r[3], r[1], r[6], r[4] ? make_divisible(r[2] / 4.0) : 0,
                      r[5] ? Act::hardswish : Act::relu, false);
  nb.conv(last, 1, 1); nb.bn(); nb.act(Act::hardswish);  // 6x the last block's width
  nb.classifier(hidden);
  nb.act(Act::hardswish);
  nb.linear(1000);
}

void mobilenet_v3_large(CnnBuilder& nb) {
  mobilenet_v3(nb, {{16, 3, 16, 16, 0, 0, 1},    {16, 3, 64, 24, 0, 0, 2},    {24, 3, 72, 24, 0, 0, 1},
                    {24, 5, 72, 40, 1, 0, 2},    {40, 5, 120, 40, 1, 0, 1},   {40, 5, 120, 40, 1, 0, 1},
                    {40, 3, 240, 80, 0, 1, 2},   {80, 3, 200, 80, 0, 1, 1},   {80, 3, 184, 80, 0, 1, 1},
                    {80, 3, 184, 80, 0, 1, 1},   {80, 3, 480, 112, 1, 1, 1},  {112, 3, 672, 112, 1, 1, 1},
                    {112, 5, 672, 160, 1, 1, 2}, {160, 5, 960, 160, 1, 1, 1}, {160, 5, 960, 160, 1, 1, 1}},
               960, 1280);
}

void mobilenet_v3_small(CnnBuilder& nb) {
  mobilenet_v3(nb, {{16, 3, 16, 16, 1, 0, 2},  {16, 3, 72, 24, 0, 0, 2},  {24, 3, 88, 24, 0, 0, 1},
                    {24, 5, 96, 40, 1, 1, 2},  {40, 5, 240, 40, 1, 1, 1}, {40, 5, 240, 40, 1, 1, 1},
                    {40, 5, 120, 48, 1, 1, 1}, {48, 5, 144, 48, 1, 1, 1}, {48, 5, 288, 96, 1, 1, 2},
                    {96, 5, 576, 96, 1, 1, 1}, {96, 5, 576, 96, 1, 1, 1}},
               576, 1024);
}

// MNASNet (Tan et al. 2019; torchvision mnasnet0_5/0_75/1_0/1_3): widths scaled by alpha and rounded to a
// multiple of 8 (_round_to_multiple_of, as make_divisible), ReLU inverted residuals without SE.
void mnasnet(CnnBuilder& nb, double alpha) {
  const int base[8] = {32, 16, 24, 40, 80, 96, 192, 320};  // torchvision _get_depths
  int d[8];
  for (int i = 0; i < 8; ++i) d[i] = make_divisible(base[i] * alpha);
  nb.conv(d[0], 3, 2); nb.bn(); nb.act(Act::relu);
  nb.conv(d[0], 3, 1, d[0]); nb.bn(); nb.act(Act::relu);
  nb.conv(d[1], 1, 1); nb.bn();
  // out depth index, kernel, stride, expansion, repeats (torchvision MNASNet._stack calls)
  const int cfg[6][5] = {{2, 3, 2, 3, 3}, {3, 5, 2, 3, 3}, {4, 5, 2, 6, 3},
                         {5, 3, 1, 6, 2}, {6, 5, 2, 6, 4}, {7, 3, 1, 6, 1}};
  for (const auto& r : cfg)
    for (int i = 0; i < r[4]; ++i)
      inverted_residual(nb, nb.c() * r[3], d[r[0]], r[1], i == 0 ? r[2] : 1, 0, Act::relu, false);
  nb.conv(1280, 1, 1); nb.bn(); nb.act(Act::relu);
  nb.pool_flatten(1);  // x.mean([2, 3])
  nb.dropout();
  nb.linear(1000);
}

// AlexNet (torchvision alexnet: the one-GPU variant of Krizhevsky et al. 2012, as in "One weird trick").
void alexnet(CnnBuilder& nb) {
  nb.conv_padded(64, 11, 11, 4, 2, 2); nb.bias(); nb.act(Act::relu); nb.pool(true, 3, 2, 0, false);
  nb.conv_padded(192, 5, 5, 1, 2, 2); nb.bias(); nb.act(Act::relu); nb.pool(true, 3, 2, 0, false);
  for (int c : {384, 256, 256}) { nb.conv_padded(c, 3, 3, 1, 1, 1); nb.bias(); nb.act(Act::relu); }
  nb.pool(true, 3, 2, 0, false);
  nb.pool_flatten(6);
  nb.dropout(); nb.linear(4096); nb.act(Act::relu);
  nb.dropout(); nb.linear(4096); nb.act(Act::relu);
  nb.linear(1000);
}

// SqueezeNet Fire module: 1x1 squeeze, then 1x1 and 3x3 expands (all with bias and ReLU), concatenated.
void fire(CnnBuilder& nb, int squeeze, int e1, int e3) {
  nb.conv(squeeze, 1, 1); nb.bias(); nb.act(Act::relu);
  const auto s = nb.state();
  nb.conv(e1, 1, 1); nb.bias(); nb.act(Act::relu);
  nb.restore(s);
  nb.conv(e3, 3, 1); nb.bias(); nb.act(Act::relu);
  nb.concat(e1 + e3, 2);
}

// SqueezeNet 1.0 / 1.1 (Iandola et al. 2016; torchvision squeezenet.py): ceil-mode max-pools, conv classifier.
void squeezenet(CnnBuilder& nb, bool v1_1) {
  auto maxpool = [&] { nb.pool(true, 3, 2, 0, true); };
  if (v1_1) {
    nb.conv_padded(64, 3, 3, 2, 0, 0); nb.bias(); nb.act(Act::relu); maxpool();
    fire(nb, 16, 64, 64); fire(nb, 16, 64, 64); maxpool();
    fire(nb, 32, 128, 128); fire(nb, 32, 128, 128); maxpool();
    fire(nb, 48, 192, 192); fire(nb, 48, 192, 192); fire(nb, 64, 256, 256); fire(nb, 64, 256, 256);
  } else {
    nb.conv_padded(96, 7, 7, 2, 0, 0); nb.bias(); nb.act(Act::relu); maxpool();
    fire(nb, 16, 64, 64); fire(nb, 16, 64, 64); fire(nb, 32, 128, 128); maxpool();
    fire(nb, 32, 128, 128); fire(nb, 48, 192, 192); fire(nb, 48, 192, 192); fire(nb, 64, 256, 256); maxpool();
    fire(nb, 64, 256, 256);
  }
  nb.dropout();
  nb.conv(1000, 1, 1); nb.bias(); nb.act(Act::relu);
  nb.pool_flatten(1);
}

// ShuffleNetV2 unit (Ma et al. 2018; torchvision shufflenetv2.InvertedResidual): stride 2 runs both branches
// on the whole input; stride 1 splits the channels and passes one half through. Concat, then channel shuffle.
void shuffle_unit(CnnBuilder& nb, int out, int stride) {
  const int half = out / 2;
  if (stride > 1) {
    const auto in = nb.state();
    nb.conv(in.c, 3, stride, in.c); nb.bn();
    nb.conv(half, 1, 1); nb.bn(); nb.act(Act::relu);
    nb.restore(in);
  } else {
    nb.channel_split();
  }
  nb.conv(half, 1, 1); nb.bn(); nb.act(Act::relu);
  nb.conv(half, 3, stride, half); nb.bn();
  nb.conv(half, 1, 1); nb.bn(); nb.act(Act::relu);
  nb.concat(out, 2);
  nb.channel_shuffle();
}

// ShuffleNetV2: stage widths and the final 1x1 conv width (torchvision stages_out_channels), repeats 4, 8, 4.
void shufflenet_v2(CnnBuilder& nb, const std::array<int, 4>& widths) {
  nb.conv(24, 3, 2); nb.bn(); nb.act(Act::relu); nb.maxpool();
  const int repeats[3] = {4, 8, 4};
  for (int st = 0; st < 3; ++st)
    for (int i = 0; i < repeats[st]; ++i) shuffle_unit(nb, widths[st], i == 0 ? 2 : 1);
  nb.conv(widths[3], 1, 1); nb.bn(); nb.act(Act::relu);
  nb.classifier(1000);
}

// EfficientNetV2 (Tan & Le 2021; torchvision efficientnet_v2_s/m/l): FusedMBConv (a k x k expansion conv, or a
// single conv at expansion 1) in the early stages, then MBConv with SE; stochastic depth on residuals.
struct V2Stage { bool fused; int expand, kernel, stride, out, layers; };
void efficientnet_v2(CnnBuilder& nb, int stem, const std::vector<V2Stage>& cfg) {
  nb.conv(stem, 3, 2); nb.bn(); nb.act(Act::silu);
  for (const auto& r : cfg) {
    for (int i = 0; i < r.layers; ++i) {
      const int in = nb.c(), stride = i == 0 ? r.stride : 1;
      if (!r.fused) {
        inverted_residual(nb, in * r.expand, r.out, r.kernel, stride, std::max(1, in / 4), Act::silu, true);
        continue;
      }
      if (r.expand != 1) {
        nb.conv(in * r.expand, r.kernel, stride); nb.bn(); nb.act(Act::silu);
        nb.conv(r.out, 1, 1); nb.bn();
      } else {
        nb.conv(r.out, r.kernel, stride); nb.bn(); nb.act(Act::silu);
      }
      if (stride == 1 && in == r.out) { nb.stochastic_depth(); nb.residual_add(); }
    }
  }
  nb.conv(1280, 1, 1); nb.bn(); nb.act(Act::silu);  // torchvision last_channel
  nb.classifier(1000);
}

// Inception's BasicConv2d: conv without bias, BatchNorm, ReLU.
void basic_conv(CnnBuilder& nb, int out, int kh, int kw, int stride = 1, int ph = 0, int pw = 0) {
  nb.conv_padded(out, kh, kw, stride, ph, pw); nb.bn(); nb.act(Act::relu);
}

// Runs each branch from the same input and concatenates their outputs along channels.
void branches(CnnBuilder& nb, const std::vector<std::function<void()>>& bs) {
  const auto in = nb.state();
  int total = 0;
  for (const auto& b : bs) {
    nb.restore(in);
    b();
    total += nb.c();
  }
  nb.concat(total, static_cast<int>(bs.size()));
}

// GoogLeNet Inception module (torchvision googlenet.Inception: its "5x5" branch uses a 3x3 conv).
void googlenet_inception(CnnBuilder& nb, int c1, int c3r, int c3, int c5r, int c5, int pool_proj) {
  branches(nb, {[&] { basic_conv(nb, c1, 1, 1); },
                [&] { basic_conv(nb, c3r, 1, 1); basic_conv(nb, c3, 3, 3, 1, 1, 1); },
                [&] { basic_conv(nb, c5r, 1, 1); basic_conv(nb, c5, 3, 3, 1, 1, 1); },
                [&] { nb.pool(true, 3, 1, 1, true); basic_conv(nb, pool_proj, 1, 1); }});
}

// GoogLeNet auxiliary classifier (training only): 4x4 adaptive pool, 1x1 conv 128, fc 1024, dropout, fc.
void googlenet_aux(CnnBuilder& nb) {
  const auto s = nb.state();
  nb.adaptive_pool(4);
  basic_conv(nb, 128, 1, 1);
  nb.flatten();
  nb.linear(1024); nb.act(Act::relu); nb.dropout();
  nb.linear(1000);
  nb.restore(s);
}

// GoogLeNet (Szegedy et al. 2015; torchvision googlenet, aux_logits=True as built with weights=None).
void googlenet(CnnBuilder& nb) {
  auto maxpool = [&](int k) { nb.pool(true, k, 2, 0, true); };
  basic_conv(nb, 64, 7, 7, 2, 3, 3); maxpool(3);
  basic_conv(nb, 64, 1, 1); basic_conv(nb, 192, 3, 3, 1, 1, 1); maxpool(3);
  googlenet_inception(nb, 64, 96, 128, 16, 32, 32);
  googlenet_inception(nb, 128, 128, 192, 32, 96, 64);
  maxpool(3);
  googlenet_inception(nb, 192, 96, 208, 16, 48, 64);
  googlenet_aux(nb);
  googlenet_inception(nb, 160, 112, 224, 24, 64, 64);
  googlenet_inception(nb, 128, 128, 256, 24, 64, 64);
  googlenet_inception(nb, 112, 144, 288, 32, 64, 64);
  googlenet_aux(nb);
  googlenet_inception(nb, 256, 160, 320, 32, 128, 128);
  maxpool(2);
  googlenet_inception(nb, 256, 160, 320, 32, 128, 128);
  googlenet_inception(nb, 384, 192, 384, 48, 128, 128);
  nb.pool_flatten(1);
  nb.dropout();
  nb.linear(1000);
}

// Inception v3 modules A-E (Szegedy et al. 2016; torchvision inception.InceptionA..E).
void inception_a(CnnBuilder& nb, int pool_features) {
  branches(nb, {[&] { basic_conv(nb, 64, 1, 1); },
                [&] { basic_conv(nb, 48, 1, 1); basic_conv(nb, 64, 5, 5, 1, 2, 2); },
                [&] { basic_conv(nb, 64, 1, 1); basic_conv(nb, 96, 3, 3, 1, 1, 1); basic_conv(nb, 96, 3, 3, 1, 1, 1); },
                [&] { nb.pool(false, 3, 1, 1, false); basic_conv(nb, pool_features, 1, 1); }});
}
void inception_b(CnnBuilder& nb) {
  branches(nb, {[&] { basic_conv(nb, 384, 3, 3, 2); },
                [&] { basic_conv(nb, 64, 1, 1); basic_conv(nb, 96, 3, 3, 1, 1, 1); basic_conv(nb, 96, 3, 3, 2); },
                [&] { nb.pool(true, 3, 2, 0, false); }});
}
void inception_c(CnnBuilder& nb, int c7) {
  branches(nb, {[&] { basic_conv(nb, 192, 1, 1); },
                [&] {
                  basic_conv(nb, c7, 1, 1); basic_conv(nb, c7, 1, 7, 1, 0, 3); basic_conv(nb, 192, 7, 1, 1, 3, 0);
                },
                [&] {
                  basic_conv(nb, c7, 1, 1);
                  basic_conv(nb, c7, 7, 1, 1, 3, 0); basic_conv(nb, c7, 1, 7, 1, 0, 3);
                  basic_conv(nb, c7, 7, 1, 1, 3, 0); basic_conv(nb, 192, 1, 7, 1, 0, 3);
                },
                [&] { nb.pool(false, 3, 1, 1, false); basic_conv(nb, 192, 1, 1); }});
}
void inception_d(CnnBuilder& nb) {
  branches(nb, {[&] { basic_conv(nb, 192, 1, 1); basic_conv(nb, 320, 3, 3, 2); },
                [&] {
                  basic_conv(nb, 192, 1, 1); basic_conv(nb, 192, 1, 7, 1, 0, 3);
                  basic_conv(nb, 192, 7, 1, 1, 3, 0); basic_conv(nb, 192, 3, 3, 2);
                },
                [&] { nb.pool(true, 3, 2, 0, false); }});
}
// The 1x3 and 3x1 convs of a split branch both read its 384-channel map and are concatenated.
void inception_e_split(CnnBuilder& nb) {
  branches(nb, {[&] { basic_conv(nb, 384, 1, 3, 1, 0, 1); }, [&] { basic_conv(nb, 384, 3, 1, 1, 1, 0); }});
}
void inception_e(CnnBuilder& nb) {
  branches(nb, {[&] { basic_conv(nb, 320, 1, 1); },
                [&] { basic_conv(nb, 384, 1, 1); inception_e_split(nb); },
                [&] { basic_conv(nb, 448, 1, 1); basic_conv(nb, 384, 3, 3, 1, 1, 1); inception_e_split(nb); },
                [&] { nb.pool(false, 3, 1, 1, false); basic_conv(nb, 192, 1, 1); }});
}

// Inception v3 auxiliary classifier (training only; torchvision InceptionAux): 5x5/3 avg-pool, 1x1 conv 128,
// 5x5 conv 768, global pool, fc. Below a 5x5 pooled map (inputs under 299 px, e.g. 224) torchvision's conv
// cannot run; the head's parameters still count.
void inception_aux(CnnBuilder& nb) {
  const auto s = nb.state();
  if (CnnBuilder::out_size(s.h, 5, 3, 0, false) >= 5) {
    nb.pool(false, 5, 3, 0, false);
    basic_conv(nb, 128, 1, 1); basic_conv(nb, 768, 5, 5);
    nb.classifier(1000);
  } else {  // conv0 + BN, conv1 + BN, fc: 8 tensors
    const double c = s.c;
    nb.idle_params(128 * c + 2 * 128 + 768 * 128 * 25 + 2 * 768 + 768 * 1000 + 1000, 8);
  }
  nb.restore(s);
}

// Inception v3 (torchvision inception_v3, aux_logits=True as built with weights=None).
void inception_v3(CnnBuilder& nb) {
  basic_conv(nb, 32, 3, 3, 2); basic_conv(nb, 32, 3, 3); basic_conv(nb, 64, 3, 3, 1, 1, 1);
  nb.pool(true, 3, 2, 0, false);
  basic_conv(nb, 80, 1, 1); basic_conv(nb, 192, 3, 3);
  nb.pool(true, 3, 2, 0, false);
  inception_a(nb, 32); inception_a(nb, 64); inception_a(nb, 64);
  inception_b(nb);
  for (int c7 : {128, 160, 160, 192}) inception_c(nb, c7);
  inception_aux(nb);
  inception_d(nb);
  inception_e(nb); inception_e(nb);
  nb.pool_flatten(1);
  nb.dropout();
  nb.linear(1000);
}

// RegNetX / RegNetY (Radosavovic et al. 2020, "Designing Network Design Spaces"), as torchvision builds them
// (torchvision.models.regnet: BlockParams.from_init_params, ResBottleneckBlock, bottleneck multiplier 1):
// per-block widths u_j = w_0 + w_a * j quantised to w_0 * w_m^round(log(u_j / w_0) / log(w_m)), rounded to 8;
// consecutive equal widths form a stage (stride 2 at its first block); each stage width is then made
// divisible by its group width min(g, width). Y adds squeeze-and-excitation at a quarter of the block input.
void regnet(CnnBuilder& nb, int depth, double w0, double wa, double wm, int group_width, bool se) {
  std::vector<int> block_widths;
  for (int j = 0; j < depth; ++j) {
    const double u = w0 + wa * j;
    // torch.round and Python's round() round halves to even (regnet_x_1_6gf: 180 / 8 = 22.5 -> 176), as
    // std::nearbyint does in the default rounding mode; std::round would give 184.
    const double cap = std::nearbyint(std::log(u / w0) / std::log(wm));
    block_widths.push_back(static_cast<int>(std::nearbyint(w0 * std::pow(wm, cap) / 8.0) * 8.0));
  }
  std::vector<int> widths, depths;
  for (int w : block_widths) {
    if (widths.empty() || widths.back() != w) {
      widths.push_back(w);
      depths.push_back(0);
    }
    ++depths.back();
  }
  nb.conv(32, 3, 2); nb.bn(); nb.act(Act::relu);
  for (std::size_t st = 0; st < widths.size(); ++st) {
    const int g = std::min(group_width, widths[st]);
    const int w = make_divisible(widths[st], g);
    for (int i = 0; i < depths[st]; ++i) {
      const int stride = i == 0 ? 2 : 1;
      const auto in = nb.state();
      nb.conv(w, 1, 1); nb.bn(); nb.act(Act::relu);
      nb.conv(w, 3, stride, w / g); nb.bn(); nb.act(Act::relu);
      if (se) nb.squeeze_excite(static_cast<int>(std::nearbyint(0.25 * in.c)));
      nb.conv(w, 1, 1); nb.bn();
      residual_join(nb, in, w, stride);
    }
  }
  nb.classifier(1000);
}

// MaxViT-T (Tu et al. 2022; torchvision maxvit.py): stem (3x3/2 conv, BatchNorm, GELU; 3x3 conv with bias),
// four blocks of 2, 2, 5, 2 layers (64, 128, 256, 512 channels, head width 32, 7 x 7 partitions). A layer is an
// MBConv (pre-norm BatchNorm, 1x1 to 4C, BatchNorm, GELU, depthwise 3x3 (stride 2 in a block's first layer),
// BatchNorm, GELU, squeeze-excitation to C/4, 1x1 with bias; the first layer's shortcut is a 3x3/2 average pool
// and a 1x1 with bias) then a window and a grid PartitionAttentionLayer. Head: average pool, LayerNorm,
// Linear(512, 512), Tanh, Linear(512, 1000) without bias. Stochastic depth on every layer but the very first.
void maxvit(CnnBuilder& nb, int stem, const std::vector<int>& channels, const std::vector<int>& layers, int head_dim) {
  nb.conv(stem, 3, 2); nb.bn(); nb.act(Act::gelu);
  nb.conv(stem, 3, 1); nb.bias();
  bool first_layer = true;
  for (std::size_t blk = 0; blk < channels.size(); ++blk) {
    for (int l = 0; l < layers[blk]; ++l) {
      const int out = channels[blk], mid = 4 * out;
      const auto in = nb.state();
      if (l == 0) {  // the shortcut: 3x3/2 average pool, 1x1 with bias
        nb.pool(false, 3, 2, 1, false);
        nb.conv(out, 1, 1); nb.bias();
        nb.restore(in);
      }
      nb.bn();  // pre-norm
      nb.conv(mid, 1, 1); nb.bn(); nb.act(Act::gelu);
      nb.conv(mid, 3, l == 0 ? 2 : 1, mid); nb.bn(); nb.act(Act::gelu);
      nb.squeeze_excite(out / 4);
      nb.conv(out, 1, 1); nb.bias();
      if (!first_layer) nb.stochastic_depth();
      nb.residual_add();
      nb.partition_attention(head_dim, !first_layer);  // window
      nb.partition_attention(head_dim, !first_layer);  // grid
      first_layer = false;
    }
  }
  nb.pool_flatten(1);
  nb.layer_norm(true);
  nb.linear(channels.back());
  nb.act(Act::gelu);  // Tanh: an elementwise op of the same traffic
  nb.linear(1000, false);
}

using Arch = std::function<void(CnnBuilder&)>;

// torchvision vgg.py cfgs "A", "B", "D", "E": conv widths, 0 = max-pool.
const std::vector<int> kVggA = {64, 0, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0};
const std::vector<int> kVggB = {64, 64, 0, 128, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0};
const std::vector<int> kVggD = {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0};
const std::vector<int> kVggE = {64, 64, 0, 128, 128, 0, 256, 256, 256, 256, 0, 512, 512, 512, 512, 0,
                                512, 512, 512, 512, 0};

const std::map<std::string, Arch>& architectures() {
  static const std::map<std::string, Arch> m = {
      {"resnet18", [](CnnBuilder& b) { resnet(b, {2, 2, 2, 2}, false); }},
      {"resnet34", [](CnnBuilder& b) { resnet(b, {3, 4, 6, 3}, false); }},
      {"resnet50", [](CnnBuilder& b) { resnet(b, {3, 4, 6, 3}, true); }},
      {"resnet101", [](CnnBuilder& b) { resnet(b, {3, 4, 23, 3}, true); }},
      {"resnet152", [](CnnBuilder& b) { resnet(b, {3, 8, 36, 3}, true); }},
      {"resnext50_32x4d", [](CnnBuilder& b) { resnet(b, {3, 4, 6, 3}, true, 32, 4); }},
      {"resnext101_32x8d", [](CnnBuilder& b) { resnet(b, {3, 4, 23, 3}, true, 32, 8); }},
      {"resnext101_64x4d", [](CnnBuilder& b) { resnet(b, {3, 4, 23, 3}, true, 64, 4); }},
      {"wide_resnet50_2", [](CnnBuilder& b) { resnet(b, {3, 4, 6, 3}, true, 1, 128); }},
      {"wide_resnet101_2", [](CnnBuilder& b) { resnet(b, {3, 4, 23, 3}, true, 1, 128); }},
      {"vgg11", [](CnnBuilder& b) { vgg(b, kVggA); }},
      {"vgg13", [](CnnBuilder& b) { vgg(b, kVggB); }},
      {"vgg16", [](CnnBuilder& b) { vgg(b, kVggD); }},
      {"vgg19", [](CnnBuilder& b) { vgg(b, kVggE); }},
      {"vgg11_bn", [](CnnBuilder& b) { vgg(b, kVggA, true); }},
      {"vgg13_bn", [](CnnBuilder& b) { vgg(b, kVggB, true); }},
      {"vgg16_bn", [](CnnBuilder& b) { vgg(b, kVggD, true); }},
      {"vgg19_bn", [](CnnBuilder& b) { vgg(b, kVggE, true); }},
      {"mobilenet_v2", [](CnnBuilder& b) { mobilenet_v2(b); }},
      {"densenet121", [](CnnBuilder& b) { densenet(b, {6, 12, 24, 16}); }},
      {"densenet169", [](CnnBuilder& b) { densenet(b, {6, 12, 32, 32}); }},
      {"densenet201", [](CnnBuilder& b) { densenet(b, {6, 12, 48, 32}); }},
      {"densenet161", [](CnnBuilder& b) { densenet(b, {6, 12, 36, 24}, 96, 48); }},
      {"convnext_tiny", [](CnnBuilder& b) { convnext(b, {3, 3, 9, 3}, {96, 192, 384, 768}); }},
      {"convnext_small", [](CnnBuilder& b) { convnext(b, {3, 3, 27, 3}, {96, 192, 384, 768}); }},
      {"convnext_base", [](CnnBuilder& b) { convnext(b, {3, 3, 27, 3}, {128, 256, 512, 1024}); }},
      {"convnext_large", [](CnnBuilder& b) { convnext(b, {3, 3, 27, 3}, {192, 384, 768, 1536}); }},
      {"mobilenet_v3_large", [](CnnBuilder& b) { mobilenet_v3_large(b); }},
      {"mobilenet_v3_small", [](CnnBuilder& b) { mobilenet_v3_small(b); }},
      {"mnasnet0_5", [](CnnBuilder& b) { mnasnet(b, 0.5); }},
      {"mnasnet0_75", [](CnnBuilder& b) { mnasnet(b, 0.75); }},
      {"mnasnet1_0", [](CnnBuilder& b) { mnasnet(b, 1.0); }},
      {"mnasnet1_3", [](CnnBuilder& b) { mnasnet(b, 1.3); }},
      {"alexnet", [](CnnBuilder& b) { alexnet(b); }},
      {"squeezenet1_0", [](CnnBuilder& b) { squeezenet(b, false); }},
      {"squeezenet1_1", [](CnnBuilder& b) { squeezenet(b, true); }},
      {"shufflenet_v2_x0_5", [](CnnBuilder& b) { shufflenet_v2(b, {48, 96, 192, 1024}); }},
      {"shufflenet_v2_x1_0", [](CnnBuilder& b) { shufflenet_v2(b, {116, 232, 464, 1024}); }},
      {"shufflenet_v2_x1_5", [](CnnBuilder& b) { shufflenet_v2(b, {176, 352, 704, 1024}); }},
      {"shufflenet_v2_x2_0", [](CnnBuilder& b) { shufflenet_v2(b, {244, 488, 976, 2048}); }},
      {"efficientnet_b0", [](CnnBuilder& b) { efficientnet(b, 1.0, 1.0); }},
      {"efficientnet_b1", [](CnnBuilder& b) { efficientnet(b, 1.0, 1.1); }},
      {"efficientnet_b2", [](CnnBuilder& b) { efficientnet(b, 1.1, 1.2); }},
      {"efficientnet_b3", [](CnnBuilder& b) { efficientnet(b, 1.2, 1.4); }},
      {"efficientnet_b4", [](CnnBuilder& b) { efficientnet(b, 1.4, 1.8); }},
      {"efficientnet_b5", [](CnnBuilder& b) { efficientnet(b, 1.6, 2.2); }},
      {"efficientnet_b6", [](CnnBuilder& b) { efficientnet(b, 1.8, 2.6); }},
      {"efficientnet_b7", [](CnnBuilder& b) { efficientnet(b, 2.0, 3.1); }},
      {"maxvit_t", [](CnnBuilder& b) { maxvit(b, 64, {64, 128, 256, 512}, {2, 2, 5, 2}, 32); }},
      // fused, expand, kernel, stride, out, layers (torchvision _efficientnet_conf, efficientnet_v2_*)
      {"efficientnet_v2_s", [](CnnBuilder& b) {
         efficientnet_v2(b, 24, {{true, 1, 3, 1, 24, 2}, {true, 4, 3, 2, 48, 4}, {true, 4, 3, 2, 64, 4},
                                 {false, 4, 3, 2, 128, 6}, {false, 6, 3, 1, 160, 9}, {false, 6, 3, 2, 256, 15}});
       }},
      {"efficientnet_v2_m", [](CnnBuilder& b) {
         efficientnet_v2(b, 24, {{true, 1, 3, 1, 24, 3}, {true, 4, 3, 2, 48, 5}, {true, 4, 3, 2, 80, 5},
                                 {false, 4, 3, 2, 160, 7}, {false, 6, 3, 1, 176, 14}, {false, 6, 3, 2, 304, 18},
                                 {false, 6, 3, 1, 512, 5}});
       }},
      {"efficientnet_v2_l", [](CnnBuilder& b) {
         efficientnet_v2(b, 32, {{true, 1, 3, 1, 32, 4}, {true, 4, 3, 2, 64, 7}, {true, 4, 3, 2, 96, 7},
                                 {false, 4, 3, 2, 192, 10}, {false, 6, 3, 1, 224, 19}, {false, 6, 3, 2, 384, 25},
                                 {false, 6, 3, 1, 640, 7}});
       }},
      {"googlenet", [](CnnBuilder& b) { googlenet(b); }},
      {"inception_v3", [](CnnBuilder& b) { inception_v3(b); }},
      // depth, w_0, w_a, w_m, group width (torchvision.models.regnet)
      {"regnet_y_400mf", [](CnnBuilder& b) { regnet(b, 16, 48, 27.89, 2.09, 8, true); }},
      {"regnet_y_800mf", [](CnnBuilder& b) { regnet(b, 14, 56, 38.84, 2.4, 16, true); }},
      {"regnet_y_1_6gf", [](CnnBuilder& b) { regnet(b, 27, 48, 20.71, 2.65, 24, true); }},
      {"regnet_y_3_2gf", [](CnnBuilder& b) { regnet(b, 21, 80, 42.63, 2.66, 24, true); }},
      {"regnet_y_8gf", [](CnnBuilder& b) { regnet(b, 17, 192, 76.82, 2.19, 56, true); }},
      {"regnet_y_16gf", [](CnnBuilder& b) { regnet(b, 18, 200, 106.23, 2.48, 112, true); }},
      {"regnet_y_32gf", [](CnnBuilder& b) { regnet(b, 20, 232, 115.89, 2.53, 232, true); }},
      {"regnet_y_128gf", [](CnnBuilder& b) { regnet(b, 27, 456, 160.83, 2.52, 264, true); }},
      {"regnet_x_400mf", [](CnnBuilder& b) { regnet(b, 22, 24, 24.48, 2.54, 16, false); }},
      {"regnet_x_800mf", [](CnnBuilder& b) { regnet(b, 16, 56, 35.73, 2.28, 16, false); }},
      {"regnet_x_1_6gf", [](CnnBuilder& b) { regnet(b, 18, 80, 34.01, 2.25, 24, false); }},
      {"regnet_x_3_2gf", [](CnnBuilder& b) { regnet(b, 25, 88, 26.31, 2.25, 48, false); }},
      {"regnet_x_8gf", [](CnnBuilder& b) { regnet(b, 23, 80, 49.56, 2.88, 120, false); }},
      {"regnet_x_16gf", [](CnnBuilder& b) { regnet(b, 22, 216, 55.59, 2.1, 128, false); }},
      {"regnet_x_32gf", [](CnnBuilder& b) { regnet(b, 23, 320, 69.86, 2.0, 168, false); }},
  };
  return m;
}

}  // namespace

bool known_cnn(const std::string& id) { return architectures().count(id) != 0; }

std::vector<std::string> known_cnn_ids() {
  std::vector<std::string> ids;
  for (const auto& [id, arch] : architectures()) ids.push_back(id);
  return ids;
}

std::optional<TransformerDims> vit_dims(const std::string& id) {
  // name -> layers, hidden, heads, mlp, patch (torchvision.models.vision_transformer)
  static const std::map<std::string, std::array<int, 5>> m = {{"vit_b_16", {12, 768, 12, 3072, 16}},
                                                               {"vit_b_32", {12, 768, 12, 3072, 32}},
                                                               {"vit_l_16", {24, 1024, 16, 4096, 16}},
                                                               {"vit_l_32", {24, 1024, 16, 4096, 32}},
                                                               {"vit_h_14", {32, 1280, 16, 5120, 14}}};
  auto it = m.find(id);
  if (it == m.end()) return std::nullopt;
  TransformerDims t;
  t.layers = it->second[0];
  t.d_model = it->second[1];
  t.heads = it->second[2];
  t.d_ff = it->second[3];
  t.patch = it->second[4];
  t.vocab = 0;
  t.seq = 0;
  t.tied_embeddings = false;
  return t;
}

StepOps build_conv_layer_ops(const StepConfig& step, const ConvLayer& l) {
  StepOps out;
  CnnBuilder nb(step, out, false);
  nb.start_at(l.c_in, l.h, l.w, l.first);
  nb.conv_general(l.c_out, l.kh, l.kw, l.stride_h, l.stride_w, l.pad_h, l.pad_w, l.groups);
  if (l.bias) nb.bias();
  return out;
}

StepOps build_cnn_ops(const StepConfig& step) {
  StepOps out;
  auto it = architectures().find(step.model.id);
  if (it == architectures().end()) return build_generic_ops(step);
  CnnBuilder nb(step, out);
  it->second(nb);
  nb.finish(1000);
  if (step.model.params > 0) out.params = step.model.params;
  return out;
}

}  // namespace gp
