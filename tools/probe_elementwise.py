#!/usr/bin/env python3
"""PyTorch's memory-bound elementwise kernels alone, by the path TensorIterator picks for them.

The compute model times a memory-bound operator as bytes / (copy bandwidth x e_mem), one e_mem for all of them,
fitted on whole steps. Kernel profiles of ConvNeXt, Swin and EfficientNet steps spend more time in elementwise
kernels than that predicts, and not every elementwise kernel is the same: PyTorch runs a contiguous op whose
operands share a dtype in `vectorized_elementwise_kernel`, one that must cast an operand in
`unrolled_elementwise_kernel`, and one with a broadcast or strided operand in the generic `elementwise_kernel`
(an index computation per element). This probe times each kind alone, on tensors the size of real feature maps
(2^20 to 2^28 elements), with CUDA events (mean of 20 back-to-back calls after warm-up), and names the kernel
each ran (torch.profiler, one call).

Cases (x, y: [N, C, H, W] maps in channels-last memory; s: [N, 1, 1, 1]; g: [C, 1, 1] fp32, as ConvNeXt's
layer scale):
  copy_bf16        y.copy_(x), bf16                         bytes 2+2 per element
  add_bf16         x + y, bf16                              2+2+2
  relu_bf16        relu_(x), bf16                           2+2
  gelu_bf16        gelu(x), bf16                            2+2
  gelu_bwd_bf16    gelu_backward(dy, x), bf16               2+2+2
  add_fp32         x + y, fp32                              4+4+4
  cast_to_fp32     x.float(), bf16 -> fp32                  2+4
  cast_to_bf16     x.bfloat16(), fp32 -> bf16               4+2
  add_mixed        x(fp32) + y(bf16) -> fp32                4+2+4
  mul_batch_bf16   x * s, bf16 (stochastic depth)           2+2 (s negligible)
  mul_channel_mix  g * x(bf16) -> fp32 (layer scale)        2+4
  add_channel_bf16 x.add_(b[1, C, 1, 1]), bf16 (conv bias) 2+2
  silu_bf16        silu(x), bf16 (EfficientNet)              2+2
  silu_bwd_bf16    silu_backward(dy, x), bf16                2+2+2
  hardswish_bf16   hardswish(x), bf16 (MobileNetV3)          2+2
  hardswish_bwd    hardswish_backward(dy, x), bf16           2+2+2
  relu_bwd_bf16    threshold_backward(dy, y, 0), bf16        2+2+2

Writes one JSON line per case and size: case, elements, bytes, ms, GBps, kernel; then one line with the
device's torch.cuda copy bandwidth measured the same way (copy of 2^28 bf16 elements) for reference.
Usage: python3 tools/probe_elementwise.py OUT.jsonl
"""
import json
import sys

import torch
import torch.nn.functional as F

from torch_kernels import cuda_ms, first_kernel_name

C = 96  # channels of the maps (ConvNeXt-T's and Swin-T's first stage)


def maps(elements, dtype):
    n = max(1, elements // (C * 56 * 56))
    hw = int(round((elements / (n * C)) ** 0.5))
    return torch.randn(n, C, hw, hw, device="cuda", dtype=dtype).to(memory_format=torch.channels_last)


def cases(elements):
    bf, f32 = torch.bfloat16, torch.float32
    x = maps(elements, bf)
    y = torch.randn_like(x)
    n = x.shape[0]
    xf = x.float()
    s = torch.rand(n, 1, 1, 1, device="cuda", dtype=bf)
    g = torch.rand(C, 1, 1, device="cuda", dtype=f32)
    b = torch.rand(1, C, 1, 1, device="cuda", dtype=bf)
    e = x.numel()
    return e, [
        ("copy_bf16", lambda: y.copy_(x), 4 * e),
        ("add_bf16", lambda: x + y, 6 * e),
        ("relu_bf16", lambda: torch.relu_(y), 4 * e),
        ("gelu_bf16", lambda: F.gelu(x), 4 * e),
        ("gelu_bwd_bf16", lambda: torch.ops.aten.gelu_backward(y, x), 6 * e),
        ("add_fp32", lambda: xf + xf, 12 * e),
        ("cast_to_fp32", lambda: x.float(), 6 * e),
        ("cast_to_bf16", lambda: xf.bfloat16(), 6 * e),
        ("add_mixed", lambda: xf + y, 10 * e),
        ("mul_batch_bf16", lambda: x * s, 4 * e),
        ("mul_channel_mix", lambda: g * x, 6 * e),
        ("add_channel_bf16", lambda: y.add_(b), 4 * e),
        ("silu_bf16", lambda: F.silu(x), 4 * e),
        ("silu_bwd_bf16", lambda: torch.ops.aten.silu_backward(y, x), 6 * e),
        ("hardswish_bf16", lambda: F.hardswish(x), 4 * e),
        ("hardswish_bwd", lambda: torch.ops.aten.hardswish_backward(y, x), 6 * e),
        ("relu_bwd_bf16", lambda: torch.ops.aten.threshold_backward(y, x, 0), 6 * e),
    ]


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    with open(sys.argv[1], "w") as f:
        for p in range(20, 29):
            e, cs = cases(1 << p)
            for name, fn, nbytes in cs:
                ms = cuda_ms(fn, 20)
                f.write(json.dumps({"case": name, "elements": e, "bytes": nbytes, "ms": round(ms, 6),
                                    "GBps": round(nbytes / ms / 1e6, 1),
                                    "kernel": first_kernel_name(fn) if p == 24 else ""}) + "\n")
            f.flush()
            torch.cuda.empty_cache()
        f.write(json.dumps({"torch": torch.__version__, "device": torch.cuda.get_device_name()}) + "\n")


if __name__ == "__main__":
    main()
