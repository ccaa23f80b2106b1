#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "models/compute_model.hpp"
#include "models/memory_model.hpp"
#include "tests/support/gpt_step.hpp"

using namespace gp;

namespace {

// A synthetic device: one bf16/tf32/fp32 GEMM sample set with known rates.
DeviceModel device() {
  std::vector<GemmSample> s;
  for (long m : {1024L, 4096L, 16384L})
    for (long k : {512L, 2048L, 8192L}) {
      s.push_back({Dtype::bf16, m, 4096, k, FlopRate::tflops(700)});
      s.push_back({Dtype::tf32, m, 4096, k, FlopRate::tflops(350)});
      s.push_back({Dtype::fp32, m, 4096, k, FlopRate::tflops(50)});
    }
  DeviceModel d;
  d.surface = fit_gemm_surface(s, 132);
  d.copy_bw = ByteRate::gbps(4000);
  d.launch_eager = Seconds::us(5);
  d.launch_graph = Seconds::us(1);
  return d;
}

// Constants that leave a kernel class's own timing bare: GEMM surface and copy bandwidth at face value, no per-kernel
// time.
ComputeConstants bare_constants() {
  ComputeConstants c;
  c.gemm_efficiency = 1;
  c.memory_efficiency = 1;
  c.gpu_per_kernel = Seconds::us(0);
  return c;
}

Op gemm_op(GemmShape shape, Dtype dtype = Dtype::bf16) {
  Op op;
  op.kind = OpKind::gemm;
  op.dtype = dtype;
  op.shape = shape;
  op.flops = gemm_flops(shape);
  return op;
}

Op memory_op(double bytes) {
  Op op;
  op.kind = OpKind::memory;
  op.bytes = Bytes(bytes);
  return op;
}

StepConfig gpt(int layers, int d, int seq, int batch) {
  StepConfig s;
  s.model.id = "gpt";
  s.model.family = ModelFamily::gpt;
  s.model.dims.layers = layers;
  s.model.dims.d_model = d;
  s.model.dims.heads = d / 64;
  s.model.dims.seq = seq;
  s.micro_batch = batch;
  return s;
}

}  // namespace

TEST_CASE("models::compute: a memory-bound op takes bytes over bandwidth plus its kernels", "[models]") {
  ComputeConstants c;
  c.memory_efficiency = 0.5;
  c.gpu_per_kernel = Seconds::us(2);
  Op op;
  op.kind = OpKind::memory;
  op.bytes = Bytes::gb(2);
  op.kernels = 3;
  // 2 GB / (4000 GB/s * 0.5) = 1 ms, + 3 * 2 us.
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(1.006));
}

TEST_CASE("models::compute: step time grows with batch, linearly once GPU-bound", "[models]") {
  const auto dev = device();
  const ComputeConstants c;
  double prev = 0, prev_gpu = 0;
  for (int b : {1, 2, 4, 8, 16, 32}) {
    const auto p = predict_step(gpt(12, 768, 1024, b), dev, c);
    REQUIRE(p.not_expressible.empty());
    CHECK(p.gpu_busy.value() > prev_gpu);  // GPU work always grows
    CHECK(p.total.value() >= prev);        // a launch-bound step stays flat
    prev = p.total.value();
    prev_gpu = p.gpu_busy.value();
  }
  const double t16 = predict_step(gpt(24, 2048, 1024, 16), dev, c).gpu_busy.value();
  const double t32 = predict_step(gpt(24, 2048, 1024, 32), dev, c).gpu_busy.value();
  CHECK(t32 / t16 == Approx(2.0).epsilon(0.05));
}

TEST_CASE("models::compute: CUDA graphs beat eager when launch-bound, not when GPU-bound", "[models]") {
  const auto dev = device();
  const ComputeConstants c;
  StepConfig tiny = gpt(4, 256, 128, 8);
  const auto eager = predict_step(tiny, dev, c);
  tiny.cuda_graphs = true;
  const auto graph = predict_step(tiny, dev, c);
  CHECK(eager.bottleneck == Bottleneck::launch_bound);
  CHECK(graph.total.value() < 0.5 * eager.total.value());
  StepConfig big = gpt(24, 2048, 1024, 16);
  const auto e2 = predict_step(big, dev, c);
  big.cuda_graphs = true;
  CHECK(predict_step(big, dev, c).total.value() == Approx(e2.total.value()).epsilon(0.02));
}

TEST_CASE("models::compute: precision, accumulation and checkpointing", "[models]") {
  const auto dev = device();
  const ComputeConstants c;
  StepConfig s = gpt(12, 768, 1024, 16);
  const double bf16 = predict_step(s, dev, c).total.value();
  s.precision = Precision::tf32;
  const double tf32 = predict_step(s, dev, c).total.value();
  s.precision = Precision::fp32;
  const double fp32 = predict_step(s, dev, c).total.value();
  CHECK(bf16 < tf32);
  CHECK(tf32 < fp32);
  // Same samples in smaller micro-batches cost more (more kernels, smaller GEMMs).
  StepConfig a = gpt(24, 1024, 1024, 32), b = gpt(24, 1024, 1024, 2);
  b.grad_accum = 16;
  CHECK(predict_step(b, dev, c).total.value() > predict_step(a, dev, c).total.value());
  // Checkpointing re-runs each block's forward up to its last saved tensor (the GELU output; PyTorch's
  // non-reentrant checkpoint stops early): qkv, proj and fc (16 d^2 FLOPs a token) and the causal attention
  // (2 s d), not proj2. Per token, d = 2,048, s = 1,024, V = 50,304: a layer's linears 24 d^2 = 100,663,296
  // forward, twice that backward; attention 4,194,304 forward, 2.5x backward; the tied head 2 d V = 206,045,184
  // forward, twice backward: 8,218,214,400 in all; recomputed 24 x (67,108,864 + 4,194,304) = 1,711,276,032.
  StepConfig k = gpt(24, 2048, 1024, 8);
  const auto plain = predict_step(k, dev, c);
  k.activation_checkpointing = true;
  const auto ck = predict_step(k, dev, c);
  CHECK(ck.total.value() > plain.total.value());
  CHECK(plain.flops.value() / (8.0 * 1024) == Approx(8218214400.0).epsilon(1e-6));
  CHECK(ck.flops.value() / plain.flops.value() == Approx(1.0 + 1711276032.0 / 8218214400.0).epsilon(1e-6));
}

TEST_CASE("models::compute: activation checkpointing charges its hooks' CPU per recomputed call", "[models]") {
  const DeviceModel dev = device();
  ComputeConstants c;
  c.cpu_per_op_eager = Seconds::us(30);
  StepConfig s = gpt(12, 768, 1024, 4);
  const auto plain = predict_step(s, dev, c);
  s.activation_checkpointing = true;
  const auto ck0 = predict_step(s, dev, c);
  c.cpu_per_recompute_eager = Seconds::us(100);
  const auto ck = predict_step(s, dev, c);
  // The recomputed calls are exactly the forward calls checkpointing adds; without checkpointing there are none.
  CHECK(plain.recompute_calls == 0);
  CHECK(ck.recompute_calls > 0);
  CHECK(ck.recompute_calls == Approx(ck0.calls_forward - plain.calls_forward));
  // Each costs 100 us more of CPU, and nothing else moves.
  CHECK((ck.cpu_issue - ck0.cpu_issue).value() * 1e6 == Approx(100.0 * ck.recompute_calls));
  CHECK(ck.gpu_busy.value() == Approx(ck0.gpu_busy.value()));
  const auto plain_k = predict_step(StepConfig(gpt(12, 768, 1024, 4)), dev, c);
  CHECK(plain_k.cpu_issue.value() == Approx(plain.cpu_issue.value()));
}

TEST_CASE("models::memory: AdamW training holds 16 bytes per parameter plus activations", "[models]") {
  StepConfig s = gpt(12, 768, 1024, 8);
  const auto m = predict_memory_from_ops(build_step_ops(s), s, {}, Bytes::gb(141), Bytes::gib(0.5));
  const double P = 124475904;
  CHECK((m.weights + m.grads + m.optimizer_states).value() == Approx(16 * P));
  CHECK(m.fits);
  CHECK(m.peak_allocated.value() > 16 * P);
}

TEST_CASE("models::memory: logits the loop keeps through backward add one logits tensor to the peak", "[models]") {
  // GPT-124M-like at batch 8 x 1,024 tokens in bf16: the logits are 8,192 x 50,304 16-bit values, 824,180,736
  // bytes. Kept by the loop (the default, as the reference runs' peaks show), they are alive at the start of
  // backward with the activations and the loss's fp32 buffers; returned only through the loss, they are not.
  StepConfig s = gpt(12, 768, 1024, 8);
  s.model.dims.vocab = 50304;
  const StepOps ops = build_step_ops(s);
  const auto kept = predict_memory_from_ops(ops, s, {}, Bytes::gb(141), Bytes::gib(0.5));
  s.logits_kept = false;
  const auto dropped = predict_memory_from_ops(ops, s, {}, Bytes::gb(141), Bytes::gib(0.5));
  CHECK(std::string(kept.peak_at) == "start of backward");
  CHECK((kept.peak_device - dropped.peak_device).value() == Approx(2.0 * 8192 * 50304));
  CHECK(dropped.outputs_alive.value() == 0);
}

