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
#include <cmath>
#include <vector>

#include <Eigen/Dense>

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
  const double fwd = forward_flops(ops).value();
  return fwd > 0 ? ops.activations.value() / fwd : 0.0;
}

// One known CNN at batch 1: ln params, ln forward FLOPs, ln saved activation bytes, ln kernels per step.
struct CnnPoint {
  std::string id;
  double lp = 0, lf = 0, la = 0, lk = 0;
};

// Every known CNN at batch 1 and precision p.
std::vector<CnnPoint> cnn_points(Precision p) {
  std::vector<CnnPoint> pts;
  for (const auto& id : known_cnn_ids()) {
    StepConfig s;
    s.model.id = id;
    s.model.family = ModelFamily::cnn;
    s.micro_batch = 1;
    s.precision = p;
    const StepOps ops = build_cnn_ops(s);
    double kernels = 0;
    for (const auto& op : ops.micro) kernels += op.kernels * op.count;
    const double fwd = forward_flops(ops).value();
    if (ops.params <= 0 || fwd <= 0 || ops.activations.value() <= 0 || kernels <= 0) continue;
    pts.push_back({id, std::log(ops.params), std::log(fwd), std::log(ops.activations.value()), std::log(kernels)});
  }
  return pts;
}

}  // namespace

GenericCnnPrior generic_cnn_prior(Precision p, double params, double fwd_flops, const std::string& exclude) {
  GenericCnnPrior out;
  if (params <= 0 || fwd_flops <= 0) return out;
  std::vector<CnnPoint> pts = cnn_points(p);
  pts.erase(std::remove_if(pts.begin(), pts.end(), [&](const CnnPoint& q) { return q.id == exclude; }), pts.end());
  if (pts.size() < 3) return out;
  // ln(activations) = c0 + c1 ln(params) + c2 ln(FLOPs), least squares.
  Eigen::MatrixXd x(static_cast<Eigen::Index>(pts.size()), 3);
  Eigen::VectorXd y(static_cast<Eigen::Index>(pts.size()));
  std::vector<double> kernels;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const auto r = static_cast<Eigen::Index>(i);
    x.row(r) << 1.0, pts[i].lp, pts[i].lf;
    y[r] = pts[i].la;
    kernels.push_back(pts[i].lk);
  }
  const Eigen::Vector3d c = x.colPivHouseholderQr().solve(y);
  out.saved_per_sample = std::exp(c[0] + c[1] * std::log(params) + c[2] * std::log(fwd_flops));
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
  out.largest_tensor = Bytes(act / layers);  // no structure: one layer's share of the saved bytes
  return out;
}

}  // namespace gp
