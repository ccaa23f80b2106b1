#include "models/compute_model.hpp"

#include <algorithm>
#include <cmath>

namespace gp {

namespace {

// The step is the slower of the CPU's issue and the GPU's work (a pipeline: the CPU runs ahead while the GPU
// works), and what sets it names the bottleneck.
void set_pace(StepPrediction& p) {
  p.total = std::max(p.cpu_issue, p.gpu_busy);
  p.gpu_busy_frac = p.total.value() > 0 ? p.gpu_busy / p.total : 0.0;
  p.bottleneck = p.cpu_issue > p.gpu_busy ? Bottleneck::launch_bound : gpu_side_bottleneck(p);
}

// P(x * F <= t) for F log-normal with log sd `sd` (a step at x when sd is 0; always true for x <= 0).
double lognormal_cdf(double t, double x, double sd) {
  if (x <= 0) return 1.0;
  if (sd <= 0) return t >= x ? 1.0 : 0.0;
  return 0.5 * std::erfc(-std::log(t / x) / (sd * std::sqrt(2.0)));
}

}  // namespace

Bottleneck gpu_side_bottleneck(const StepPrediction& p) {
  return p.gpu_compute * 2.0 >= p.gpu_busy ? Bottleneck::gpu_compute : Bottleneck::gpu_memory;
}

Seconds step_time_quantile(const StepPrediction& p, const StepSpread& spread, double q) {
  const double cpu = p.cpu_issue.value(), gpu = p.gpu_busy.value();
  const double hi0 = std::max(cpu, gpu);
  if (!(hi0 > 0) || !(q > 0 && q < 1)) return Seconds(0);
  const double sd_max = std::max(spread.cpu_log_sd, spread.gpu_log_sd);
  if (sd_max <= 0) return Seconds(hi0);
  // Bracket: every factor within 8 sds of 1 (Phi(8) = 1 - 6e-16), then 100 halvings of ln t.
  double lo = std::log(hi0) - 8 * sd_max, hi = std::log(hi0) + 8 * sd_max;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi), t = std::exp(mid);
    if (lognormal_cdf(t, cpu, spread.cpu_log_sd) * lognormal_cdf(t, gpu, spread.gpu_log_sd) < q)
      lo = mid;
    else
      hi = mid;
  }
  return Seconds(std::exp(hi));
}

const char* to_string(Bottleneck b) {
  switch (b) {
    case Bottleneck::gpu_compute: return "gpu-compute";
    case Bottleneck::gpu_memory: return "gpu-memory";
    case Bottleneck::launch_bound: return "launch-bound";
  }
  return "?";
}

DeviceModel make_device_model(const GpuProfile& profile) {
  DeviceModel d;
  d.surface = fit_gemm_surface(profile.gemm, profile.sm_count);
  add_residual_correction(d.surface, profile.gemm);
  d.copy_bw = profile.hbm_copy_bw;
  d.launch_eager = profile.launch_eager;
  d.launch_graph = profile.launch_graph;
  return d;
}

namespace {

FlopRate large_rate(const DeviceModel& dev, Dtype d) {
  auto it = dev.surface.fits.find(d);
  if (it != dev.surface.fits.end()) return it->second.rate;
  // A dtype the profile did not probe runs at the slowest probed rate: a conservative stand-in.
  FlopRate r = FlopRate::tflops(1e9);
  for (const auto& [dt, f] : dev.surface.fits) r = std::min(r, f.rate);
  return r;
}

Seconds mem_time(Bytes b, const DeviceModel& dev, const ComputeConstants& c) {
  return b / (dev.copy_bw * c.memory_efficiency);
}

}  // namespace

std::pair<double, double> rate_scales(const DeviceModel& dev, const ComputeConstants& c) {
  const double ms = c.reference_copy_bw > 0 ? dev.copy_bw.value() / c.reference_copy_bw : 1.0;
  const double fs = c.reference_bf16_rate > 0 && dev.surface.has(Dtype::bf16)
                        ? large_rate(dev, Dtype::bf16).value() / c.reference_bf16_rate
                        : 1.0;
  return {ms, fs};
}

