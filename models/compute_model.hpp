// Step time of one data-parallel replica from its operators (step_ops.hpp), a GPU profile and a handful
// of global constants fitted over measured runs (calibrate/fit; stored in calibrate/profiles/fit-*.json).
//
// GPU time of an operator occurrence:
//   gemm:      max(2mnk / (R_d * w * k/(k+k0) * e_gemm [* e_conv]), bytes / (B * e_mem)) + n_k * t_gpu
//   attention: FLOPs / (R_d * e_attn) + n_k * t_gpu
//   memory:    bytes / (B * e_mem) + n_k * t_gpu
//   simt:      max(FLOPs / (R_fp32 * e_dw_flop), bytes / (B * e_dw_mem)) + n_k * t_gpu  (depthwise conv; in fp32
//              tensors FLOPs over input positions, with constants of their own, and k >= 7 by FLOPs alone)
// with R, k0 from the GEMM surface (gemm_model.hpp), B the probe's device-copy bandwidth and n_k kernels.
// Kernel classes measured apart replace the bytes term where set (BatchNorm, LayerNorm rows, transposes, NCHW
// BatchNorm / depthwise / layout transforms; probe classes: pools by elements walked, the 3-channel first
// convolution by FLOPs, bias-gradient sums at the probed rate of their shape), and NCHW layout transforms occur
// per their convolution band's measured passes (op_count).
// CPU issue time (eager): n_calls * t_call + n_fwd * t_fwd + n_bwd * t_bwd + n_conv * t_conv + n_rc * t_rc + t_step,
// n_rc the forward calls activation checkpointing re-runs (t_rc their saved-tensor hooks' extra cost), n_calls
// the framework calls (one per operator occurrence: a module call forward, an autograd node backward, an
// optimizer call), whatever their kernel count; gradient-accumulation adds cost the launch probe's time per
// kernel (issued inside AccumulateGrad); with a CUDA graph: n_k * t_graph (the launch probe's replay cost).
// The CPU issues asynchronously and steps are not synchronised, so in steady state the slower of the two
// resources sets the pace: step = max(CPU issue, GPU busy).
#pragma once

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "models/gemm_model.hpp"
#include "models/gpu_profile.hpp"
#include "models/step_ops.hpp"
#include "models/units.hpp"
#include "models/workload.hpp"

