// torchvision's Swin Transformer (Liu et al. 2021; V2: Liu et al. 2022) lowered to step operators:
// patch embedding, four stages of windowed (shifted) multi-head self-attention blocks with patch merging
// between them, final LayerNorm, average pool and a 1000-class head (torchvision/models/swin_transformer.py).
#pragma once

#include <array>
#include <optional>
#include <string>

#include "models/step_ops.hpp"

namespace gp {

struct SwinDims {
  std::array<int, 4> depths{};  // blocks per stage
  int embed = 96;               // channels of stage 1 (doubled by each patch merging)
  std::array<int, 4> heads{};   // attention heads per stage
  int window = 7;               // window side in tokens
  int patch = 4;                // patch embedding kernel = stride
  bool v2 = false;              // Swin V2: cosine attention, log-spaced CPB MLP bias, res-post-norm
};

// Dimensions of torchvision's swin_t, swin_s, swin_b, swin_v2_t, swin_v2_s, swin_v2_b, or nullopt.
std::optional<SwinDims> swin_dims(const std::string& id);

// Operators of one training step of the Swin variant named by step.model.id (its image size from
// step.model.input_shape, 224 x 224 when absent). An unknown id falls back to build_generic_ops.
StepOps build_swin_ops(const StepConfig& step);

}  // namespace gp
