#!/usr/bin/env python3
"""Fits the NCHW kernel classes of the compute model from kernel-level profiles of NCHW training steps.

PyTorch's default layout (channels_last off) runs other kernels than the channels-last steps the rest of the
model is calibrated on (profile: tools/profile_vision_kernels.py OUT.jsonl model:batch:nchw ..., on the GPU):

  BatchNorm:  batch_norm_collect_statistics / transform_input (forward) and batch_norm_backward_kernel give one
              thread block to each channel, so their rate grows with C until the GPU is full:
                t = n / min(C * r_c, r_max) + N * C * t_plane          (n = N*C*H*W elements)
              fitted per phase by least squares of ln(model / measured) over every BatchNorm shape profiled
              (aten::native_batch_norm[_backward] self GPU time per call, shapes from the profile)
  depthwise:  PyTorch's native conv_depthwise2d kernels (cuDNN is not used for bf16 NCHW depthwise):
                t = FLOPs / (R_fp32 * e)                                 e per phase, pooled (sum F / sum t)
              FLOPs 2*N*Ho*Wo*C*k*k forward, twice that for backward (input and weight gradients)
  1x1 convs:  the convolution kernels of a 1x1 convolution in NCHW against the same shape's channels-last ones
              (the one-convolution probe, --conv-layout): per 1x1 band, sum of NCHW time over sum of channels-last
              time; cuDNN runs these thin per-sample GEMMs with NCHW kernels of its own, transformed or not
  transforms: cuDNN's nchwToNhwc / nhwcToNchw around a convolution, from the one-convolution probe
              (tools/probe_conv_layout.py, --conv-layout): each transformed pass (forward, input gradient, weight
              gradient) moves its two activation tensors and a k x k filter, each read and written:
                t = passes * 2 * 2 bytes * (in + out [+ filter]) / (B_copy * e_tr) + n_kernels * t_gpu
              t_gpu the fit's GPU time per kernel; e_tr pooled (sum bytes / (B * sum (t - n t_gpu))), apart for the
              network's first convolution (3-channel rows transpose slowly) and for every other one. Which passes
              cuDNN transforms is its choice per shape, so per band (spatial k > 1, the first convolution,
              1x1 strided, 1x1 by output pixels per sample P: <= 100, <= 400, more) the mean measured passes over
              the probed shapes (passes: a spatial pass runs one nhwcToNchw; a 1x1 pass two transforms in all)

Usage: python3 tools/fit_nchw_classes.py NCHW_KERNELS.jsonl --conv-layout CONV_LAYOUT.jsonl
           [--profile P] [--fit F]
Prints the constants as JSON (calibrate/profiles/nchw-classes-<gpu>.json; `gpuplan calibrate fit --nchw-classes`).
"""
import argparse
import ast
import json
import math
import os


def bn_model(p, shape):
    rc, rmax, tp = p
    n, c = shape[0] * shape[1] * shape[2] * shape[3], shape[1]
    return n / min(c * rc, rmax) / 1e6 + shape[0] * c * tp * 1e-6  # ms, rates in G elements/s, t_plane in ns


def fit_bn(points):
    """Coarse-to-fine search of (r_c, r_max, t_plane) minimising sum ln(model / measured)^2."""
    def cost(p):
        return sum(math.log(bn_model(p, s) / t) ** 2 for s, t in points)
    best = min(((rc, rmax, tp) for rc in [0.05 * i for i in range(2, 80)] for rmax in range(40, 420, 10)
                for tp in [0.1 * i for i in range(0, 16)]), key=cost)
    step = [0.025, 5.0, 0.05]
    for _ in range(6):
        cand = [tuple(max(1e-3, best[j] + d * step[j] * (j == k)) for j in range(3)) for k in range(3) for d in (-1, 1)]
        nb = min(cand + [best], key=cost)
        if nb == best:
            step = [s / 2 for s in step]
        best = nb
    rms = math.sqrt(cost(best) / len(points))
    errs = [abs(bn_model(best, s) / t - 1) for s, t in points]
    return best, rms, sum(errs) / len(errs), max(errs)


BANDS = ["spatial", "spatial_first", "pointwise_strided", "pointwise_small", "pointwise_mid", "pointwise_large"]