namespace gp {

// Global constants of the compute model, fitted once per GPU profile over many runs (never per model).
struct ComputeConstants {
  double gemm_efficiency = 0.85;       // sustained GEMM rate in training / probe-fitted rate (power-limited clocks)
  double conv_efficiency = 0.7;        // cuDNN implicit-GEMM convolution relative to the GEMM surface
  // The same for bf16 / fp16 convolutions when set (> 0): matched to single convolutions timed alone on the GPU
  // (tools/probe_conv_layout.py; `calibrate fit --conv-probe`), so conv_efficiency is left to fp32 / tf32.
  double conv_16bit_efficiency = 0;
  // fp16 convolutions apart when set (> 0): cuDNN picks other kernels for fp16 than for bf16 on some shapes
  // (the same probe in fp16, `calibrate fit --conv-probe-fp16`); 0 = conv_16bit_efficiency.
  double conv_fp16_efficiency = 0;
  // fp32 tensors, with cuDNN's TF32 math allowed or not, when set (> 0): matched to the same probe in those dtypes
  // (`calibrate fit --conv-probe-tf32 / --conv-probe-fp32`); 0 = conv_efficiency.
  double conv_tf32_efficiency = 0;
  double conv_fp32_efficiency = 0;
  double attention_efficiency = 0.45;  // fused attention FLOP rate / large-GEMM rate of its dtype
  double memory_efficiency = 0.7;      // framework memory-bound kernels: achieved / probe copy bandwidth
  Seconds gpu_per_kernel = Seconds::us(3);         // GPU time per kernel beyond its work (gap, ramp, tail)
  Seconds cpu_per_kernel_eager = Seconds::us(30);  // CPU per forward kernel issued eagerly from Python (module, autocast, launch)
  Seconds cpu_per_bwd_kernel_eager = Seconds::us(15);  // CPU per backward / optimizer kernel (C++ autograd engine)
  Seconds cpu_per_conv_eager = Seconds::us(20);    // extra CPU time of a cuDNN convolution call (plan lookup)
  Seconds cpu_per_step_eager = Seconds::ms(2);     // per optimizer step: loop, zero_grad, optimizer bookkeeping
  Seconds cpu_per_op_eager = Seconds::us(0);       // per framework call / autograd node, whatever its kernel count
  // Activation checkpointing (torch.utils.checkpoint, non-reentrant): CPU per recomputed forward call beyond the
  // call itself (the saved-tensor pack / unpack hooks in Python around every tensor autograd saves, the recompute
  // run from the backward's first unpack), measured in pairs with and without checkpointing on one host
  // (`calibrate fit --ckpt-cpu`, docs/calibration.md "Activation checkpointing's CPU cost"); 0 = none.
  Seconds cpu_per_recompute_eager = Seconds::us(0);
  // Kernel classes, from kernel-level profiles (tools/fit_kernel_classes.py); 0 = the general constant above.
  double bn_element_rate = 0;         // BatchNorm kernels: elements per second (bf16 and fp32 alike), 0 = bytes only
  Seconds norm_row_cost;              // LayerNorm kernels: fixed cost per normalised row (whole GPU)
  double transpose_efficiency = 0;    // strided (transposing) copies: achieved / probe copy bandwidth
  double dwconv_flop_efficiency = 0;  // depthwise convolution: achieved / fp32 CUDA-core rate
  double dwconv_memory_efficiency = 0;  // depthwise convolution: achieved / probe copy bandwidth
  // Depthwise convolution in fp32 tensors (TF32 or strict fp32 training), from single convolutions timed alone
  // (`calibrate fit --conv-probe-tf32 / --depthwise-probe`): max(dw_input_flops / (R_fp32 x e_f), bytes / (B x e_m))
  // per pass for k < 7 (the same CUDA-core kernels in both), and dw_input_flops / (R_fp32 x e_7) for k >= 7, e_7 per
  // dtype (cuDNN's weight-gradient kernels differ: an implicit GEMM in TF32, direct kernels in fp32); 0 = as
  // 16-bit above (an e_7 of 0: the k < 7 law).
  double dwconv_f32_flop_efficiency = 0, dwconv_f32_memory_efficiency = 0;
  double dwconv_tf32_k7_flop_efficiency = 0, dwconv_fp32_k7_flop_efficiency = 0;
  // NCHW kernels (channels_last off), from kernel-level profiles (tools/fit_nchw_classes.py); 0 = as NHWC.
  // BatchNorm: t = elements / min(C * r_c, r_max) + N * C * t_plane, forward and backward apart.
  double bn_nchw_fwd_rate_per_channel = 0, bn_nchw_fwd_max_rate = 0;  // elements per second
  double bn_nchw_bwd_rate_per_channel = 0, bn_nchw_bwd_max_rate = 0;
  Seconds bn_nchw_fwd_plane_cost, bn_nchw_bwd_plane_cost;  // per (sample, channel) plane
  double dwconv_nchw_fwd_flop_efficiency = 0;  // PyTorch's native depthwise kernels: achieved / fp32 rate
  double dwconv_nchw_bwd_flop_efficiency = 0;
  double nchw_transform_efficiency = 0;  // cuDNN's NCHW<->NHWC transforms around a convolution: / copy bandwidth
  double nchw_transform_first_efficiency = 0;  // the same around the first (3-channel image) one; 0 = as above
  // Per NchwBand (step_ops.hpp): convolution passes (of forward, input gradient, weight gradient) that cuDNN
  // runs between layout transforms, averaged over the probed shapes of the band (tools/probe_conv_layout.py);
  // negative = not set (the passes the op builder assumes: all of a spatial convolution's, no 1x1's).
  std::array<double, nchw_band_count> nchw_transform_passes{-1, -1, -1, -1, -1, -1};
  // Per NchwBand, a 1x1 convolution's kernel time in NCHW over its channels-last time (the one-convolution probe;
  // tools/fit_nchw_classes.py); 0 = the same.
  std::array<double, nchw_band_count> nchw_conv_factor{};
  // Probe classes (tools/fit_probe_classes.py: kernels measured one at a time); 0 = by bytes / the GEMM surface.
  // Pooling, elements per second by pool_rate_index(); the first convolution's FLOP rate / large-GEMM rate.
  std::array<double, 8> pool_rate{};
  double conv_stem_flop_efficiency = 0;
  // Grouped convolutions (ResNeXt, RegNet), per pass: t = F / (R x w / (w + w0)) x odd^[w not a power of two]
  // x strided^[stride 2] + pass cost, w the channels per group (tools/fit_probe_classes.py over 166 grouped
  // convolutions timed alone by wall clock); never faster than the GEMM surface. Rate 0 = by the surface alone.
  struct GroupedConvLaw {
    double rate = 0;           // R, FLOP/s
    double w0 = 0;             // channels per group at half the rate
    double odd_factor = 1;     // a group width that is not a power of two
    double stride_factor = 1;  // a strided convolution
    Seconds pass_cost;
  } grouped_conv;
  double roll_rate = 0;  // torch.roll, elements per second (tools/probe_roll.py); 0 = by bytes
  // Copies along the channels of channels-last maps (Op::channel_copy; tools/probe_cat.py), bytes read + written
  // per second: torch.cat, the channel shuffle, a channel half made contiguous; 0 = by bytes as other copies.
  double channel_cat_bw = 0, channel_shuffle_bw = 0, channel_split_bw = 0;
  // PyTorch's slower elementwise paths (tools/probe_elementwise.py), bytes (read + written) per second:
  // unrolled_elementwise_kernel (an operand cast inside the kernel) and the generic elementwise_kernel (a
  // broadcast operand). 0 = at the memory efficiency like the vectorised kernels.
  double elementwise_unrolled_bw = 0, elementwise_broadcast_bw = 0;
  double elementwise_gelu_bw = 0;  // exact GELU forward and backward (vectorised, arithmetic-bound)
  // Small batched matmuls (Op::small_bmm), FLOP/s, aligned (every dimension a multiple of 8) and not
  // (tools/probe_bmm.py); 0 = on the GEMM surface.
  double bmm_aligned_rate = 0, bmm_unaligned_rate = 0;
  // Channels-last ops over a tensor of more than kMaxIndex32 elements (Op::index_elements), where PyTorch's
  // kernels use 64-bit index arithmetic (tools/measure_large_tensor.py, fitted by tools/fit_probe_classes.py
  // --large-tensor): BatchNorm forward and backward in map elements per second, max-pool forward in the elements
  // it walks (Op::pool_elements) per second; a depthwise convolution pass takes output elements / elem_rate +
  // input FLOPs (Op::dw_input_flops) / rate, fitted over 3x3, 5x5 and stride-2 shapes. Each is a floor on the op's
  // time (it never speeds an op up); 0 = no wide-index class (or term).
  double wide_bn_fwd_rate = 0, wide_bn_bwd_rate = 0, wide_max_pool_fwd_rate = 0;
  double wide_dwconv_fwd_rate = 0, wide_dwconv_bwd_rate = 0;            // input FLOP/s
  double wide_dwconv_fwd_elem_rate = 0, wide_dwconv_bwd_elem_rate = 0;  // output elements/s
  // The GPU the classes' absolute rates above and below were measured on: its copy bandwidth (bytes/s) and large
  // bf16 GEMM rate (FLOP/s), written by `calibrate fit` from its profile; 0 = use the rates as they are.
  double reference_copy_bw = 0, reference_bf16_rate = 0;
  // ... and its large fp32 GEMM rate (FLOP/s): the CUDA-core throughput the classes' kernels scale with where their
  // bytes do not bind (op_gpu_time); 0 = as the reference GPU's.
  double reference_fp32_rate = 0;
  // Per-channel sums (g.sum(dim=(0, 2, 3))) measured over a grid of shapes; empty = by bytes.
  struct ChannelSumSample {
    double rows = 0, channels = 0;  // N x H x W, C
    bool nchw = false;
    double rate = 0;                // elements per second
  };
  std::vector<ChannelSumSample> channel_sum;
  // Channels-last training BatchNorm probed alone over a grid of N x H x W rows and C channels
  // (tools/probe_bn.py): forward and backward rates in map elements per second, interpolated like the
  // per-channel sums; empty = the pooled bn_element_rate.
  std::vector<ChannelSumSample> bn_nhwc_fwd, bn_nhwc_bwd;
  // The same probe with fp16 and with fp32 input (tools/probe_bn.py --dtype): PyTorch runs those through cuDNN's
  // BatchNorm and only bf16 through its own kernels above (at::_batch_norm_impl_index); empty = the bf16 table.
  std::vector<ChannelSumSample> bn_nhwc_fp16_fwd, bn_nhwc_fp16_bwd, bn_nhwc_fp32_fwd, bn_nhwc_fp32_bwd;
  // fp32 LayerNorm probed alone over a grid of rows and channels (tools/probe_ln.py): forward and backward rates
  // in elements per second, interpolated the same way; empty = bytes plus norm_row_cost per row.
  std::vector<ChannelSumSample> ln_fwd, ln_bwd;
  std::string probe_classes_source;
  std::string nchw_classes_source;
  std::string kernel_classes_source;    // where the four above come from
  std::string source;                  // how the constants were obtained (method, data)
  std::string as_of;
};

// What the compute model needs from a profile, prepared once (the GEMM surface fit is the costly part).
struct DeviceModel {
  GemmSurface surface;
  ByteRate copy_bw;        // device-to-device copy, read + write counted
  Seconds launch_eager;    // probe: per tiny kernel launched one by one
  Seconds launch_graph;    // probe: per kernel replayed from a CUDA graph
};

// Fits the GEMM surface (with its residual correction) and copies bandwidth and launch figures.
// O(GEMM samples * fit grid).
DeviceModel make_device_model(const GpuProfile& profile);

enum class Bottleneck { gpu_compute, gpu_memory, launch_bound };
const char* to_string(Bottleneck b);

struct StepPrediction {
  Seconds total;             // wall time of one optimizer step (all micro-batches)
  Seconds gpu_forward, gpu_backward, gpu_optimizer;  // GPU busy time by phase (recompute counts as backward)
  Seconds gpu_busy;          // sum of the three
  Seconds gpu_compute;       // part of gpu_busy spent in FLOP-bound work (gemm, attention)
  Seconds gpu_nchw;          // part of gpu_busy in NCHW-only kernels (NCHW BatchNorm, depthwise, layout transforms)
  Seconds gpu_autocast_casts;  // part of gpu_busy in autocast's casts of fp32 weights and stream (Op::autocast_cast)
  Seconds cpu_issue;         // CPU time to issue every kernel of the step
  double kernels = 0;        // kernels per step
  double calls = 0;          // framework calls per step (eager CPU cost per call)
  double calls_forward = 0;  // of which in the forward (module and functional calls; recompute included)
  double conv_calls = 0;     // cuDNN convolution calls (forward and backward), each with its extra CPU cost
  double recompute_calls = 0;  // forward calls re-run by activation checkpointing (each with its hooks' CPU cost)
  Seconds cpu_recompute;       // of cpu_issue, what checkpointing's hooks cost beyond the re-run calls (eager)
  Flops flops;               // model FLOPs per step (recomputation included)
  double gpu_busy_frac = 0;  // gpu_busy / total
  Bottleneck bottleneck = Bottleneck::gpu_compute;
  std::string not_expressible;  // non-empty: no prediction, and why
};

// Predicts one step. Preconditions: step.micro_batch >= 1, step.grad_accum >= 1.
StepPrediction predict_step(const StepConfig& step, const DeviceModel& dev, const ComputeConstants& c);
// Same, preparing the device model from the profile first (costlier; prefer the overload above in loops).
StepPrediction predict_step(const StepConfig& step, const GpuProfile& profile, const ComputeConstants& c);
// Same from prebuilt operators (the fit re-times fixed operator lists many times).
StepPrediction predict_step_from_ops(const StepOps& ops, const StepConfig& step, const DeviceModel& dev,
                                     const ComputeConstants& c);

// How far a measured step falls from the prediction, as two independent log-normal factors: H on the CPU's issue
// time (the host: lent hosts of one kind issue the same step up to 2x apart, docs/calibration.md, "The floor that
// host variation sets") and G on the GPU's busy time. Their log standard deviations are fitted over the measured
// runs (tools/fit_step_spread.py, calibrate/profiles/sim-constants.json); 0 = that side is taken as exact.
struct StepSpread {
  double cpu_log_sd = 0;
  double gpu_log_sd = 0;
};

// What bounds the GPU's own work: FLOP-bound (gpu_compute) when its FLOP-bound kernels take at least half the GPU
// time, else memory-bound (gpu_memory). The step's bottleneck is this unless the host's issue is the longer.
Bottleneck gpu_side_bottleneck(const StepPrediction& p);

// The q-quantile (0 < q < 1) of the step max(cpu_issue x H, gpu_busy x G), H and G as in StepSpread: with
// P(step <= t) = Phi(ln(t / cpu) / sd_cpu) x Phi(ln(t / gpu) / sd_gpu), solved for t by bisection on ln t. With
// both sds 0 it is max(cpu_issue, gpu_busy); a CUDA-graph step is timed from the same two parts. 0 for an
// unpredicted step.
Seconds step_time_quantile(const StepPrediction& p, const StepSpread& spread, double q);

// The step on a host whose CPU issues kernels `scale` times as long as the constants say (a factor measured on
// that host, ClusterConfig::host_cpu_scale): the CPU's times scale, and the total, busy share and bottleneck follow.
// Precondition: scale > 0.
void apply_host_cpu_scale(StepPrediction& p, double scale);

// The most elements PyTorch indexes with 32-bit arithmetic (at::cuda::detail::canUse32BitIndexMath: INT32_MAX).
inline constexpr double kMaxIndex32 = 2147483647.0;

// Index into ComputeConstants::pool_rate: [max, average][forward, backward][NHWC, NCHW].
constexpr std::size_t pool_rate_index(int pool, bool backward, bool nchw) {
  return static_cast<std::size_t>((pool - 1) * 4 + (backward ? 2 : 0) + (nchw ? 1 : 0));
}

// Rate of a per-channel sum of `rows` x `channels` elements in a layout, interpolated over the measured samples
// of that layout: inverse-distance weights (power 2) over the four nearest in (ln rows, ln channels), on ln rate;
// a sample at the query itself is returned as measured. 0 when no sample of the layout exists.
double channel_sum_rate(const std::vector<ComputeConstants::ChannelSumSample>& samples, double rows,
                        double channels, bool nchw);

// GPU time of one occurrence of `op`.
Seconds op_gpu_time(const Op& op, const DeviceModel& dev, const ComputeConstants& c);

// The convolution efficiency (relative to the GEMM surface) that an implicit-GEMM convolution in `d` runs at:
// its own dtype's constant where set, else fp16 falls back to bf16's and every dtype to conv_efficiency.
double conv_efficiency_for(const ComputeConstants& c, Dtype d);
// The constant that holds `d`'s own convolution efficiency (what the probe matching sets).
double& conv_efficiency_of(ComputeConstants& c, Dtype d);

// Occurrences of `op` per micro-batch: op.count, except for NCHW layout transforms, whose count follows their
// band's measured passes s (of at most 3: weight gradient first, then forward, then input gradient, the order
// in which the profiles show cuDNN adding them): forward min(max(s - 1, 0), 1), backward min(s, 1) + max(s - 2, 0).
double op_count(const Op& op, const ComputeConstants& c);
// Two datasheet ratios of `dev` to the GPU the classes were probed on: (its copy bandwidth, its large bf16 GEMM
// rate); 1 where the constants name no reference GPU. FLOP-bound classes take the second; the others the larger
// of the first and cuda_core_scale (op_gpu_time).
std::pair<double, double> rate_scales(const DeviceModel& dev, const ComputeConstants& c);
// The factor a probed class's kernels take on `dev` where their bytes do not bind: its large fp32 GEMM rate (SMs x
// clock x CUDA-core lanes, as the datasheet's fp32 peak) over the reference GPU's; 1 where no reference is named.
double cuda_core_scale(const DeviceModel& dev, const ComputeConstants& c);

}  // namespace gp
