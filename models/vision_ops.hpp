// Layer structures of common torchvision CNNs and ViTs, generated from their architecture definitions
// (He et al. 2016 ResNet v1.5; Sandler et al. 2018 MobileNetV2; Howard et al. 2019 MobileNetV3;
// Tan & Le 2019 EfficientNet; Huang et al. 2017 DenseNet; Liu et al. 2022 ConvNeXt; Dosovitskiy et al. 2021
// ViT; Radosavovic et al. 2020 RegNet; Tan et al. 2019 MNASNet; Ma et al. 2018 ShuffleNetV2; Iandola et al. 2016
// SqueezeNet; Szegedy et al. 2015/2016 GoogLeNet/Inception v3; Tan & Le 2021 EfficientNetV2), lowered to step
// operators.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/step_ops.hpp"

namespace gp {

// True when build_cnn_ops knows the layer structure of this torchvision model id
// (resnet18/34/50/101/152, resnext50_32x4d, resnext101_32x8d/64x4d, wide_resnet50_2/101_2,
// vgg11/13/16/19 and their _bn variants, densenet121/161/169/201, convnext_tiny/small/base/large, mobilenet_v2,
// mobilenet_v3_large/small, efficientnet_b0..b7, efficientnet_v2_s/m/l, regnet_x_* and regnet_y_* (400mf..128gf),
// mnasnet0_5/0_75/1_0/1_3, alexnet, squeezenet1_0/1_1, shufflenet_v2_x0_5/x1_0/x1_5/x2_0, googlenet,
// inception_v3).
bool known_cnn(const std::string& id);
// Every id known_cnn accepts, sorted.
std::vector<std::string> known_cnn_ids();

// One nn.Conv2d of a network (the shapes tools/probe_conv_layout.py records), for timing convolutions alone.
struct ConvLayer {
  int c_in = 0, h = 0, w = 0, c_out = 0, kh = 1, kw = 1, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
  int groups = 1;
  bool bias = false;
  bool first = false;  // the network's first convolution: its input needs no gradient (no input-gradient pass)
};
// The operators of that one convolution's forward and backward at `step`'s batch, precision and layout (no
// optimizer, no loss): its passes, weight casts under autocast, bias and NCHW transforms as in a network.
StepOps build_conv_layer_ops(const StepConfig& step, const ConvLayer& l);

// Dimensions of torchvision's ViT variants (vit_b_16, vit_b_32, vit_l_16, vit_l_32, vit_h_14), or nullopt.
std::optional<TransformerDims> vit_dims(const std::string& id);

}  // namespace gp