TEST_CASE("models::memory: activations scale with batch, checkpointing and ZeRO shrink memory", "[models]") {
  StepConfig s = gpt(24, 2048, 1024, 8);
  const auto base = predict_memory_from_ops(build_step_ops(s), s, {}, Bytes::gb(141), Bytes::gib(0.5));
  StepConfig s2 = s;
  s2.micro_batch = 16;
  const auto big = predict_memory_from_ops(build_step_ops(s2), s2, {}, Bytes::gb(141), Bytes::gib(0.5));
  CHECK(big.activations.value() == Approx(2 * base.activations.value()));
  StepConfig ck = s;
  ck.activation_checkpointing = true;
  const auto mck = predict_memory_from_ops(build_step_ops(ck), ck, {}, Bytes::gb(141), Bytes::gib(0.5));
  CHECK(mck.peak_allocated < base.peak_allocated);
  ParallelConfig z;
  z.dp = 8;
  z.strategy = DataParallel::zero1;
  const auto mz = predict_memory_from_ops(build_step_ops(s), s, z, Bytes::gb(141), Bytes::gib(0.5));
  CHECK(mz.optimizer_states.value() == Approx(base.optimizer_states.value() / 8));
  CHECK(mz.weights.value() == Approx(base.weights.value()));
}

TEST_CASE("models::memory: a 1F1B pipeline's first stage holds min(micro-batches, stages) of its layers' activations",
          "[models]") {
  // Narayanan et al. 2021: with pp stages each holds 1/pp of the layers, and under 1F1B the first stage keeps
  // up to pp micro-batches in flight. With m micro-batches per step that is min(m, pp) x 1/pp of one
  // micro-batch's activations of the whole model: pp = 4 holds 1/4 of them at m = 1, 1/2 at m = 2 and all of
  // them from m = 4 on. The model held the whole model's activations at every m (4x too much at m = 1).
  StepConfig s = gpt(24, 2048, 1024, 8);
  s.activation_checkpointing = true;
  const StepOps ops = build_step_ops(s);
  const double whole = ops.activations.value();
  REQUIRE(whole > 0);
  ParallelConfig p;
  p.pp = 4;
  for (const auto& [m, share] : {std::pair{1, 0.25}, {2, 0.5}, {4, 1.0}, {16, 1.0}}) {
    StepConfig sm = s;
    sm.grad_accum = m;
    const auto mem = predict_memory_from_ops(ops, sm, p, Bytes::gb(141), Bytes::gib(0.5));
    CHECK(mem.activations.value() == Approx(whole * share));
  }
  // Weights, gradients and AdamW states: 16 bytes per parameter over the 4 stages.
  const auto one = predict_memory_from_ops(ops, s, p, Bytes::gb(141), Bytes::gib(0.5));
  CHECK((one.weights + one.grads + one.optimizer_states).value() == Approx(16.0 * ops.params / 4));
  // Tensor parallelism with sequence parallelism divides them further; without it, a checkpointed block's saved
  // input (the residual stream) is whole on every tensor-parallel rank.
  p.tp = 2;
  StepConfig s2 = s;
  s2.grad_accum = 2;
  CHECK(predict_memory_from_ops(ops, s2, p, Bytes::gb(141), Bytes::gib(0.5)).activations.value() ==
        Approx(whole * 0.5));
  p.sequence_parallel = true;
  CHECK(predict_memory_from_ops(ops, s2, p, Bytes::gb(141), Bytes::gib(0.5)).activations.value() ==
        Approx(whole * 0.5 / 2));
}

TEST_CASE("models::memory: tensor parallelism leaves LayerNorm activations whole unless sequence-parallel",
          "[models]") {
  // A GPT block saves 36 bytes per token and width under autocast: LayerNorm inputs 2 x 4 (fp32), their outputs
  // 2 x 2 (the column-parallel QKV and first MLP inputs), q/k/v and the attention output 4 x 2, the GELU input and
  // output 2 x 8. Tensor parallelism splits all but the first 12; the final LayerNorm's input (4) and the head's
  // input (2) stay whole too. With t = 8 and L layers: N d (12 L + 6) + N d 24 L / 8; sequence parallelism splits
  // all: N d (36 L + 6) / 8. Korthikanti et al. 2022 (arXiv:2205.05198; flash attention drops their 5as/h term):
  // sbh(10 + 24/t) and sbh 34/t, whose 10 are 16-bit LayerNorm inputs and dropout masks.
  StepConfig s = gpt(24, 2048, 1024, 8);
  const StepOps ops = build_step_ops(s);
  const double N = 8.0 * 1024, d = 2048, L = 24;
  REQUIRE(ops.activations.value() == Approx(N * d * (36 * L + 6)));
  ParallelConfig p;
  p.tp = 8;
  const auto m = predict_memory_from_ops(ops, s, p, Bytes::gb(141), Bytes::gib(0.5));
  CHECK(m.activations.value() == Approx(N * d * (12 * L + 6) + N * d * 24 * L / 8));
  p.sequence_parallel = true;
  const auto sp = predict_memory_from_ops(ops, s, p, Bytes::gb(141), Bytes::gib(0.5));
  CHECK(sp.activations.value() == Approx(N * d * (36 * L + 6) / 8));
  // A rank keeps 15/36 = 0.417 of a layer's activations at t = 8, the paper 13/34 = 0.382; before, 1/8.
}

TEST_CASE("models::memory: out of memory when peak plus a share of the largest tensor plus a reserve exceeds capacity",
          "[models]") {
  // GPT-124M-like, batch 8 x 1,024 tokens: the largest tensor is the fp32 log-softmax over the vocabulary, 8,192 x
  // 50,304 x 4 bytes (the MLP's hidden map, 8,192 x 3,072 x 2, is smaller). With share 0.5 and a 1 GiB reserve the
  // step needs peak + 0.5 x that + 1 GiB: a device one byte larger fits it, one byte smaller does not.
  StepConfig s = gpt(12, 768, 1024, 8);
  s.model.dims.vocab = 50304;
  const StepOps ops = build_step_ops(s);
  CHECK(ops.largest_tensor.value() == Approx(4.0 * 8192 * 50304));
  MemoryConstants mc;
  mc.largest_block_share = 0.5;
  mc.reserve = Bytes::gib(1);
  const Bytes context = Bytes::gib(0.5);
  const auto probe = predict_memory_from_ops(ops, s, {}, Bytes::gb(141), context, mc);
  const double needed = probe.peak_device.value() + 0.5 * 4.0 * 8192 * 50304 + Bytes::gib(1).value();
  CHECK(probe.needed.value() == Approx(needed));
  CHECK(predict_memory_from_ops(ops, s, {}, Bytes(needed + context.value() + 1), context, mc).fits);
  CHECK_FALSE(predict_memory_from_ops(ops, s, {}, Bytes(needed + context.value() - 1), context, mc).fits);
}

TEST_CASE("models::memory: a CNN's largest tensor is its widest feature map", "[models]") {
  // ResNet-50 at 224 x 224, bf16: the stem convolution's output, 64 x 112 x 112 per sample, 2 bytes each (the
  // max-pool halves it; later stages are 256 x 56 x 56 = 802,816 elements too, never more).
  StepConfig s;
  s.model.id = "resnet50";
  s.model.family = ModelFamily::cnn;
  s.model.input_shape = {3, 224, 224};
  s.micro_batch = 32;
  CHECK(build_step_ops(s).largest_tensor.value() == Approx(2.0 * 32 * 64 * 112 * 112));
}

TEST_CASE("models::memory: with checkpointing the recomputed block and the loss transient are not alive together",
          "[models]") {
  // Checkpointed, only the blocks' fp32 inputs stay saved; the block being recomputed holds its tensors during its
  // own backward, after the loss's buffers are freed, so the start of backward holds the larger of the two. Here
  // the loss transient (12 x N x V bytes) is the larger: the peak is the block inputs plus it, with no block.
  StepConfig s = gpt(24, 2048, 1024, 8);
  s.model.dims.vocab = 50304;
  s.activation_checkpointing = true;
  const StepOps ops = build_step_ops(s);
  const double N = 8 * 1024.0, d = 2048, V = 50304;
  CHECK(ops.activations.value() == Approx(24 * 4 * N * d + 4 * N * d + 2 * N * d));
  CHECK(ops.backward_transient.value() == Approx(2 * 2 * N * 4 * d + 36 * N * d));
  CHECK(ops.loss_transient.value() == Approx(12 * N * V));
  const auto m = predict_memory_from_ops(ops, s, {}, Bytes::gb(141), Bytes::gib(0.5));
  const double resident = m.weights.value() + m.optimizer_states.value() + m.workspace.value();
  CHECK(m.peak_device.value() ==
        Approx(std::max(resident + ops.activations.value() + 12 * N * V + 2 * N * V,
                        resident + m.grads.value() + 2 * N * V + m.backward_tail.value())));
}

