#!/usr/bin/env python3
"""Fits sim-constants.json's cpu_all_core_slowdown from the CPU data-pipeline runs.

The loader simulation charges each sample its single-thread CPU cost (the runs' sample_cpu_ms_1thread,
measured with the rest of the host idle) times 1 + s * (busy - 1) / (cores - 1), busy = workers + the training
process (sim/job_inputs.hpp: all_core_factor). This script scans s over [0, 0.5] in steps of 0.01, predicts
every `data: cpu-jpeg-pipeline` record with `gpuplan calibrate check --sim-constants` for each s, and keeps
the s with the least sum of squared ln(predicted / measured) samples/s over all of them (one constant for
every worker count; no record is weighted or dropped).

Usage: python3 tools/fit_cpu_slowdown.py RUNS.jsonl [RUNS2.jsonl ...] [--gpuplan build/gpuplan]
       [--profile calibrate/profiles/h200.json] [--sim-constants calibrate/profiles/sim-constants.json]
Prints the best s, its objective, and each record's error at s = 0 and at the best s.
"""
import argparse
import json
import math
import os
import subprocess
import tempfile


def loader_errors(a, runs, sim):
    out = {}
    for r in runs:
        res = subprocess.run([a.gpuplan, "calibrate", "check", "--profile", a.profile, "--runs", r,
                              "--sim-constants", sim, "--format", "json", "--tolerance", "1000"],
                             capture_output=True, text=True)
        if res.returncode not in (0, 1):
            raise SystemExit(res.stderr.strip())
        for rec in json.loads(res.stdout).get("data_loader", {}).get("records", []):
            out[r + ":" + rec["id"]] = (rec["measured_samples_per_s"], rec["predicted_samples_per_s"])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--gpuplan", default="build/gpuplan")
    ap.add_argument("--profile", default="calibrate/profiles/h200.json")
    ap.add_argument("--sim-constants", default="calibrate/profiles/sim-constants.json")
    a = ap.parse_args()
    base = json.load(open(a.sim_constants))
    fd, tmp = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    results = {}
    try:
        for i in range(0, 51):
            s = i / 100
            base["cpu_all_core_slowdown"]["value"] = s
            with open(tmp, "w") as f:
                json.dump(base, f)
            e = loader_errors(a, a.runs, tmp)
            obj = sum(math.log(p / m) ** 2 for m, p in e.values())
            results[s] = (obj, e)
    finally:
        os.unlink(tmp)
    best = min(results, key=lambda s: results[s][0])
    print(json.dumps({"cpu_all_core_slowdown": best, "objective": round(results[best][0], 5),
                      "objective_at_0": round(results[0.0][0], 5), "records": len(results[best][1])}))
    for k in sorted(results[best][1]):
        m, p0 = results[0.0][1][k]
        _, p = results[best][1][k]
        print(f"{k.split(':', 1)[1]:40s} measured {m:7.0f}  s=0 {100 * (p0 - m) / m:+6.1f}%  s={best} {100 * (p - m) / m:+6.1f}%")


if __name__ == "__main__":
    main()
