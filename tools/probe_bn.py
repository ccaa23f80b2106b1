#!/usr/bin/env python3
"""nn.BatchNorm2d alone on channels-last bf16 maps, forward and backward (torch.profiler kernel time).

The compute model timed every channels-last BatchNorm at one pooled element rate fitted on whole-step profiles,
with 3 element passes forward and 5 backward. Per-shape profiles (calibrate/probes/results/cnn-aten-2026-12-02.jsonl,
ResNet-50 b128) show forward and backward at about the same rate (165-300 G map elements/s), and MobileNet's and
MNASNet's many-channel, small-map BatchNorms slower. PyTorch runs its own channels-last kernels
(batch_norm_collect_statistics_channels_last, batch_norm_transform_input_channels_last forward;
batch_norm_backward_reduce_channels_last and batch_norm_backward_elemt_channels_last backward): a per-channel
reduction over N x H x W rows, then an elementwise pass. This probe times training-mode BatchNorm2d (fp32
parameters, bf16 input in channels-last, as under autocast) over a grid of N, C and H = W: the GPU kernel time of
the forward and of the backward, each summed over its kernels, per call (5 profiled iterations after warm-up).

`--dtype fp16` or `--dtype fp32` probes the same grid with fp16 or fp32 input: PyTorch hands those to cuDNN's
BatchNorm (at::_batch_norm_impl_index excludes only bf16 from cuDNN), a different kernel from the bf16 one.

One JSON line per shape: N, C, H, W, fwd_ms, bwd_ms, fwd_kernels, bwd_kernels (and dtype when not bf16).
Usage: python3 tools/probe_bn.py [--dtype bf16|fp16|fp32] OUT.jsonl
"""
import argparse
import json

import torch

from torch_kernels import forward_backward_ms

CHANNELS = [16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 2048]
SIDES = [7, 14, 28, 56, 112]


DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def time_bn(n, c, h, dtype="bf16"):
    bn = torch.nn.BatchNorm2d(c).cuda().train()
    x = torch.randn(n, c, h, h, device="cuda", dtype=DTYPES[dtype]).to(memory_format=torch.channels_last)
    x.requires_grad_(True)
    (f_ms, f_k), (b_ms, b_k) = forward_backward_ms(bn, x)
    rec = {"N": n, "C": c, "H": h, "W": h, "fwd_ms": f_ms, "bwd_ms": b_ms, "fwd_kernels": f_k, "bwd_kernels": b_k}
    if dtype != "bf16":
        rec["dtype"] = dtype
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dtype", choices=sorted(DTYPES), default="bf16")
    ap.add_argument("out")
    a = ap.parse_args()
    with open(a.out, "w") as f:
        for n in (32, 128, 256):
            for c in CHANNELS:
                for h in SIDES:
                    if n * c * h * h > 4e8:  # keep each map under 0.8 GB
                        continue
                    f.write(json.dumps(time_bn(n, c, h, a.dtype)) + "\n")
                    torch.cuda.empty_cache()
            f.flush()
        f.write(json.dumps({"torch": torch.__version__, "device": torch.cuda.get_device_name()}) + "\n")
    print("done", flush=True)


if __name__ == "__main__":
    main()
