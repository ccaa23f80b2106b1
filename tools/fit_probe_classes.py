#!/usr/bin/env python3
"""Fits the probe-class constants of the compute model from kernels measured one at a time.

Pooling (tools/probe_pool.py: nn.MaxPool2d / nn.AvgPool2d alone, bf16, forward and backward, NCHW and
channels-last, over the pool shapes of torchvision's networks). Pool kernels run far below the copy bandwidth and
their time follows the elements they walk, not the bytes:
    forward   t = (input + output * k^2) / r      (each input read once, each window element)
    backward  t = (input + output) / r            (the input gradient's zero fill, then the scatter or spread;
                                                   a channels-last max-pool gathers over windows instead:
                                                   input + output * k^2, as its times follow)
r per pool kind (max, average), phase and layout, pooled: r = sum elements / sum t over the probed shapes.

The first convolution (tools/probe_conv_layout.py's channels-last convolution kernels of each network's first
Conv2d, whose input is the 3-channel image, so K = 3 k^2): cuDNN runs it at 12-45 TFLOP/s where the GEMM surface
expects several hundred. Timed by FLOPs (forward and weight gradient: 2 x 2 N Ho Wo Cout 3 k^2) at a fraction e of
the profile's large bf16 GEMM rate (the fit file's gemm_surface rate), pooled: e = sum FLOPs / (R sum t).

Per-channel sums (tools/probe_channel_sum.py: g.sum(dim=(0, 2, 3)), a convolution's bias gradient, over N, C and
H = W in both layouts): no simple law fits their rate (4-1,800 G elements/s), so the measured samples themselves
are written, as rows = N x H x W, channels = C, layout and rate; the model interpolates them
(models/compute_model.hpp, channel_sum_rate).

Usage: python3 tools/fit_probe_classes.py POOL.jsonl CONV_LAYOUT.jsonl CHANNEL_SUM.jsonl [--fit F]
Prints the constants as JSON (calibrate/profiles/probe-classes-<gpu>.json; `gpuplan calibrate fit --probe-classes`).
"""
import argparse
import json
import os


def pool_points(path):
    pts = {}
    for line in open(path):
        r = json.loads(line)
        if "kind" not in r or "error" in r:
            continue
        n_in = r["N"] * r["C"] * r["H"] * r["W"]
        n_out = r["N"] * r["C"] * r["out_hw"][0] * r["out_hw"][1]
        layout = "nhwc" if r["channels_last"] else "nchw"
        pts.setdefault((r["kind"], "fwd", layout), []).append((n_in + n_out * r["kernel"] ** 2, r["fwd_ms"]))
        gather = r["kind"] == "max" and r["channels_last"]
        pts.setdefault((r["kind"], "bwd", layout), []).append(
            (n_in + n_out * (r["kernel"] ** 2 if gather else 1), r["bwd_ms"]))
    return pts


def stem_points(path):
    pts = []
    for line in open(path):
        r = json.loads(line)
        if not r.get("first") or "nhwc" not in r or "conv" not in r["nhwc"]:
            continue
        ho = (r["h"] + 2 * r["pad"][0] - r["k"][0]) // r["stride"][0] + 1
        wo = (r["w"] + 2 * r["pad"][1] - r["k"][1]) // r["stride"][1] + 1
        flops = 2 * 2.0 * r["batch"] * ho * wo * r["c_out"] * r["c_in"] * r["k"][0] * r["k"][1]  # forward + wgrad
        pts.append((f"{r['model']} b{r['batch']}", flops, r["nhwc"]["conv"][0]))
    return pts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pool")
    ap.add_argument("conv_layout")
    ap.add_argument("channel_sum")
    ap.add_argument("--fit", default="calibrate/profiles/fit-h200.json", help="fit file (gemm_surface bf16 rate)")
    a = ap.parse_args()
    rate_bf16 = json.load(open(a.fit))["fit"]["gemm_surface"]["bf16"]["rate_tflops"]
    out, stats = {}, {}
    for (kind, phase, layout), pp in sorted(pool_points(a.pool).items()):
        r = sum(e for e, _ in pp) / sum(t for _, t in pp) / 1e6  # G elements / s
        errs = [abs(e / (r * 1e6) / t - 1) for e, t in pp]
        key = f"{kind}_pool_{phase}_{layout}_gelements_per_s"
        out[key] = round(r, 2)
        stats[key] = {"shapes": len(pp), "mean_abs_error": round(sum(errs) / len(errs), 4),
                      "max_abs_error": round(max(errs), 4)}
    sp = stem_points(a.conv_layout)
    e = sum(f for _, f, _ in sp) / (rate_bf16 * 1e12 * sum(t for _, _, t in sp) * 1e-3)
    errs = [abs(f / (rate_bf16 * 1e12 * e) * 1e3 / t - 1) for _, f, t in sp]
    out["conv_stem_flop_efficiency"] = round(e, 5)
    stats["conv_stem"] = {"shapes": len(sp), "mean_abs_error": round(sum(errs) / len(errs), 4),
                          "max_abs_error": round(max(errs), 4), "networks": sorted({n for n, _, _ in sp})}
    out["channel_sum"] = []
    for line in open(a.channel_sum):
        r = json.loads(line)
        if "N" not in r or r["ms"] <= 0:
            continue
        rows = r["N"] * r["H"] * r["W"]
        out["channel_sum"].append({"rows": rows, "channels": r["C"], "layout": "nhwc" if r["channels_last"] else "nchw",
                                   "gelements_per_s": round(rows * r["C"] / (r["ms"] * 1e6), 3)})
    stats["channel_sum"] = {"samples": len(out["channel_sum"])}
    out["source"] = (f"tools/fit_probe_classes.py over {os.path.basename(a.pool)}, "
                     f"{os.path.basename(a.conv_layout)} and {os.path.basename(a.channel_sum)}, bf16 large-GEMM rate "
                     f"{rate_bf16:.1f} TFLOP/s from the fit")
    out["fit"] = stats
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