TEST_CASE("models::memory: GPT-2.7B fits at batch 16 and not at 32 on 141 GB", "[models]") {
  // DESIGN-NOTES: the 2.7B model fits at batch 16 (90.7 GiB) and not at 32.
  StepConfig s = gpt(32, 2560, 1024, 16);
  s.model.dims.heads = 32;
  const Bytes cap = Bytes(150109880320.0);  // the H200's memory_total_bytes (calibrate/profiles/h200.json)
  const auto m16 = predict_memory_from_ops(build_step_ops(s), s, {}, cap, Bytes::gib(0.5));
  CHECK(m16.fits);
  // Measured: gpt/gpt-2.7b-b16-s1024-bf16 in the reference runs peaked at 90.71 GiB (max_memory_allocated).
  CHECK(m16.peak_device.value() / std::pow(2.0, 30) == Approx(90.71).epsilon(0.03));
  s.micro_batch = 32;
  CHECK_FALSE(predict_memory_from_ops(build_step_ops(s), s, {}, cap, Bytes::gib(0.5)).fits);
}

TEST_CASE("models::compute: an accumulating micro-batch's gradient adds cost the CPU a bare launch", "[models]") {
  // By hand: a second micro-batch re-issues every micro-batch kernel at the per-kernel CPU cost, plus one
  // gradient add per parameter tensor, issued by the autograd engine at the launch probe's cost (5 us here).
  const auto dev = device();
  ComputeConstants c;
  c.cpu_per_kernel_eager = Seconds::us(30);
  c.cpu_per_bwd_kernel_eager = Seconds::us(30);
  StepConfig one = gpt(12, 768, 256, 2), two = one;
  two.grad_accum = 2;
  // Gradients summed by the engine itself (the residual stream's, the tied embedding's) are bare launches too.
  const auto ops = build_step_ops(one);
  double micro_kernels = 0, engine_kernels = 0;
  for (const Op& op : ops.micro) (op.engine_issued ? engine_kernels : micro_kernels) += op.kernels * op.count;
  REQUIRE(engine_kernels > 0);
  const double extra_us =
      1e6 * (predict_step(two, dev, c).cpu_issue.value() - predict_step(one, dev, c).cpu_issue.value());
  CHECK(extra_us == Approx(micro_kernels * 30 + engine_kernels * 5 + ops.param_tensors * 5).epsilon(1e-9));
}

TEST_CASE("models::compute: eager CPU time is the per-call cost times the framework calls", "[models]") {
  // By hand: with no per-kernel, convolution or per-step CPU cost, a launch-bound step's CPU time is the
  // per-call cost times the number of framework calls (each operator occurrence, forward and backward,
  // and each optimizer call), whatever the kernels per call; gradients the autograd engine sums itself are no
  // call, only a bare launch each (the launch probe: 5 us here).
  const auto dev = device();
  ComputeConstants c;
  c.cpu_per_kernel_eager = Seconds::us(0);
  c.cpu_per_bwd_kernel_eager = Seconds::us(0);
  c.cpu_per_conv_eager = Seconds::us(0);
  c.cpu_per_step_eager = Seconds::us(0);
  c.cpu_per_op_eager = Seconds::us(40);
  const StepConfig s = gpt(6, 384, 256, 2);
  const auto ops = build_step_ops(s);
  double calls = 0, engine_kernels = 0;
  for (const Op& op : ops.micro) {
    if (op.engine_issued)
      engine_kernels += op.kernels * op.count;
    else
      calls += op.count;
  }
  for (const Op& op : ops.optimizer) calls += op.count;
  const auto p = predict_step(s, dev, c);
  CHECK(p.cpu_issue.value() * 1e6 == Approx(40 * calls + 5 * engine_kernels).epsilon(1e-9));
  CHECK(p.kernels > calls);  // several ops launch more than one kernel
  // The forward's share of the calls: one per forward operator occurrence; a GPT has no convolution.
  double forward_calls = 0;
  for (const Op& op : ops.micro)
    if (op.phase == Phase::forward && !op.nested && !op.engine_issued) forward_calls += op.count;
  CHECK(p.calls == Approx(calls));
  CHECK(p.calls_forward == Approx(forward_calls));
  CHECK(p.calls_forward < p.calls);
  CHECK(p.conv_calls == 0);
}

TEST_CASE("models::compute: convolution calls are counted once per convolution operator", "[models]") {
  // ResNet-18: 20 convolutions (17 3x3 and 7x7 in the trunk, 3 1x1 downsamples), each a forward call and, in the
  // backward, a data-gradient and a weight-gradient call, except the stem whose input needs no gradient.
  StepConfig s;
  s.model.id = "resnet18";
  s.model.family = ModelFamily::cnn;
  s.model.input_shape = {3, 224, 224};
  s.micro_batch = 64;
  s.optimizer = OptimizerKind::sgd_momentum;
  const auto p = predict_step(s, device(), ComputeConstants{});
  REQUIRE(p.not_expressible.empty());
  CHECK(p.conv_calls == Approx(20 + 19 + 20));
}

TEST_CASE("models::compute: kernel classes below the copy bandwidth (hand-computed)", "[models]") {
  const DeviceModel dev = device();  // 4,000 GB/s copy
  ComputeConstants c;
  c.memory_efficiency = 0.8;
  c.gpu_per_kernel = Seconds(0);
  Op op;
  op.kind = OpKind::memory;
  op.bytes = Bytes(3.2e9);  // 3.2 GB at 3,200 GB/s: 1 ms
  SECTION("BatchNorm: the slower of bytes over bandwidth and elements over the element rate") {
    op.bn_elements = 2e9;
    c.bn_element_rate = 1e12;  // 2e9 elements: 2 ms
    CHECK(op_gpu_time(op, dev, c).ms() == Approx(2.0));
    c.bn_element_rate = 4e12;  // 0.5 ms: bandwidth binds
    CHECK(op_gpu_time(op, dev, c).ms() == Approx(1.0));
    c.bn_element_rate = 0;  // not set: bytes only
    CHECK(op_gpu_time(op, dev, c).ms() == Approx(1.0));
  }
  SECTION("LayerNorm: a fixed cost per row on top of the bytes") {
    op.rows = 1e6;
    c.norm_row_cost = Seconds::ns(1.5);
    CHECK(op_gpu_time(op, dev, c).ms() == Approx(1.0 + 1.5));
  }
  SECTION("transposing copies run at their own fraction of the copy bandwidth") {
    op.transpose = true;
    c.transpose_efficiency = 0.4;  // 3.2 GB at 1,600 GB/s
    CHECK(op_gpu_time(op, dev, c).ms() == Approx(2.0));
  }
  SECTION("depthwise convolution: max of FLOPs over its CUDA-core rate and bytes over its bandwidth") {
    op.kind = OpKind::simt;
    op.dtype = Dtype::fp32;
    op.flops = Flops(1e9);
    c.dwconv_memory_efficiency = 0.5;  // 3.2 GB at 2,000 GB/s: 1.6 ms
    c.dwconv_flop_efficiency = 1.0;
    CHECK(op_gpu_time(op, dev, c).ms() == Approx(1.6));
    op.flops = Flops(1e12);  // FLOP-bound: 1e12 over the fitted fp32 rate (about 50 TFLOP/s, ~20 ms)
    const double r32 = dev.surface.fits.at(Dtype::fp32).rate.value();
    CHECK(op_gpu_time(op, dev, c).value() == Approx(1e12 / r32));
    c.dwconv_flop_efficiency = 0.25;  // a quarter of the rate: four times the time
    CHECK(op_gpu_time(op, dev, c).value() == Approx(4e12 / r32));
  }
  SECTION("fp32-tensor depthwise: its own law over input positions, k >= 7 by FLOPs alone per dtype") {
    op.kind = OpKind::simt;
    op.dtype = Dtype::tf32;
    op.flops = Flops(1e11);           // the output's FLOPs (a stride-2 convolution)
    op.dw_input_flops = Flops(4e11);  // four times as many input positions
    op.dw_kernel = 3;
    c.dwconv_flop_efficiency = 1.0;
    c.dwconv_memory_efficiency = 0.5;
    c.dwconv_f32_flop_efficiency = 0.5;
    c.dwconv_f32_memory_efficiency = 0.25;  // 3.2 GB at 1,000 GB/s: 3.2 ms
    c.dwconv_tf32_k7_flop_efficiency = 0.02;
    const double r32 = dev.surface.fits.at(Dtype::fp32).rate.value();
    // max(4e11 / (r32 x 0.5), 3.2 ms): about 16 ms at 50 TFLOP/s, FLOP-bound.
    CHECK(op_gpu_time(op, dev, c).value() == Approx(std::max(4e11 / (r32 * 0.5), 3.2e-3)));
    op.dw_input_flops = Flops(1e10);  // bytes bind
    CHECK(op_gpu_time(op, dev, c).ms() == Approx(3.2));
    op.dw_kernel = 7;  // the k >= 7 class: FLOPs alone at its own efficiency
    CHECK(op_gpu_time(op, dev, c).value() == Approx(1e10 / (r32 * 0.02)));
    op.dtype = Dtype::fp32;  // strict fp32: its own k >= 7 class, the shared law below 7
    c.dwconv_fp32_k7_flop_efficiency = 0.01;
    CHECK(op_gpu_time(op, dev, c).value() == Approx(1e10 / (r32 * 0.01)));
    c.dwconv_fp32_k7_flop_efficiency = 0;  // no fp32 k >= 7 class: the k < 7 law (bytes bind)
    CHECK(op_gpu_time(op, dev, c).ms() == Approx(3.2));
    op.dw_kernel = 3;
    CHECK(op_gpu_time(op, dev, c).ms() == Approx(3.2));
    op.dtype = Dtype::bf16;  // 16-bit tensors: the 16-bit law over the output's FLOPs
    CHECK(op_gpu_time(op, dev, c).value() == Approx(std::max(1e11 / r32, 3.2e9 / (4000e9 * 0.5))));
    c.dwconv_f32_flop_efficiency = 0;  // without the constants: the 16-bit law
    op.dtype = Dtype::tf32;
    CHECK(op_gpu_time(op, dev, c).value() == Approx(std::max(1e11 / r32, 3.2e9 / (4000e9 * 0.5))));
  }
}

