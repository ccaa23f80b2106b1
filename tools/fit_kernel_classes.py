#!/usr/bin/env python3
"""Fits the kernel-class constants of the compute model from kernel-level profiles of real training steps.

Input: a profile of torchvision training steps by kernel class (tools/profile_vision_kernels.py, run on the
GPU), the GPU profile and fitted constants, and the gpuplan binary (for the model's operators:
`gpuplan calibrate check --ops`). For each profiled model the measured kernel time of a class is set against the
model's operators of that class:

  BatchNorm (bn.*):      t = elements / r_bn + kernels * t_gpu               -> r_bn, pooled over the CNNs
                         (bf16 and fp32 BatchNorm kernels run at about the same element rate: their time
                         does not follow bytes; ResNet-50 tf32 takes 1.5x bf16, not 2x)
  LayerNorm (ln*.*):     t = bytes / (B_copy * e_mem) + rows * c_row + ...   -> c_row, least squares over rows
  transposes (MHA):      t = bytes / (B_copy * e_tr)   (the `layout` class less the other copies and casts)
                         -> e_tr, pooled over the ViTs
  depthwise conv:        t = max(FLOPs / (R_fp32 * e_dwf), bytes / (B_copy * e_dwm))
                         e_dwf from the FLOP-heavy 7x7 (ConvNeXt), e_dwm from the 3x3/5x5 nets (MobileNet,
                         EfficientNet), each pooled

Measured classes: kernel names as in PyTorch 2.11 / cuDNN 9.19 on the H200: BatchNorm = the profile's
`batchnorm` class; LayerNorm = `layernorm` plus GammaBetaBackward (weight/bias gradients); depthwise = cuDNN's
`*_c1_k1_*` and grouped-direct kernels (from the top-15 list, which holds all of them in these runs).

Usage: python3 tools/fit_kernel_classes.py KERNELS.jsonl [--gpuplan build/gpuplan] [--profile P] [--constants C]
Prints the constants as JSON (the fields of gpuplan-fit/1 `constants` they fill).
"""
import argparse
import json
import os
import re
import subprocess
import tempfile


