// A model known only by parameters and forward FLOPs per sample. Its FLOPs run as `layers` equal GEMMs
// whose weight is square (k = n = sqrt(params / layers)). When the catalog gives no activation size:
// - an image model (input_shape set) is taken to be a CNN like those gpuplan knows: its saved activations per
//   sample come from a least-squares fit of ln(activations) on ln(params) and ln(forward FLOPs) over every CNN
//   structure in models/vision_ops, scaled by the image area; its kernels per step are their median
//   (generic_cnn_prior). Leave-one-out over those structures (tests/models/step_ops_test.cpp): the fit's mean
//   |ln error| for activations is 0.50 where one median for all (the former prior) gave 0.79; for kernels the
//   same fit gives no gain over the median (0.65 against 0.66), so the median stays;
// - otherwise activations scale with FLOPs as ResNet-50's do (bytes saved per forward FLOP).
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <mutex>
#include <vector>

#include "models/step_ops.hpp"
#include "models/vision_ops.hpp"

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

// One known CNN at batch 1: ln params, ln forward FLOPs, ln saved activation bytes, ln kernels per step.
struct CnnPoint {
  std::string id;
  double lp = 0, lf = 0, la = 0, lk = 0;
};

std::vector<CnnPoint> cnn_points(Precision p) {
  static std::mutex mu;
  static std::map<Precision, std::vector<CnnPoint>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(p);
  if (it != cache.end()) return it->second;
  std::vector<CnnPoint> pts;
  for (const auto& id : known_cnn_ids()) {
    StepConfig s;
    s.model.id = id;
    s.model.family = ModelFamily::cnn;
    s.micro_batch = 1;
    s.precision = p;
    const StepOps ops = build_cnn_ops(s);
    double fwd = 0, kernels = 0;
    for (const auto& op : ops.micro) {
      if (op.phase == Phase::forward && (op.kind == OpKind::gemm || op.kind == OpKind::simt))
        fwd += op.flops.value() * op.count;
      kernels += op.kernels * op.count;
    }
    if (ops.params <= 0 || fwd <= 0 || ops.activations.value() <= 0 || kernels <= 0) continue;
    pts.push_back({id, std::log(ops.params), std::log(fwd), std::log(ops.activations.value()), std::log(kernels)});
  }
  cache[p] = pts;
  return pts;
}

// Least squares y = c0 + c1 x1 + c2 x2 by the normal equations (3 x 3, Cramer's rule).
std::array<double, 3> fit_plane(const std::vector<std::array<double, 3>>& xy) {
  double s[3][3] = {}, t[3] = {};
  for (const auto& r : xy) {
    const double x[3] = {1, r[0], r[1]};
    for (int i = 0; i < 3; ++i) {
      t[i] += x[i] * r[2];
      for (int j = 0; j < 3; ++j) s[i][j] += x[i] * x[j];
    }
  }
  auto det = [](const double m[3][3]) {
    return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
           m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
  };
  const double d = det(s);
  std::array<double, 3> c{0, 0, 0};
  if (std::abs(d) < 1e-12) return c;
  for (int k = 0; k < 3; ++k) {
    double m[3][3];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) m[i][j] = j == k ? t[i] : s[i][j];
    c[static_cast<std::size_t>(k)] = det(m) / d;
  }
  return c;
}

}  // namespace

GenericCnnPrior generic_cnn_prior(Precision p, double params, double fwd_flops, const std::string& exclude) {
  std::vector<std::array<double, 3>> act;
  std::vector<double> kernels;
  for (const auto& pt : cnn_points(p)) {
    if (pt.id == exclude) continue;
    act.push_back({pt.lp, pt.lf, pt.la});
    kernels.push_back(pt.lk);
  }
  GenericCnnPrior out;
  if (act.size() < 3 || params <= 0 || fwd_flops <= 0) return out;
  const auto a = fit_plane(act);
  out.saved_per_sample = std::exp(a[0] + a[1] * std::log(params) + a[2] * std::log(fwd_flops));
  std::nth_element(kernels.begin(), kernels.begin() + static_cast<std::ptrdiff_t>(kernels.size() / 2), kernels.end());
  out.kernels = std::exp(kernels[kernels.size() / 2]);
  return out;
}

StepOps build_generic_ops(const StepConfig& step) {
  StepOps out;
  const ModelSpec& m = step.model;
  if (m.params <= 0 || m.fwd_flops_per_sample <= 0) {
    out.not_expressible = "generic model needs positive params and fwd_flops_per_sample";
    return out;
  }
  const bool image = m.input_shape.size() == 3 && m.activation_bytes_per_sample.value() <= 0;
  // The structures are at 224 x 224: FLOPs of a larger image are brought back to 224 before the fit is read.
  const double area = image ? m.input_shape[1] * m.input_shape[2] / (224.0 * 224.0) : 1.0;
  const GenericCnnPrior prior =
      image ? generic_cnn_prior(step.precision, m.params, m.fwd_flops_per_sample / area) : GenericCnnPrior{};
  // Each generic layer issues ~7 kernels (GEMM, dgrad, wgrad, 2 elementwise forward, 2 backward).
  const double layers = m.layers_hint > 0 ? m.layers_hint : image ? std::max(10.0, prior.kernels / 7.0) : 50.0;
  const double b = step.micro_batch;
  const double nk = std::max(64.0, std::sqrt(m.params / layers));
  const double rows = std::max(1.0, b * m.fwd_flops_per_sample / (2.0 * nk * nk * layers));
  LinearSpec l{"layer", rows, nk, nk, layers, false, false, true, false};
  add_linear(out.micro, l, step.precision);
  const double a = activation_bytes(step.precision);
  double act = m.activation_bytes_per_sample.value() * b * (a / 2.0);  // catalog figure is at 16-bit
  if (act <= 0 && image) act = prior.saved_per_sample * b * area;
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