TEST_CASE("models::compute: flash attention pays for whole 128-token tiles", "[models]") {
  auto factor = [](int seq) {
    StepConfig s = gpt(2, 512, seq, 4);
    for (const Op& op : build_step_ops(s).micro)
      if (op.name == "attn.fwd") return op.work_factor;
    return 0.0;
  };
  // Causal, 1,024 tokens = 8 tiles: 8*9/2 = 36 tiles of 64 run, against the mask's 32 of work.
  CHECK(factor(1024) == Approx(36.0 / 32.0));
  // 200 tokens pad to 256 = 2 tiles: 3 of 4 tiles run; model work 200^2/2.
  CHECK(factor(200) == Approx((3.0 * 128 * 128) / (200.0 * 200.0 / 2)));
  // Long sequences approach the mask's half: 8,192 tokens = 64 tiles, 65/128 against 1/2.
  CHECK(factor(8192) == Approx(65.0 / 64.0));
}

TEST_CASE("models::compute: a grouped convolution pass by its probed law (hand-computed)", "[models]") {
  const DeviceModel dev = device();
  ComputeConstants c;
  c.gpu_per_kernel = Seconds::us(0);
  c.grouped_conv.rate = 1.5e15;  // FLOP/s
  c.grouped_conv.w0 = 200;
  c.grouped_conv.odd_factor = 4;
  c.grouped_conv.stride_factor = 2;
  c.grouped_conv.pass_cost = Seconds::us(50);
  // RegNetY-8GF's first grouped 3x3 at batch 128: 224 channels in groups of 56, 112 -> 56, forward.
  Op op;
  op.kind = OpKind::gemm;
  op.conv = true;
  op.dtype = Dtype::bf16;
  const double pixels = 128.0 * 56 * 56;
  op.shape = {pixels, 224, 56 * 9};
  op.flops = Flops(2 * pixels * 224 * 56 * 9);  // 2 x 401,408 x 224 x 504 = 90.6 GFLOP
  op.bytes = Bytes(2 * (128.0 * 224 * 112 * 112 + pixels * 224));
  op.group_width = 56;
  op.group_strided = true;
  // By hand: 90,634,715,136 / (1.5e15 x 56 / 256) = 0.27622 ms, x 4 (56 is not a power of two) x 2 (strided)
  // = 2.20975 ms, + 50 us = 2.25975 ms.
  CHECK(op_gpu_time(op, dev, c).ms() == Approx(2.25975).epsilon(1e-5));
  // A power-of-two group width, not strided: no odd or stride factor. At width 32 the law says
  // 90,634,715,136 / (1.5e15 x 32 / 232) = 0.43806 ms, + 50 us = 0.48806 ms, above what the GEMM surface and the
  // memory floor alone give (checked below), so the law sets the time.
  op.group_width = 32;
  op.group_strided = false;
  ComputeConstants off = c;
  off.grouped_conv.rate = 0;
  const double surface = op_gpu_time(op, dev, off).ms();
  REQUIRE(surface < 0.48806);
  CHECK(op_gpu_time(op, dev, c).ms() == Approx(0.48806).epsilon(1e-4));
  // At width 64 the law says 90,634,715,136 / (1.5e15 x 64 / 264) + 50 us = 0.2992 ms; the law never makes a pass
  // faster than the GEMM surface and the memory floor, so the pass takes the surface's time.
  op.group_width = 64;
  const double surface64 = op_gpu_time(op, dev, off).ms();
  REQUIRE(surface64 > 0.2992);
  CHECK(op_gpu_time(op, dev, c).ms() == Approx(surface64).epsilon(1e-9));
}

TEST_CASE("models::compute: torch.roll at its probed element rate, whatever the dtype (hand-computed)", "[models]") {
  ComputeConstants c;
  c.memory_efficiency = 1;
  c.gpu_per_kernel = Seconds::us(0);
  c.roll_rate = 110e9;
  Op op;
  op.kind = OpKind::memory;
  op.roll_elements = 128.0 * 56 * 56 * 96;    // 38,535,168 elements
  op.bytes = Bytes(2 * 4 * op.roll_elements);  // fp32 read + write: 308 MB, 0.077 ms at 4,000 GB/s
  // 38,535,168 / 110e9 = 0.3503 ms (the probe measured 0.358 ms in fp32 and 0.340 ms in bf16).
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(0.35032).epsilon(1e-4));
  c.roll_rate = 0;  // by bytes without the class
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(0.0771).epsilon(1e-2));
}

TEST_CASE("models::compute: elementwise bytes on the slow paths take their probed rates (hand-computed)",
          "[models]") {
  ComputeConstants c = bare_constants();
  c.elementwise_unrolled_bw = 2500e9;
  c.elementwise_broadcast_bw = 1600e9;
  Op op = memory_op(400e6);  // 400 MB: 0.1 ms at the test device's 4,000 GB/s
  op.unrolled_bytes = 100e6;   // 0.04 ms at 2,500 GB/s
  op.broadcast_bytes = 160e6;  // 0.1 ms at 1,600 GB/s
  // 0.04 + 0.1 + (400 - 260) MB / 4,000 GB/s = 0.035 ms -> 0.175 ms.
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(0.175).epsilon(1e-9));
  // Without the probed rates every byte goes at the memory efficiency, as before.
  c.elementwise_unrolled_bw = c.elementwise_broadcast_bw = 0;
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(0.1).epsilon(1e-9));
  // A GELU's bytes at its own rate: 300 MB at 3,000 GB/s = 0.1 ms, and the other 100 MB at 4,000 GB/s.
  Op gelu = memory_op(400e6);
  gelu.gelu_bytes = 300e6;
  c.elementwise_gelu_bw = 3000e9;
  CHECK(op_gpu_time(gelu, device(), c).ms() == Approx(0.125).epsilon(1e-9));
}

TEST_CASE("models::compute: small batched matmuls at their probed rates, unaligned slowest (hand-computed)",
          "[models]") {
  ComputeConstants c = bare_constants();
  c.bmm_aligned_rate = 60e12;
  c.bmm_unaligned_rate = 18e12;
  // Swin-T's q @ k^T at batch 128, stage 1: 24,576 windows x heads, 3.777 GFLOP.
  Op op = gemm_op({24576.0 * 49, 49, 32});
  op.bytes = Bytes(2.0 * 24576 * (49 * 32 * 2 + 49 * 49));
  const double surface = op_gpu_time(op, device(), c).ms();
  op.small_bmm = true;
  // 3.777e9 / 18e12 = 0.2098 ms (the probe: 0.171 ms for this product, 0.216-0.231 ms for the k = 49 ones).
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(std::max(surface, 0.20984)).epsilon(1e-3));
  op.bmm_aligned = true;  // the same FLOPs at the aligned rate: 0.0630 ms, or the surface if slower
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(std::max(surface, 0.062949)).epsilon(1e-3));
  c.bmm_aligned_rate = c.bmm_unaligned_rate = 0;  // without the probe: the surface
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(surface));
}

TEST_CASE("models::compute: 16-bit convolutions take their own efficiency when set, fp32 ones the fitted one",
          "[models]") {
  ComputeConstants c = bare_constants();
  c.conv_efficiency = 0.5;
  Op op = gemm_op({16384, 4096, 8192});  // compute-bound: bytes do not bind
  op.conv = true;
  const double at_conv = op_gpu_time(op, device(), c).ms();
  c.conv_16bit_efficiency = 1.0;  // twice the efficiency: half the time
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(at_conv / 2).epsilon(1e-9));
  op.dtype = Dtype::tf32;  // a tf32 convolution keeps conv_efficiency
  const double tf32 = op_gpu_time(op, device(), c).ms();
  c.conv_16bit_efficiency = 0;
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(tf32).epsilon(1e-12));
}

