#include "models/vision_ops.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>

namespace gp {
namespace {

enum class Act { relu, relu6, hardswish, silu };

// Emits operators for a CNN as its layers are declared, tracking the current feature-map shape.
class CnnBuilder {
 public:
  CnnBuilder(const StepConfig& s, StepOps& out) : step_(s), out_(out), b_(s.micro_batch) {
    a_ = activation_bytes(s.precision);
    if (s.model.input_shape.size() == 3) {
      h_ = s.model.input_shape[1];
      w_ = s.model.input_shape[2];
    }
    if (is_autocast(s.precision))
      add_memory(out_.micro, "image.cast", Phase::forward, Bytes(6 * b_ * 3 * h_ * w_), 1);
  }
  int c() const { return c_; }
  double size() const { return b_ * c_ * h_ * w_; }

  void conv(int cout, int k, int stride, int groups = 1) {
    const double hin = h_, win = w_;
    const double in_elems = b_ * c_ * hin * win;
    h_ = std::ceil(h_ / stride);
    w_ = std::ceil(w_ / stride);
    const double pixels = b_ * h_ * w_;
    const bool depthwise = groups > 1 && groups == c_;
    saved_ += a_ * in_elems;
    params_ += static_cast<double>(cout) * (c_ / groups) * k * k;
    tensors_ += 1;
    if (depthwise) {
      Op op;
      op.name = "dwconv";
      op.kind = OpKind::simt;
      op.dtype = Dtype::fp32;
      op.flops = Flops(2.0 * pixels * cout * k * k);
      op.bytes = Bytes(a_ * (in_elems + pixels * cout));
      out_.micro.push_back(op);
      op.phase = Phase::backward;
      op.count = 2;  // dgrad and wgrad
      op.name = "dwconv.bwd";
      out_.micro.push_back(op);
      if (is_autocast(step_.precision)) {
        add_memory(out_.micro, "dwconv.w_cast", Phase::forward, Bytes(6.0 * cout * k * k), 1);
        add_memory(out_.micro, "dwconv.dw_cast", Phase::backward, Bytes(6.0 * cout * k * k), 1);
      }
    } else {
      LinearSpec l{"conv", pixels, static_cast<double>(c_) / groups * k * k, static_cast<double>(cout),
                   1, false, false, !first_, false};
      const std::size_t from = out_.micro.size();
      add_linear(out_.micro, l, step_.precision);
      for (std::size_t i = from; i < out_.micro.size(); ++i) {
        Op& op = out_.micro[i];
        if (op.kind != OpKind::gemm) continue;
        op.conv = true;
        // Weight gradients reduce over batch x pixels: cuDNN splits that reduction (extra kernel).
        if (op.name == "conv.wgrad") op.kernels = 2;
      }
    }
    first_ = false;
    c_ = cout;
  }
  void bn() {
    const double n = size();
    // Training BatchNorm: statistics + normalise (2 kernels) and the num_batches_tracked increment.
    add_memory(out_.micro, "bn.fwd", Phase::forward, Bytes(3 * a_ * n), 1, 3);
    add_memory(out_.micro, "bn.bwd", Phase::backward, Bytes(5 * a_ * n), 1, 2);
    saved_ += a_ * n;
    params_ += 2.0 * c_;
    tensors_ += 2;
  }
  void act(Act k) {
    const double n = size();
    add_memory(out_.micro, "act.fwd", Phase::forward, Bytes(2 * a_ * n), 1);
    add_memory(out_.micro, "act.bwd", Phase::backward, Bytes(3 * a_ * n), 1);
    // In-place ReLU saves its output (it overwrites the BN output, which BN does not keep); the others
    // keep their input alongside the BN output.
    saved_ += (k == Act::relu || k == Act::relu6) ? 0.0 : a_ * n;
  }
  void residual_add() {
    const double n = size();
    add_memory(out_.micro, "add.fwd", Phase::forward, Bytes(3 * a_ * n), 1);
    add_memory(out_.micro, "add.grad_sum", Phase::backward, Bytes(3 * a_ * n), 1);
  }
  void stochastic_depth() {
    const double n = size();
    add_memory(out_.micro, "stochastic_depth.fwd", Phase::forward, Bytes(2 * a_ * n), 1, 3);
    add_memory(out_.micro, "stochastic_depth.bwd", Phase::backward, Bytes(3 * a_ * n), 1);
  }
  void maxpool() {
    const double in = size();
    h_ = std::ceil(h_ / 2);
    w_ = std::ceil(w_ / 2);
    const double out = size();
    add_memory(out_.micro, "maxpool.fwd", Phase::forward, Bytes(a_ * in + (a_ + 8) * out), 1);
    add_memory(out_.micro, "maxpool.bwd", Phase::backward, Bytes(a_ * in * 2 + (a_ + 8) * out), 2);
    saved_ += a_ * in + 8 * out;
  }
  // Squeeze-and-excitation: global pool, two 1x1 convs with activation, gate, channel-wise scale.
  void squeeze_excite(int squeeze) {
    const double n = size();
    const int ch = c_;
    add_memory(out_.micro, "se.pool", Phase::forward, Bytes(a_ * n), 1);
    add_memory(out_.micro, "se.fc", Phase::forward, Bytes(a_ * b_ * (ch + squeeze) * 4), 6);
    add_memory(out_.micro, "se.scale", Phase::forward, Bytes(2 * a_ * n), 1);
    add_memory(out_.micro, "se.scale.bwd", Phase::backward, Bytes(5 * a_ * n), 2);
    add_memory(out_.micro, "se.fc.bwd", Phase::backward, Bytes(a_ * b_ * (ch + squeeze) * 8 + a_ * n), 12);
    saved_ += a_ * n;
    params_ += 2.0 * ch * squeeze + ch + squeeze;
    tensors_ += 4;
  }
  void classifier(int classes) {
    const double n = size();
    add_memory(out_.micro, "avgpool.fwd", Phase::forward, Bytes(a_ * n), 1);
    add_memory(out_.micro, "avgpool.bwd", Phase::backward, Bytes(a_ * n), 1);
    linear(classes);
  }
  void linear(int out) {
    add_linear(out_.micro, {"fc", static_cast<double>(b_), static_cast<double>(c_), static_cast<double>(out), 1,
                            true, false, true, false}, step_.precision);
    params_ += static_cast<double>(c_) * out + out;
    tensors_ += 2;
    c_ = out;
    h_ = w_ = 1;
  }
  void finish(int classes) {
    add_memory(out_.micro, "ce", Phase::forward, Bytes(8.0 * b_ * classes), 3);
    add_memory(out_.micro, "ce.bwd", Phase::backward, Bytes(8.0 * b_ * classes), 3);
    out_.params = params_;
    out_.param_tensors = tensors_;
    out_.activations = Bytes(saved_);
  }
  struct State { int c; double h, w; };
  State state() const { return {c_, h_, w_}; }
  void restore(State s) { c_ = s.c; h_ = s.h; w_ = s.w; }

