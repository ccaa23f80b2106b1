// A model known only by parameters and forward FLOPs per sample. Its FLOPs run as `layers` equal GEMMs
// whose weight is square (k = n = sqrt(params / layers)); its activations, when not given, are assumed to
// scale with FLOPs as ResNet-50's do (bytes saved per forward FLOP, computed from our ResNet-50 structure).
#include <algorithm>
#include <cmath>

#include "models/step_ops.hpp"

namespace gp {
namespace {

double resnet50_saved_bytes_per_flop(Precision p) {
  StepConfig ref;
  ref.model.id = "resnet50";
  ref.model.family = ModelFamily::cnn;
  ref.micro_batch = 1;
  ref.precision = p;
  const StepOps ops = build_cnn_ops(ref);
  double fwd_flops = 0;
  for (const auto& op : ops.micro)
    if (op.phase == Phase::forward && op.kind == OpKind::gemm) fwd_flops += op.flops.value() * op.count;
  return fwd_flops > 0 ? ops.activations.value() / fwd_flops : 0.0;
}

}  // namespace

StepOps build_generic_ops(const StepConfig& step) {
  StepOps out;
  const ModelSpec& m = step.model;
  if (m.params <= 0 || m.fwd_flops_per_sample <= 0) {
    out.not_expressible = "generic model needs positive params and fwd_flops_per_sample";
    return out;
  }
  const double layers = m.layers_hint > 0 ? m.layers_hint : 50.0;
  const double b = step.micro_batch;
  const double nk = std::max(64.0, std::sqrt(m.params / layers));
  const double rows = std::max(1.0, b * m.fwd_flops_per_sample / (2.0 * nk * nk * layers));
  LinearSpec l{"layer", rows, nk, nk, layers, false, false, true, false};
  add_linear(out.micro, l, step.precision);
  const double a = activation_bytes(step.precision);
  double act = m.activation_bytes_per_sample.value() * b * (a / 2.0);  // catalog figure is at 16-bit
  if (act <= 0) act = resnet50_saved_bytes_per_flop(step.precision) * m.fwd_flops_per_sample * b;
  // Normalisation and activation functions touch every saved byte ~3x forward and ~5x backward.
  add_memory(out.micro, "elementwise.fwd", Phase::forward, Bytes(3 * act / layers), layers, 2);
  add_memory(out.micro, "elementwise.bwd", Phase::backward, Bytes(5 * act / layers), layers, 2);
  out.params = m.params;
  out.param_tensors = 2 * layers;
  out.activations = Bytes(act);
  return out;
}

}  // namespace gp
