#!/usr/bin/env python3
"""Channel concatenation, channel shuffle and channel split on channels-last bf16 maps, timed alone
(torch.profiler kernel time).

The compute model charged these copies at the copy bandwidth (cat) or the MHA transpose efficiency (shuffle). A
profile of ShuffleNetV2 x2.0 b256 (calibrate/probes/results/holdout9-kernels-2026-12-03.jsonl) shows them far
slower: torch.cat along the channels of channels-last maps runs CatArrayBatchedCopy, which writes each input's
C_i channels of every pixel as a separate short run (3.3 ms for ~3.2 GB), and the channel shuffle's
view / transpose(1, 2) / contiguous runs the generic strided copy (elementwise_kernel<128, 4> direct_copy: 6.8 ms).
This probe times, over N, H = W and channel counts of ShuffleNetV2, DenseNet and GoogLeNet:

  cat      torch.cat(parts, dim=1) of channels-last parts (channel counts in `parts`)
  shuffle  x.view(N, 2, C/2, H, W).transpose(1, 2).contiguous() of a channels-last map (ShuffleNetV2's
           channel_shuffle with 2 groups; its backward is the same copy)
  split    x.chunk(2, dim=1)[1].contiguous() (the half a ShuffleNet unit convolves)

One JSON line per case: op, N, H, W, parts (cat) or C, bytes (read + written), ms, kernels.
Usage: python3 tools/probe_cat.py OUT.jsonl
"""
import json
import sys

import torch

from torch_kernels import profiled_ms

CL = torch.channels_last


def timed(fn):
    """(GPU ms, kernels) per call of fn() after three warm-up calls."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    return profiled_ms(fn)


def rand(n, c, h):
    return torch.randn(n, c, h, h, device="cuda", dtype=torch.bfloat16).to(memory_format=CL)


def case_cat(n, h, parts):
    xs = [rand(n, c, h) for c in parts]
    ms, k = timed(lambda: torch.cat(xs, dim=1))
    elems = n * h * h * sum(parts)
    return {"op": "cat", "N": n, "H": h, "W": h, "parts": parts, "bytes": 4 * elems, "ms": ms, "kernels": k}


def case_shuffle(n, h, c):
    x = rand(n, c, h)
    ms, k = timed(lambda: x.view(n, 2, c // 2, h, h).transpose(1, 2).contiguous())
    return {"op": "shuffle", "N": n, "H": h, "W": h, "C": c, "bytes": 4 * n * c * h * h, "ms": ms, "kernels": k}


def case_split(n, h, c):
    x = rand(n, c, h)
    ms, k = timed(lambda: x.chunk(2, dim=1)[1].contiguous())
    return {"op": "split", "N": n, "H": h, "W": h, "C": c, "bytes": 4 * n * (c // 2) * h * h, "ms": ms,
            "kernels": k}


def cases():
    # ShuffleNetV2 stages (x0.5 .. x2.0: branch widths 24-488) at their map sizes, two batches.
    for n in (64, 256):
        for h, halves in ((28, (24, 58, 88, 122)), (14, (48, 116, 176, 244)), (7, (96, 232, 352, 488))):
            for half in halves:
                yield case_cat, (n, h, [half, half])
                yield case_shuffle, (n, h, 2 * half)
                yield case_split, (n, h, 2 * half)
    # DenseNet: the running feature map and one layer's 32 new channels; GoogLeNet / Inception: four branches.
    for n in (64, 128):
        for h, cs in ((56, (64, 128, 224)), (28, (128, 256, 480)), (14, (256, 512, 992)), (7, (512, 1024))):
            for c in cs:
                yield case_cat, (n, h, [c, 32])
        for h, parts in ((28, [64, 128, 32, 32]), (28, [128, 192, 96, 64]), (14, [192, 208, 48, 64]),
                         (14, [256, 320, 128, 128]), (7, [384, 384, 128, 128])):
            yield case_cat, (n, h, parts)


def main():
    with open(sys.argv[1], "w") as f:
        for fn, args in cases():
            f.write(json.dumps(fn(*args)) + "\n")
            torch.cuda.empty_cache()
        f.write(json.dumps({"torch": torch.__version__, "device": torch.cuda.get_device_name()}) + "\n")
    print("done", flush=True)


if __name__ == "__main__":
    main()
