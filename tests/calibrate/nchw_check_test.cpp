// PyTorch's default NCHW layout (channels_last off): the BatchNorm, depthwise and layout-transform kernel
// classes (tools/fit_nchw_classes.py, calibrate/profiles/nchw-classes-h200.json) against a hand computation and
// against measured NCHW training steps (calibrate/probes/results/h200-holdout4-2026-12-03.jsonl).
#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <fstream>
#include <cmath>

#include "calibrate/check.hpp"
#include "calibrate/fit.hpp"
#include "calibrate/profile_io.hpp"
#include "calibrate/reference_runs.hpp"
#include "models/compute_model.hpp"
#include "models/step_ops.hpp"

using namespace gp;
using namespace gp::calibrate;

namespace {

const std::string kSrc = GPUPLAN_SOURCE_DIR;

// The H200 device model, and the probe-class constants measured on it.
DeviceModel h200() {
  std::vector<std::string> errors;
  auto p = load_profile(kSrc + "/calibrate/profiles/h200.json", errors);
  INFO((errors.empty() ? std::string() : errors.front()));
  REQUIRE(p);
  return make_device_model(*p);
}

ComputeConstants h200_probe_classes() {
  std::vector<std::string> errors;
  auto pc = load_probe_classes(kSrc + "/calibrate/profiles/probe-classes-h200.json", errors);
  INFO((errors.empty() ? std::string() : errors.front()));
  REQUIRE(pc);
  return *pc;
}

StepConfig vgg16(int batch, bool channels_last) {
  StepConfig s;
  s.model.id = "vgg16";
  s.model.family = ModelFamily::cnn;
  s.micro_batch = batch;
  s.channels_last = channels_last;
  return s;
}

}  // namespace

TEST_CASE("calibrate::nchw: BatchNorm time follows the per-channel rate law", "[calibrate]") {
  std::vector<std::string> errors;
  auto p = load_profile(kSrc + "/calibrate/profiles/h200.json", errors);
  REQUIRE(p);
  const DeviceModel dev = make_device_model(*p);
  ComputeConstants c;
  c.gpu_per_kernel = Seconds::us(0);
  c.bn_nchw_bwd_rate_per_channel = 0.5e9;
  c.bn_nchw_bwd_max_rate = 150e9;
  c.bn_nchw_bwd_plane_cost = Seconds::ns(0.1);
  Op op;
  op.kind = OpKind::memory;
  op.phase = Phase::backward;
  op.bytes = Bytes(1);  // negligible: the rate law binds
  op.nchw = true;
  // 128 x 64 x 56 x 56: 64 channels give 32 G elements/s (below the 150 cap): 25.69 M / 32e9 = 0.8028 ms,
  // plus 8192 planes x 0.1 ns.
  op.channels = 64;
  op.planes = 128.0 * 64;
  op.elements = 128.0 * 64 * 56 * 56;
  CHECK(op_gpu_time(op, dev, c).ms() == Approx(25690112.0 / 32e9 * 1e3 + 8192 * 0.1e-6).epsilon(1e-9));
  // 2048 channels would give 1024 G elements/s: the 150 cap binds.
  op.channels = 2048;
  op.planes = 128.0 * 2048;
  op.elements = 128.0 * 2048 * 7 * 7;
  CHECK(op_gpu_time(op, dev, c).ms() == Approx(12845056.0 / 150e9 * 1e3 + 262144 * 0.1e-6).epsilon(1e-9));
}