TEST_CASE("models::compute: a channels-last BatchNorm at its probed rate for its shape, forward and backward apart",
          "[models]") {
  ComputeConstants c = bare_constants();
  c.bn_element_rate = 900e9;
  // Two probed shapes: 401,408 rows x 256 channels (ResNet-50's 56x56 stage at batch 128) and 25,088 x 1024.
  c.bn_nhwc_fwd = {{401408, 256, false, 240e9}, {25088, 1024, false, 190e9}};
  c.bn_nhwc_bwd = {{401408, 256, false, 300e9}, {25088, 1024, false, 230e9}};
  Op op = memory_op(3 * 2 * 401408.0 * 256);  // 617 MB: 0.154 ms at 4,000 GB/s, below the probed time
  op.phase = Phase::forward;
  op.elements = 401408.0 * 256;  // 102,760,448 map elements
  op.channels = 256;
  op.bn_elements = 3 * op.elements;
  // At a probed shape the probed rate: 102,760,448 / 240e9 = 0.42817 ms forward, / 300e9 = 0.34253 ms backward.
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(0.428169).epsilon(1e-5));
  op.phase = Phase::backward;
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(0.342535).epsilon(1e-5));
  // Without the table: the pooled rate over its element passes, 5 x 102,760,448 / 900e9 = 0.5709 ms backward.
  c.bn_nhwc_fwd.clear();
  c.bn_nhwc_bwd.clear();
  op.bn_elements = 5 * op.elements;
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(0.570891).epsilon(1e-5));
}

TEST_CASE("models::compute: fp16 and fp32 BatchNorm take cuDNN's probed tables, bf16 PyTorch's own",
          "[models]") {
  ComputeConstants c = bare_constants();
  // One probed shape per table (ResNet-50's 56x56 stage at batch 128), forward rates in elements per second.
  c.bn_nhwc_fwd = {{401408, 256, false, 240e9}};
  c.bn_nhwc_bwd = {{401408, 256, false, 300e9}};
  c.bn_nhwc_fp16_fwd = {{401408, 256, false, 530e9}};
  c.bn_nhwc_fp16_bwd = {{401408, 256, false, 380e9}};
  c.bn_nhwc_fp32_fwd = {{401408, 256, false, 300e9}};
  c.bn_nhwc_fp32_bwd = {{401408, 256, false, 200e9}};
  Op op = memory_op(3 * 2 * 401408.0 * 256);  // 617 MB: 0.154 ms at 4,000 GB/s, below every probed time
  op.elements = 401408.0 * 256;                // 102,760,448 map elements
  op.channels = 256;
  op.bn_elements = 3 * op.elements;
  op.dtype = Dtype::bf16;  // 102,760,448 / 240e9 = 0.42817 ms
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(0.428169).epsilon(1e-5));
  op.dtype = Dtype::fp16;  // / 530e9 = 0.19389 ms
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(0.193888).epsilon(1e-5));
  op.phase = Phase::backward;  // / 380e9 = 0.27042 ms
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(0.270422).epsilon(1e-5));
  op.dtype = Dtype::tf32;  // tf32 and fp32 maps are fp32 tensors: / 200e9 = 0.51380 ms
  op.bytes = Bytes(5 * 4 * op.elements);  // 2.06 GB: 0.514 ms at 4,000 GB/s, about the probed time
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(0.513802).epsilon(1e-5));
  // Without a table of its own a dtype falls back to the bf16 one: / 300e9 = 0.34253 ms, or the bytes if slower.
  c.bn_nhwc_fp32_bwd.clear();
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(std::max(0.342535, 0.51380)).epsilon(1e-4));
  op.dtype = Dtype::fp16;
  op.bytes = Bytes(5 * 2 * op.elements);
  c.bn_nhwc_fp16_bwd.clear();
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(0.342535).epsilon(1e-5));
}

TEST_CASE("models::compute: fp16 convolutions take the fp16 efficiency when set, else the 16-bit one",
          "[models]") {
  ComputeConstants c = bare_constants();
  c.conv_16bit_efficiency = 0.5;
  Op op = gemm_op({16384, 4096, 8192}, Dtype::fp16);  // compute-bound
  op.conv = true;
  const double shared = op_gpu_time(op, device(), c).ms();
  c.conv_fp16_efficiency = 1.0;  // twice the efficiency: half the time
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(shared / 2).epsilon(1e-9));
  Op bf = gemm_op({16384, 4096, 8192}, Dtype::bf16);  // a bf16 convolution keeps conv_16bit_efficiency
  bf.conv = true;
  const double bf16 = op_gpu_time(bf, device(), c).ms();
  c.conv_fp16_efficiency = 0;
  CHECK(op_gpu_time(bf, device(), c).ms() == Approx(bf16).epsilon(1e-12));
}

TEST_CASE("models::compute: fp16 training pays the GradScaler's unscale pass over the fp32 gradients", "[models]") {
  const ComputeConstants c = bare_constants();
  StepConfig s = gpt(12, 768, 1024, 16);
  const StepOps bf16 = build_step_ops(s);
  s.precision = Precision::fp16;
  const StepOps fp16 = build_step_ops(s);
  const Op* unscale = nullptr;
  for (const Op& op : fp16.optimizer)
    if (op.name == "amp.unscale") unscale = &op;
  REQUIRE(unscale);
  for (const Op& op : bf16.optimizer) CHECK(op.name.rfind("amp.", 0) != 0);  // no scaler without fp16
  // 8 bytes per parameter (each fp32 gradient read and written once), and five one-kernel bookkeeping calls.
  CHECK(unscale->bytes.value() == Approx(8.0 * fp16.params));
  // Multi-tensor launches, as the optimizer's: 12 x 12 + 4 = 148 tensors need ceil(148 / 24) = 7, and the
  // 124,475,904 parameters ceil(124.5M / 20M) = 7.
  CHECK(fp16.param_tensors == 148);
  CHECK(unscale->kernels == 7);
  CHECK(fp16.optimizer.size() == bf16.optimizer.size() + 2);
  const auto p16 = predict_step_from_ops(fp16, s, device(), c), p = predict_step_from_ops(bf16, s, device(), c);
  // The optimizer phase grows by the unscale's bytes at 4,000 GB/s (bare constants: no per-kernel time).
  CHECK(p16.gpu_optimizer.ms() - p.gpu_optimizer.ms() == Approx(8.0 * fp16.params / 4000e9 * 1e3).epsilon(1e-9));
  CHECK(p16.calls == Approx(p.calls + 6));
}

TEST_CASE("models::compute: channel copies of channels-last maps at their probed rates (hand-computed)", "[models]") {
  ComputeConstants c = bare_constants();
  c.channel_cat_bw = 1664e9;
  c.channel_shuffle_bw = 663e9;
  c.channel_split_bw = 676e9;
  // ShuffleNetV2 x2.0's stage-2 shuffle at batch 256: 256 x 488 x 14 x 14 bf16, read and written: 97.9 MB.
  Op op = memory_op(4.0 * 256 * 488 * 14 * 14);
  op.transpose = true;
  const double plain = op_gpu_time(op, device(), c).ms();  // 0.0245 ms at 4,000 GB/s
  CHECK(plain == Approx(4.0 * 256 * 488 * 14 * 14 / 4000e9 * 1e3).epsilon(1e-9));
  op.channel_copy = Op::ChannelCopy::shuffle;  // 97,943,552 B / 663 GB/s = 0.14773 ms (the probe: 0.157 ms)
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(0.147728).epsilon(1e-5));
  op.channel_copy = Op::ChannelCopy::cat;  // / 1,664 GB/s = 0.05886 ms
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(0.058860).epsilon(1e-5));
  op.channel_copy = Op::ChannelCopy::split;  // / 676 GB/s = 0.14489 ms
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(0.144887).epsilon(1e-5));
  c.channel_split_bw = 0;  // without the probed rate: as before (here the transpose path, at the copy bandwidth)
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(plain));
}

TEST_CASE("models::compute: an NCHW 1x1 convolution takes its band's measured kernel-time factor", "[models]") {
  ComputeConstants c = bare_constants();
  Op op = gemm_op({128.0 * 14 * 14, 256, 1024});  // a 1x1 at 14x14 (P = 196: the mid band)
  op.conv = true;
  const double nhwc = op_gpu_time(op, device(), c).ms();
  op.nchw_conv_band = nchw_pointwise_mid;
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(nhwc));  // no factor set: as channels-last
  c.nchw_conv_factor[nchw_pointwise_mid] = 2.149;
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(2.149 * nhwc).epsilon(1e-12));
  c.nchw_conv_factor[nchw_pointwise_large] = 1.2;  // another band's factor does not apply
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(2.149 * nhwc).epsilon(1e-12));
}

