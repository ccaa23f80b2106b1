#!/usr/bin/env python3
"""Where the GPU time of a torchvision training step goes, by kernel class (torch.profiler).

Same step as tools/measure_holdout.py's vision runs: channels_last, bf16 autocast, SGD with momentum,
cudnn.benchmark, synthetic inputs on the GPU. For each model: the step's wall time (10 steps between two
synchronisations), then 5 profiled steps whose CUDA kernels are summed by class (conv, depthwise conv, GEMM,
attention, norms, elementwise, layout copies, optimizer, ...). Writes one JSON line per model.

Used to see which operator classes the compute model misses (docs/calibration.md, "Vision models").
`aten_ops` lists, per aten operator and input shapes, the calls and self GPU ms per step (the 120 largest);
`aten_by_name` the same per operator name over all shapes, for every operator that ran kernels itself.
`:fp16` profiles the step in fp16 autocast with a GradScaler (PyTorch's AMP recipe) instead of bf16; `:tf32` and
`:fp32` in fp32 tensors with TF32 matmuls and convolutions allowed or not (the reference runs' precisions).
The step is tools/measure_holdout.py's (`vision_step`).
Usage: python3 tools/profile_vision_kernels.py OUT.jsonl [model:batch[:nchw][:fp16|:tf32|:fp32] ...]
"""
import json
import re
import sys
import time

import torch
import torchvision
from torch.profiler import ProfilerActivity, profile

import measure_holdout as mh
from torch_kernels import cuda_kernels

CLASSES = [
    ("dwconv", r"depthwise|dwconv|DepthwiseConv|conv_depthwise"),
    ("attention", r"fmha|flash|attention|efficient_attention"),
    ("conv", r"fprop|dgrad|wgrad|implicit|convolve|conv|xmma_.*(nhwc|ndhwc)|cudnn"),
    ("gemm", r"gemm|nvjet|cutlass|cublas|Kernel2|splitK"),
    ("layernorm", r"layer_norm|LayerNorm"),
    ("batchnorm", r"batch_norm|batchnorm|bn_|welford|BatchNorm"),
    ("optimizer", r"multi_tensor|fused_adam|sgd|Adam"),
    ("layout", r"nchwToNhwc|nhwcToNchw|transpose|permute|copy_|Copy|CatArrayBatched|cat_"),
    ("softmax_loss", r"softmax|cross_entropy|nll_loss|log_softmax"),
    ("pool", r"pool|Pool"),
    ("reduce", r"reduce|Reduce|sum_|mean"),
    ("elementwise", r"elementwise|vectorized|unrolled|Elementwise|gelu|silu|hardswish|relu|sigmoid|fill|mul|add"),
]


def classify(name):
    for cls, pat in CLASSES:
        if re.search(pat, name):
            return cls
    return "other"


def run(model_name, batch, precision="bf16", channels_last=True):
    torch.backends.cudnn.benchmark = True
    mh.set_precision_flags(precision)
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    model = getattr(torchvision.models, model_name)(weights=None).cuda().to(memory_format=fmt).train()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    x = torch.randn(batch, 3, 224, 224, device="cuda").to(memory_format=fmt)
    y = torch.randint(0, 1000, (batch,), device="cuda")
    step = mh.vision_step(model, opt, x, y, precision)  # the held-out runs' step

    for _ in range(5):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    iters = 10
    for _ in range(iters):
        step()
    torch.cuda.synchronize()
    step_ms = (time.perf_counter() - t0) * 1000 / iters

    nprof = 5
    with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(nprof):
            step()
        torch.cuda.synchronize()
    by_class, kernels, top = {}, 0, {}
    for name, ms in cuda_kernels(prof):
        c = classify(name)
        by_class[c] = by_class.get(c, 0.0) + ms / nprof
        kernels += 1
        top[name] = top.get(name, 0.0) + ms / nprof
    # Per aten operator and input shapes: GPU time of the kernels it launched itself (not its children),
    # so that each of the model's operators can be set against what PyTorch really ran.
    aten = []
    for e in prof.key_averages(group_by_input_shape=True):
        self_dev = getattr(e, "self_device_time_total", None)
        if self_dev is None:
            self_dev = e.self_cuda_time_total
        if self_dev <= 0:
            continue
        if not e.key.startswith("aten::"):
            continue
        aten.append([e.key, str(e.input_shapes)[:200], round(e.count / nprof, 2), round(self_dev / 1000 / nprof, 4)])
    aten.sort(key=lambda r: -r[3])
    # Every aten operator that ran kernels itself, by name over all shapes: calls per step and self GPU ms.
    by_name = {}
    for e in prof.key_averages():
        self_dev = getattr(e, "self_device_time_total", None)
        if self_dev is None:
            self_dev = e.self_cuda_time_total
        if e.key.startswith("aten::") and self_dev > 0:
            by_name[e.key] = [round(e.count / nprof, 2), round(self_dev / 1000 / nprof, 4)]
    gpu_ms = sum(by_class.values())
    top_list = sorted(top.items(), key=lambda kv: -kv[1])[:15]
    return {"model": model_name, "batch": batch, "precision": precision, "channels_last": channels_last,
            "step_ms": round(step_ms, 3),
            "gpu_kernel_ms": round(gpu_ms, 3), "kernels_per_step": kernels / nprof,
            "by_class_ms": {k: round(v, 3) for k, v in sorted(by_class.items(), key=lambda kv: -kv[1])},
            "top_kernels_ms": [[n[:160], round(v, 3)] for n, v in top_list],
            "aten_ops": aten[:120], "aten_by_name": dict(sorted(by_name.items(), key=lambda kv: -kv[1][1])),
            "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
            "device": torch.cuda.get_device_name()}


def main():
    out = sys.argv[1]
    specs = sys.argv[2:] or ["convnext_tiny:128", "vit_b_16:128", "vit_b_32:128", "efficientnet_b0:128",
                             "mobilenet_v3_large:256", "resnet50:256", "resnet50:128", "resnet152:64",
                             "densenet121:128", "resnet34:128", "resnet18:256"]
    with open(out, "w") as f:
        for s in specs:
            name, b, *opts = s.split(":")  # model:batch, :nchw for PyTorch's default format, :fp16|tf32|fp32
            prec = next((p for p in ("fp16", "tf32", "fp32") if p in opts), "bf16")
            try:
                rec = run(name, int(b), precision=prec, channels_last="nchw" not in opts)
            except Exception as e:  # one failing model must not lose the others
                rec = {"model": name, "batch": int(b), "error": repr(e)[:300]}
            print(json.dumps({k: rec.get(k) for k in ("model", "batch", "step_ms", "gpu_kernel_ms", "by_class_ms")}),
                  flush=True)
            f.write(json.dumps(rec) + "\n")
            f.flush()
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
