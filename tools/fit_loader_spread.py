#!/usr/bin/env python3
"""Fits sim-constants.json's loader_log_sd: how far measured data-loader throughput falls from the simulation's.

`gpuplan calibrate check` simulates each CPU data-pipeline record (`data: cpu-jpeg-pipeline`) through the
data-loader simulation and compares samples/s. Over those records, ln(measured / predicted samples/s) has a spread
that the compute model's step spread does not cover: the loader's per-sample CPU cost, its contention and the
host's scheduling. Its log standard deviation is estimated as tools/fit_step_spread.py estimates the step spreads:
the interdecile range over 2 x 1.2816 (the normal's 10th to 90th percentile). `run` widens the 80% range of a
configuration whose step waits for input by it (app/evaluate.cpp).

Usage: python3 tools/fit_loader_spread.py --runs R1.jsonl [R2 ...] [--gpuplan build/gpuplan]
       [--profile calibrate/profiles/h200.json] [--write calibrate/profiles/sim-constants.json]
"""
import argparse
import datetime
import json
import math
import subprocess

from fit_step_spread import Z90, quantile  # the same estimator as the step spreads


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", nargs="+", required=True)
    ap.add_argument("--gpuplan", default="build/gpuplan")
    ap.add_argument("--profile", default="calibrate/profiles/h200.json")
    ap.add_argument("--write")
    a = ap.parse_args()
    logs = []
    for path in a.runs:
        out = subprocess.run([a.gpuplan, "calibrate", "check", "--profile", a.profile, "--runs", path, "--format",
                              "json", "--tolerance", "100"], capture_output=True, text=True, check=True).stdout
        for r in json.loads(out).get("data_loader", {}).get("records", []):
            logs.append(math.log(r["measured_samples_per_s"] / r["predicted_samples_per_s"]))
    s = sorted(logs)
    sd = (quantile(s, 0.9) - quantile(s, 0.1)) / (2 * Z90)
    inside = sum(abs(x) <= Z90 * sd for x in logs)
    print(f"{len(logs)} loader records: ln(measured / predicted samples/s) from {s[0]:+.3f} to {s[-1]:+.3f}; "
          f"interdecile log sd {sd:.4f}; {inside} of {len(logs)} inside the 80% range it gives")
    if a.write:
        with open(a.write) as f:
            doc = json.load(f)
        doc["loader_log_sd"] = {
            "value": round(sd, 4),
            "method": "interdecile range of ln(measured / predicted) samples/s over 2 x 1.2816 (the normal's 10th to "
                      f"90th percentile), tools/fit_loader_spread.py, over the {len(logs)} CPU data-pipeline records "
                      "simulated by calibrate check: the data-loader simulation's error. `run` widens the 80% range "
                      "of a step that waits for input by it (app/evaluate.cpp)",
            "source": ", ".join(a.runs),
            "as_of": datetime.date.today().isoformat(),
        }
        with open(a.write, "w") as f:
            json.dump(doc, f, indent=2, ensure_ascii=False)
            f.write("\n")


if __name__ == "__main__":
    main()
