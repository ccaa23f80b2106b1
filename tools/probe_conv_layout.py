#!/usr/bin/env python3
"""What cuDNN runs for one convolution in PyTorch's default NCHW layout, shape by shape (torch.profiler).

Whole-step profiles (tools/profile_vision_kernels.py) show cuDNN's nchwToNhwc / nhwcToNchw layout transforms
around NCHW convolutions, but not which convolution ran which: ResNet-50 b128 spends about what the model charges
(6.65 ms measured), VGG-16 b64 far less (7.2 ms against 19 ms charged). This probe takes every distinct Conv2d
of the given torchvision models (shapes from forward hooks on one forward pass), and times each alone:
forward + backward in bf16 with cudnn.benchmark, as in the training runs, NCHW and channels-last, 5 profiled
iterations after warm-up. The model's first convolution (input without gradient) is probed that way.

Per shape, one JSON line: the convolution (N, C_in, H, W, C_out, k, stride, pad, groups, bias, first), and per
layout the GPU ms and kernel count per iteration by class: `to_nhwc` (nchwToNhwc), `to_nchw` (nhwcToNchw),
`conv` (cuDNN / CUTLASS convolution kernels), `other` (bias, casts, fills).
`--grouped-only` probes only grouped convolutions (groups > 1, not depthwise) and records, per layout, `busy`:
the GPU time during which any kernel ran (the union of the kernels' intervals), since cuDNN runs a grouped
convolution's per-group kernels concurrently (RegNet: up to 148 kernels per pass), so their sum over-counts,
while wall time around each call (tools/probe_grouped_conv.py) counts the launch gaps of small shapes.
`--fp16` times the convolutions in fp16 instead of bf16 (each record then says `"dtype": "fp16"`), and
`--nhwc-only` skips NCHW (the fp16 run needs channels-last only: it measures fp16 against bf16, not layouts).
`--tf32` and `--fp32` time them in fp32 tensors, with cuDNN's TF32 math allowed (the reference runs' `tf32`) or
not (`fp32`), and record that name as the dtype.
`--depthwise-only` probes only depthwise convolutions (groups = input channels).
Usage: python3 tools/probe_conv_layout.py [--fp16|--tf32|--fp32] [--nhwc-only] [--grouped-only|--depthwise-only]
           OUT.jsonl [model:batch ...]
"""
import json
import re
import sys

import torch
import torchvision
from torch.profiler import ProfilerActivity, profile

from torch_kernels import busy_ms, cuda_kernels

DEFAULT = ["vgg16:64", "resnet50:128", "vgg11:128", "resnet18:256", "resnet101:64", "efficientnet_b0:128",
           "mobilenet_v2:128", "convnext_tiny:64", "resnet50:32", "vgg16:16", "resnet34:128", "alexnet:256",
           "googlenet:128", "squeezenet1_0:128", "regnet_y_400mf:128", "densenet121:64"]


def classify(name):
    if "nchwToNhwc" in name:
        return "to_nhwc"
    if "nhwcToNchw" in name:
        return "to_nchw"
    if re.search(r"fprop|dgrad|wgrad|implicit|convolve|xmma|cudnn|cutlass|conv2d|nvjet|gemm", name):
        return "conv"
    return "other"


def conv_shapes(model_name, batch):
    kw = {"aux_logits": False, "init_weights": False} if model_name == "googlenet" else {}
    model = getattr(torchvision.models, model_name)(weights=None, **kw).cuda().eval()
    seen, shapes = set(), []

    def hook(mod, inp, _out):
        x = inp[0]
        key = (tuple(x.shape), mod.out_channels, mod.kernel_size, mod.stride, mod.padding, mod.groups,
               mod.bias is not None, len(shapes) == 0 and not seen)
        if key not in seen:
            seen.add(key)
            shapes.append(key)

    hs = [m.register_forward_hook(hook) for m in model.modules() if isinstance(m, torch.nn.Conv2d)]
    with torch.no_grad():
        model(torch.randn(batch, 3, 224, 224, device="cuda"))
    for h in hs:
        h.remove()
    del model
    return shapes


DTYPE = torch.bfloat16


def time_conv(key, channels_last):
    (n, c, h, w), cout, k, s, p, g, bias, first = key
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    conv = torch.nn.Conv2d(c, cout, k, s, p, groups=g, bias=bias).cuda().to(DTYPE).to(memory_format=fmt)
    x = torch.randn(n, c, h, w, device="cuda", dtype=DTYPE).to(memory_format=fmt)
    x.requires_grad_(not first)
    gy = None

    def it():
        nonlocal gy
        y = conv(x)
        if gy is None:
            gy = torch.randn_like(y)
        y.backward(gy)

    for _ in range(3):
        it()
    torch.cuda.synchronize()
    iters = 5
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            it()
        torch.cuda.synchronize()
    out = {}
    for name, kernel_ms in cuda_kernels(prof):
        cls = classify(name)
        ms, cnt = out.get(cls, (0.0, 0.0))
        out[cls] = (ms + kernel_ms / iters, cnt + 1 / iters)
    res = {k: [round(v[0], 5), round(v[1], 2)] for k, v in sorted(out.items())}
    res["busy"] = [round(busy_ms(prof) / iters, 5), 0]
    return res


def main():
    global DTYPE
    torch.backends.cudnn.benchmark = True
    args = sys.argv[1:]
    nhwc_only, grouped_only = "--nhwc-only" in args, "--grouped-only" in args
    depthwise_only = "--depthwise-only" in args
    dtype_name = next((d for d in ("fp16", "tf32", "fp32") if "--" + d in args), "bf16")
    args = [a for a in args if a not in ("--fp16", "--tf32", "--fp32", "--nhwc-only", "--grouped-only",
                                         "--depthwise-only")]
    DTYPE = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(dtype_name, torch.float32)
    torch.backends.cudnn.allow_tf32 = dtype_name != "fp32"
    torch.backends.cuda.matmul.allow_tf32 = dtype_name != "fp32"
    dst = args[0]
    specs = args[1:] or DEFAULT
    done = set()
    with open(dst, "w") as f:
        for spec in specs:
            name, b = spec.split(":")
            try:
                shapes = conv_shapes(name, int(b))
            except Exception as e:  # one model failing must not lose the others
                print(json.dumps({"model": name, "error": repr(e)[:200]}), flush=True)
                continue
            for key in shapes:
                if key in done or (grouped_only and (key[5] == 1 or key[5] == key[0][1])):
                    continue
                if depthwise_only and not (key[5] > 1 and key[5] == key[0][1]):
                    continue
                done.add(key)
                (n, c, h, w), cout, k, s, p, g, bias, first = key
                rec = {"model": name, "batch": n, "c_in": c, "h": h, "w": w, "c_out": cout, "k": list(k),
                       "stride": list(s), "pad": list(p), "groups": g, "bias": bias, "first": first,
                       "dtype": dtype_name}
                try:
                    if not nhwc_only:
                        rec["nchw"] = time_conv(key, False)
                    rec["nhwc"] = time_conv(key, True)
                except Exception as e:
                    rec["error"] = repr(e)[:200]
                f.write(json.dumps(rec) + "\n")
                f.flush()
                torch.cuda.empty_cache()
            print(f"{name} b{b}: {len(shapes)} convolutions", flush=True)
        f.write(json.dumps({"torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                            "device": torch.cuda.get_device_name()}) + "\n")


if __name__ == "__main__":
    main()
