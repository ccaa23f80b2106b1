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
  transforms: cuDNN's nchwToNhwc / nhwcToNchw around each convolution:
                t = bytes / (B_copy * e_tr)        bytes = the model's conv.nchw_transform operators (gpuplan --ops)
              pooled over the models whose profile lists those kernels

Usage: python3 tools/fit_nchw_classes.py NCHW_KERNELS.jsonl [--gpuplan build/gpuplan] [--profile P] [--fit F]
Prints the constants as JSON (calibrate/profiles/nchw-classes-<gpu>.json; `gpuplan calibrate fit --nchw-classes`).
"""
import argparse
import ast
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_kernel_classes import ops_table  # noqa: E402  (the model's operators of one record)


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kernels")
    ap.add_argument("--gpuplan", default="build/gpuplan")
    ap.add_argument("--profile", default="calibrate/profiles/h200.json")
    ap.add_argument("--fit", default="calibrate/profiles/fit-h200.json", help="fit file (gemm_surface fp32 rate)")
    a = ap.parse_args()
    bw = json.load(open(a.profile))["memory"]["hbm_copy_GBps"]
    r32 = json.load(open(a.fit))["fit"]["gemm_surface"]["fp32"]["rate_tflops"]

    bn = {"fwd": [], "bwd": []}
    dw_f = {"fwd": [0.0, 0.0], "bwd": [0.0, 0.0]}  # GFLOP, ms
    tr_gb = tr_ms = 0.0
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
        meas_tr = sum(v for n, v in k["top_kernels_ms"] if re.search(r"nchwToNhwc|nhwcToNchw", n))
        if meas_tr > 0:
            rec = {"id": f"nchw/{k['model']}-b{k['batch']}", "kind": "train", "model": k["model"],
                   "batch": k["batch"], "precision": "bf16", "channels_last": False, "optimizer": "sgd-momentum",
                   "cudnn_benchmark": True, "data": "synthetic-on-gpu"}
            ops = [o for o in ops_table(a.gpuplan, a.profile, a.fit, rec) if o["name"].startswith("conv.nchw_transform")]
            tr_gb += sum(o["gb"] for o in ops)
            tr_ms += meas_tr

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
    out["nchw_transform_efficiency"] = round(tr_gb / (bw * tr_ms * 1e-3), 4) if tr_ms > 0 else 0
    out["source"] = ("tools/fit_nchw_classes.py over " + os.path.basename(a.kernels) + " (" + ", ".join(models) +
                     f"), fp32 rate {r32:.1f} TFLOP/s and copy bandwidth {bw:.0f} GB/s from the profile")
    out["fit"] = fits
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
