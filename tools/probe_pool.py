#!/usr/bin/env python3
"""Max-pool and average-pool kernels alone, forward and backward, NCHW and channels-last (torch.profiler).

Whole-step profiles show max-pool backward far slower than its bytes (VGG-16 b64 NCHW: 1.93 ms for a
64 x 64 x 224 x 224 input). This probe times nn.MaxPool2d / nn.AvgPool2d alone over the pool shapes of
torchvision's networks and a grid around them: bf16, 5 profiled iterations after warm-up; per shape and layout the
GPU ms per iteration of the forward kernels and of the backward kernels (the gradient's zero fill included).

One JSON line per (pool, shape, layout): kind (max / avg), N, C, H, W, kernel, stride, padding, ceil_mode,
channels_last, fwd_ms, bwd_ms, fwd_kernels, bwd_kernels.
Usage: python3 tools/probe_pool.py OUT.jsonl
"""
import json
import sys

import torch
from torch.profiler import ProfilerActivity, profile

from torch_kernels import cuda_kernels

# (N, C, H, k, stride, pad, ceil): VGG's 2x2 pools, ResNet's 3x3/2 stem pool, AlexNet's and SqueezeNet's 3x3/2
# (ceil mode), GoogLeNet's, and batch / channel variations.
SHAPES = [
    (64, 64, 224, 2, 2, 0, False), (64, 128, 112, 2, 2, 0, False), (64, 256, 56, 2, 2, 0, False),
    (64, 512, 28, 2, 2, 0, False), (64, 512, 14, 2, 2, 0, False), (128, 64, 224, 2, 2, 0, False),
    (16, 64, 224, 2, 2, 0, False), (32, 512, 28, 2, 2, 0, False),
    (128, 64, 112, 3, 2, 1, False), (32, 64, 112, 3, 2, 1, False), (256, 64, 112, 3, 2, 1, False),
    (256, 64, 55, 3, 2, 0, False), (256, 192, 27, 3, 2, 0, False), (256, 256, 13, 3, 2, 0, False),
    (128, 96, 111, 3, 2, 0, True), (128, 64, 111, 3, 2, 0, True), (128, 128, 55, 3, 2, 0, True),
    (128, 256, 27, 3, 2, 0, True), (128, 192, 56, 3, 2, 0, True), (128, 480, 28, 3, 2, 0, True),
    (128, 192, 28, 3, 1, 1, True), (128, 832, 14, 3, 1, 1, True),
]


def time_pool(kind, shape, channels_last):
    n, c, h, k, s, p, ceil = shape
    if kind == "max":
        pool = torch.nn.MaxPool2d(k, s, p, ceil_mode=ceil)
    else:
        pool = torch.nn.AvgPool2d(k, s, p, ceil_mode=ceil)
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    x = torch.randn(n, c, h, h, device="cuda", dtype=torch.bfloat16).to(memory_format=fmt).requires_grad_(True)
    y = pool(x)
    g = torch.randn_like(y)
    for _ in range(3):
        x.grad = None
        pool(x).backward(g)
    torch.cuda.synchronize()
    iters = 5
    res = {"fwd": [0.0, 0], "bwd": [0.0, 0]}
    for phase in ("fwd", "bwd"):
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(iters):
                if phase == "fwd":
                    with torch.no_grad():
                        pool(x)
                else:
                    x.grad = None
                    y = pool(x)
                    torch.cuda.synchronize()
                    y.backward(g)
            torch.cuda.synchronize()
        for _, ms in cuda_kernels(prof):
            res[phase][0] += ms / iters
            res[phase][1] += 1 / iters
    res["bwd"][0] -= res["fwd"][0]  # the backward profile also ran the forward: take it out
    res["bwd"][1] -= res["fwd"][1]
    return {"kind": kind, "N": n, "C": c, "H": h, "W": h, "kernel": k, "stride": s, "padding": p, "ceil_mode": ceil,
            "channels_last": channels_last, "out_hw": list(y.shape[2:]),
            "fwd_ms": round(res["fwd"][0], 5), "bwd_ms": round(res["bwd"][0], 5),
            "fwd_kernels": round(res["fwd"][1], 2), "bwd_kernels": round(res["bwd"][1], 2)}


def main():
    with open(sys.argv[1], "w") as f:
        for kind in ("max", "avg"):
            for shape in SHAPES:
                for cl in (False, True):
                    try:
                        rec = time_pool(kind, shape, cl)
                    except Exception as e:
                        rec = {"kind": kind, "shape": list(shape), "channels_last": cl, "error": repr(e)[:200]}
                    f.write(json.dumps(rec) + "\n")
                    f.flush()
        f.write(json.dumps({"torch": torch.__version__, "device": torch.cuda.get_device_name()}) + "\n")
    print("done", flush=True)


if __name__ == "__main__":
    main()
