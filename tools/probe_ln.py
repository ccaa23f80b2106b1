#!/usr/bin/env python3
"""nn.LayerNorm alone over the last dimension of fp32 rows, forward and backward (torch.profiler kernel time).

Under autocast PyTorch runs layer_norm in fp32 (its input cast up first when it is 16-bit): GPT's and ViT's fp32
residual stream, ConvNeXt's and Swin's channels-last maps. The compute model timed it by bytes plus a fitted cost
per row (norm_row_cost, from whole-step profiles of ConvNeXt and ViT), and Swin-T's LayerNorms, over rows of 96
to 768 channels, ran 17% slower than that in its profile. This probe times training-mode nn.LayerNorm(C) (fp32
weights and input) over a grid of rows (N x tokens, 4,096 to 4,194,304) and C (96 to 4,096): the forward kernel
(vectorized_layer_norm_kernel) and the backward ones (layer_norm_grad_input, GammaBetaBackward), each summed per
call (5 profiled iterations after warm-up).

One JSON line per shape: rows, C, fwd_ms, bwd_ms, fwd_kernels, bwd_kernels.
Usage: python3 tools/probe_ln.py OUT.jsonl
"""
import json
import sys

import torch

from torch_kernels import forward_backward_ms

CHANNELS = [96, 128, 192, 256, 384, 512, 768, 1024, 1280, 1536, 2048, 2560, 4096]
ROWS = [4096, 16384, 65536, 262144, 1048576, 4194304]


def time_ln(rows, c):
    ln = torch.nn.LayerNorm(c).cuda().train()
    x = torch.randn(rows, c, device="cuda", requires_grad=True)
    (f_ms, f_k), (b_ms, b_k) = forward_backward_ms(ln, x)
    return {"rows": rows, "C": c, "fwd_ms": f_ms, "bwd_ms": b_ms, "fwd_kernels": f_k, "bwd_kernels": b_k}


def main():
    with open(sys.argv[1], "w") as f:
        for rows in ROWS:
            for c in CHANNELS:
                if rows * c > 1 << 28:  # keep each tensor under 1 GB
                    continue
                f.write(json.dumps(time_ln(rows, c)) + "\n")
                torch.cuda.empty_cache()
            f.flush()
        f.write(json.dumps({"torch": torch.__version__, "device": torch.cuda.get_device_name()}) + "\n")
    print("done", flush=True)


if __name__ == "__main__":
    main()
