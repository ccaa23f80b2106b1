#!/usr/bin/env python3
"""Per-channel sums over batch and pixels, alone (torch.profiler): the kernel behind a convolution's bias gradient.

aten::convolution_backward sums the output gradient over N, H and W for the bias, and ConvNeXt's layer scale does
the same for gamma. Whole-step profiles show these sums far below the copy bandwidth (150-620 G elements/s). This
probe times `g.sum(dim=(0, 2, 3))` over a grid of N, C and H = W, bf16, NCHW and channels-last, 5 profiled
iterations after warm-up; GPU ms per call of every kernel it runs.

One JSON line per shape and layout: N, C, H, W, channels_last, ms, kernels.
Usage: python3 tools/probe_channel_sum.py OUT.jsonl
"""
import json
import sys

import torch
from torch.profiler import ProfilerActivity, profile

from torch_kernels import cuda_kernels

CHANNELS = [3, 16, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 2048]
SIDES = [7, 14, 28, 56, 112, 224]


def time_sum(n, c, h, channels_last):
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    g = torch.randn(n, c, h, h, device="cuda", dtype=torch.bfloat16).to(memory_format=fmt)
    for _ in range(3):
        g.sum(dim=(0, 2, 3))
    torch.cuda.synchronize()
    iters = 5
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            g.sum(dim=(0, 2, 3))
        torch.cuda.synchronize()
    ms = kernels = 0.0
    for _, k_ms in cuda_kernels(prof):
        ms += k_ms / iters
        kernels += 1 / iters
    return {"N": n, "C": c, "H": h, "W": h, "channels_last": channels_last, "ms": round(ms, 5),
            "kernels": round(kernels, 2)}


def main():
    with open(sys.argv[1], "w") as f:
        for n in (32, 128):
            for c in CHANNELS:
                for h in SIDES:
                    if n * c * h * h > 8e8:  # keep each tensor under 1.6 GB
                        continue
                    for cl in (False, True):
                        f.write(json.dumps(time_sum(n, c, h, cl)) + "\n")
                    torch.cuda.empty_cache()
        f.write(json.dumps({"torch": torch.__version__, "device": torch.cuda.get_device_name()}) + "\n")
    print("done", flush=True)


if __name__ == "__main__":
    main()