def conv_band(r):
    """The model's NchwBand of one probed convolution (models/vision_ops.cpp), or None (no transforms)."""
    k2 = r["k"][0] * r["k"][1]
    ho = (r["h"] + 2 * r["pad"][0] - r["k"][0]) // r["stride"][0] + 1
    wo = (r["w"] + 2 * r["pad"][1] - r["k"][1]) // r["stride"][1] + 1
    if k2 > 1:
        return "spatial_first" if r["first"] else "spatial", ho, wo
    if r["stride"][0] > 1 or r["stride"][1] > 1:
        return "pointwise_strided", ho, wo
    p = ho * wo
    if p <= 1:
        return None, ho, wo
    return ("pointwise_small" if p <= 100 else "pointwise_mid" if p <= 400 else "pointwise_large"), ho, wo


def fit_transforms(path, bw, t_gpu_ms):
    passes = {b: [] for b in BANDS}
    pts = {"first": [], "rest": []}  # (GB, measured ms, kernels)
    n = 0
    for line in open(path):
        r = json.loads(line)
        if "nchw" not in r or (r["groups"] > 1 and r["groups"] == r["c_in"]):
            continue  # the trailer, a failed shape, or depthwise (PyTorch's own kernels, no cuDNN)
        band, ho, wo = conv_band(r)
        if band is None:
            continue
        n += 1
        ms_a, k_a = r["nchw"].get("to_nhwc", [0, 0])
        ms_b, k_b = r["nchw"].get("to_nchw", [0, 0])
        spatial = band.startswith("spatial")
        p = k_b if spatial else (k_a + k_b) / 2
        passes[band].append(p)
        if p == 0:
            continue
        elems = r["batch"] * (r["c_in"] * r["h"] * r["w"] + r["c_out"] * ho * wo)
        if spatial:
            elems += r["c_out"] * r["c_in"] / r["groups"] * r["k"][0] * r["k"][1]
        pts["first" if band == "spatial_first" else "rest"].append((p * 4 * elems / 1e9, ms_a + ms_b, k_a + k_b))
    eff, stats = {}, {}
    for key, pp in pts.items():
        e = sum(g for g, _, _ in pp) / (bw * sum(t - k * t_gpu_ms for _, t, k in pp) * 1e-3)
        errs = [(g / (bw * e) * 1e3 + k * t_gpu_ms) / t - 1 for g, t, k in pp]
        eff[key] = round(e, 4)
        stats[key] = {"shapes": len(pp), "mean_abs_error": round(sum(map(abs, errs)) / len(errs), 4),
                      "time_weighted_abs_error": round(sum(abs(x) * t for x, (_, t, _) in zip(errs, pp)) /
                                                       sum(t for _, t, _ in pp), 4)}
    stats["passes_shapes"] = {b: len(v) for b, v in passes.items()}
    return {"efficiency": eff, "passes": {b: round(sum(v) / len(v), 3) for b, v in passes.items()},
            "fit": stats, "convolutions": n}