TEST_CASE("calibrate::nchw: the layout only changes what it should", "[calibrate]") {
  StepConfig s;
  s.model.id = "resnet50";
  s.model.family = ModelFamily::cnn;
  s.micro_batch = 32;
  const StepOps nhwc = build_step_ops(s);
  s.channels_last = false;
  const StepOps nchw = build_step_ops(s);
  CHECK(nchw.params == nhwc.params);
  CHECK(nchw.activations.value() == nhwc.activations.value());
  int bn = 0;
  std::array<int, nchw_band_count> bands{};
  for (const Op& op : nchw.micro) {
    if (op.name.rfind("bn.", 0) == 0) {
      ++bn;
      CHECK(op.nchw);
      CHECK(op.planes == Approx(32 * op.channels));
    }
    if (op.name.rfind("conv.nchw_transform", 0) == 0) {
      CHECK(op.nested);  // inside the convolution's call: no framework call of its own
      REQUIRE(op.nchw_band >= 0);
      REQUIRE(op.nchw_band < nchw_band_count);
      if (op.phase == Phase::forward) ++bands[static_cast<std::size_t>(op.nchw_band)];
    }
  }
  CHECK(bn == 2 * 53);  // 53 BatchNorms, forward and backward
  // The 53 convolutions of ResNet-50 by band, counted by hand from torchvision's ResNet v1.5 (the 3x3 of a
  // stage's first block strides, its 1x1 conv1 still runs at the input resolution): the 7x7 stem; sixteen 3x3;
  // three strided 1x1 shortcuts; 1x1 by output map: 56x56 or 28x28 (P > 400): layer1 7, layer2 8, layer3's
  // first conv1 = 16; 14x14 (100 < P <= 400): layer3's other 11 and layer4's first conv1 = 12; 7x7: 5.
  CHECK(bands[nchw_spatial_first] == 1);
  CHECK(bands[nchw_spatial] == 16);
  CHECK(bands[nchw_pointwise_strided] == 3);
  CHECK(bands[nchw_pointwise_large] == 16);
  CHECK(bands[nchw_pointwise_mid] == 12);
  CHECK(bands[nchw_pointwise_small] == 5);
  for (const Op& op : nhwc.micro) CHECK_FALSE(op.nchw);
}

TEST_CASE("calibrate::nchw: a transformed pass moves both activations and the filter", "[calibrate]") {
  // VGG-16 b64: the second convolution, 64 -> 64 channels, 3x3, on 224x224 maps, bf16 (2 bytes): input and
  // output 64 x 64 x 224 x 224 = 205,520,896 elements each, filter 64 x 64 x 9 = 36,864; each transform reads
  // and writes: 2 x 2 x (2 x 205,520,896 + 36,864) = 1,644,314,624 bytes per pass.
  const StepOps ops = build_step_ops(vgg16(64, false));
  std::vector<const Op*> tr;
  for (const Op& op : ops.micro)
    if (op.name.rfind("conv.nchw_transform", 0) == 0) tr.push_back(&op);
  REQUIRE(tr.size() == 2 * 13);  // thirteen 3x3 convolutions, forward and backward
  const Op& fwd = *tr[2];
  const Op& bwd = *tr[3];
  CHECK(fwd.nchw_band == nchw_spatial);
  CHECK(fwd.bytes.value() == Approx(1644314624.0).epsilon(1e-12));
  CHECK(bwd.bytes.value() == Approx(1644314624.0).epsilon(1e-12));
  CHECK(fwd.kernels == 3);  // input and filter to NHWC, output back
  // As built: every pass of a spatial convolution (forward 1, backward 2), only the first's weight gradient
  // and forward (no input gradient).
  CHECK(fwd.count == 1);
  CHECK(bwd.count == 2);
  CHECK(tr[0]->nchw_band == nchw_spatial_first);
  CHECK(tr[1]->count == 1);
}

TEST_CASE("calibrate::nchw: measured passes split into forward and backward", "[calibrate]") {
  ComputeConstants c;
  Op f, b;
  f.phase = Phase::forward;
  b.phase = Phase::backward;
  f.count = b.count = 7;  // as built: replaced by the band's measured passes
  f.nchw_band = b.nchw_band = nchw_pointwise_mid;
  CHECK(op_count(f, c) == 7);  // no measured passes: as built
  // Weight gradient first, then forward, then input gradient.
  const std::pair<double, std::pair<double, double>> cases[] = {
      {0.646, {0.0, 0.646}}, {1.455, {0.455, 1.0}}, {2.487, {1.0, 1.487}}, {3.0, {1.0, 2.0}}, {0.0, {0.0, 0.0}}};
  for (const auto& [s, want] : cases) {
    c.nchw_transform_passes[nchw_pointwise_mid] = s;
    INFO(s);
    CHECK(op_count(f, c) == Approx(want.first));
    CHECK(op_count(b, c) == Approx(want.second));
    CHECK(op_count(f, c) + op_count(b, c) == Approx(s));  // every measured pass is charged once
  }
  Op other;
  other.count = 5;
  CHECK(op_count(other, c) == 5);  // not a transform
}

