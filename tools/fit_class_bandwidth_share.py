#!/usr/bin/env python3
"""Fits class_bandwidth_share: how much of a probed class's time follows the memory bandwidth on another GPU.

The probed classes' rates (BatchNorm, LayerNorm, pooling, channel copies, the slower elementwise paths, ...) were
measured on the H200. On a GPU with the same SMs and less bandwidth (an H100: 132 SMs at the same clocks, 3.35
against 4.8 TB/s) the model kept their rates (they run below the copy bandwidth, bound by the SMs), and held-out
DenseNets on an H100 ran 10-13% slower than predicted. The same BatchNorm probe (tools/probe_bn.py, every dtype)
run on both GPUs shows the shapes slowing by more the closer they come to the bandwidth. The law tried:

    t_other = t_ref + s * min(bytes / B_ref, t_ref) * (B_ref / B_other - 1)

B the copy bandwidth times the fitted memory efficiency (fit-h200.json: reference_copy_GBps x memory_efficiency;
the other GPU's from the catalog's datasheet HBM ratio, as its derived profile has it), bytes the model's for the
op (BatchNorm: 3 passes forward, 5 backward, of the map's dtype). With u = min(bytes / B_ref / t_ref, 1) each
probed shape gives s = (t_other / t_ref - 1) / (u (B_ref / B_other - 1)); s is their median over the shapes with
u >= 0.2 and t_ref >= 50 us (below that the slow-down is within the timing noise).

The law was tried in the model (commit 99c8d4a: models/compute_model.cpp op_gpu_time, BatchNorm only, s = 0.634)
and removed again: held-out set 21 (BatchNorm networks on an H100, predicted both ways before they ran) came out
at 4.13% MAPE with it against 2.66% without (docs/calibration.md, "Probed classes on an H100"). The script stays
to measure s for another pair of GPUs.

Usage: python3 tools/fit_class_bandwidth_share.py --pair REF.jsonl OTHER.jsonl BYTES_PER_ELEMENT [--pair ...]
           [--ref-gpu h200-sxm] [--other-gpu h100-sxm] [--fit calibrate/profiles/fit-h200.json]
"""
import argparse
import json
import statistics


def rows(path):
    return [r for r in map(json.loads, open(path)) if "N" in r]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pair", nargs=3, action="append", required=True,
                    metavar=("REF", "OTHER", "BYTES_PER_ELEMENT"),
                    help="tools/probe_bn.py output on the reference GPU and on the other, and the map's element size")
    ap.add_argument("--ref-gpu", default="h200-sxm")
    ap.add_argument("--other-gpu", default="h100-sxm")
    ap.add_argument("--fit", default="calibrate/profiles/fit-h200.json")
    ap.add_argument("--catalog", default="catalogs/gpus.json")
    a = ap.parse_args()

    consts = json.load(open(a.fit))["constants"]
    b_ref = consts["reference_copy_GBps"] * 1e9 * consts["memory_efficiency"]
    # The catalogs carry // comment lines ahead of their JSON.
    text = "".join(line for line in open(a.catalog) if not line.lstrip().startswith("//"))
    gpus = {g["id"]: g for g in json.loads(text)["gpus"]}
    k = gpus[a.ref_gpu]["hbm_bw_GBps"] / gpus[a.other_gpu]["hbm_bw_GBps"] - 1

    shares, per = [], []
    for ref_path, other_path, size in a.pair:
        ref = {(r["N"], r["C"], r["H"], r["W"]): r for r in rows(ref_path)}
        for phase, passes in (("fwd", 3), ("bwd", 5)):
            s_pass = []
            for r in rows(other_path):
                q = ref.get((r["N"], r["C"], r["H"], r["W"]))
                if not q or not q.get(phase + "_ms") or not r.get(phase + "_ms"):
                    continue
                t_ref = q[phase + "_ms"] * 1e-3
                if t_ref < 50e-6:
                    continue
                u = min(1.0, passes * float(size) * r["N"] * r["C"] * r["H"] * r["W"] / b_ref / t_ref)
                if u < 0.2:
                    continue
                s_pass.append((r[phase + "_ms"] / q[phase + "_ms"] - 1) / (u * k))
            shares += s_pass
            if s_pass:
                per.append(f"{other_path.split('/')[-1]} {phase}: {statistics.median(s_pass):.3f} over {len(s_pass)}")
    s = statistics.median(shares)
    for line in per:
        print(line)
    print(f"class_bandwidth_share = {s:.3f} (median over {len(shares)} shapes; bandwidth ratio {a.ref_gpu} / "
          f"{a.other_gpu} = {k + 1:.3f})")


if __name__ == "__main__":
    main()
