#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "calibrate/reference_runs.hpp"
#include "models/step_ops.hpp"
#include "models/swin_ops.hpp"

using namespace gp;

namespace {

StepConfig swin(const std::string& id, int batch = 1) {
  StepConfig s;
  s.model.id = id;
  s.model.family = ModelFamily::swin;
  s.micro_batch = batch;
  return s;
}

double flops_of(const StepOps& o, Phase ph, OpKind kind) {
  double f = 0;
  for (const auto& op : o.micro)
    if (op.phase == ph && op.kind == kind) f += op.flops.value() * op.count;
  return f;
}

// torchvision's own counts: calibrate/probes/results/torchvision-params-flops-2026-12-03.jsonl
// (tools/torchvision_params_flops.py: torchvision 0.26.0, weights=None, torch.utils.flop_counter on one
// 1x3x224x224 forward, multiply-add = 2).
std::map<std::string, std::pair<double, double>> torchvision_counts() {
  std::map<std::string, std::pair<double, double>> out;
  std::ifstream f(std::string(GPUPLAN_TEST_DATA) +
                  "/../../calibrate/probes/results/torchvision-params-flops-2026-12-03.jsonl");
  std::string line;
  while (std::getline(f, line)) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.contains("model")) continue;
    out[j["model"].get<std::string>()] = {j["params"].get<double>(), j["fwd_flops_per_sample"].get<double>()};
  }
  return out;
}

}  // namespace

TEST_CASE("models::swin_ops: dimensions of the torchvision variants", "[models]") {
  REQUIRE(swin_dims("swin_t"));
  CHECK(swin_dims("swin_t")->depths[2] == 6);
  CHECK(swin_dims("swin_s")->depths[2] == 18);
  CHECK(swin_dims("swin_b")->embed == 128);
  CHECK(swin_dims("swin_b")->heads[3] == 32);
  CHECK(swin_dims("swin_v2_t")->window == 8);
  CHECK(swin_dims("swin_v2_t")->v2);
  CHECK_FALSE(swin_dims("vit_b_16"));
  CHECK_FALSE(swin_dims("swin"));
}

TEST_CASE("models::swin_ops: params and forward FLOPs match torchvision", "[models]") {
  const auto ref = torchvision_counts();
  for (const char* id : {"swin_t", "swin_s", "swin_b", "swin_v2_t", "swin_v2_s", "swin_v2_b"}) {
    INFO(id);
    REQUIRE(ref.count(id) == 1);
    const StepOps o = build_swin_ops(swin(id));
    REQUIRE(o.not_expressible.empty());
    const double fwd = flops_of(o, Phase::forward, OpKind::gemm);
    CHECK(o.params == Approx(ref.at(id).first).epsilon(0.001));
    CHECK(fwd == Approx(ref.at(id).second).epsilon(0.03));
  }
  // swin_t exactly (hand-checked: 28,288,354 parameters, 8.981 GFLOP).
  const StepOps t = build_swin_ops(swin("swin_t"));
  CHECK(t.params == 28288354.0);
  CHECK(flops_of(t, Phase::forward, OpKind::gemm) == 8981133312.0);
}