double cuda_core_scale(const DeviceModel& dev, const ComputeConstants& c) {
  return c.reference_fp32_rate > 0 && dev.surface.has(Dtype::fp32)
             ? large_rate(dev, Dtype::fp32).value() / c.reference_fp32_rate
             : 1.0;
}

namespace {

// A memory op's bytes: those on the unrolled, GELU and broadcast paths at their probed rates, the rest at the
// memory efficiency (a path without a probed rate falls back to it too).
// `ms`: the device's copy bandwidth over the probing GPU's (rate_scales).
Seconds elementwise_time(const Op& op, const DeviceModel& dev, const ComputeConstants& c, double ms) {
  double rest = op.bytes.value();
  Seconds t;
  if (c.elementwise_unrolled_bw > 0 && op.unrolled_bytes > 0) {
    t += Seconds(op.unrolled_bytes / (c.elementwise_unrolled_bw * ms));
    rest -= op.unrolled_bytes;
  }
  if (c.elementwise_gelu_bw > 0 && op.gelu_bytes > 0) {
    t += Seconds(op.gelu_bytes / (c.elementwise_gelu_bw * ms));
    rest -= op.gelu_bytes;
  }
  if (c.elementwise_broadcast_bw > 0 && op.broadcast_bytes > 0) {
    t += Seconds(op.broadcast_bytes / (c.elementwise_broadcast_bw * ms));
    rest -= op.broadcast_bytes;
  }
  return t + mem_time(Bytes(std::max(0.0, rest)), dev, c);
}

}  // namespace

double channel_sum_rate(const std::vector<ComputeConstants::ChannelSumSample>& samples, double rows,
                        double channels, bool nchw) {
  std::vector<std::pair<double, double>> near;  // (squared distance, ln rate)
  for (const auto& s : samples) {
    if (s.nchw != nchw || s.rate <= 0 || s.rows <= 0 || s.channels <= 0) continue;
    const double dr = std::log(rows / s.rows), dc = std::log(channels / s.channels);
    near.emplace_back(dr * dr + dc * dc, std::log(s.rate));
  }
  if (near.empty()) return 0;
  const std::size_t k = std::min<std::size_t>(4, near.size());
  std::partial_sort(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(k), near.end());
  if (near.front().first < 1e-12) return std::exp(near.front().second);
  double w_sum = 0, v_sum = 0;
  for (std::size_t i = 0; i < k; ++i) {
    const double w = 1.0 / near[i].first;
    w_sum += w;
    v_sum += w * near[i].second;
  }
  return std::exp(v_sum / w_sum);
}

// The probed channels-last BatchNorm rates for this op's pass and map dtype: bf16 maps run PyTorch's own kernels,
// fp16 and fp32 ones cuDNN's (at::_batch_norm_impl_index excludes only bf16 from cuDNN), each probed apart; a
// dtype without its own table falls back to the bf16 one.
namespace {
const std::vector<ComputeConstants::ChannelSumSample>& bn_nhwc_table(const Op& op, const ComputeConstants& c) {
  const bool fwd = op.phase == Phase::forward;
  const auto& bf16 = fwd ? c.bn_nhwc_fwd : c.bn_nhwc_bwd;
  const auto& other = op.dtype == Dtype::fp16 ? (fwd ? c.bn_nhwc_fp16_fwd : c.bn_nhwc_fp16_bwd)
                      : op.dtype == Dtype::bf16 ? bf16
                                                : (fwd ? c.bn_nhwc_fp32_fwd : c.bn_nhwc_fp32_bwd);
  return other.empty() ? bf16 : other;
}
}  // namespace