TEST_CASE("models::compute: a LayerNorm at its probed rate for its rows and width, else bytes plus a row cost",
          "[models]") {
  ComputeConstants c = bare_constants();
  c.norm_row_cost = Seconds::ns(1);
  // Two probed shapes: 65,536 rows of 96 and 65,536 rows of 768 (fp32).
  c.ln_fwd = {{65536, 96, false, 61e9}, {65536, 768, false, 278e9}};
  c.ln_bwd = {{65536, 96, false, 20e9}, {65536, 768, false, 118e9}};
  Op op = memory_op(8 * 65536.0 * 96);  // fp32 in and out: 50 MB, 0.0126 ms at 4,000 GB/s
  op.rows = 65536;
  op.channels = 96;
  // At a probed shape the probed rate: 6,291,456 elements / 61e9 = 0.10314 ms forward, / 20e9 = 0.31457 ms backward.
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(0.103139).epsilon(1e-5));
  op.phase = Phase::backward;
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(0.314573).epsilon(1e-5));
  // Without the table: bytes plus the row cost, 0.0126 + 65,536 x 1 ns = 0.0781 ms.
  c.ln_fwd.clear();
  c.ln_bwd.clear();
  CHECK(op_gpu_time(op, device(), c).ms() == Approx(0.012583 + 0.065536).epsilon(1e-4));
}

TEST_CASE("models::compute: probed rates scale to another GPU by its CUDA-core rate, never past its bandwidth",
          "[models]") {
  // A class probed elsewhere: the broadcast path at 1,600 GB/s (160 MB: 0.1 ms at the probed rate; 0.04 ms at the
  // test device's 4,000 GB/s copy bandwidth, memory efficiency 1) and a small batched matmul at 18 TFLOP/s.
  ComputeConstants c = bare_constants();
  c.elementwise_broadcast_bw = 1600e9;
  c.bmm_unaligned_rate = 18e12;
  Op bc = memory_op(160e6);
  bc.broadcast_bytes = 160e6;
  Op bmm = gemm_op({24576.0 * 49, 49, 32});
  bmm.small_bmm = true;  // 3.777 GFLOP / 18e12 = 0.2098 ms, slower than the surface
  const double bc_here = op_gpu_time(bc, device(), c).ms(), bmm_here = op_gpu_time(bmm, device(), c).ms();
  CHECK(bc_here == Approx(0.1));
  CHECK(bmm_here == Approx(0.20984).epsilon(1e-3));
  const auto [ms1, fs1] = rate_scales(device(), c);
  CHECK(ms1 == 1.0);  // no reference GPU named: the rates as they are
  CHECK(fs1 == 1.0);
  CHECK(cuda_core_scale(device(), c) == 1.0);
  const double fp32_here = device().surface.fits.at(Dtype::fp32).rate.value();
  // Probed on a GPU with twice the copy bandwidth but the same CUDA cores (an H200 against an H100): the class
  // is bound by its kernels, not its bytes, and keeps its time, 0.1 ms.
  c.reference_copy_bw = 8000e9;
  c.reference_fp32_rate = fp32_here;
  CHECK(op_gpu_time(bc, device(), c).ms() == Approx(0.1));
  // ... with twice the CUDA-core rate and bf16 GEMM rate: twice as long (0.2 ms; the matmul 0.4197 ms).
  c.reference_fp32_rate = 2 * fp32_here;
  c.reference_bf16_rate = 2 * device().surface.fits.at(Dtype::bf16).rate.value();
  CHECK(op_gpu_time(bc, device(), c).ms() == Approx(0.2));
  CHECK(op_gpu_time(bmm, device(), c).ms() == Approx(2 * bmm_here));
  // ... with four times the CUDA-core rate (the datasheet fp32 ratio understates a GPU with fewer fp32 lanes per
  // SM): the larger of the two ratios, the bandwidth's 0.5, gives 0.2 ms, not 0.4.
  c.reference_fp32_rate = 4 * fp32_here;
  CHECK(op_gpu_time(bc, device(), c).ms() == Approx(0.2));
  // ... with a quarter of this device's CUDA-core rate: 0.025 ms by the kernels, but its 160 MB need 0.04 ms here.
  c.reference_fp32_rate = fp32_here / 4;
  CHECK(op_gpu_time(bc, device(), c).ms() == Approx(0.04));
  // The GPU they were probed on: unchanged.
  c.reference_copy_bw = device().copy_bw.value();
  c.reference_fp32_rate = fp32_here;
  c.reference_bf16_rate = device().surface.fits.at(Dtype::bf16).rate.value();
  CHECK(op_gpu_time(bc, device(), c).ms() == Approx(bc_here));
  CHECK(op_gpu_time(bmm, device(), c).ms() == Approx(bmm_here));
}

TEST_CASE("models::compute: channels-last ops over 2^31 - 1 elements take their wide-index rates (hand-computed)",
          "[models]") {
  ComputeConstants c = bare_constants();
  c.wide_bn_fwd_rate = 124e9;
  c.wide_max_pool_fwd_rate = 420e9;
  c.wide_dwconv_bwd_rate = 1550e9;
  c.wide_dwconv_bwd_elem_rate = 80e9;
  // A BatchNorm forward over 2.2e9 bf16 elements: 13.2 GB read + written, 3.3 ms at the test device's 4,000 GB/s;
  // over the limit its kernels run at 124 G elements/s: 2.2e9 / 124e9 = 17.742 ms.
  Op bn = memory_op(3 * 2 * 2.2e9);
  bn.bn_elements = 3 * 2.2e9;
  bn.channels = 256;
  bn.elements = bn.index_elements = 2.2e9;
  CHECK(op_gpu_time(bn, device(), c).ms() == Approx(17.742).epsilon(1e-4));
  // 2^31 - 1 elements exactly is still 32-bit indexable: by bytes, 6 x 2,147,483,647 B / 4,000 GB/s = 3.2212 ms.
  bn.bytes = Bytes(6 * kMaxIndex32);
  bn.elements = bn.index_elements = kMaxIndex32;
  CHECK(op_gpu_time(bn, device(), c).ms() == Approx(3.2212).epsilon(1e-4));
  // The backward has no rate here (0): its time stays by bytes. An NCHW BatchNorm was not measured: unchanged.
  Op bwd = memory_op(5 * 2 * 2.2e9);
  bwd.phase = Phase::backward;
  bwd.bn_elements = 5 * 2.2e9;
  bwd.channels = 256;
  bwd.elements = bwd.index_elements = 2.2e9;
  CHECK(op_gpu_time(bwd, device(), c).ms() == Approx(5.5).epsilon(1e-9));
  Op nchw = memory_op(3 * 2 * 2.2e9);
  nchw.bn_elements = 3 * 2.2e9;
  nchw.elements = nchw.index_elements = 2.2e9;
  nchw.nchw = true;
  CHECK(op_gpu_time(nchw, device(), c).ms() == Approx(3.3).epsilon(1e-9));
  // A max-pool forward walking 7.2e9 elements over a 2.2e9-element input: 7.2e9 / 420e9 = 17.143 ms, where its
  // bytes (2 x 2.2e9 + 10 x 0.55e9 = 9.9 GB) take 2.475 ms.
  Op pool = memory_op(2 * 2.2e9 + 10 * 0.55e9);
  pool.pool = 1;
  pool.pool_elements = 7.2e9;
  pool.index_elements = 2.2e9;
  CHECK(op_gpu_time(pool, device(), c).ms() == Approx(17.143).epsilon(1e-4));
  // A depthwise 3x3 stride-2 backward pass over a 2.2e9-element input (0.55e9 output elements): 0.55e9 / 80e9 =
  // 6.875 ms per output written plus 2 x 2.2e9 x 9 = 39.6 GFLOP of input multiply-adds at 1,550 GFLOP/s = 25.548 ms:
  // 32.423 ms (under the limit its 5.5 GB say 1.375 ms, over the 0.198 ms of its 9.9 GFLOP output FLOPs at the test
  // device's 50 TFLOP/s fp32 rate).
  Op dw;
  dw.kind = OpKind::simt;
  dw.phase = Phase::backward;
  dw.flops = Flops(2 * 0.55e9 * 9);
  dw.dw_input_flops = Flops(2 * 2.2e9 * 9);
  dw.dw_output_elements = 0.55e9;
  dw.dw_kernel = 3;
  dw.bytes = Bytes(2 * (2.2e9 + 0.55e9));
  dw.index_elements = 2.2e9;
  CHECK(op_gpu_time(dw, device(), c).ms() == Approx(32.423).epsilon(1e-4));
  c.wide_dwconv_bwd_elem_rate = 0;  // a term without a rate adds nothing: 25.548 ms
  CHECK(op_gpu_time(dw, device(), c).ms() == Approx(25.548).epsilon(1e-4));
  dw.index_elements = 2.0e9;  // under the limit: by bytes, 5.5e9 / 4,000 GB/s = 1.375 ms
  CHECK(op_gpu_time(dw, device(), c).ms() == Approx(1.375).epsilon(1e-9));
}

