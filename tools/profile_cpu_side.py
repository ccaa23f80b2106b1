#!/usr/bin/env python3
"""Where the host time of an eager vision training step goes, and why it changes with the batch size.

tools/measure_cpu_overhead.py found ResNet-50's eager step at 17.7 ms with batch 2 but 34 ms with batch 32 on
the same host, though the GPU is busy only 9 ms of it. This profiles the step (torch.profiler, CPU and CUDA) at
several batch sizes and reports, per step: wall time; CUDA runtime API calls by name (count and host ms), which
shows any call that blocks the host on the GPU (synchronisations, pageable copies); the aten operators with the
largest host self time; and the GPU kernel time. The step is tools/measure_holdout.py's vision step.

Usage: python3 tools/profile_cpu_side.py OUT.jsonl model:batch [model:batch ...]
"""
import collections
import json
import os
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure_holdout as mh  # noqa: E402
from measure_cpu_overhead import build_step  # noqa: E402


def run(model_name, batch, steps=3):
    c = mh.vision(model_name, batch)
    mh.set_precision_flags(c["precision"])
    step, _ = build_step(c)  # measure_cpu_overhead's (and measure_holdout's) vision step

    for _ in range(5):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(10):
        step()
    torch.cuda.synchronize()
    step_ms = (time.perf_counter() - t0) * 100
    # Host time of the step alone: issue it, then wait; the issue part is what the CPU spends.
    issue = []
    for _ in range(10):
        torch.cuda.synchronize()
        a = time.perf_counter()
        step()
        b = time.perf_counter()
        torch.cuda.synchronize()
        issue.append((b - a) * 1000)
    issue.sort()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    runtime = collections.defaultdict(lambda: [0, 0.0])
    aten = collections.defaultdict(lambda: [0, 0.0])
    gpu_ms = 0.0
    for ev in prof.key_averages():
        name = ev.key
        if ev.device_type == torch.autograd.DeviceType.CUDA:
            gpu_ms += ev.device_time_total / 1000.0
            continue
        if name.startswith("cuda") or name.startswith("cu"):
            runtime[name][0] += ev.count
            runtime[name][1] += ev.cpu_time_total / 1000.0
        elif name.startswith("aten::") or name.startswith("autograd::") or "Backward" in name:
            aten[name][0] += ev.count
            aten[name][1] += ev.self_cpu_time_total / 1000.0
    per = lambda d: {k: [round(v[0] / steps, 1), round(v[1] / steps, 3)] for k, v in
                     sorted(d.items(), key=lambda kv: -kv[1][1])}
    top_aten = dict(list(per(aten).items())[:40])
    return {"model": model_name, "batch": batch, "step_ms": round(step_ms, 3),
            "issue_ms_p50": round(issue[len(issue) // 2], 3), "issue_ms_min": round(issue[0], 3),
            "gpu_kernel_ms": round(gpu_ms / steps, 3), "runtime_api": per(runtime), "aten_self_cpu": top_aten,
            "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
            "device": torch.cuda.get_device_name()}


def main():
    out = sys.argv[1]
    with open(out, "w") as f:
        for spec in sys.argv[2:]:
            m, b = spec.split(":")
            r = run(m, int(b))
            f.write(json.dumps(r) + "\n")
            f.flush()
            rt = r["runtime_api"]
            print(f"{m} b{b}: step {r['step_ms']:.2f} ms, issue p50 {r['issue_ms_p50']:.2f} ms, gpu {r['gpu_kernel_ms']:.2f} ms;"
                  f" runtime: " + ", ".join(f"{k} {v[0]:.0f}x {v[1]:.2f}ms" for k, v in list(rt.items())[:6]), flush=True)
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