double conv_efficiency_for(const ComputeConstants& c, Dtype d) {
  double e = 0;
  if (d == Dtype::fp16) e = c.conv_fp16_efficiency > 0 ? c.conv_fp16_efficiency : c.conv_16bit_efficiency;
  if (d == Dtype::bf16) e = c.conv_16bit_efficiency;
  if (d == Dtype::tf32) e = c.conv_tf32_efficiency;
  if (d == Dtype::fp32) e = c.conv_fp32_efficiency;
  return e > 0 ? e : c.conv_efficiency;
}

double& conv_efficiency_of(ComputeConstants& c, Dtype d) {
  switch (d) {
    case Dtype::fp16: return c.conv_fp16_efficiency;
    case Dtype::tf32: return c.conv_tf32_efficiency;
    case Dtype::fp32: return c.conv_fp32_efficiency;
    default: return c.conv_16bit_efficiency;
  }
}

// A channels-last BatchNorm, max-pool forward or depthwise convolution over more than 2^31 - 1 elements, at its
// wide-index rate (ComputeConstants::wide_*; `ms` is the other probed classes' factor on this GPU, op_gpu_time,
// as these kernels are bound neither by tensor cores nor, at their rates, by bytes); zero for other ops.
Seconds wide_index_time(const Op& op, const ComputeConstants& c, double ms) {
  if (op.index_elements <= kMaxIndex32 || op.nchw || op.pool_nchw) return {};
  const bool fwd = op.phase == Phase::forward;
  auto at = [&](double amount, double rate) { return rate > 0 ? Seconds(amount / (rate * ms)) : Seconds{}; };
  if (op.bn_elements > 0) return at(op.elements, fwd ? c.wide_bn_fwd_rate : c.wide_bn_bwd_rate);
  if (op.pool == 1 && fwd) return at(op.pool_elements, c.wide_max_pool_fwd_rate);
  if (op.kind == OpKind::simt)
    return at(op.dw_output_elements, fwd ? c.wide_dwconv_fwd_elem_rate : c.wide_dwconv_bwd_elem_rate) +
           at(op.dw_input_flops.value(), fwd ? c.wide_dwconv_fwd_rate : c.wide_dwconv_bwd_rate);
  return {};
}

