#!/usr/bin/env python3
"""Grouped convolutions (ResNeXt, RegNet) timed alone, pass by pass, over a grid of shapes.

tools/probe_conv_layout.py showed cuDNN running the grouped 3x3 convolutions of ResNeXt and RegNet at 7-150
TFLOP/s (calibrate/probes/results/conv-grouped-2026-12-03.jsonl), 2-30x slower than the same FLOPs on the GEMM
surface, but only as the sum of the three passes. This probe separates them, with CUDA events around 20
iterations of each of
    (a) forward only                         -> forward
    (b) forward + backward, input needs grad -> (b) - (c) = input gradient (dgrad)
    (c) forward + backward, input needs none -> (c) - (a) = weight gradient (wgrad)
on bf16 weights and channels-last inputs with cudnn.benchmark (as in the training runs; no autocast, so no cast
kernels), batch 64, 3x3, padding 1, stride 1 and 2, over feature maps and channel counts of those networks and
group widths 4-128 (groups = channels / width; width = channels is an ordinary convolution, for comparison).

With model:batch arguments it times instead every grouped (not depthwise) Conv2d of those torchvision networks
(shapes from forward hooks), the same way: wall time, where torch.profiler's kernel sums over-count the grouped
convolutions whose kernels cuDNN runs concurrently (RegNetY-8GF b128: 111 ms of kernels in an 84 ms step).

Writes one JSON line per shape: n, c (in = out), h, w, groups, stride, fwd_ms, dgrad_ms, wgrad_ms (and model).
Usage: python3 tools/probe_grouped_conv.py OUT.jsonl [model:batch ...]
"""
import json
import sys

import torch
import torchvision

from torch_kernels import cuda_ms

MAPS = [(56, 128), (56, 256), (28, 256), (28, 512), (14, 512), (14, 1024), (7, 1024), (7, 2048)]
WIDTHS = [4, 8, 16, 32, 64, 128]
N = 64
ITERS = 20


def network_shapes(name, batch):
    """(c, h, groups, stride) of every distinct grouped, non-depthwise 3x3 Conv2d with c_in = c_out."""
    model = getattr(torchvision.models, name)(weights=None).cuda().eval()
    seen = []

    def hook(mod, inp, _out):
        x = inp[0]
        g = mod.groups
        if 1 < g < mod.in_channels and mod.in_channels == mod.out_channels and mod.kernel_size == (3, 3):
            key = (mod.in_channels, x.shape[2], g, mod.stride[0])
            if key not in seen:
                seen.append(key)

    hs = [m.register_forward_hook(hook) for m in model.modules() if isinstance(m, torch.nn.Conv2d)]
    with torch.no_grad():
        model(torch.randn(2, 3, 224, 224, device="cuda"))
    for h in hs:
        h.remove()
    return seen


def probe(c, h, groups, stride, n=N):
    conv = torch.nn.Conv2d(c, c, 3, stride, 1, groups=groups, bias=False).cuda().to(torch.bfloat16)
    conv = conv.to(memory_format=torch.channels_last)
    x = torch.randn(n, c, h, h, device="cuda", dtype=torch.bfloat16).to(memory_format=torch.channels_last)
    gy = torch.randn_like(conv(x))
    xg = x.detach().clone().requires_grad_(True)

    def fwd():
        conv(x)

    def both():
        conv(xg).backward(gy)

    def wgrad_only():
        conv(x).backward(gy)

    a, b, w = cuda_ms(fwd, ITERS), cuda_ms(both, ITERS), cuda_ms(wgrad_only, ITERS)
    return {"n": n, "c": c, "h": h, "w": h, "groups": groups, "stride": stride, "fwd_ms": round(a, 5),
            "dgrad_ms": round(max(b - w, 0.0), 5), "wgrad_ms": round(max(w - a, 0.0), 5)}


def jobs(specs):
    """(extra fields, c, h, groups, stride, n) to time: the networks' shapes when given, else the grid."""
    if specs:
        for spec in specs:
            name, b = spec.split(":")
            for c, h, g, stride in network_shapes(name, int(b)):
                yield {"model": name}, c, h, g, stride, int(b)
        return
    for h, c in MAPS:
        for width in WIDTHS + [c]:
            if width <= c and c % width == 0:
                for stride in (1, 2):
                    yield {}, c, h, c // width, stride, N


def main():
    torch.backends.cudnn.benchmark = True
    with open(sys.argv[1], "w") as f:
        for extra, c, h, g, stride, n in jobs(sys.argv[2:]):
            try:
                rec = dict(probe(c, h, g, stride, n), **extra)
            except Exception as e:  # one shape failing must not lose the others
                rec = dict(extra, c=c, h=h, groups=g, stride=stride, error=repr(e)[:200])
            f.write(json.dumps(rec) + "\n")
            f.flush()
            torch.cuda.empty_cache()
        f.write(json.dumps({"torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                            "device": torch.cuda.get_device_name()}) + "\n")


if __name__ == "__main__":
    main()