TEST_CASE("models::compute: the step's quantiles under host and GPU spread (hand-computed)", "[models]") {
  StepPrediction p;
  p.cpu_issue = Seconds::ms(40);
  p.gpu_busy = Seconds::ms(10);
  p.total = Seconds::ms(40);
  // No spread: the point prediction, max(CPU, GPU).
  CHECK(step_time_quantile(p, {}, 0.1).ms() == Approx(40.0));
  CHECK(step_time_quantile(p, {}, 0.9).ms() == Approx(40.0));
  // The GPU far below and exact: the step is the CPU's, 40 ms x exp(+-1.28155 x 0.2) = 30.956 / 51.686 ms.
  const StepSpread host{0.2, 0.0};
  CHECK(step_time_quantile(p, host, 0.1).ms() == Approx(30.956).epsilon(1e-4));
  CHECK(step_time_quantile(p, host, 0.9).ms() == Approx(51.686).epsilon(1e-4));
  // ... and its median is the point prediction.
  CHECK(step_time_quantile(p, host, 0.5).ms() == Approx(40.0).epsilon(1e-9));
  // A GPU floor: with the CPU's 10th percentile (30.96 ms) below a 35 ms GPU the 10th percentile is the GPU's.
  p.gpu_busy = Seconds::ms(35);
  CHECK(step_time_quantile(p, host, 0.1).ms() == Approx(35.0).epsilon(1e-9));
  // Balanced, equal spreads: P(step <= t) = Phi(z)^2, z = ln(t / 40 ms) / 0.1; the median has Phi(z) = sqrt(0.5),
  // z = 0.544952, t = 40 x exp(0.0544952) = 42.2403 ms: longer than either part alone.
  p.gpu_busy = Seconds::ms(40);
  CHECK(step_time_quantile(p, {0.1, 0.1}, 0.5).ms() == Approx(42.2403).epsilon(1e-5));
  // Quantiles rise with q; an unpredicted step has none.
  double last = 0;
  for (double q : {0.05, 0.1, 0.3, 0.5, 0.7, 0.9, 0.95}) {
    const double t = step_time_quantile(p, {0.2, 0.03}, q).ms();
    CHECK(t > last);
    last = t;
  }
  CHECK(step_time_quantile(StepPrediction{}, host, 0.5).value() == 0.0);
}

TEST_CASE("models::compute: a measured host CPU factor scales the issue time and moves the bottleneck (hand-computed)",
          "[models]") {
  StepPrediction p;
  p.cpu_issue = Seconds::ms(40);
  p.gpu_busy = Seconds::ms(10);
  p.gpu_compute = Seconds::ms(8);
  p.total = Seconds::ms(40);
  p.bottleneck = Bottleneck::launch_bound;
  StepPrediction half = p;
  apply_host_cpu_scale(half, 0.5);  // 20 ms of issue against 10 ms of GPU work: still the CPU's step
  CHECK(half.cpu_issue.ms() == Approx(20));
  CHECK(half.total.ms() == Approx(20));
  CHECK(half.gpu_busy_frac == Approx(0.5));
  CHECK(half.bottleneck == Bottleneck::launch_bound);
  StepPrediction fast = p;
  apply_host_cpu_scale(fast, 0.2);  // 8 ms of issue: the GPU's 10 ms set the step, 8 of them FLOP-bound
  CHECK(fast.total.ms() == Approx(10));
  CHECK(fast.gpu_busy_frac == Approx(1.0));
  CHECK(fast.bottleneck == Bottleneck::gpu_compute);
}

TEST_CASE("models::compute: on 16-bit parameters the residual stream's kernels move 16-bit bytes", "[models]") {
  // Under autocast the embeddings and LayerNorms are fp32, so the stream is: a LayerNorm reads and writes 4 + 4 bytes
  // an element, its backward 5 x 4 (x, dy, dx; x and dy again for dgamma / dbeta), a residual add 4 + 4 + the 16-bit
  // branch's 2, the backward's skip + branch gradient sum 3 x 4. On 16-bit parameters each 4 is a 2. GPT-2 small's
  // dims, 4 x 256 tokens; the bytes per op by hand, autocast then 16-bit, in units of N d (V d for the vocabulary).
  StepConfig s = test::gpt_step(12, 768, 12, 256, 4);
  const double N = 1024, d = 768, V = s.model.dims.vocab;
  const StepOps autocast = build_step_ops(s);
  s.params_16bit = true;
  const StepOps mixed = build_step_ops(s);
  auto bytes = [](const StepOps& ops, const std::string& name) {
    for (const Op& o : ops.micro)
      if (o.name == name) return o.bytes.value();
    FAIL("no op " << name);
    return 0.0;
  };
  const std::vector<std::tuple<std::string, double, double>> per_nd = {
      {"ln1.fwd", 8, 4},   {"ln2.fwd", 8, 4},         {"lnf.fwd", 8, 4},          {"residual1.fwd", 10, 6},
      {"residual2.fwd", 10, 6}, {"ln.bwd", 20, 10}, {"lnf.bwd", 20, 10}, {"residual.grad_sum", 12, 6},
      {"embed.fwd", 16, 8}};
  for (const auto& [name, fp32_stream, bf16_stream] : per_nd) {
    INFO(name);
    CHECK(bytes(autocast, name) == Approx(fp32_stream * N * d));
    CHECK(bytes(mixed, name) == Approx(bf16_stream * N * d));
  }
  // The embedding's and the tied head's gradients are in the parameters' dtype.
  CHECK(bytes(autocast, "embed.bwd") == Approx(4 * V * d + 16 * N * d));
  CHECK(bytes(mixed, "embed.bwd") == Approx(2 * V * d + 8 * N * d));
  CHECK(bytes(autocast, "tied.grad_sum") == Approx(12 * V * d));
  CHECK(bytes(mixed, "tied.grad_sum") == Approx(6 * V * d));
  // The 16-bit branch no longer meets an fp32 stream: no cast inside the add.
  for (const Op& o : autocast.micro)
    if (o.name == "residual1.fwd") CHECK(o.unrolled_bytes == o.bytes.value());
  for (const Op& o : mixed.micro)
    if (o.name.rfind("residual", 0) == 0 && o.phase == Phase::forward) CHECK(o.unrolled_bytes == 0.0);
  // The GEMMs, attention, GELU and the loss are untouched.
  for (const std::string name : {"attn.fwd", "attn.bwd", "gelu.fwd", "gelu.bwd", "ce.log_softmax", "ce.cast"})
    CHECK(bytes(mixed, name) == bytes(autocast, name));
  // fp32 steps keep their 4-byte stream whatever the flag (it is refused there by the scenario reader anyway).
  s.precision = Precision::fp32;
  CHECK(bytes(build_step_ops(s), "ln1.fwd") == Approx(8 * N * d));
}

TEST_CASE("models::compute: on 16-bit parameters (FSDP's MixedPrecision) autocast's casts are not run", "[models]") {
  // GPT-2 small's dims (12 layers, d 768, vocabulary 50,304, tied), 4 x 256 = 1,024 tokens a micro-batch, bf16.
  // Autocast casts each Linear's fp32 weight to bf16 (read 4 + write 2 bytes an element) and its bf16 weight
  // gradient back; the fp32 LayerNorm outputs into QKV, the MLP and the head, and their gradients back; and each
  // residual branch's gradient. Per micro-batch, by hand (per block QKV 3d^2 + projection d^2 + MLP 8d^2 = 12 d^2):
  //   weights and their gradients 2 x 6 (12 d^2 L + V d), LayerNorm outputs and their gradients 2 x 6 N d (2L + 1),
  //   residual branch gradients 6 N d x 2L.
  const double L = 12, d = 768, N = 1024;
  StepConfig s = test::gpt_step(12, 768, 12, 256, 4);
  const double V = s.model.dims.vocab;
  REQUIRE(V == 50304);
  const StepOps autocast = build_step_ops(s);
  s.params_16bit = true;
  const StepOps mixed = build_step_ops(s);
  double removed = 0;
  for (const Op& o : autocast.micro)
    if (o.autocast_cast) removed += o.bytes.value() * o.count;
  CHECK(removed == Approx(12 * (12 * d * d * L + V * d) + 12 * N * d * (2 * L + 1) + 6 * N * d * 2 * L));
  // Nothing else changes: the same operators less the casts, in the same order.
  std::vector<std::string> kept;
  for (const Op& o : autocast.micro)
    if (!o.autocast_cast) kept.push_back(o.name);
  std::vector<std::string> names;
  for (const Op& o : mixed.micro) names.push_back(o.name);
  CHECK(names == kept);
  CHECK(std::none_of(mixed.micro.begin(), mixed.micro.end(), [](const Op& o) { return o.autocast_cast; }));
  // The loss still casts the logits to fp32: the model asks for it.
  CHECK(std::any_of(mixed.micro.begin(), mixed.micro.end(), [](const Op& o) { return o.name == "ce.cast"; }));
  // Conservation: the GPU time the casts take under autocast is what 16-bit parameters save, and nothing else
  // moves. On the synthetic device the casts are bytes over 4 TB/s: 6 B an element each way.
  const DeviceModel dev = device();
  s.params_16bit = false;
  const StepPrediction with_casts = predict_step_from_ops(autocast, s, dev, bare_constants());
  s.params_16bit = true;
  const StepPrediction without = predict_step_from_ops(mixed, s, dev, bare_constants());
  CHECK(with_casts.gpu_autocast_casts.value() == Approx(removed / 4e12));
  CHECK(without.gpu_autocast_casts.value() == 0.0);
  // The rest of the saving is the residual stream's kernels on 16-bit tensors (next test): 48 L N d + 30 N d + 8 V d.
  const double stream_saved = 48 * L * N * d + 30 * N * d + 8 * V * d;
  CHECK(with_casts.gpu_busy.value() - without.gpu_busy.value() ==
        Approx(with_casts.gpu_autocast_casts.value() + stream_saved / 4e12).epsilon(1e-9));
  CHECK(with_casts.gpu_compute.value() == Approx(without.gpu_compute.value()));
  // fp32 has no casts to drop.
  s.precision = Precision::fp32;
  const StepOps fp32 = build_step_ops(s);
  s.params_16bit = false;
  CHECK(build_step_ops(s).micro.size() == fp32.micro.size());
}

