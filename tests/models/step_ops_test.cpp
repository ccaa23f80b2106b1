#include <catch2/catch.hpp>

#include "models/step_ops.hpp"
#include "models/vision_ops.hpp"

using namespace gp;

namespace {

StepConfig gpt(int layers, int d, int heads, int seq, int batch) {
  StepConfig s;
  s.model.id = "gpt";
  s.model.family = ModelFamily::gpt;
  s.model.dims.layers = layers;
  s.model.dims.d_model = d;
  s.model.dims.heads = heads;
  s.model.dims.seq = seq;
  s.micro_batch = batch;
  return s;
}

StepConfig cnn(const std::string& id) {
  StepConfig s;
  s.model.id = id;
  s.model.family = ModelFamily::cnn;
  return s;
}

double fwd_flops(const StepOps& o) {
  double f = 0;
  for (const auto& op : o.micro)
    if (op.phase == Phase::forward && op.kind != OpKind::memory) f += op.flops.value() * op.count;
  return f;
}

}  // namespace

TEST_CASE("models::step_ops: GPT parameter count matches the reference run's gpt-124m", "[models]") {
  // shared/reference-runs: gpt-124m (12 layers, d 768, seq 1024, tied) has params = 124475904.
  CHECK(build_gpt_ops(gpt(12, 768, 12, 1024, 8)).params == 124475904.0);
}

TEST_CASE("models::step_ops: flash attention FLOPs skip the causal half", "[models]") {
  const StepOps o = build_gpt_ops(gpt(1, 256, 4, 1024, 2));
  double fwd = 0, bwd = 0;
  for (const auto& op : o.micro)
    if (op.kind == OpKind::attention) (op.phase == Phase::forward ? fwd : bwd) += op.flops.value();
  // QK^T and PV: 4 b s^2 d, halved by the causal mask = 2 * 2 * 1024^2 * 256.
  CHECK(fwd == Approx(2.0 * 2 * 1024.0 * 1024 * 256));
  CHECK(bwd == Approx(2.5 * fwd));
}

TEST_CASE("models::step_ops: torchvision structures match published parameters and FLOPs", "[models]") {
  // torchvision model cards / torch.utils.flop_counter (multiply-add = 2), as in the reference runs.
  struct Row { const char* id; double params; double gflops; };
  for (const Row& r : {Row{"resnet18", 11689512, 3.628}, Row{"resnet50", 25557032, 8.178},
                       Row{"resnet101", 44549160, 15.603}, Row{"resnet152", 60192808, 23.0},
                       Row{"mobilenet_v3_large", 5483032, 0.0}, Row{"efficientnet_b0", 5288548, 0.0},
                       Row{"densenet121", 7978856, 5.74}, Row{"resnext50_32x4d", 25028904, 8.54},
                       Row{"wide_resnet50_2", 68883240, 22.85}, Row{"vgg16", 138357544, 30.95}}) {
    INFO(r.id);
    const StepOps o = build_cnn_ops(cnn(r.id));
    CHECK(o.params == Approx(r.params).epsilon(0.001));
    if (r.gflops > 0) CHECK(fwd_flops(o) / 1e9 == Approx(r.gflops).epsilon(0.02));
  }
}

TEST_CASE("models::step_ops: ViT-B/16 parameters", "[models]") {
  StepConfig s;
  s.model.id = "vit_b_16";
  s.model.family = ModelFamily::vit;
  s.model.dims = *vit_dims("vit_b_16");
  CHECK(build_vit_ops(s).params == Approx(86567656).epsilon(1e-6));
}

TEST_CASE("models::step_ops: AdamW keeps 8 bytes of fp32 state per parameter, SGD-momentum 4", "[models]") {
  CHECK(optimizer_state_bytes_per_param(OptimizerKind::adamw_fused) == 8.0);
  CHECK(optimizer_state_bytes_per_param(OptimizerKind::sgd_momentum) == 4.0);
  CHECK(optimizer_state_bytes_per_param(OptimizerKind::sgd) == 0.0);
  // Fused AdamW moves p, g, m, v in and p, m, v out: 28 bytes per parameter.
  const auto ops = optimizer_ops(OptimizerKind::adamw_fused, 1e6, 10);
  REQUIRE(ops.size() == 1);
  CHECK(ops[0].bytes.value() * ops[0].count == Approx(28e6));
}

TEST_CASE("models::step_ops: unknown models need params and FLOPs", "[models]") {
  StepConfig s;
  s.model.id = "mystery";
  s.model.family = ModelFamily::generic;
  CHECK_FALSE(build_step_ops(s).not_expressible.empty());
  s.model.params = 1e7;
  s.model.fwd_flops_per_sample = 1e9;
  const StepOps o = build_step_ops(s);
  CHECK(o.not_expressible.empty());
  CHECK(fwd_flops(o) == Approx(1e9).epsilon(0.01));
}