Seconds op_gpu_time(const Op& op, const DeviceModel& dev, const ComputeConstants& c) {
  Seconds work;
  // The probed classes' absolute rates were measured on one GPU. FLOP-bound ones (grouped convolutions, small
  // batched matmuls) scale to another GPU by its large bf16 GEMM rate (fs); the others (BatchNorm, pooling,
  // LayerNorm, per-channel sums, the slower elementwise paths, the wide-index kernels) run well below the copy
  // bandwidth, bound by the SMs: on a GPU with the same SMs and slower memory (an H100 against the H200) they keep
  // their rates (docs/calibration.md, "Set 18 on an H100"). They scale by the larger of its CUDA-core ratio (the
  // datasheet fp32 peak's, which halves for an architecture with half the fp32 lanes per SM, so it understates an
  // A100's SMs) and its bandwidth ratio (the former rule), never beyond its bandwidth for their bytes (the floor
  // after the switch).
  const auto [bw_scale, fs] = rate_scales(dev, c);
  const double ms = std::max(cuda_core_scale(dev, c), bw_scale);
  switch (op.kind) {
    case OpKind::gemm: {
      const double eff = c.gemm_efficiency * (op.conv ? conv_efficiency_for(c, op.dtype) : 1.0);
      const Seconds t = dev.surface.has(op.dtype)
                      ? gemm_kernel_time(dev.surface, op.dtype, op.shape)
                      : op.flops / large_rate(dev, op.dtype);
      work = std::max(Seconds(t / eff), mem_time(op.bytes, dev, c));
      const auto& g = c.grouped_conv;
      if (op.conv && op.group_width > 0 && g.rate > 0) {
        const double w = op.group_width;
        double t_g = op.flops.value() / (g.rate * fs * w / (w + g.w0));
        if ((op.group_width & (op.group_width - 1)) != 0) t_g *= g.odd_factor;
        if (op.group_strided) t_g *= g.stride_factor;
        work = std::max(work, Seconds(Seconds(t_g) + g.pass_cost));
      }
      if (op.nchw_conv_band >= 0 && op.nchw_conv_band < nchw_band_count) {
        const double f = c.nchw_conv_factor[static_cast<std::size_t>(op.nchw_conv_band)];
        if (f > 0) work = work * f;
      }
      if (op.small_bmm) {
        const double r = (op.bmm_aligned ? c.bmm_aligned_rate : c.bmm_unaligned_rate) * fs;
        if (r > 0) work = std::max(work, Seconds(op.flops.value() / r));
      }
      // The 3-channel first convolution in 16-bit (measured so; fp32 / tf32 keep the surface).
      if (op.stem && c.conv_stem_flop_efficiency > 0 && (op.dtype == Dtype::bf16 || op.dtype == Dtype::fp16))
        work = std::max(work, Seconds(op.flops / (large_rate(dev, op.dtype) * c.conv_stem_flop_efficiency)));
      break;
    }
    case OpKind::attention:
      work = op.flops * op.work_factor / (large_rate(dev, op.dtype) * c.attention_efficiency);
      break;
    case OpKind::memory:
      if (const double r = op.channel_copy == Op::ChannelCopy::cat       ? c.channel_cat_bw
                           : op.channel_copy == Op::ChannelCopy::shuffle ? c.channel_shuffle_bw
                           : op.channel_copy == Op::ChannelCopy::split   ? c.channel_split_bw
                                                                         : 0.0;
          r > 0)
        work = Seconds(op.bytes.value() / (r * ms));
      else if (op.nchw_band == nchw_spatial_first && c.nchw_transform_first_efficiency > 0)  // 3-channel rows
        work = op.bytes / (dev.copy_bw * c.nchw_transform_first_efficiency);
      else if (op.nchw && op.transpose && c.nchw_transform_efficiency > 0)  // cuDNN's NCHW<->NHWC transforms
        work = op.bytes / (dev.copy_bw * c.nchw_transform_efficiency);
      else if (op.transpose && c.transpose_efficiency > 0)
        work = op.bytes / (dev.copy_bw * c.transpose_efficiency);
      else
        work = elementwise_time(op, dev, c, ms);
      if (op.nchw && op.channels > 0) {  // NCHW BatchNorm
        const bool fwd = op.phase == Phase::forward;
        const double rc = (fwd ? c.bn_nchw_fwd_rate_per_channel : c.bn_nchw_bwd_rate_per_channel) * ms;
        const double rmax = (fwd ? c.bn_nchw_fwd_max_rate : c.bn_nchw_bwd_max_rate) * ms;
        const Seconds plane = fwd ? c.bn_nchw_fwd_plane_cost : c.bn_nchw_bwd_plane_cost;
        if (rc > 0 && rmax > 0)
          work = std::max(work, Seconds(Seconds(op.elements / std::min(op.channels * rc, rmax)) + plane * op.planes));
      } else if (const auto& bn = bn_nhwc_table(op, c);
                 op.bn_elements > 0 && op.channels > 0 && op.elements > 0 && !bn.empty()) {  // channels-last BN
        const double r = channel_sum_rate(bn, op.elements / op.channels, op.channels, false) * ms;
        if (r > 0) work = std::max(work, Seconds(op.elements / r));
      } else if (op.bn_elements > 0 && c.bn_element_rate > 0) {
        work = std::max(work, Seconds(op.bn_elements / (c.bn_element_rate * ms)));
      }
      if (op.channel_sum_rows > 0 && !c.channel_sum.empty()) {
        const double r = channel_sum_rate(c.channel_sum, op.channel_sum_rows, op.channel_sum_channels,
                                          op.channel_sum_nchw) * ms;
        // The probe summed 16-bit gradients; a wider one (fp32 / tf32 training) may be bound by its bytes.
        if (r > 0) work = std::max(mem_time(op.bytes, dev, c), Seconds(op.channel_sum_rows * op.channel_sum_channels / r));
      }
      if (op.pool > 0 && op.pool <= 2) {
        const double r = c.pool_rate[pool_rate_index(op.pool, op.phase != Phase::forward, op.pool_nchw)] * ms;
        if (r > 0) work = Seconds(op.pool_elements / r);
      }
      if (op.roll_elements > 0 && c.roll_rate > 0)
        work = std::max(work, Seconds(op.roll_elements / (c.roll_rate * ms)));
      if (const auto& ln = op.phase == Phase::forward ? c.ln_fwd : c.ln_bwd;
          op.rows > 0 && op.channels > 0 && !ln.empty()) {  // a LayerNorm at its probed rate for its shape
        // The rates are fp32 rows'; a 16-bit row is timed as the fp32 row of the same bytes (Op::norm_elem_bytes).
        const double ce = op.channels * op.norm_elem_bytes / 4.0;
        const double r = channel_sum_rate(ln, op.rows, ce, false) * ms;
        if (r > 0) work = std::max(mem_time(op.bytes, dev, c), Seconds(op.rows * ce / r));
      } else {
        work += c.norm_row_cost * op.rows;
      }
      break;
    case OpKind::simt: {
      const double ef_nchw = op.phase == Phase::forward ? c.dwconv_nchw_fwd_flop_efficiency
                                                        : c.dwconv_nchw_bwd_flop_efficiency;
      if (op.nchw && ef_nchw > 0) {  // PyTorch's own depthwise kernels: FLOP-bound on CUDA cores, far below peak
        work = Seconds(op.flops / (large_rate(dev, Dtype::fp32) * ef_nchw));
        break;
      }
      if ((op.dtype == Dtype::tf32 || op.dtype == Dtype::fp32) && c.dwconv_f32_flop_efficiency > 0 &&
          c.dwconv_f32_memory_efficiency > 0) {
        const Flops f = op.dw_input_flops.value() > 0 ? op.dw_input_flops : op.flops;
        const double e7 = op.dtype == Dtype::tf32 ? c.dwconv_tf32_k7_flop_efficiency : c.dwconv_fp32_k7_flop_efficiency;
        if (op.dw_kernel >= 7 && e7 > 0)
          work = f / (large_rate(dev, Dtype::fp32) * e7);
        else
          work = std::max(Seconds(f / (large_rate(dev, Dtype::fp32) * c.dwconv_f32_flop_efficiency)),
                          op.bytes / (dev.copy_bw * c.dwconv_f32_memory_efficiency));
        break;
      }
      const double ef = c.dwconv_flop_efficiency > 0 ? c.dwconv_flop_efficiency : c.gemm_efficiency;
      const double em = c.dwconv_memory_efficiency > 0 ? c.dwconv_memory_efficiency : c.memory_efficiency;
      work = std::max(Seconds(op.flops / (large_rate(dev, Dtype::fp32) * ef)), op.bytes / (dev.copy_bw * em));
      break;
    }
  }
  work = std::max(work, wide_index_time(op, c, ms));
  // No class beats this GPU's bandwidth for its bytes (on the reference GPU the probed rates are below it anyway).
  if (op.kind == OpKind::memory || op.kind == OpKind::simt) work = std::max(work, mem_time(op.bytes, dev, c));
  return work + c.gpu_per_kernel * static_cast<double>(op.kernels);
}