TEST_CASE("models::swin_ops: step invariants", "[models]") {
  for (const char* id : {"swin_t", "swin_v2_s"}) {
    INFO(id);
    const StepOps o1 = build_swin_ops(swin(id, 1));
    const StepOps o8 = build_swin_ops(swin(id, 8));
    // Per-sample work scales with the batch (V2's position-bias MLP runs once per micro-batch: 0.5% slack).
    CHECK(flops_of(o8, Phase::forward, OpKind::gemm) ==
          Approx(8 * flops_of(o1, Phase::forward, OpKind::gemm)).epsilon(0.005));
    // Activations are per-sample plus a per-micro-batch part (V2's bias MLP): linear in the batch.
    const StepOps o2 = build_swin_ops(swin(id, 2));
    CHECK(o8.activations.value() - o1.activations.value() ==
          Approx(7 * (o2.activations.value() - o1.activations.value())).epsilon(1e-9));
    CHECK(o8.activations.value() > 7 * o1.activations.value());
    CHECK(o8.params == o1.params);
    // Every forward GEMM has a dgrad and a wgrad of equal FLOPs, except the patch embedding's dgrad and the
    // CPB MLP's first layer (their inputs need no gradient).
    double first_layers = 0;
    for (const auto& op : o8.micro)
      if (op.phase == Phase::forward && op.kind == OpKind::gemm &&
          (op.name == "patch_embed.fwd" || op.name.find("cpb.fc1") != std::string::npos))
        first_layers += op.flops.value() * op.count;
    CHECK(flops_of(o8, Phase::backward, OpKind::gemm) ==
          Approx(2 * flops_of(o8, Phase::forward, OpKind::gemm) - first_layers).epsilon(1e-9));
    // Parameter tensors (what a foreach optimizer launches over), by hand from torchvision's structure: stem conv
    // w+b and norm 4; a V1 block 13 (2 norms 4, qkv and proj 4, bias table 1, MLP 4), a V2 block 16 (its CPB MLP
    // 3 and logit scale 1 instead of the table); 3 patch mergings of 3; final norm and head 4.
    // swin_t: 4 + 12 x 13 + 9 + 4 = 173; swin_v2_s: 4 + 24 x 16 + 9 + 4 = 401.
    CHECK(o8.param_tensors == (std::string(id) == "swin_t" ? 173 : 401));
    for (const auto& op : o8.micro) {
      CHECK(op.count > 0);
      CHECK(op.bytes.value() >= 0);
    }
  }
}

TEST_CASE("models::swin_ops: dispatch and fallbacks", "[models]") {
  const StepOps via_dispatch = build_step_ops(swin("swin_t", 4));
  CHECK(via_dispatch.params == 28288354.0);
  CHECK_FALSE(via_dispatch.optimizer.empty());
  StepConfig ck = swin("swin_t", 4);
  ck.activation_checkpointing = true;
  CHECK_FALSE(build_swin_ops(ck).not_expressible.empty());
  // fp32: no autocast casts; 16-bit saves less.
  StepConfig f32 = swin("swin_t", 4);
  f32.precision = Precision::fp32;
  const StepOps o32 = build_swin_ops(f32);
  for (const auto& op : o32.micro) CHECK(op.name.find("cast") == std::string::npos);
  CHECK(o32.activations.value() > via_dispatch.activations.value());
}

TEST_CASE("models::swin_ops: a measured-run record naming a Swin variant gets the swin family", "[models]") {
  StepConfig s;
  const auto in = nlohmann::json::parse(R"({"model":"swin_t","batch":64,"precision":"bf16","image_hw":[224,224]})");
  CHECK_FALSE(gp::calibrate::step_from_input(in, s));
  CHECK(s.model.family == ModelFamily::swin);
  CHECK(build_step_ops(s).params == 28288354.0);
  StepConfig v2;
  CHECK_FALSE(gp::calibrate::step_from_input(nlohmann::json::parse(R"({"model":"swin_v2_b","batch":2})"), v2));
  CHECK(v2.model.family == ModelFamily::swin);
}

TEST_CASE("models::swin_ops: the shifted blocks' rolls carry the elements they move", "[models]") {
  // Swin-T at 224, batch 1: shifted blocks are every second one where the map is larger than the 7x7 window:
  // 1 at 56x56x96, 1 at 28x28x192, 3 at 14x14x384, none at 7x7. Each rolls its input forward and back, and both
  // again in backward: 4 x (56^2 x 96 + 28^2 x 192 + 3 x 14^2 x 384) = 4 x 677,376 = 2,709,504 elements.
  const StepOps o = build_step_ops(swin("swin_t"));
  double rolled = 0;
  for (const Op& op : o.micro) rolled += op.roll_elements * op.count;
  CHECK(rolled == Approx(2709504));
}

