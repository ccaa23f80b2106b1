// Layer structures of common torchvision CNNs and ViTs, generated from their architecture definitions
// (He et al. 2016 ResNet v1.5; Sandler et al. 2018 MobileNetV2; Howard et al. 2019 MobileNetV3;
// Tan & Le 2019 EfficientNet; Huang et al. 2017 DenseNet; Liu et al. 2022 ConvNeXt; Dosovitskiy et al. 2021
// ViT), lowered to step operators.
#pragma once

#include <optional>
#include <string>

#include "models/step_ops.hpp"

namespace gp {

// True when build_cnn_ops knows the layer structure of this torchvision model id
// (resnet18/34/50/101/152, resnext50_32x4d, resnext101_32x8d, wide_resnet50_2/101_2, vgg11/13/16/19,
// densenet121/169/201, convnext_tiny/small/base, mobilenet_v2,
// mobilenet_v3_large, efficientnet_b0..b3).
bool known_cnn(const std::string& id);

// Dimensions of torchvision's ViT variants (vit_b_16, vit_b_32, vit_l_16, vit_l_32), or nullopt.
std::optional<TransformerDims> vit_dims(const std::string& id);

}  // namespace gp
