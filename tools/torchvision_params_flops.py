#!/usr/bin/env python3
"""Parameters and forward FLOPs per sample of every torchvision classification model, from torchvision itself.

Independent truth for the layer structures in models/vision_ops.cpp (tests/models/step_ops_test.cpp): each model
is built with weights=None, its parameters counted, and one forward pass of a 1x3xHxW input counted by
torch.utils.flop_counter (multiply-add = 2 FLOPs, as in the reference runs). H = W = 224 unless given.
nn.MultiheadAttention's inference fast path (eval mode without autograd) runs one fused op that flop_counter does
not count: the ViTs' attention was missing (ViT-L/16 79.6 GFLOPs against torchvision's documented 123.1), so the
fast path is turned off before counting.

usage: python3 tools/torchvision_params_flops.py --out FILE.jsonl [--hw 224] [--only SUBSTRING]
"""
import argparse
import json
import sys

import torch


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--hw", type=int, default=224)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    import torchvision
    from torch.utils.flop_counter import FlopCounterMode
    torch.backends.mha.set_fastpath_enabled(False)  # count attention's matmuls (see the docstring)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    names = [n for n in torchvision.models.list_models(module=torchvision.models) if a.only in n]
    failed = 0
    with open(a.out, "w") as f:
        for n in names:
            try:
                m = torchvision.models.get_model(n, weights=None).to(dev).eval()
                x = torch.randn(1, 3, a.hw, a.hw, device=dev)
                with torch.no_grad(), FlopCounterMode(display=False) as fc:
                    m(x)
                rec = {"model": n, "params": sum(p.numel() for p in m.parameters()),
                       "fwd_flops_per_sample": int(fc.get_total_flops()), "image_hw": [a.hw, a.hw],
                       "torchvision": torchvision.__version__, "torch": torch.__version__}
                f.write(json.dumps(rec) + "\n")
                print(f"{n:<28} {rec['params']:>12} params {rec['fwd_flops_per_sample'] / 1e9:9.3f} GFLOP", flush=True)
            except Exception as e:  # e.g. a model that needs a larger input
                failed += 1
                print(f"{n}: FAILED {type(e).__name__}: {e}", file=sys.stderr, flush=True)
    print(f"{len(names) - failed} of {len(names)} models", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