TEST_CASE("calibrate::nchw: one-convolution transform times from the fitted constants", "[calibrate]") {
  // Against calibrate/probes/results/conv-layout-2026-12-03.jsonl (measured, one convolution at a time, forward +
  // backward, bf16, cudnn.benchmark): nchwToNhwc + nhwcToNchw ms of convolutions that cuDNN ran with all three
  // passes transformed, and the model's time of the same transforms (3 passes, the fitted efficiency, 9 kernels).
  std::vector<std::string> errors;
  auto p = load_profile(kSrc + "/calibrate/profiles/h200.json", errors);
  auto c = load_constants(kSrc + "/calibrate/profiles/fit-h200.json", errors);
  REQUIRE(p);
  REQUIRE(c);
  const DeviceModel dev = make_device_model(*p);
  struct Case { const char* what; int n, cin, h, cout, hout; double measured_ms; };
  const Case cases[] = {
      {"vgg16 b64 64->64 3x3 @224", 64, 64, 224, 64, 224, 1.448 + 0.744},
      {"vgg16 b64 256->256 3x3 @56", 64, 256, 56, 256, 56, 0.329 + 0.195},
      {"vgg11 b128 64->128 3x3 @112", 128, 64, 112, 128, 112, 1.021 + 0.565},
      {"resnet50 b128 64->64 3x3 @56", 128, 64, 56, 64, 56, 0.185 + 0.102},
      {"resnet18 b256 128->128 3x3 @28", 256, 128, 28, 128, 28, 0.176 + 0.104},
  };
  for (const Case& k : cases) {
    INFO(k.what);
    Op op;
    op.kind = OpKind::memory;
    op.nchw = op.transpose = true;
    op.nchw_band = nchw_spatial;
    op.kernels = 3;
    op.bytes = Bytes(4.0 * (double(k.n) * k.cin * k.h * k.h + double(k.n) * k.cout * k.hout * k.hout +
                            9.0 * k.cin * k.cout));
    const double model_ms = 3 * op_gpu_time(op, dev, c->compute).ms();
    CHECK(std::abs(model_ms / k.measured_ms - 1) <= 0.20);
  }
}

TEST_CASE("calibrate::nchw: measured NCHW steps of BatchNorm networks and VGG", "[calibrate]") {
  std::vector<std::string> errors;
  auto p = load_profile(kSrc + "/calibrate/profiles/h200.json", errors);
  auto c = load_constants(kSrc + "/calibrate/profiles/fit-h200.json", errors);
  auto runs = load_runs(kSrc + "/calibrate/probes/results/h200-holdout4-2026-12-03.jsonl", errors);
  INFO((errors.empty() ? std::string() : errors.front()));
  REQUIRE(errors.empty());
  REQUIRE(p);
  REQUIRE(c);
  // Each NCHW record, and the same step in channels-last, predicted.
  std::vector<RunRecord> nchw, as_nhwc;
  for (const auto& r : runs) {
    if (r.id.find("-nchw") == std::string::npos || r.id.find("vit") != std::string::npos ||
        r.id.find("convnext") != std::string::npos)
      continue;  // ViT and ConvNeXt run their own layout copies (docs/calibration.md, "NCHW")
    nchw.push_back(r);
    as_nhwc.push_back(r);
    as_nhwc.back().step.channels_last = true;
  }
  REQUIRE(nchw.size() == 9);
  const CheckReport rep = run_check(nchw, *p, *c, 100.0);
  const CheckReport ref = run_check(as_nhwc, *p, *c, 100.0);
  double sum = 0;
  for (std::size_t i = 0; i < rep.records.size(); ++i) {
    INFO(rep.records[i].record->id);
    REQUIRE(rep.records[i].step_err_pct);
    CHECK(std::abs(*rep.records[i].step_err_pct) <= 25.0);
    sum += std::abs(*rep.records[i].step_err_pct);
    // The NCHW step is never predicted faster than the same step in channels-last.
    CHECK(*rep.records[i].prediction.step_ms >= *ref.records[i].prediction.step_ms);
  }
  CHECK(sum / static_cast<double>(rep.records.size()) <= 12.0);
}

