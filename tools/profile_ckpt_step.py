#!/usr/bin/env python3
"""Where a checkpointed GPT step's time goes: torch.profiler (CPU and CUDA) over 3 steps of gpt-350m b8 and gpt-760m b4
with activation checkpointing; prints wall time, GPU kernel time, CUDA runtime calls and the top aten ops by self CPU.
Usage (on the GPU machine, from the repository root): python3 tools/profile_ckpt_step.py
"""
import sys, time, torch
sys.path.insert(0, "tools")
import measure_holdout as mh
from torch.profiler import profile, ProfilerActivity
mh.set_precision_flags("bf16")
for size, layers, d, heads, batch in (("gpt-350m", 24, 1024, 16, 8), ("gpt-760m", 24, 1536, 16, 4)):
    c = mh.gpt(size, layers, d, heads, 1024, batch, ckpt=True)
    with torch.device("cuda"):
        model = mh.GPT(layers, d, heads, 1024, True)
    model.train()
    opt = mh.make_optimizer("adamw-fused", model.parameters())
    step = mh.gpt_step_fn(c, model, opt)
    for _ in range(5): step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        t0 = time.perf_counter()
        for _ in range(3): step()
        torch.cuda.synchronize()
        wall = (time.perf_counter() - t0) * 1e3 / 3
    ev = prof.key_averages()
    kern = sum(e.self_device_time_total for e in ev if e.device_type.name == "CUDA") / 3e3
    print(f"== {size} b{batch} ckpt: wall {wall:.1f} ms/step, GPU kernel time {kern:.1f} ms/step")
    rt = [e for e in ev if e.key.startswith("cuda") or e.key.startswith("cu")]
    for e in sorted(rt, key=lambda e: -e.self_cpu_time_total)[:8]:
        print(f"   {e.key:40s} calls {e.count/3:8.1f}  cpu {e.self_cpu_time_total/3e3:8.2f} ms")
    for e in sorted([e for e in ev if not e.key.startswith("cu")], key=lambda e: -e.self_cpu_time_total)[:12]:
        print(f"   {e.key:40s} calls {e.count/3:8.1f}  self cpu {e.self_cpu_time_total/3e3:8.2f} ms")
    del model, opt, step
    torch.cuda.empty_cache()