TEST_CASE("models::compute: FSDP's gradients, flattened and divided per micro-batch, accumulated on the shard", "[models]") {
  // GPT-2 small's dims, 2 x 256 tokens, 4 micro-batches, bf16 autocast on the synthetic device (bytes over 4 TB/s, no
  // per-kernel time). On one rank of 8 FSDP ranks each micro-batch adds the flat gradient's assembly and its
  // pre-divide, each reading and writing P fp32 gradients (2 x 8 P bytes); the three accumulations after the first
  // add into 1/8 of the gradients instead of all of them (12 bytes a parameter: read both, write one).
  StepConfig s = test::gpt_step(12, 768, 12, 256, 2);
  s.grad_accum = 4;
  const StepOps whole = build_step_ops(s);
  const double P = whole.params;
  s.grad_shards = 8;
  const StepOps sharded = build_step_ops(s);
  double added = 0;
  for (const Op& o : sharded.micro)
    if (o.name.rfind("fsdp.", 0) == 0) {
      CHECK(o.phase == Phase::backward);
      CHECK(o.kernels == 13);  // one per block and the root
      added += o.bytes.value() * o.count;
    }
  CHECK(added == Approx(2 * 8 * P));
  CHECK(sharded.micro.size() == whole.micro.size() + 2);
  const DeviceModel dev = device();
  const double a = predict_step_from_ops(whole, s, dev, bare_constants()).gpu_backward.value();
  s.grad_shards = 1;
  const double b = predict_step_from_ops(whole, s, dev, bare_constants()).gpu_backward.value();
  CHECK(b - a == Approx(3 * 12 * P * (1 - 1.0 / 8) / 4e12));  // the accumulation alone
  s.grad_shards = 8;
  const double c = predict_step_from_ops(sharded, s, dev, bare_constants()).gpu_backward.value();
  CHECK(c - a == Approx(4 * added / 4e12));  // four micro-batches
  // With MixedPrecision the gradients are bf16: half the bytes.
  s.params_16bit = true;
  double added16 = 0;
  for (const Op& o : build_step_ops(s).micro)
    if (o.name.rfind("fsdp.", 0) == 0) added16 += o.bytes.value() * o.count;
  CHECK(added16 == Approx(2 * 4 * P));
}

TEST_CASE("models::compute: DDP's reducer copies each gradient into its bucket and back once a step", "[models]") {
  // GPT-2 small's dims (12 blocks of 12 parameter tensors: two LayerNorms, QKV, projection, two MLP Linears, each
  // weight and bias; plus the token and position embeddings and the final LayerNorm's two: 148 tensors), 4
  // micro-batches, on the synthetic device (bytes over 4 TB/s, no per-kernel GPU time, 5 us a bare launch).
  // PyTorch's reducer runs in the last micro-batch only (no_sync before it): mul_out into the bucket and the copy
  // back, each reading and writing the P fp32 gradients (8 P bytes) in one kernel per tensor launched from the
  // autograd engine's hooks; with gradient_as_bucket_view one in-place div_ instead.
  StepConfig s = test::gpt_step(12, 768, 12, 256, 2);
  s.grad_accum = 4;
  const StepOps plain = build_step_ops(s);
  const double P = plain.params;
  REQUIRE(plain.param_tensors == 148);
  s.ddp.reducer = DdpReducer::copy;
  const StepOps copy = build_step_ops(s);
  double step_bytes = 0;
  int ops = 0;
  for (const Op& o : copy.micro)
    if (o.name.rfind("ddp.", 0) == 0) {
      ++ops;
      CHECK(o.phase == Phase::backward);
      CHECK(o.kernels == 148);
      CHECK(o.engine_issued);
      step_bytes += o.bytes.value() * o.count * s.grad_accum;  // micro-batch ops run grad_accum times a step
    }
  CHECK(ops == 2);
  CHECK(step_bytes == Approx(2 * 8 * P));
  const DeviceModel dev = device();
  const StepPrediction a = predict_step_from_ops(plain, s, dev, bare_constants());
  const StepPrediction b = predict_step_from_ops(copy, s, dev, bare_constants());
  CHECK(b.gpu_backward.value() - a.gpu_backward.value() == Approx(2 * 8 * P / 4e12));
  // The host pays a bare launch per kernel: 2 x 148 x 5 us a step, and no framework call.
  CHECK(b.cpu_issue.value() - a.cpu_issue.value() == Approx(2 * 148 * 5e-6));
  CHECK(b.calls == a.calls);
  // As bucket views: one pass, 148 launches.
  s.ddp.reducer = DdpReducer::view;
  const StepOps view = build_step_ops(s);
  const StepPrediction c = predict_step_from_ops(view, s, dev, bare_constants());
  CHECK(view.micro.size() == plain.micro.size() + 1);
  CHECK(c.gpu_backward.value() - a.gpu_backward.value() == Approx(8 * P / 4e12));
  CHECK(c.cpu_issue.value() - a.cpu_issue.value() == Approx(148 * 5e-6));
  // Accumulating without no_sync(): the reducer runs in each of the 4 micro-batches.
  s.ddp.reducer = DdpReducer::copy;
  s.ddp.sync_every_micro_batch = true;
  const StepPrediction d = predict_step_from_ops(build_step_ops(s), s, dev, bare_constants());
  CHECK(d.gpu_backward.value() - a.gpu_backward.value() == Approx(4 * 2 * 8 * P / 4e12));
  CHECK(d.cpu_issue.value() - a.cpu_issue.value() == Approx(4 * 2 * 148 * 5e-6));
}

TEST_CASE("models::compute: DDP broadcasts ResNet-50's BatchNorm buffers once a step", "[models]") {
  // ResNet-50 has 53 BatchNorms over 26,560 channels (stem 64; stages of 3, 4, 6 and 3 bottlenecks of widths 64, 128,
  // 256, 512 with 4x expansion, each stage's first block with a downsampling BatchNorm: 1,408 + 3,584 + 10,240 +
  // 11,264). Each holds a running mean and variance (fp32, C each) and an int64 counter: 159 buffers of
  // 8 x 26,560 + 8 x 53 = 212,904 bytes. With broadcast_buffers DDP flattens each dtype's buffers (two cat kernels),
  // broadcasts them and copies them back (159 copies), each pass reading and writing the bytes once, once a step
  // (2 micro-batches here), every kernel a bare launch (5 us on the synthetic device).
  StepConfig s;
  s.model.id = "resnet50";
  s.model.family = ModelFamily::cnn;
  s.micro_batch = 32;
  s.grad_accum = 2;
  const StepOps plain = build_step_ops(s);
  CHECK(plain.buffer_tensors == 159);
  CHECK(plain.buffer_bytes.value() == 212904);
  s.ddp.broadcast_buffers = true;
  const StepOps synced = build_step_ops(s);
  double bytes = 0, kernels = 0;
  for (const Op& o : synced.micro)
    if (o.name.rfind("ddp.buffer", 0) == 0) {
      CHECK(o.phase == Phase::forward);
      CHECK(o.engine_issued);
      bytes += o.bytes.value() * o.count * s.grad_accum;
      kernels += o.kernels * o.count * s.grad_accum;
    }
  CHECK(bytes == Approx(2 * 2 * 212904.0));
  CHECK(kernels == Approx(2 + 159));
  const DeviceModel dev = device();
  const StepPrediction a = predict_step_from_ops(plain, s, dev, bare_constants());
  const StepPrediction b = predict_step_from_ops(synced, s, dev, bare_constants());
  CHECK(b.gpu_forward.value() - a.gpu_forward.value() == Approx(4 * 212904.0 / 4e12));
  CHECK(b.cpu_issue.value() - a.cpu_issue.value() == Approx(161 * 5e-6));
  // A GPT has no buffers: nothing to broadcast.
  StepConfig g = test::gpt_step(4, 256, 4, 128, 2);
  g.ddp.broadcast_buffers = true;
  CHECK(build_step_ops(g).micro.size() == build_step_ops(test::gpt_step(4, 256, 4, 128, 2)).micro.size());
}
