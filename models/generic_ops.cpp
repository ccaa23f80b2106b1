// A model known only by parameters and forward FLOPs per sample. Its FLOPs run as `layers` equal GEMMs
// whose weight is square (k = n = sqrt(params / layers)). When the catalog gives no activation size:
// - an image model (input_shape set) is assumed to be a typical CNN: activations per sample and kernel
//   count are the medians over the CNN structures gpuplan knows (vision_ops), scaled by the image area;
//   saved activations of 224x224 CNNs vary 12-62 MiB per sample with little relation to FLOPs, so the
//   median is a better prior than any per-FLOP ratio;
// - otherwise activations scale with FLOPs as ResNet-50's do (bytes saved per forward FLOP).
#include <algorithm>
#include <cmath>
#include <vector>

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

struct CnnPrior {
  double saved_per_sample = 0;  // bytes at 224x224
  double kernels = 0;           // per micro-batch
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

CnnPrior cnn_prior(Precision p) {
  std::vector<double> saved, kernels;
  for (const char* id : {"resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "resnext50_32x4d",
                         "wide_resnet50_2", "vgg16", "mobilenet_v2", "mobilenet_v3_large", "efficientnet_b0",
                         "efficientnet_b3", "densenet121", "convnext_tiny"}) {
    StepConfig ref;
    ref.model.id = id;
    ref.model.family = ModelFamily::cnn;
    ref.micro_batch = 1;
    ref.precision = p;
    const StepOps ops = build_cnn_ops(ref);
    saved.push_back(ops.activations.value());
    double k = 0;
    for (const auto& op : ops.micro) k += op.kernels * op.count;
    kernels.push_back(k);
  }
  return {median(saved), median(kernels)};
}

}  // namespace

StepOps build_generic_ops(const StepConfig& step) {
  StepOps out;
  const ModelSpec& m = step.model;
  if (m.params <= 0 || m.fwd_flops_per_sample <= 0) {
    out.not_expressible = "generic model needs positive params and fwd_flops_per_sample";
    return out;
  }
  const bool image = m.input_shape.size() == 3 && m.activation_bytes_per_sample.value() <= 0;
  const CnnPrior prior = image ? cnn_prior(step.precision) : CnnPrior{};
  // Each generic layer issues ~7 kernels (GEMM, dgrad, wgrad, 2 elementwise forward, 2 backward).
  const double layers = m.layers_hint > 0 ? m.layers_hint : image ? std::max(10.0, prior.kernels / 7.0) : 50.0;
  const double b = step.micro_batch;
  const double nk = std::max(64.0, std::sqrt(m.params / layers));
  const double rows = std::max(1.0, b * m.fwd_flops_per_sample / (2.0 * nk * nk * layers));
  LinearSpec l{"layer", rows, nk, nk, layers, false, false, true, false};
  add_linear(out.micro, l, step.precision);
  const double a = activation_bytes(step.precision);
  double act = m.activation_bytes_per_sample.value() * b * (a / 2.0);  // catalog figure is at 16-bit
  if (act <= 0 && image)
    act = prior.saved_per_sample * b * (m.input_shape[1] * m.input_shape[2]) / (224.0 * 224.0);
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
