#!/usr/bin/env python3
"""The CPU side of an eager training step, per model: how much host time PyTorch spends issuing it.

At batch 2 (vision) or batch 1 x 128 tokens (GPT) a step's GPU work is a small fraction of its CPU work, so the
step time is the time the host takes to run the Python forward, the autograd engine's backward and the
optimizer. The same step as tools/measure_holdout.py (channels_last, bf16 autocast, SGD with momentum,
cudnn.benchmark for vision; the GPT of the reference runs with fused AdamW or SGD with momentum).

For each configuration, besides the step-time fields of the reference runs, one extra step is counted:
  aten_ops_per_step   aten operator calls (TorchDispatchMode, forward, backward and optimizer)
  module_calls        nn.Module forward calls (a global forward hook)
  kernels_per_step    CUDA kernels launched (torch.profiler, one step)
  gpu_kernel_ms       their summed GPU time, to show the step is CPU-bound
Configurations named `anchor/...` repeat launch-bound reference configurations on this host, so that this host's
CPU speed can be compared with the reference host's (calibrate fit --host-cpu-scale fits that factor).

Writes JSON lines in the reference format (`kind: train`, `data: synthetic-on-gpu`); nothing here is tuned on.
usage: python3 tools/measure_cpu_overhead.py OUT.jsonl [--only SUBSTRING]
"""
import argparse
import gc
import os
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile
from torch.utils._python_dispatch import TorchDispatchMode

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure_holdout as mh  # noqa: E402  (same harness: GPT model, optimizers, timing, common fields)

VISION = ["resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "wide_resnet50_2", "resnext50_32x4d",
          "densenet121", "densenet169", "mobilenet_v2", "mobilenet_v3_large", "efficientnet_b0", "efficientnet_b3",
          "convnext_tiny", "convnext_small", "regnet_y_400mf", "regnet_y_1_6gf", "regnet_x_1_6gf", "vit_b_16",
          "vit_b_32", "vit_l_16", "vgg11", "swin_t", "swin_s", "swin_v2_t"]


def configs():
    out = []
    for m in VISION:
        c = mh.vision(m, 2, iters=20)
        c["id"] = f"cpu/{m}-b2-bf16"
        out.append(c)
    for size, layers, d, heads in [("tiny", 4, 256, 4), ("d384-l6", 6, 384, 6), ("gpt-124m", 12, 768, 12),
                                   ("gpt-350m", 24, 1024, 16), ("gpt-760m", 24, 1536, 16)]:
        for opt in ("adamw-fused", "sgd-momentum"):
            c = mh.gpt(size, layers, d, heads, 128, 1, optimizer=opt, graphs=False, iters=20)
            c["id"] = c["id"].replace("holdout/", "cpu/")
            out.append(c)
    # Launch-bound reference configurations, repeated here to compare this host's CPU with the reference host's.
    for m, b in [("resnet50", 32), ("resnet50", 64), ("vit_b_16", 64), ("mobilenet_v3_large", 256),
                 ("efficientnet_b0", 128)]:
        c = mh.vision(m, b, iters=20)
        c["id"] = f"anchor/{m}-b{b}-bf16"
        out.append(c)
    for size, layers, d, heads, b, s in [("tiny", 4, 256, 4, 8, 128), ("gpt-124m", 12, 768, 12, 4, 256)]:
        c = mh.gpt(size, layers, d, heads, s, b, optimizer="sgd-momentum", graphs=False, iters=50)
        c["id"] = c["id"].replace("holdout/", "anchor/")
        out.append(c)
    return out


class CountOps(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.n = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.n += 1
        return func(*args, **(kwargs or {}))


def build_step(c):
    """Returns (step function, record fields) for a configuration, as measure_holdout builds it."""
    rec = {}
    if c["model"] == "gpt":
        with torch.device("cuda"):
            model = mh.GPT(c["layers"], c["d_model"], c["heads"], c["seq"], c["activation_checkpointing"])
        model.train()
        rec["params"] = mh.n_params(model)
        opt = mh.make_optimizer(c["optimizer"], model.parameters())
        return mh.gpt_step_fn(c, model, opt), rec
    import torchvision
    fn = getattr(torchvision.models, c["model"])
    rec["fwd_flops_per_sample"], rec["params"] = mh.vision_flops(lambda: fn(weights=None))
    torch.backends.cudnn.benchmark = True
    model = fn(weights=None).cuda().to(memory_format=torch.channels_last).train()
    opt = mh.make_optimizer(c["optimizer"], model.parameters())
    x = torch.randn(c["batch"], 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (c["batch"],), device="cuda")
    rec["image_hw"] = [224, 224]
    return mh.vision_step(model, opt, x, y, c["precision"]), rec


def counts(step):
    torch.cuda.synchronize()
    calls = [0]
    h = torch.nn.modules.module.register_module_forward_hook(lambda *a: calls.__setitem__(0, calls[0] + 1))
    try:
        with CountOps() as co:
            step()
        torch.cuda.synchronize()
    finally:
        h.remove()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    kernels, gpu_us = 0, 0.0
    for ev in prof.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA:
            kernels += 1
            gpu_us += ev.device_time
    return {"aten_ops_per_step": co.n, "module_calls": calls[0], "kernels_per_step": kernels,
            "gpu_kernel_ms": round(gpu_us / 1000.0, 3)}


def measure(c, common):
    rec = mh.describe(c)
    mh.set_precision_flags(c["precision"])
    torch.manual_seed(0)
    t0 = time.perf_counter()
    step, extra = build_step(c)
    rec.update(extra)
    step_ms, per, fields = mh.time_steps(step, 5, c["iters"])
    rec.update(mh.step_fields(step_ms, per, c["iters"]))
    rec.update(fields)
    rec["samples_per_s"] = round(c["batch"] / (step_ms / 1000.0), 1)
    rec.update(counts(step))
    rec.update(common)
    del step
    gc.collect()
    torch.cuda.empty_cache()
    print(f"{c['id']:<44} {rec['step_ms']:8.2f} ms  gpu {rec['gpu_kernel_ms']:7.2f} ms  aten {rec['aten_ops_per_step']:6d}"
          f"  modules {rec['module_calls']:5d}  kernels {rec['kernels_per_step']:6d}  ({time.perf_counter() - t0:.1f} s)",
          flush=True)
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    return mh.write_records([c for c in configs() if a.only in c["id"]], measure, a.out)


if __name__ == "__main__":
    sys.exit(main())