def pointwise_conv_factors(path):
    """Per 1x1 band, the NCHW convolution kernels' time over the channels-last ones of the same probed shapes
    (sum over sum): cuDNN runs thin per-sample GEMMs in NCHW with kernels of its own, slower, transformed or not."""
    sums = {}
    for line in open(path):
        r = json.loads(line)
        if "nchw" not in r or "nhwc" not in r or r["groups"] > 1 or r["first"]:
            continue
        band, _, _ = conv_band(r)
        if band is None or not band.startswith("pointwise"):
            continue
        s = sums.setdefault(band, [0.0, 0.0, 0])
        s[0] += r["nchw"].get("conv", [0, 0])[0]
        s[1] += r["nhwc"].get("conv", [0, 0])[0]
        s[2] += 1
    return {b: (round(a / c, 3), n) for b, (a, c, n) in sums.items() if a > 0 and c > 0}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kernels")
    ap.add_argument("--profile", default="calibrate/profiles/h200.json")
    ap.add_argument("--fit", default="calibrate/profiles/fit-h200.json",
                    help="fit file (gemm_surface fp32 rate, GPU time per kernel)")
    ap.add_argument("--conv-layout", required=True, help="tools/probe_conv_layout.py output")
    a = ap.parse_args()
    bw = json.load(open(a.profile))["memory"]["hbm_copy_GBps"]
    fit = json.load(open(a.fit))
    r32 = fit["fit"]["gemm_surface"]["fp32"]["rate_tflops"]
    t_gpu_ms = fit["constants"]["gpu_per_kernel_us"] * 1e-3

    bn = {"fwd": [], "bwd": []}
    dw_f = {"fwd": [0.0, 0.0], "bwd": [0.0, 0.0]}  # GFLOP, ms
    models = []
    for line in open(a.kernels):
        k = json.loads(line)
        if "error" in k or k.get("channels_last", True):
            continue
        models.append(f"{k['model']} b{k['batch']}")
        out_hw = {}  # (C, H_in, k) -> output H, from the backward shapes, for the forward's stride
        rows = []
        for name, shapes, calls, ms in k["aten_ops"]:
            try:
                sh = ast.literal_eval(shapes)
            except (ValueError, SyntaxError):
                continue
            rows.append((name, sh, ms / calls, calls))
        for name, sh, t, _ in rows:
            if name == "aten::convolution_backward" and len(sh) > 2 and len(sh[2]) == 4 and sh[2][1] == 1:
                out_hw[(sh[1][1], sh[1][2], sh[2][2])] = sh[0][2]
        for name, sh, t, calls in rows:
            if name in ("aten::native_batch_norm", "aten::native_batch_norm_backward") and len(sh[0]) == 4:
                bn["fwd" if name == "aten::native_batch_norm" else "bwd"].append((sh[0], t))
            if k["model"].startswith("convnext"):
                continue  # its depthwise convs see channels-last strides (cuDNN), not the native kernels
            if name == "aten::convolution_backward" and len(sh) > 2 and len(sh[2]) == 4 and sh[2][1] == 1:
                n, c, ho, wo = sh[0]
                dw_f["bwd"][0] += 4.0 * n * ho * wo * c * sh[2][2] * sh[2][3] / 1e9 * calls
                dw_f["bwd"][1] += t * calls
            if name == "aten::_conv_depthwise2d" and len(sh) > 1 and len(sh[1]) == 4:
                n, c, h, w = sh[0]
                ho = out_hw.get((c, h, sh[1][2]))
                if ho is None:
                    continue
                dw_f["fwd"][0] += 2.0 * n * ho * ho * c * sh[1][2] * sh[1][3] / 1e9 * calls
                dw_f["fwd"][1] += t * calls

    out = {}
    fits = {}
    for ph in ("fwd", "bwd"):
        (rc, rmax, tp), rms, mean, mx = fit_bn(bn[ph])
        out[f"bn_nchw_{ph}_gelements_per_s_per_channel"] = round(rc, 4)
        out[f"bn_nchw_{ph}_max_gelements_per_s"] = round(rmax, 2)
        out[f"bn_nchw_{ph}_plane_ns"] = round(tp, 4)
        fits[f"bn_{ph}"] = {"shapes": len(bn[ph]), "rms_log_error": round(rms, 4), "mean_abs_error": round(mean, 4),
                            "max_abs_error": round(mx, 4)}
    for ph in ("fwd", "bwd"):
        g, ms = dw_f[ph]
        out[f"dwconv_nchw_{ph}_flop_efficiency"] = round(g / (r32 * ms), 5) if ms > 0 else 0  # GFLOP/(TFLOP/s ms)
    tr = fit_transforms(a.conv_layout, bw, t_gpu_ms)
    out["nchw_transform_efficiency"] = tr["efficiency"]["rest"]
    out["nchw_transform_first_efficiency"] = tr["efficiency"]["first"]
    for band, passes in tr["passes"].items():
        out["nchw_transform_passes_" + band] = passes
    factors = pointwise_conv_factors(a.conv_layout)
    for band, (f, _) in factors.items():
        out["nchw_conv_factor_" + band] = f
    fits["pointwise_conv_factor_shapes"] = {b: n for b, (_, n) in factors.items()}
    out["source"] = ("tools/fit_nchw_classes.py over " + os.path.basename(a.kernels) + " (" + ", ".join(models) +
                     ") and " + os.path.basename(a.conv_layout) + f" ({tr['convolutions']} convolutions), fp32 rate "
                     f"{r32:.1f} TFLOP/s and copy bandwidth {bw:.0f} GB/s from the profile, {t_gpu_ms * 1e3:.2f} us "
                     "GPU time per kernel from the fit")
    fits["transforms"] = tr["fit"]
    out["fit"] = fits
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