 private:
  const StepConfig& step_;
  StepOps& out_;
  double b_;
  double a_ = 2;
  int c_ = 3;
  double h_ = 224, w_ = 224;
  bool first_ = true;
  double saved_ = 0, params_ = 0, tensors_ = 0;
};

void resnet(CnnBuilder& nb, const std::vector<int>& depth, bool bottleneck) {
  nb.conv(64, 7, 2); nb.bn(); nb.act(Act::relu); nb.maxpool();
  const int widths[4] = {64, 128, 256, 512};
  for (int st = 0; st < 4; ++st) {
    for (int i = 0; i < depth[st]; ++i) {
      const int stride = (i == 0 && st > 0) ? 2 : 1;
      const int w = widths[st], out = bottleneck ? 4 * w : w;
      const auto in = nb.state();
      const bool down = stride != 1 || in.c != out;
      if (bottleneck) {
        nb.conv(w, 1, 1); nb.bn(); nb.act(Act::relu);
        nb.conv(w, 3, stride); nb.bn(); nb.act(Act::relu);
        nb.conv(out, 1, 1); nb.bn();
      } else {
        nb.conv(w, 3, stride); nb.bn(); nb.act(Act::relu);
        nb.conv(w, 3, 1); nb.bn();
      }
      if (down) {
        const auto main = nb.state();
        nb.restore(in);
        nb.conv(out, 1, stride); nb.bn();
        nb.restore(main);
      }
      nb.residual_add(); nb.act(Act::relu);
    }
  }
  nb.classifier(1000);
}

int make_divisible(double v, int divisor = 8) {
  int nv = std::max(divisor, static_cast<int>(v + divisor / 2.0) / divisor * divisor);
  if (nv < 0.9 * v) nv += divisor;
  return nv;
}

// Inverted residual block (MobileNetV2/V3, EfficientNet MBConv).
void inverted_residual(CnnBuilder& nb, int expanded, int out, int k, int stride, int se_squeeze, Act act,
                       bool stochastic) {
  const int in = nb.c();
  if (expanded != in) { nb.conv(expanded, 1, 1); nb.bn(); nb.act(act); }
  nb.conv(expanded, k, stride, expanded); nb.bn(); nb.act(act);
  if (se_squeeze > 0) nb.squeeze_excite(se_squeeze);
  nb.conv(out, 1, 1); nb.bn();
  if (stride == 1 && in == out) {
    if (stochastic) nb.stochastic_depth();
    nb.residual_add();
  }
}

void mobilenet_v2(CnnBuilder& nb) {
  nb.conv(32, 3, 2); nb.bn(); nb.act(Act::relu6);
  const int cfg[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                         {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  for (const auto& r : cfg)
    for (int i = 0; i < r[2]; ++i)
      inverted_residual(nb, nb.c() * r[0], r[1], 3, i == 0 ? r[3] : 1, 0, Act::relu6, false);
  nb.conv(1280, 1, 1); nb.bn(); nb.act(Act::relu6);
  nb.classifier(1000);
}

void mobilenet_v3_large(CnnBuilder& nb) {
  nb.conv(16, 3, 2); nb.bn(); nb.act(Act::hardswish);
  // in, kernel, expanded, out, se, hardswish, stride (torchvision _mobilenet_v3_conf)
  const int cfg[15][7] = {{16, 3, 16, 16, 0, 0, 1},     {16, 3, 64, 24, 0, 0, 2},    {24, 3, 72, 24, 0, 0, 1},
                          {24, 5, 72, 40, 1, 0, 2},     {40, 5, 120, 40, 1, 0, 1},   {40, 5, 120, 40, 1, 0, 1},
                          {40, 3, 240, 80, 0, 1, 2},    {80, 3, 200, 80, 0, 1, 1},   {80, 3, 184, 80, 0, 1, 1},
                          {80, 3, 184, 80, 0, 1, 1},    {80, 3, 480, 112, 1, 1, 1},  {112, 3, 672, 112, 1, 1, 1},
                          {112, 5, 672, 160, 1, 1, 2},  {160, 5, 960, 160, 1, 1, 1}, {160, 5, 960, 160, 1, 1, 1}};
  for (const auto& r : cfg)
    inverted_residual(nb, r[2], r[3], r[1], r[6], r[4] ? make_divisible(r[2] / 4.0) : 0,
                      r[5] ? Act::hardswish : Act::relu, false);
  nb.conv(960, 1, 1); nb.bn(); nb.act(Act::hardswish);
  nb.classifier(1280);
  nb.act(Act::hardswish);
  nb.linear(1000);
}

void efficientnet(CnnBuilder& nb, double width, double depth) {
  auto ch = [&](int c) { return make_divisible(c * width); };
  nb.conv(ch(32), 3, 2); nb.bn(); nb.act(Act::silu);
  // expand, kernel, stride, in, out, layers (torchvision _efficientnet_conf, B0)
  const int cfg[7][6] = {{1, 3, 1, 32, 16, 1}, {6, 3, 2, 16, 24, 2},  {6, 5, 2, 24, 40, 2},  {6, 3, 2, 40, 80, 3},
                         {6, 5, 1, 80, 112, 3}, {6, 5, 2, 112, 192, 4}, {6, 3, 1, 192, 320, 1}};
  for (const auto& r : cfg) {
    const int layers = static_cast<int>(std::ceil(r[5] * depth));
    for (int i = 0; i < layers; ++i) {
      const int in = nb.c();
      inverted_residual(nb, in * r[0], ch(r[4]), r[1], i == 0 ? r[2] : 1, std::max(1, in / 4), Act::silu, true);
    }
  }
  nb.conv(ch(1280), 1, 1); nb.bn(); nb.act(Act::silu);
  nb.classifier(1000);
}

using Arch = std::function<void(CnnBuilder&)>;

const std::map<std::string, Arch>& architectures() {
  static const std::map<std::string, Arch> m = {
      {"resnet18", [](CnnBuilder& b) { resnet(b, {2, 2, 2, 2}, false); }},
      {"resnet34", [](CnnBuilder& b) { resnet(b, {3, 4, 6, 3}, false); }},
      {"resnet50", [](CnnBuilder& b) { resnet(b, {3, 4, 6, 3}, true); }},
      {"resnet101", [](CnnBuilder& b) { resnet(b, {3, 4, 23, 3}, true); }},
      {"resnet152", [](CnnBuilder& b) { resnet(b, {3, 8, 36, 3}, true); }},
      {"mobilenet_v2", [](CnnBuilder& b) { mobilenet_v2(b); }},
      {"mobilenet_v3_large", [](CnnBuilder& b) { mobilenet_v3_large(b); }},
      {"efficientnet_b0", [](CnnBuilder& b) { efficientnet(b, 1.0, 1.0); }},
      {"efficientnet_b1", [](CnnBuilder& b) { efficientnet(b, 1.0, 1.1); }},
      {"efficientnet_b2", [](CnnBuilder& b) { efficientnet(b, 1.1, 1.2); }},
      {"efficientnet_b3", [](CnnBuilder& b) { efficientnet(b, 1.2, 1.4); }},
  };
  return m;
}

}  // namespace

bool known_cnn(const std::string& id) { return architectures().count(id) != 0; }

std::optional<TransformerDims> vit_dims(const std::string& id) {
  // name -> layers, hidden, heads, mlp, patch (torchvision.models.vision_transformer)
  static const std::map<std::string, std::array<int, 5>> m = {{"vit_b_16", {12, 768, 12, 3072, 16}},
                                                               {"vit_b_32", {12, 768, 12, 3072, 32}},
                                                               {"vit_l_16", {24, 1024, 16, 4096, 16}},
                                                               {"vit_l_32", {24, 1024, 16, 4096, 32}}};
  auto it = m.find(id);
  if (it == m.end()) return std::nullopt;
  TransformerDims t;
  t.layers = it->second[0];
  t.d_model = it->second[1];
  t.heads = it->second[2];
  t.d_ff = it->second[3];
  t.patch = it->second[4];
  t.vocab = 0;
  t.seq = 0;
  t.tied_embeddings = false;
  return t;
}

StepOps build_cnn_ops(const StepConfig& step) {
  StepOps out;
  auto it = architectures().find(step.model.id);
  if (it == architectures().end()) return build_generic_ops(step);
  CnnBuilder nb(step, out);
  it->second(nb);
  nb.finish(1000);
  if (step.model.params > 0) out.params = step.model.params;
  return out;
}

}  // namespace gp