def ops_table(gpuplan, profile, constants, rec):
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        f.write(json.dumps(rec) + "\n")
        path = f.name
    try:
        out = subprocess.run([gpuplan, "calibrate", "check", "--profile", profile, "--constants", constants,
                              "--runs", path, "--ops", rec["id"]], check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(path)
    rows = []
    for line in out.splitlines()[2:]:
        p = line.split()
        rows.append({"name": p[0], "phase": p[1], "kernels": float(p[2]), "ms": float(p[3]), "gflop": float(p[4]),
                     "gb": float(p[5]), "mrows": float(p[6]), "melems": float(p[7])})
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kernels")
    ap.add_argument("--gpuplan", default="build/gpuplan")
    ap.add_argument("--profile", default="calibrate/profiles/h200.json")
    ap.add_argument("--constants", default="calibrate/profiles/fit-h200.json")
    ap.add_argument("--surface", default="calibrate/profiles/fit-h200.json",
                    help="fit file with gemm_surface statistics (the fp32 rate), when --constants has none")
    a = ap.parse_args()
    prof = json.load(open(a.profile))
    bw = prof["memory"]["hbm_copy_GBps"]  # GB/s = bytes/ns
    fit = json.load(open(a.constants))
    c = fit["constants"]
    e_mem, t_k = c["memory_efficiency"], c["gpu_per_kernel_us"] * 1e-3  # ms
    surface = fit.get("fit", {}).get("gemm_surface") or json.load(open(a.surface))["fit"]["gemm_surface"]
    r32 = surface["fp32"]["rate_tflops"]

    bn_bytes = bn_ms = 0.0
    ln_pts, dw7, dw35 = [], [], []
    tr_bytes = tr_ms = 0.0
    TRANSPOSE = {"mha.in_copy", "qkv.pack", "mha.ln_copy", "mha.in_copy.bwd", "mha.ln_copy.bwd", "qkv.unpack_grad"}
    per_model = []
    for line in open(a.kernels):
        k = json.loads(line)
        if "error" in k:
            continue
        rec = {"id": f"kernels/{k['model']}-b{k['batch']}", "kind": "train", "model": k["model"], "batch": k["batch"],
               "precision": "bf16", "channels_last": True, "optimizer": "sgd-momentum", "cudnn_benchmark": True,
               "data": "synthetic-on-gpu"}
        ops = ops_table(a.gpuplan, a.profile, a.constants, rec)
        top = k["top_kernels_ms"]
        m = k["by_class_ms"]
        # BatchNorm
        bn = [o for o in ops if o["name"].startswith("bn.")]
        if bn and m.get("batchnorm", 0) > 0:
            bn_bytes += sum(o["melems"] for o in bn) * 1e6  # elements
            bn_ms += m["batchnorm"] - sum(o["kernels"] for o in bn) * t_k
        # LayerNorm: residual after bandwidth and launch terms, against rows
        ln = [o for o in ops if re.match(r"(ln|ln1|ln2|lnf)\.", o["name"])]
        if ln:
            meas = m.get("layernorm", 0) + sum(v for n, v in top if "GammaBeta" in n)
            base = sum(o["gb"] / (bw * e_mem) * 1e3 + o["kernels"] * t_k for o in ln)
            ln_pts.append((sum(o["mrows"] for o in ln) * 1e6, meas - base, k["model"]))
        # depthwise convolution
        dw = [o for o in ops if o["name"] in ("dwconv", "dwconv.bwd")]
        if dw:
            meas = sum(v for n, v in top if re.search(r"c1_k1|grouped_direct|depthwise", n))
            pt = (sum(o["gflop"] for o in dw), sum(o["gb"] for o in dw), meas - sum(o["kernels"] for o in dw) * t_k,
                  k["model"])
            (dw7 if k["model"].startswith("convnext") else dw35).append(pt)
        # Transposing copies (nn.MultiheadAttention's): the profile's `layout` class less the model's other
        # copies and casts (contiguous, at the general bandwidth), against the transposes' bytes.
        tr = [o for o in ops if o["name"] in TRANSPOSE]
        if tr and m.get("layout", 0) > 0:
            other = [o for o in ops if o["name"] not in TRANSPOSE and re.search(r"cast|copy|grad_cat", o["name"])
                     and not o["name"].startswith("ce.")]
            tr_bytes += sum(o["gb"] for o in tr)
            tr_ms += m["layout"] - sum(o["ms"] for o in other) - sum(o["kernels"] for o in tr) * t_k
        per_model.append(k["model"])

    bn_rate = bn_bytes / (bn_ms * 1e-3) / 1e9 if bn_ms > 0 else 0  # G elements / s
    c_row_s = sum(r * y for r, y, _ in ln_pts) / sum(r * r for r, _, _ in ln_pts) * 1e-3 if ln_pts else 0
    e_dwf = sum(p[0] for p in dw7) / (r32 * sum(p[2] for p in dw7)) if dw7 else 0  # GFLOP / (TFLOP/s * ms) = 1
    e_dwm = sum(p[1] for p in dw35) / (bw * sum(p[2] for p in dw35) * 1e-3) if dw35 else 0
    e_tr = tr_bytes / (bw * tr_ms * 1e-3) if tr_ms > 0 else 0
    out = {
        "bn_gelements_per_s": round(bn_rate, 2),
        "norm_row_cost_ns": round(c_row_s * 1e9, 4),
        "transpose_efficiency": round(e_tr, 4),
        "dwconv_flop_efficiency": round(e_dwf, 4),
        "dwconv_memory_efficiency": round(e_dwm, 4),
        "source": "tools/fit_kernel_classes.py over " + os.path.basename(a.kernels) + " (" + ", ".join(per_model) + ")",
        "points": {"layernorm": [[n, r, round(y, 3)] for r, y, n in ln_pts],
                   "dwconv_7x7": [[p[3], p[0], p[1], round(p[2], 3)] for p in dw7],
                   "dwconv_3x3_5x5": [[p[3], p[0], p[1], round(p[2], 3)] for p in dw35]},
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
