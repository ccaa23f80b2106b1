#!/usr/bin/env python3
"""The CPU side of eager training steps, measured on one host with the configurations interleaved.

Launch-bound steps follow the host's CPU, and the lent H200 hosts differ by up to 2x on the same step
(docs/calibration.md, "Host CPU speed from the launch probe"). Comparing networks measured on different hosts, or
minutes apart on one, mixes that drift into the comparison. This probe builds every configuration first, then
times them round-robin (ROUNDS rounds of ITERS steps each), so each network's median over rounds sees the same
host state as the others'. Per step it also times the issue alone: after a synchronize, the host time until step()
returns (the CPU's work when the GPU never holds it back), and the step's total time after a final synchronize.

Writes one `kind: train` record per configuration in the reference-run format (so `gpuplan calibrate check`
predicts it) with `step_ms` (median over rounds of the round's mean step), `step_ms_rounds`, `issue_ms` (median
isolated issue time), `isolated_step_ms`, and the host's launch probe (`micro/launch`) before and after.
Usage: python3 tools/measure_cpu_interleaved.py OUT.jsonl [--rounds 8] [--iters 10]
"""
import argparse
import gc
import json
import statistics
import sys
import time

import torch

import measure_cpu_overhead as mco  # the same step builder (GPT or torchvision, channels-last)
import measure_holdout as mh

VISION_B2 = ["resnet18", "resnet50", "resnet101", "wide_resnet50_2", "densenet121", "mobilenet_v2",
             "mobilenet_v3_large", "efficientnet_b0", "regnet_x_400mf", "regnet_y_400mf", "convnext_tiny",
             "vit_b_16", "vit_b_32", "swin_t", "swin_v2_t", "shufflenet_v2_x1_0", "vgg11"]
VISION_LARGER = [("resnet50", 32), ("vit_b_16", 32), ("efficientnet_b0", 64), ("swin_t", 32)]
GPTS = [("tiny", 4, 256, 4, 128, 1), ("gpt-124m", 12, 768, 12, 128, 1), ("gpt-350m", 24, 1024, 16, 128, 1),
        ("gpt-124m", 12, 768, 12, 256, 4)]


def configs():
    out = [dict(mh.vision(m, 2), id=f"cpu12/{m}-b2-bf16") for m in VISION_B2]
    out += [dict(mh.vision(m, b), id=f"cpu12/{m}-b{b}-bf16") for m, b in VISION_LARGER]
    for size, layers, d, heads, seq, batch in GPTS:
        c = mh.gpt(size, layers, d, heads, seq, batch, optimizer="sgd-momentum", graphs=False)
        c["id"] = c["id"].replace("holdout/", "cpu12/")
        out.append(c)
    return out


def build(c):
    """The step function of configuration c (model, optimizer and inputs on the GPU) and its record fields."""
    step, fields = mco.build_step(c)
    rec = mh.describe(c)
    rec.update(fields)
    return step, rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--iters", type=int, default=10)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("measure_cpu_interleaved: no CUDA device", file=sys.stderr)
        return 1
    mh.set_precision_flags("bf16")
    common = mh.common_fields()
    before = dict(mh.micro_launch(common), id="micro/launch-before-cpu12")
    built = []
    for c in configs():
        step, rec = build(c)
        for _ in range(5):  # warm-up: cuDNN's benchmark, the allocator's pools
            step()
        torch.cuda.synchronize()
        built.append((c, step, rec, [], [], []))
        print(f"built {c['id']}", flush=True)
    for r in range(a.rounds):
        for c, step, rec, rounds, issue, isolated in built:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(a.iters):
                step()
            torch.cuda.synchronize()
            rounds.append((time.perf_counter() - t0) * 1e3 / a.iters)
            t0 = time.perf_counter()
            step()
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            t2 = time.perf_counter()
            issue.append((t1 - t0) * 1e3)
            isolated.append((t2 - t0) * 1e3)
        print(f"round {r + 1}/{a.rounds} done", flush=True)
    after = dict(mh.micro_launch(common), id="micro/launch-after-cpu12")
    with open(a.out, "w") as f:
        for c, step, rec, rounds, issue, isolated in built:
            rec.update({"step_ms": round(statistics.median(rounds), 3),
                        "step_ms_rounds": [round(v, 3) for v in rounds],
                        "issue_ms": round(statistics.median(issue), 3),
                        "isolated_step_ms": round(statistics.median(isolated), 3),
                        "iters": a.iters * a.rounds})
            rec.update(common)
            f.write(json.dumps(rec) + "\n")
            print(f"{rec['id']:<40} step {rec['step_ms']:8.3f} ms  issue {rec['issue_ms']:8.3f}  "
                  f"isolated {rec['isolated_step_ms']:8.3f}  rounds {min(rounds):.1f}-{max(rounds):.1f}", flush=True)
        for r in (before, after):
            f.write(json.dumps(r) + "\n")
            print(f"{r['id']}: eager {r['eager_us_per_kernel']} us", flush=True)
    gc.collect()
    return 0


if __name__ == "__main__":
    sys.exit(main())