double op_count(const Op& op, const ComputeConstants& c) {
  if (op.nchw_band < 0 || op.nchw_band >= nchw_band_count) return op.count;
  const double s = c.nchw_transform_passes[static_cast<std::size_t>(op.nchw_band)];
  if (s < 0) return op.count;
  return op.phase == Phase::forward ? std::clamp(s - 1, 0.0, 1.0) : std::min(s, 1.0) + std::max(s - 2, 0.0);
}

StepPrediction predict_step_from_ops(const StepOps& ops, const StepConfig& step, const DeviceModel& dev,
                                     const ComputeConstants& c) {
  StepPrediction p;
  if (!ops.not_expressible.empty()) {
    p.not_expressible = ops.not_expressible;
    return p;
  }
  const double accum = std::max(1, step.grad_accum);
  double kernels = 0, conv_calls_n = 0, fwd_kernels = 0, engine_kernels = 0, calls = 0, recompute_calls = 0;
  Seconds compute;
  auto account = [&](const Op& op, double times, Seconds& phase_time, bool python = false, bool recompute = false) {
    const double n = op_count(op, c) * times;
    if (python && !op.engine_issued) fwd_kernels += op.kernels * n;  // engine-issued: counted below, a bare launch
    const Seconds t = op_gpu_time(op, dev, c) * n;
    phase_time += t;
    kernels += op.kernels * n;
    if (op.engine_issued) engine_kernels += op.kernels * n;
    if (!op.nested && !op.engine_issued) {
      calls += n;
      if (python) p.calls_forward += n;
      if (recompute) recompute_calls += n;
    }
    if (op.conv) conv_calls_n += n;
    p.flops += op.flops * n;
    if (op.kind == OpKind::gemm || op.kind == OpKind::attention) compute += t;
    if (op.nchw) p.gpu_nchw += t;
    if (op.autocast_cast) p.gpu_autocast_casts += t;
  };
  for (const Op& op : ops.micro) {
    if (op.phase == Phase::forward) {
      account(op, accum, p.gpu_forward, true);
      if (step.activation_checkpointing && op.recompute) account(op, accum, p.gpu_backward, true, true);
    } else {
      account(op, accum, p.gpu_backward);
    }
  }
  for (const Op& op : ops.optimizer) account(op, 1, p.gpu_optimizer);
  // Micro-batches after the first add their gradients into the existing .grad (one add per tensor). The add
  // is issued inside the autograd engine's AccumulateGrad node, which runs in every micro-batch anyway (the
  // first one just keeps the new gradient), so it costs the CPU a bare launch (the launch probe), not the
  // per-kernel cost of an operator. Under FSDP the unsharded gradient is gone after each reduce-scatter: the add
  // is into the rank's shard (StepConfig::grad_shards).
  if (accum > 1) {
    Op acc;
    acc.name = "grad.accumulate";
    acc.kind = OpKind::memory;
    acc.bytes = Bytes(12.0 * ops.params / std::max(1, step.grad_shards));
    acc.kernels = static_cast<int>(std::max(1.0, ops.param_tensors));
    acc.engine_issued = true;
    account(acc, accum - 1, p.gpu_backward);
  }
  p.gpu_busy = p.gpu_forward + p.gpu_backward + p.gpu_optimizer;
  p.gpu_compute = compute;
  p.kernels = kernels;
  p.calls = calls;
  p.conv_calls = conv_calls_n;
  p.recompute_calls = recompute_calls;
  if (!step.cuda_graphs) p.cpu_recompute = c.cpu_per_recompute_eager * recompute_calls;
  p.cpu_issue = step.cuda_graphs ? dev.launch_graph * kernels
                                 : c.cpu_per_kernel_eager * fwd_kernels +
                                       c.cpu_per_bwd_kernel_eager * (kernels - fwd_kernels - engine_kernels) +
                                       dev.launch_eager * engine_kernels +
                                       c.cpu_per_conv_eager * conv_calls_n +
                                       c.cpu_per_op_eager * calls + p.cpu_recompute + c.cpu_per_step_eager;
  set_pace(p);
  return p;
}

void apply_host_cpu_scale(StepPrediction& p, double scale) {
  p.cpu_issue = p.cpu_issue * scale;
  p.cpu_recompute = p.cpu_recompute * scale;
  set_pace(p);
}

StepPrediction predict_step(const StepConfig& step, const DeviceModel& dev, const ComputeConstants& c) {
  return predict_step_from_ops(build_step_ops(step), step, dev, c);
}

StepPrediction predict_step(const StepConfig& step, const GpuProfile& profile, const ComputeConstants& c) {
  return predict_step(step, make_device_model(profile), c);
}

}  // namespace gp
