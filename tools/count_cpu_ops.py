#!/usr/bin/env python3
"""What the CPU issues in one eager training step: every aten op the Python side calls (views included) and every
autograd node the engine runs, counted with torch.profiler's CPU events (no CUDA activity recorded).

The compute model charges the CPU per framework call (a module call forward, an autograd node backward, an
optimizer call; docs/calibration.md) and counts only operators that launch kernels. Launch-bound ViT and Swin
steps run slower than it predicts on every host; this probe counts what it leaves out (view-like aten calls,
kernel-less autograd nodes) per step, so their share can be compared across networks before any model change.

Per configuration one JSON line: `top_level_aten` (aten ops called from Python, not from inside another aten op)
by name, `autograd_nodes` by name, their totals, the step's CPU wall time under the profiler, and the totals of
`view_like` ops (view, reshape, transpose, permute, ... that launch nothing).
Usage: python3 tools/count_cpu_ops.py OUT.jsonl [model:batch[:tf32|:fp32|:fp16] ...]
"""
import collections
import json
import sys

import torch
import torchvision
from torch.profiler import ProfilerActivity, profile

import measure_holdout as mh

DEFAULT = ["vit_b_16:32", "swin_t:32", "resnet50:32", "efficientnet_b0:64", "densenet121:32", "convnext_tiny:32",
           "vit_b_16:32:tf32", "mobilenet_v3_large:64"]
VIEW_LIKE = {"aten::view", "aten::reshape", "aten::_reshape_alias", "aten::transpose", "aten::permute", "aten::t",
             "aten::unsqueeze", "aten::squeeze", "aten::select", "aten::slice", "aten::expand", "aten::as_strided",
             "aten::unflatten", "aten::flatten", "aten::split", "aten::chunk", "aten::unbind", "aten::narrow",
             "aten::alias", "aten::detach", "aten::contiguous", "aten::_unsafe_view", "aten::numpy_T",
             "aten::split_with_sizes", "aten::empty", "aten::empty_like", "aten::empty_strided", "aten::to",
             "aten::_to_copy", "aten::lift_fresh", "aten::result_type", "aten::size", "aten::stride"}


def count(model_name, batch, precision):
    mh.set_precision_flags(precision)
    torch.backends.cudnn.benchmark = True
    model = getattr(torchvision.models, model_name)(weights=None).cuda().to(memory_format=torch.channels_last).train()
    opt = mh.make_optimizer("sgd-momentum", model.parameters())
    x = torch.randn(batch, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (batch,), device="cuda")
    step = mh.vision_step(model, opt, x, y, precision)
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
        torch.cuda.synchronize()
    events = prof.events()
    # An event is top level when no enclosing event on its thread is an aten op (Python called it directly).
    top, nodes = collections.Counter(), collections.Counter()
    for e in events:
        if e.name.startswith("autograd::engine::evaluate_function: "):
            nodes[e.name.split(": ", 1)[1]] += 1
            continue
        if not e.name.startswith("aten::"):
            continue
        parent, nested = e.cpu_parent, False
        while parent is not None:
            if parent.name.startswith("aten::") or parent.name.startswith("autograd::engine"):
                nested = True
                break
            parent = parent.cpu_parent
        if not nested:
            top[e.name] += 1
    view_like = sum(v for k, v in top.items() if k in VIEW_LIKE)
    return {"model": model_name, "batch": batch, "precision": precision,
            "top_level_aten_total": sum(top.values()), "view_like_total": view_like,
            "autograd_nodes_total": sum(nodes.values()),
            "top_level_aten": dict(top.most_common()), "autograd_nodes": dict(nodes.most_common())}


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    with open(args[0], "w") as f:
        for spec in args[1:] or DEFAULT:
            parts = spec.split(":")
            prec = parts[2] if len(parts) > 2 else "bf16"
            try:
                rec = count(parts[0], int(parts[1]), prec)
            except Exception as e:  # one model failing must not lose the others
                rec = {"model": parts[0], "error": repr(e)[:200]}
            f.write(json.dumps(rec) + "\n")
            f.flush()
            print(json.dumps({k: v for k, v in rec.items() if not isinstance(v, dict)}), flush=True)
        f.write(json.dumps({"torch": torch.__version__, "device": torch.cuda.get_device_name()}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