TEST_CASE("calibrate::probe classes: pools walk elements at their measured rate", "[calibrate]") {
  // VGG-16 b64: its first pool, MaxPool2d(2, 2) on 64 x 64 x 224 x 224 = 205,520,896 input elements, output a
  // quarter (51,380,224). Forward walks input + output x 4 = 411,041,792 elements, backward input + output =
  // 256,901,120 (hand-computed); the builder marks both, in the step's layout.
  const StepOps ops = build_step_ops(vgg16(64, false));
  const Op* fwd = nullptr;
  const Op* bwd = nullptr;
  for (const Op& op : ops.micro) {
    if (op.name == "maxpool.fwd" && !fwd) fwd = &op;
    if (op.name == "maxpool.bwd" && !bwd) bwd = &op;
  }
  REQUIRE(fwd);
  REQUIRE(bwd);
  CHECK(fwd->pool == 1);
  CHECK(fwd->pool_nchw);
  CHECK(fwd->pool_elements == Approx(411041792.0).epsilon(1e-12));
  CHECK(bwd->pool_elements == Approx(256901120.0).epsilon(1e-12));
  CHECK(bwd->count == 1);    // one autograd node (one framework call) ...
  CHECK(bwd->kernels == 2);  // ... launching the zero fill and the scatter
  // Against the probe (calibrate/probes/results/pool-2026-12-03.jsonl, measured alone): forward 0.616 ms,
  // backward 2.054 ms in NCHW; 0.617 and 1.235 ms channels-last. Within 15% with the fitted rates.
  const DeviceModel dev = h200();
  ComputeConstants c = h200_probe_classes();
  c.gpu_per_kernel = Seconds::us(0);  // the probe times kernels alone
  CHECK(std::abs(op_gpu_time(*fwd, dev, c).ms() / 0.616 - 1) <= 0.15);
  CHECK(std::abs(op_gpu_time(*bwd, dev, c).ms() / 2.054 - 1) <= 0.15);
  Op fwd_cl = *fwd, bwd_cl = *bwd;
  fwd_cl.pool_nchw = bwd_cl.pool_nchw = false;
  bwd_cl.pool_elements = 411041792.0;  // channels-last max-pool backward gathers over windows: input + output x 4
  CHECK(std::abs(op_gpu_time(fwd_cl, dev, c).ms() / 0.617 - 1) <= 0.15);
  CHECK(std::abs(op_gpu_time(bwd_cl, dev, c).ms() / 1.235 - 1) <= 0.15);
  // Without the class, bytes at the copy rate: far faster than measured (what the class is for).
  ComputeConstants bytes_only;
  bytes_only.gpu_per_kernel = Seconds::us(0);
  bytes_only.memory_efficiency = 1;
  CHECK(op_gpu_time(*bwd, dev, bytes_only).ms() < 0.5 * 2.054);
}

TEST_CASE("calibrate::probe classes: the 3-channel first convolution in 16-bit only", "[calibrate]") {
  const DeviceModel dev = h200();
  const ComputeConstants pc = h200_probe_classes();
  StepConfig s = vgg16(64, true);
  int stems = 0;
  double ms = 0;
  for (const Op& op : build_step_ops(s).micro) {
    if (!op.stem) continue;
    ++stems;
    CHECK(op.conv);
    ms += op_gpu_time(op, dev, pc).ms() * op.count;
  }
  CHECK(stems == 2);  // forward and weight gradient: the image needs no gradient
  // Measured alone (calibrate/probes/results/conv-layout-2026-12-03.jsonl, channels-last): 0.801 ms for both
  // passes; the pooled stem efficiency is fitted over 11 networks' first convolutions, VGG's within 30%.
  CHECK(std::abs(ms / 0.801 - 1) <= 0.30);
  // fp32 keeps the GEMM surface: the class is measured in bf16 only.
  s.precision = Precision::fp32;
  for (const Op& op : build_step_ops(s).micro)
    if (op.stem) CHECK(op_gpu_time(op, dev, pc) == op_gpu_time(op, dev, ComputeConstants{}));
}

