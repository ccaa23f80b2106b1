// A training step as a list of operators with shapes, FLOPs and bytes: the input of the compute model
// (compute_model.hpp) and, for activations, of the memory model. Built per model family by
// transformer_ops.cpp (GPT, ViT), vision_ops.cpp (CNNs) and generic_ops.cpp. Pure value types.
#pragma once

#include <string>
#include <vector>

#include "models/gemm_model.hpp"
#include "models/units.hpp"
#include "models/workload.hpp"

namespace gp {

enum class OpKind {
  gemm,       // dense GEMM timed by the GEMM surface (also implicit-GEMM convolution, `conv` set)
  attention,  // fused (flash / memory-efficient) attention, FLOPs at the attention rate
  memory,     // bandwidth-bound: elementwise, normalisation, casts, reductions, optimizer update
  simt,       // CUDA-core arithmetic without tensor cores (depthwise convolution); max(FLOPs, bytes)
};

enum class Phase { forward, backward, optimizer };

struct Op {
  std::string name;
  OpKind kind = OpKind::memory;
  Phase phase = Phase::forward;
  Dtype dtype = Dtype::bf16;  // compute dtype for gemm / attention / simt
  GemmShape shape;            // gemm only
  Flops flops;                // per occurrence (gemm: 2mnk)
  Bytes bytes;                // device-memory traffic per occurrence, read + write
  double count = 1;           // occurrences per micro-batch (or per step for optimizer ops)
  int kernels = 1;            // GPU kernels per occurrence (each pays launch and framework costs)
  bool conv = false;          // gemm executed as a cuDNN implicit-GEMM convolution
  bool recompute = false;     // forward op re-run in backward by activation checkpointing
  // Kernel classes that run below the copy bandwidth (measured per class: docs/calibration.md, "Kernel classes"):
  double bn_elements = 0;     // BatchNorm op: elements its kernels touch per occurrence (their rate, not bytes, binds)
  double rows = 0;            // row-wise normalisation (LayerNorm): rows per occurrence (and `channels` per row)
  // Bytes an element of those rows: the probed LayerNorm rates are fp32's; a 16-bit row (a LayerNorm on FSDP
  // MixedPrecision's stream) is timed as an fp32 row of the same bytes, half as many channels.
  double norm_elem_bytes = 4;
  bool transpose = false;     // strided (transposing) copy: TensorIterator's non-vectorised kernel
  double work_factor = 1;     // attention: tile-padded work / model FLOPs (timing only; FLOPs stay the model's)
  bool nested = false;        // issued inside another op's framework call (no Python module or autograd node of its own)
  // Issued by C++ code inside the autograd engine rather than by an operator call: a gradient summed from several
  // consumers of one tensor (InputBuffer), AccumulateGrad's adds, DDP's reducer hooks. No framework call; each
  // kernel costs the CPU a bare launch (the launch probe).
  bool engine_issued = false;
  // A cast that autocast makes because parameters or the residual stream are fp32 (a Linear's weight, its fp32
  // input, their gradients back): not run when the forward computes on 16-bit parameters (StepConfig::params_16bit).
  bool autocast_cast = false;
  // PyTorch's default NCHW layout (channels_last off): BatchNorm and depthwise kernels of their own
  // (docs/calibration.md, "NCHW"). A BatchNorm gives its tensor's C (one thread block per channel), N x C planes
  // and elements (`channels` and `elements` in channels-last too: its probed rate depends on the shape); a
  // LayerNorm gives its `channels` per row.
  bool nchw = false;
  double channels = 0, planes = 0, elements = 0;
  // A depthwise convolution (simt) in fp32 tensors (TF32 / fp32 training): cuDNN's kernels walk every input
  // position whatever the stride, so they are timed by dw_input_flops = 2 x input elements x k^2 per pass (not the
  // output's FLOPs) and, for k >= 7, by a class of their own (docs/calibration.md, "Convolutions in TF32 and fp32").
  Flops dw_input_flops;
  int dw_kernel = 0;
  double dw_output_elements = 0;  // output elements per pass (the wide-index time's per-output term)
  // cuDNN's NCHW<->NHWC transforms around one convolution pass (forward, input gradient or weight gradient):
  // which convolutions get them is cuDNN's per-shape algorithm choice, so the op names its band and the
  // compute model takes the band's measured transformed passes per convolution (ComputeConstants); -1 = none.
  int nchw_band = -1;
  // Pooling (nn.MaxPool2d / nn.AvgPool2d): pool 1 = max, 2 = average, 0 = none; pool_elements the elements its
  // kernels walk per occurrence (forward: input + output x k^2, each input read and each window element; backward:
  // input + output, but input + output x k^2 for a channels-last max-pool, which gathers over windows);
  // pool_nchw its layout. Timed at the measured rate of its kind, phase and layout.
  int pool = 0;
  double pool_elements = 0;
  bool pool_nchw = false;
  // A GEMM of the network's first convolution (the 3-channel image: K = 3 k^2): cuDNN runs it far below the GEMM
  // surface, so it is timed by FLOPs at a measured fraction of the dtype's large-GEMM rate.
  bool stem = false;
  // A per-channel sum over batch and pixels (a convolution's bias gradient): channel_sum_rows = N x H x W summed
  // into channel_sum_channels outputs, in the layout channel_sum_nchw. Timed at the probed rate of that shape.
  double channel_sum_rows = 0, channel_sum_channels = 0;
  bool channel_sum_nchw = false;
  // A pass of a grouped (not depthwise) convolution: its channels per group, and whether it is strided. cuDNN
  // runs these far below the GEMM surface (tools/probe_grouped_conv.py); 0 = not grouped.
  int group_width = 0;
  bool group_strided = false;
  // torch.roll (Swin's shifted windows): elements rolled per occurrence. Its kernel computes a source index per
  // element and is not vectorised: timed at the probed roll rate, whatever the dtype (tools/probe_roll.py).
  double roll_elements = 0;
  // Of `bytes`, those moved by PyTorch's slower elementwise paths (a memory op only): an operand cast inside the
  // kernel (bf16 -> fp32 copies, fp32 + bf16: unrolled_elementwise_kernel) or a broadcast operand (x * s[N,1,1,1],
  // gamma[C,1,1] * x, x + bias[1,C,1,1]: the generic elementwise_kernel). Timed at their probed rates.
  double unrolled_bytes = 0, broadcast_bytes = 0;
  // Of `bytes`, those of an exact (erf) GELU or its backward: vectorised, but bound by its arithmetic below the
  // copy rate (tools/probe_elementwise.py). Timed at its probed rate.
  double gelu_bytes = 0;
  // A copy along the channels of a channels-last map, which PyTorch runs far below the copy rate because each
  // pixel's channels move as short runs (tools/probe_cat.py): torch.cat along dim 1 (CatArrayBatchedCopy), the
  // channel shuffle's transpose(1, 2).contiguous() (the generic strided copy) and a channel half made contiguous.
  // All its bytes are timed at the probed rate of its kind; none = the other paths.
  enum class ChannelCopy { none, cat, shuffle, split };
  ChannelCopy channel_copy = ChannelCopy::none;
  // A batched matmul of many small matrices (torch.bmm in Swin's window attention): cuBLAS runs these far below
  // the GEMM surface, unaligned ones (a dimension not a multiple of 8, as 7x7 windows' 49) slowest. Timed at the
  // probed rate of its kind (tools/probe_bmm.py) when that is slower than the surface.
  bool small_bmm = false;
  bool bmm_aligned = false;
  // A 1x1 convolution's GEMM in NCHW: its NchwBand (the 1x1 bands only), whose measured NCHW / channels-last
  // kernel-time factor it takes (ComputeConstants::nchw_conv_factor); -1 = none.
  int nchw_conv_band = -1;
  // The largest tensor a BatchNorm, pooling or depthwise-convolution op's kernels index, in elements. Over
  // 2^31 - 1 PyTorch gives up 32-bit index arithmetic and these kernels slow down (tools/measure_large_tensor.py:
  // BatchNorm x1.7 forward, x3.6 backward; max-pool forward x1.8; depthwise x8-24), timed at the wide-index rates
  // of ComputeConstants. 0 = not such an op.
  double index_elements = 0;
};

// The bands of NchwBand: a spatial (k > 1) convolution, the network's first one (no input gradient), and 1x1
// convolutions strided, or by output pixels per sample P: 1 < P <= 100 (7x7 maps), <= 400 (13x13, 14x14), more.
// A 1x1 convolution with P = 1 sees the same memory order in both layouts and has no transforms.
enum NchwBand { nchw_spatial, nchw_spatial_first, nchw_pointwise_strided, nchw_pointwise_small,
                nchw_pointwise_mid, nchw_pointwise_large, nchw_band_count };

// Everything one optimizer step runs: `micro` once per micro-batch, `optimizer` once per step.
struct StepOps {
  std::vector<Op> micro;
  std::vector<Op> optimizer;
  double params = 0;               // trainable parameters
  double param_tensors = 0;        // number of parameter tensors (optimizer kernel count)
  // Parameters of one repeated block (GPT, ViT: a transformer layer), the unit FSDP wraps under a per-block
  // policy; 0 when the model has no such block (its units then split the parameters evenly, as the sim's do).
  double block_params = 0;
  // Module buffers (BatchNorm's running mean and variance, fp32, and its int64 counter): DDP broadcasts them from
  // rank 0 before the forward of every step (broadcast_buffers, its default). 0 where the model has none counted.
  double buffer_tensors = 0;
  Bytes buffer_bytes;
  // Memory seen by the memory model, per micro-batch (bytes on the device):
  Bytes activations;               // saved for backward at the end of forward (checkpointing applied)
  // The part of `activations` (and of `backward_transient`) that tensor parallelism without sequence parallelism
  // leaves whole on every rank: LayerNorm inputs and outputs, the residual stream a checkpointed block saves
  // (Korthikanti et al. 2022, arXiv:2205.05198: the 10 of their per-layer sbh(10 + 24/t)). 0: all of it splits.
  Bytes activations_tp_replicated;
  Bytes backward_transient_tp_replicated;
  // The part of `activations` (and of `backward_transient`) that is fp32 only because autocast keeps the residual
  // stream in fp32 while its parameters are fp32: the LayerNorm inputs, the block input a checkpointed block saves.
  // A forward on 16-bit parameters without autocast (FSDP's MixedPrecision) holds them in 16 bits, half of this.
  // All of it is within the tp-replicated part. 0 where not counted (every model but a GPT).
  Bytes activations_fp32_stream;
  Bytes backward_transient_fp32_stream;
  Bytes loss_transient;            // extra live at the loss / start of backward (logits, their grads)
  // Working set of the last layer's backward beyond the saved tensors (a transformer MLP: the GELU output's
  // gradient and the GELU input's, 2 x N x ff; with checkpointing also the recomputed block's saved tensors);
  // live after the loss transient is freed, so the larger of the two counts.
  Bytes backward_transient;
  // The largest single tensor the step allocates (GPT: the fp32 log-softmax over the vocabulary; a CNN: its widest
  // feature map). The caching allocator splits freed large blocks to serve smaller requests, so a step needs room
  // beyond its peak for the next request of this size (memory_model.hpp `fits`).
  Bytes largest_tensor;
  Bytes outputs_alive;             // model outputs the loop keeps alive through backward and the step
  Bytes backward_tail;             // transient at the end of backward (e.g. dense embedding gradient)
  // Largest (activations still saved + parameter gradients already made) as backward walks the layers from the
  // last to the first (CNNs; 0 = not traced): a network whose parameters sit at its end (VGG's and AlexNet's
  // classifiers) holds nearly all its gradients while nearly all its activations are still alive.
  Bytes backward_walk_peak;
  std::string not_expressible;     // non-empty: the model cannot build this step, and why
};

// Forward FLOPs of one micro-batch: its forward GEMM, attention and CUDA-core operators (not the recomputation).
Flops forward_flops(const StepOps& ops);

// Bytes per element of activations in this precision mode (autocast: 2; fp32 / tf32: 4).
double activation_bytes(Precision p);
// GEMM dtype used by matmuls / convolutions in this precision mode.
Dtype gemm_dtype(Precision p);
// True when autocast to a 16-bit type is on (weights stay fp32 and are cast per use).
bool is_autocast(Precision p);
// True when the step computes on 16-bit parameters: FSDP's MixedPrecision under 16-bit autocast
// (StepConfig::params_16bit); no per-op casts then.
bool on_16bit_params(const StepConfig& step);
// Bytes an element of the parameters as the forward sees them, of their gradients and of the residual stream:
// 2 on 16-bit parameters, else 4 (under autocast the embeddings and LayerNorms keep the stream fp32).
double param_bytes(const StepConfig& step);

// Builds the operator list of one training step. The model family picks the builder: gpt -> causal
// transformer with vocabulary head; vit / swin / known CNN ids -> their layer structure; otherwise generic
// from params and fwd_flops_per_sample. Activation checkpointing marks recomputed forward ops.
StepOps build_step_ops(const StepConfig& step);

// Builders (exposed for tests).
StepOps build_gpt_ops(const StepConfig& step);
StepOps build_vit_ops(const StepConfig& step);
StepOps build_cnn_ops(const StepConfig& step);      // uses vision_layers(step.model.id)
StepOps build_swin_ops(const StepConfig& step);     // swin_ops.hpp: uses swin_dims(step.model.id)
StepOps build_generic_ops(const StepConfig& step);

// The generic image model's prior (generic_ops.cpp): saved activation bytes per 224 x 224 sample and kernels per
// step of a CNN with these parameters and forward FLOPs per sample, from a least-squares fit of their logarithms
// over every CNN structure gpuplan knows at `p` (leaving out `exclude`, for leave-one-out checks). Zeros when the
// inputs are not positive.
struct GenericCnnPrior {
  double saved_per_sample = 0;  // bytes
  double kernels = 0;           // per micro-batch
};
GenericCnnPrior generic_cnn_prior(Precision p, double params, double fwd_flops, const std::string& exclude = "");

// Optimizer update ops over `params` parameters in `tensors` tensors (memory-bound, fp32 states).
std::vector<Op> optimizer_ops(OptimizerKind opt, double params, double tensors);

// Bytes of fp32 optimizer state per parameter: AdamW/Adam 8, SGD with momentum 4, plain SGD 0.
double optimizer_state_bytes_per_param(OptimizerKind opt);

// Helpers used by the builders: append ops for one Linear layer (forward and backward) on `tokens` rows.
struct LinearSpec {
  std::string name;
  double tokens = 0, in = 0, out = 0;
  double count = 1;          // identical layers (e.g. transformer depth)
  bool bias = true;
  bool input_fp32 = false;   // under autocast the input arrives fp32 and is cast to 16-bit first
  bool needs_dgrad = true;   // false for the first layer (input needs no gradient)
  bool recompute = false;
};
void add_linear(std::vector<Op>& ops, const LinearSpec& l, Precision p);
// One batched matmul of many small products (torch.bmm of `batches` m x k by k x n, Swin's and MaxViT's window
// attention): a single kernel, timed at the probed small-bmm rate of its alignment (Op::small_bmm).
void add_small_bmm(std::vector<Op>& ops, std::string name, Phase ph, double batches, double m, double n, double k,
                   double count, Precision p);
// A memory-bound op of `bytes` traffic (read + write).
void add_memory(std::vector<Op>& ops, std::string name, Phase ph, Bytes bytes, double count, int kernels = 1,
                bool recompute = false);
// Marks all of a memory op's bytes as moved by PyTorch's unrolled (in-kernel cast) or broadcast elementwise path.
inline Op& unrolled_path(Op& op) { op.unrolled_bytes = op.bytes.value(); return op; }
inline Op& broadcast_path(Op& op) { op.broadcast_bytes = op.bytes.value(); return op; }
inline Op& gelu_path(Op& op) { op.gelu_bytes = op.bytes.value(); return op; }

}  // namespace gp
