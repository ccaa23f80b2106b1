#!/usr/bin/env python3
"""The compute model's GPU time of a step against the kernel time a profile of that step measured.

Step times mix the GPU with the host's CPU (a launch-bound step follows its host). A kernel profile
(tools/profile_vision_kernels.py: the step's CUDA kernels summed) measures the GPU side alone, so this compares
the model's GPU busy time (forward + backward + optimizer, `gpuplan calibrate check` breakdown) with
`gpu_kernel_ms` for every profiled configuration: the same step as the profiler ran it (SGD with momentum,
cudnn.benchmark, synthetic inputs; channels-last unless the record says otherwise).

Usage: python3 tools/compare_kernel_sums.py PROFILE.jsonl [...] [--gpuplan build/gpuplan]
           [--profile calibrate/profiles/h200.json] [--constants FIT]
Prints one line per profiled configuration and the mean |error|.
"""
import argparse
import json
import os
import subprocess
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kernels", nargs="+")
    ap.add_argument("--gpuplan", default="build/gpuplan")
    ap.add_argument("--profile", default="calibrate/profiles/h200.json")
    ap.add_argument("--constants")
    a = ap.parse_args()
    recs = []
    for path in a.kernels:
        for line in open(path):
            r = json.loads(line)
            if "gpu_kernel_ms" not in r or "model" not in r:
                continue
            cl = r.get("channels_last", True)
            name = os.path.basename(path).split("-2026")[0]
            prec = "" if r["precision"] == "bf16" else "-" + r["precision"]
            recs.append({"id": f"{name}/{r['model']}-b{r['batch']}-{'cl' if cl else 'nchw'}{prec}", "kind": "train",
                         "model": r["model"], "batch": r["batch"], "grad_accum": 1, "precision": r["precision"],
                         "optimizer": "sgd-momentum", "channels_last": cl, "cudnn_benchmark": True,
                         "data": "synthetic-on-gpu", "step_ms": r["gpu_kernel_ms"], "device": r.get("device", "")})
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")
        runs = f.name
    try:
        cmd = [a.gpuplan, "calibrate", "check", "--profile", a.profile, "--runs", runs, "--format", "json"]
        if a.constants:
            cmd += ["--constants", a.constants]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if not res.stdout.strip():
            raise SystemExit(f"compare_kernel_sums: {' '.join(cmd)} failed: {res.stderr.strip()}")
        out = json.loads(res.stdout)
    finally:
        os.unlink(runs)
    errs = []
    print(f"{'profiled step':50} {'kernels ms':>10} {'model GPU ms':>12} {'err%':>7}")
    for r in sorted(out["records"], key=lambda r: r["id"].split("/")[1]):
        b = r.get("breakdown_ms")
        if b is None:  # a generic model (catalog params and FLOPs only) has no per-pass breakdown
            print(f"{r['id']:50} {r['measured_step_ms']:10.2f} {'-':>12} {'generic':>7}")
            continue
        gpu = b["gpu_forward"] + b["gpu_backward"] + b["gpu_optimizer"]
        err = 100 * (gpu / r["measured_step_ms"] - 1)
        errs.append(abs(err))
        print(f"{r['id']:50} {r['measured_step_ms']:10.2f} {gpu:12.2f} {err:+7.1f}")
    print(f"{len(errs)} profiled steps: mean |error| {sum(errs) / len(errs):.1f}%")


if __name__ == "__main__":
    main()
