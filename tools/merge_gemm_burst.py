#!/usr/bin/env python3
"""Adds the burst GEMM grid (gpuplan-probe --gemm-only --gemm-gap-ms N) to a profile as "gemm_burst".

The profile's own "gemm" list is the sustained sweep (shapes back to back, so the board sits at its power limit
and the SM clock drops, as in heavy training); "gemm_burst" is the same grid with idle gaps, at near-boost clocks
(as short torch.matmul benchmarks see it). Values are copied unchanged.
usage: python3 tools/merge_gemm_burst.py PROFILE.json BURST.json OUT.json
"""
import json
import sys


def main(profile, burst, out):
    p = json.load(open(profile))
    b = json.load(open(burst))
    if p["device"]["name"] != b["device"]["name"]:
        sys.exit(f"{burst}: device {b['device']['name']!r} is not the profile's {p['device']['name']!r}")
    p["gemm_info"] = {"mode": "sustained", "gap_ms": 0,
                      "note": "shapes timed back to back; the board runs at its power limit and the SM clock "
                              "(sm_clock_mhz, read after each shape) drops below boost for large 16-bit GEMMs"}
    p["gemm_burst"] = b["gemm"]
    p["gemm_burst_info"] = {"mode": "burst", "gap_ms": b["checks"].get("gemm_gap_ms"), "command": b["command"],
                            "measured_on": b["measured_on"],
                            "note": "same grid with an idle gap before each shape: clocks near boost"}
    with open(out, "w") as f:
        json.dump(p, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