TEST_CASE("models::swin_ops: residual adds and stochastic depth move every element of the map", "[models]") {
  // Swin-T at 224, batch 1, fp32 (stream and branch both 4 bytes). Elements per block: 56^2 x 96 = 301,056
  // (2 blocks), 28^2 x 192 = 150,528 (2), 14^2 x 384 = 75,264 (6), 7^2 x 768 = 37,632 (2): 1,430,016 in all.
  // Each block has two residual adds (attention and MLP branch), each reading stream and branch and writing
  // the stream: 12 bytes per element, 2 x 12 x 1,430,016 = 34,320,384 bytes. Stochastic depth ("row") multiplies
  // each branch except the first block's (p = 0): 2 x 8 bytes x (1,430,016 - 301,056) = 18,063,360 bytes.
  StepConfig s = swin("swin_t");
  s.precision = Precision::fp32;
  const StepOps o = build_step_ops(s);
  double residual = 0, stochastic = 0;
  for (const Op& op : o.micro) {
    const auto ends_with = [&](const std::string& suffix) {
      return op.name.size() >= suffix.size() &&
             op.name.compare(op.name.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (ends_with("residual.fwd")) residual += op.bytes.value() * op.count;
    if (ends_with("stochastic_depth.fwd")) stochastic += op.bytes.value() * op.count;
  }
  CHECK(residual == Approx(34320384));
  CHECK(stochastic == Approx(18063360));
}

TEST_CASE("models::swin_ops: window attention's batched matmuls are small bmms, aligned only for 8x8 windows",
          "[models]") {
  // Swin V1's 7x7 windows make 49 x 49 products (49 no multiple of 8: cuBLAS's unaligned kernels); V2's 8x8
  // windows make 64 x 64 ones. Head dim 32 in both. Six products per block (q k^T, attn v and four in backward).
  for (const auto& [id, aligned] : {std::pair<std::string, bool>{"swin_t", false}, {"swin_v2_t", true}}) {
    const StepOps o = build_step_ops(swin(id));
    int bmms = 0;
    for (const Op& op : o.micro) {
      if (!op.small_bmm) continue;
      ++bmms;
      CHECK(op.kind == OpKind::gemm);
      CHECK(op.bmm_aligned == aligned);
    }
    // Six products per kind of block in a stage: plain blocks in all four stages, shifted ones in the first three
    // (the last stage's 7x7 map fits one window, so it does not shift): 6 x 7 = 42 operators.
    CHECK(bmms == 42);
  }
}

TEST_CASE("models::swin_ops: SwinV2's q / k normalisation reads its norm on the broadcast path (hand-computed)",
          "[models]") {
  // SwinV2-T at 224, batch 1, bf16, 8 x 8 windows over maps padded to a multiple of 8: q (and k) elements per
  // block 56^2 x 96 = 301,056 (2 blocks), 32^2 x 192 = 196,608 (2), 16^2 x 384 = 98,304 (6), 8^2 x 768 = 49,152
  // (2): 1,683,456 in all. Per element of q and of k, forward: x / norm (2 + 4 bytes, broadcast); backward, from
  // the profile's kernels: the gradient's cast up to fp32 6 bytes; g / n 8, n * n 4, x / norm 2 + 4 and its
  // product with the norm's gradient 8, all broadcast (26); g * x 8 + 2 unrolled (10); the division by n^2 12, the
  // negation 8, the sum 4 and the add of the two gradients 12 (36): 78 in all.
  const StepOps o = build_step_ops(swin("swin_v2_t"));
  double fwd_bcast = 0, bwd_bcast = 0, bwd_unrolled = 0, bwd = 0;
  for (const Op& op : o.micro) {
    if (op.name.size() >= 12 && op.name.compare(op.name.size() - 12, 12, "qk_normalize") == 0)
      fwd_bcast += op.broadcast_bytes * op.count;
    if (op.name.size() >= 16 && op.name.compare(op.name.size() - 16, 16, "qk_normalize.bwd") == 0) {
      bwd_bcast += op.broadcast_bytes * op.count;
      bwd_unrolled += op.unrolled_bytes * op.count;
      bwd += op.bytes.value() * op.count;
    }
  }
  CHECK(fwd_bcast == Approx(2 * 6 * 1683456.0));
  CHECK(bwd_bcast == Approx(2 * 26 * 1683456.0));
  CHECK(bwd_unrolled == Approx(2 * 10 * 1683456.0));
  CHECK(bwd == Approx(2 * 78 * 1683456.0));
}