TEST_CASE("calibrate::probe classes: a bias gradient's per-channel sum at its probed rate", "[calibrate]") {
  const DeviceModel dev = h200();
  ComputeConstants c = h200_probe_classes();
  REQUIRE(c.channel_sum.size() >= 200);
  c.gpu_per_kernel = Seconds::us(0);  // the probe times kernels alone
  // At a probed shape the measured time comes back (calibrate/probes/results/channel-sum-2026-12-03.jsonl:
  // N 128, C 64, 56 x 56, channels-last: 0.07699 ms).
  Op op;
  op.kind = OpKind::memory;
  op.phase = Phase::backward;
  op.bytes = Bytes(1);
  op.channel_sum_rows = 128.0 * 56 * 56;
  op.channel_sum_channels = 64;
  CHECK(op_gpu_time(op, dev, c).ms() == Approx(0.07699).epsilon(1e-3));
  // Between probed shapes the rate lies between its neighbours': C 64 -> 128 at 56 x 56 and 112 x 112 measured
  // 334, 723, 279 and 755 G elements/s; the midpoint C 90, 80 x 80 must fall inside that range.
  const double r = channel_sum_rate(c.channel_sum, 128.0 * 80 * 80, 90, false);
  CHECK(r > 279e9);
  CHECK(r < 755e9);
  // The builder marks a convolution's bias gradient (VGG-16's first: b64, 64 channels, 224 x 224).
  StepConfig s = vgg16(64, true);
  const Op* grad = nullptr;
  for (const Op& o : build_step_ops(s).micro)
    if (o.name == "conv.bias_grad") { grad = &o; break; }
  REQUIRE(grad);
  CHECK(grad->channel_sum_rows == 64.0 * 224 * 224);
  CHECK(grad->channel_sum_channels == 64);
  CHECK_FALSE(grad->channel_sum_nchw);
  // A Linear's bias gradient is the same [rows, C] sum: GPT-124M b8 s1024, the QKV projection's over 8,192 tokens
  // into 2,304 outputs.
  StepConfig g;
  g.model.id = "gpt";
  g.model.family = ModelFamily::gpt;
  g.model.dims.layers = 12;
  g.model.dims.d_model = 768;
  g.model.dims.heads = 12;
  g.model.dims.seq = 1024;
  g.micro_batch = 8;
  const Op* qkv = nullptr;
  for (const Op& o : build_step_ops(g).micro)
    if (o.name == "qkv.bgrad") { qkv = &o; break; }
  REQUIRE(qkv);
  CHECK(qkv->channel_sum_rows == 8192);
  CHECK(qkv->channel_sum_channels == 2304);
  // Never faster than its bytes: a sum whose bytes take longer at the copy bandwidth than at the probed rate
  // (a wide fp32 gradient) is timed by its bytes. 1 GB at 0.5 of the copy bandwidth, 8,192 x 64 elements.
  Op wide = op;
  wide.channel_sum_rows = 8192;
  wide.channel_sum_channels = 64;
  wide.bytes = Bytes::gb(1);
  c.memory_efficiency = 0.5;
  CHECK(op_gpu_time(wide, dev, c).value() == Approx(1e9 / (dev.copy_bw.value() * 0.5)).epsilon(1e-9));
}

TEST_CASE("calibrate::probe classes: a bad per-channel sum sample is named by its JSON path", "[calibrate]") {
  const std::string path = "probe-classes-bad-test.json";
  {
    std::ofstream f(path);
    f << R"({"max_pool_fwd_nhwc_gelements_per_s": 1, "max_pool_fwd_nchw_gelements_per_s": 1,
             "max_pool_bwd_nhwc_gelements_per_s": 1, "max_pool_bwd_nchw_gelements_per_s": 1,
             "avg_pool_fwd_nhwc_gelements_per_s": 1, "avg_pool_fwd_nchw_gelements_per_s": 1,
             "avg_pool_bwd_nhwc_gelements_per_s": 1, "avg_pool_bwd_nchw_gelements_per_s": 1,
             "conv_stem_flop_efficiency": 0.05,
             "channel_sum": [{"rows": 100, "channels": 8, "layout": "nhwc", "gelements_per_s": 5},
                             {"rows": 100, "channels": 8, "layout": "nhcw", "gelements_per_s": 5}]})";
  }
  std::vector<std::string> errors;
  const auto pc = load_probe_classes(path, errors);
  std::remove(path.c_str());
  CHECK_FALSE(pc);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].find(path + ":/channel_sum/1: expected") == 0);
}
