// PyTorch's default NCHW layout (channels_last off): the BatchNorm, depthwise and layout-transform kernel
// classes (tools/fit_nchw_classes.py, calibrate/profiles/nchw-classes-h200.json) against a hand computation and
// against measured NCHW training steps (calibrate/probes/results/h200-holdout4-2026-12-03.jsonl).
#include <catch2/catch.hpp>

#include <cmath>

#include "calibrate/check.hpp"
#include "calibrate/fit.hpp"
#include "calibrate/profile_io.hpp"
#include "calibrate/reference_runs.hpp"
#include "models/step_ops.hpp"

using namespace gp;
using namespace gp::calibrate;

namespace {

const std::string kSrc = GPUPLAN_SOURCE_DIR;

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
  int bn = 0, transforms = 0;
  for (const Op& op : nchw.micro) {
    if (op.name.rfind("bn.", 0) == 0) {
      ++bn;
      CHECK(op.nchw);
      CHECK(op.planes == Approx(32 * op.channels));
    }
    if (op.name.rfind("conv.nchw_transform", 0) == 0) {
      ++transforms;
      CHECK(op.nested);  // inside the convolution's call: no framework call of its own
    }
  }
  CHECK(bn == 2 * 53);         // 53 BatchNorms, forward and backward
  CHECK(transforms == 2 * 17);  // the 7x7 stem and sixteen 3x3 convolutions (1x1 ones are plain GEMMs in NCHW)
  for (const Op& op : nhwc.micro) CHECK_FALSE(op.nchw);
}

TEST_CASE("calibrate::nchw: measured NCHW steps of BatchNorm networks", "[calibrate]") {
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
    if (r.id.find("-nchw") == std::string::npos || r.id.find("vgg") != std::string::npos ||
        r.id.find("vit") != std::string::npos || r.id.find("convnext") != std::string::npos)
      continue;  // BatchNorm networks only (VGG, ViT, ConvNeXt: docs/calibration.md, "NCHW")
    nchw.push_back(r);
    as_nhwc.push_back(r);
    as_nhwc.back().step.channels_last = true;
  }
  REQUIRE(nchw.size() == 8);
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
