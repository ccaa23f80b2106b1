#!/usr/bin/env python3
"""torch.roll alone on the feature maps of Swin's shifted-window blocks (forward, and the backward roll).

Swin's kernel profile (calibrate/probes/results/holdout8-kernels-2026-12-03.jsonl: Swin-T b128) spends 3.35 ms in
roll_cuda_kernel where moving the rolled bytes at the copy bandwidth would take 0.6 ms: the kernel computes a
source index per element and is not vectorised. This probe times torch.roll(x, (-s, -s), dims=(1, 2)) on
[N, H, W, C] maps of the Swin stages (N 64 and 128; C 96-1024) in fp32 and bf16 with CUDA events (20 iterations
after warm-up); a backward roll is the same kernel with the opposite shift.

Writes one JSON line per shape: n, h, w, c, dtype, bytes (read + write), ms.
Usage: python3 tools/probe_roll.py OUT.jsonl
"""
import json
import sys

import torch

from torch_kernels import cuda_ms

STAGES = [(56, 96), (28, 192), (14, 384), (7, 768), (56, 128), (28, 256), (14, 512), (7, 1024)]


def main():
    with open(sys.argv[1], "w") as f:
        for n in (64, 128):
            for hw, c in STAGES:
                for dtype in (torch.float32, torch.bfloat16):
                    x = torch.randn(n, hw, hw, c, device="cuda", dtype=dtype)
                    shift = 3 if hw > 7 else 0
                    ms = cuda_ms(lambda: torch.roll(x, shifts=(-shift, -shift), dims=(1, 2)), 20)
                    f.write(json.dumps({"n": n, "h": hw, "w": hw, "c": c, "dtype": str(dtype).split(".")[1],
                                        "shift": shift, "bytes": 2 * x.numel() * x.element_size(),
                                        "ms": round(ms, 5)}) + "\n")
                    del x
        f.write(json.dumps({"torch": torch.__version__, "device": torch.cuda.get_device_name()}) + "\n")


if __name__ == "__main__":
    main()
