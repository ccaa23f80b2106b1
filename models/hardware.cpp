#include "models/hardware.hpp"

namespace gp {

const char* to_string(Dtype d) {
  switch (d) {
    case Dtype::fp32: return "fp32";
    case Dtype::tf32: return "tf32";
    case Dtype::bf16: return "bf16";
    case Dtype::fp16: return "fp16";
    case Dtype::fp8: return "fp8";
  }
  return "?";
}

const char* to_string(LinkKind k) {
  switch (k) {
    case LinkKind::nvlink: return "nvlink";
    case LinkKind::pcie: return "pcie";
    case LinkKind::infiniband: return "infiniband";
    case LinkKind::ethernet: return "ethernet";
    case LinkKind::efa: return "efa";
    case LinkKind::xgmi: return "xgmi";
  }
  return "?";
}

const char* to_string(ModelFamily f) {
  switch (f) {
    case ModelFamily::gpt: return "gpt";
    case ModelFamily::cnn: return "cnn";
    case ModelFamily::vit: return "vit";
    case ModelFamily::swin: return "swin";
    case ModelFamily::generic: return "generic";
  }
  return "?";
}

}  // namespace gp
