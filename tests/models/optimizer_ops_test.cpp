#include <catch2/catch.hpp>

#include "models/step_ops.hpp"

using namespace gp;

namespace {

double bytes(const std::vector<Op>& ops) {
  double b = 0;
  for (const Op& op : ops) b += op.bytes.value() * op.count;
  return b;
}

double passes(const std::vector<Op>& ops) {
  double n = 0;
  for (const Op& op : ops) n += op.count;
  return n;
}

}  // namespace

TEST_CASE("models::optimizer_ops: foreach Adam(W) as torch.optim runs it", "[models]") {
  // _multi_tensor_adamw (capturable off): mul_ p (r+w 8 B), lerp_ m<-g (r m, r g, w m: 12 B), mul_ v (8 B),
  // addcmul_ v += g*g (r v, g, g, w v: 16 B), t = sqrt(v) (8 B), t /= bc2 (8 B), t += eps (8 B),
  // addcdiv_ p (r p, m, t, w p: 16 B): 84 B of fp32 per parameter in eight list passes.
  const auto adamw = optimizer_ops(OptimizerKind::adamw, 1e6, 10);
  CHECK(bytes(adamw) == Approx(84e6));
  CHECK(passes(adamw) == 8);
  // Adam's default weight decay is 0: no mul_ of the parameters.
  const auto adam = optimizer_ops(OptimizerKind::adam, 1e6, 10);
  CHECK(bytes(adam) == Approx(76e6));
  CHECK(passes(adam) == 7);
  // Every foreach variant moves more than the fused kernel (28 B) and keeps the same 8 B of state.
  CHECK(bytes(adamw) > bytes(optimizer_ops(OptimizerKind::adamw_fused, 1e6, 10)));
  CHECK(optimizer_state_bytes_per_param(OptimizerKind::adamw) ==
        optimizer_state_bytes_per_param(OptimizerKind::adamw_fused));
}

TEST_CASE("models::optimizer_ops: multi-tensor launches per pass grow with tensors and elements", "[models]") {
  // One launch per 24 tensors or per 20M elements, whichever needs more.
  CHECK(optimizer_ops(OptimizerKind::sgd, 1e6, 48)[0].kernels == 2);
  CHECK(optimizer_ops(OptimizerKind::sgd, 100e6, 10)[0].kernels == 5);
}

TEST_CASE("models::optimizer_ops: fused Adam is one kernel over p, g, m and v, as fused AdamW", "[models]") {
  // torch._fused_adam_: read p, g, m, v and write p, m, v, 7 x 4 B = 28 B of fp32 per parameter in one pass; Adam's
  // L2 term g + wd p is arithmetic inside the kernel. Its state is m and v, 8 B per parameter.
  const auto adam = optimizer_ops(OptimizerKind::adam_fused, 1e6, 10);
  CHECK(bytes(adam) == Approx(28e6));
  CHECK(passes(adam) == 1);
  CHECK(optimizer_state_bytes_per_param(OptimizerKind::adam_fused) == 8.0);
}

TEST_CASE("models::workload: optimizer names read back as the kinds they name", "[models]") {
  for (const OptimizerKind o : kOptimizers) {
    INFO(to_string(o));
    REQUIRE(parse_optimizer(to_string(o)).has_value());
    CHECK(*parse_optimizer(to_string(o)) == o);
  }
  CHECK(parse_optimizer("adam-fused") == OptimizerKind::adam_fused);
  CHECK(parse_optimizer("AdamW") == std::nullopt);  // names are PyTorch-style lower case, as the scenarios write them
  CHECK(parse_optimizer("lion") == std::nullopt);
  CHECK(parse_optimizer("") == std::nullopt);
}
