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

Grouped convolutions (ResNeXt, RegNet; not depthwise), timed alone by wall clock pass by pass
(tools/probe_grouped_conv.py, each --grouped file: its grid of group widths 4-128, and every grouped 3x3 Conv2d
of ten ResNeXt and RegNet networks). cuDNN runs them at 1-700 TFLOP/s. (torch.profiler's kernel sums, as
tools/probe_conv_layout.py gives them, over-count RegNet's: cuDNN runs some of their kernels concurrently.) The
law, fitted by least squares on ln(time) (Nelder-Mead from two starts) over all those shapes, for the three passes:
    t = F / (R w / (w + w0)) x odd^[w not a power of two] x strided^[stride 2] + t0
w the channels per group, F the FLOPs of the three passes; the model charges a third of F's term and of t0 per
pass. Group widths that are not powers of two (RegNet's 24, 48, 56) run several times slower.
With --grouped-busy (tools/probe_conv_layout.py --grouped-only: the GPU busy time of each convolution's three
passes, the union of its kernels' intervals) the law is fitted on those instead: wall time around each call counts
the launch gaps of small shapes (the old t0 came to 55 us per pass, which the GPU does not spend in a training
step, where the CPU runs ahead), and kernel sums count concurrent kernels twice.

torch.roll (tools/probe_roll.py, --roll: Swin's shifted-window rolls on [N, H, W, C] maps, fp32 and bf16): its
kernel computes a source index per element, and its time follows the elements whatever their width (fp32 and
bf16 within 10%), at ~110 G elements/s, a sixth of the copy bandwidth in fp32. Pooled over the shifted shapes:
r = sum elements / sum t.

Copies along the channels of channels-last maps (tools/probe_cat.py, --cat: torch.cat along dim 1, ShuffleNetV2's
channel shuffle, a channel half made contiguous, over ShuffleNetV2's, DenseNet's and GoogLeNet's shapes): each
pixel's channels move as short runs, at 600-1,800 GB/s against ~4,400 for a plain copy. One rate (bytes read +
written per second, from the shape: 4 B per element of each side in bf16) per kind, pooled: r = sum bytes / sum t.

Elementwise kernels by PyTorch's path (tools/probe_elementwise.py, --elementwise): one rate (bytes read + written
per second) each for the unrolled kernel (an operand cast inside it), the generic broadcast kernel and the exact
GELU, pooled over the path's cases at 2^24 elements and more.

Small batched matmuls (tools/probe_bmm.py, --bmm: Swin's window-attention products): one FLOP rate for those with
every dimension a multiple of 8 and one for the rest, pooled over 6,144 matrices and more.

Channels-last BatchNorm (tools/probe_bn.py, --bn) and fp32 LayerNorm (tools/probe_ln.py, --ln): forward and
backward rates (elements per second) per probed shape, written as samples for the model to interpolate over rows
and channels, as the per-channel sums.

Tensors over 2^31 - 1 elements (tools/measure_large_tensor.py, --large-tensor, repeatable: each operator alone,
bf16 channels-last, just under and just over the limit, and in the --sweep run other shapes and twice the limit):
PyTorch's BatchNorm, max-pool forward and depthwise convolution kernels slow down there (64-bit index arithmetic),
convolutions, ReLU and SiLU do not. BatchNorm and max-pool: one rate per class and phase over the records over the
limit, pooled: r = sum amount / sum t, the amount being BatchNorm's map elements or the max-pool's walked elements
(input + output x k^2). Depthwise convolution: t = output elements / R_e + input FLOPs / R_f per pass (input FLOPs
= 2 x input elements x k^2; the backward has two passes), the two rates fitted in log space over its 3x3, 5x5 and
stride-2 shapes. Backward time = fwd_bwd_ms - fwd_ms, from the records that did not accumulate into x.grad where
a class has any.

Usage: python3 tools/fit_probe_classes.py POOL.jsonl CONV_LAYOUT.jsonl CHANNEL_SUM.jsonl [--fit F]
           [--grouped GROUPED.jsonl ...] [--roll ROLL.jsonl] [--elementwise EW.jsonl] [--bmm BMM.jsonl]
           [--grouped-busy BUSY.jsonl ...] [--cat CAT.jsonl] [--bn BN.jsonl] [--bn-fp16 F.jsonl] [--bn-fp32 F.jsonl] [--ln LN.jsonl]
           [--large-tensor LARGE.jsonl ...]
Prints the constants as JSON (calibrate/profiles/probe-classes-<gpu>.json; `gpuplan calibrate fit --probe-classes`).
"""
import argparse
import json
import math
import re
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


def grouped_points(paths):
    """(F of the three passes, group width, strided, wall ms) per grouped convolution of the probe files."""
    pts = []
    for path in paths:
        for line in open(path):
            r = json.loads(line)
            if "c" not in r or "error" in r or r["groups"] == 1 or r["groups"] == r["c"]:
                continue
            ho = (r["h"] + 2 - 3) // r["stride"] + 1
            gw = r["c"] // r["groups"]
            flops = 3 * 2.0 * r["n"] * ho * ho * gw * 9 * r["c"]
            pts.append((flops, gw, r["stride"] > 1, r["fwd_ms"] + r["dgrad_ms"] + r["wgrad_ms"]))
    return pts


def grouped_busy_points(paths):
    """(F of the three passes, group width, strided, GPU busy ms) per grouped convolution of probe_conv_layout.py
    --grouped-only files (channels-last; shapes repeated across files count once)."""
    pts, seen = [], set()
    for path in paths:
        for line in open(path):
            r = json.loads(line)
            if "c_in" not in r or "busy" not in r.get("nhwc", {}) or r["groups"] in (1, r["c_in"]):
                continue
            key = (r["batch"], r["c_in"], r["h"], r["w"], r["c_out"], tuple(r["k"]), tuple(r["stride"]), r["groups"])
            if key in seen:
                continue
            seen.add(key)
            kh, kw = r["k"]
            ho = (r["h"] + 2 * r["pad"][0] - kh) // r["stride"][0] + 1
            wo = (r["w"] + 2 * r["pad"][1] - kw) // r["stride"][1] + 1
            gw = r["c_in"] // r["groups"]
            flops = 3 * 2.0 * r["batch"] * ho * wo * gw * kh * kw * r["c_out"]
            pts.append((flops, gw, r["stride"][0] > 1, r["nhwc"]["busy"][0]))
    return pts


def grouped_time(p, flops, gw, strided):
    log_r, log_w0, log_t0, log_odd, log_s2 = p
    t = flops / (math.exp(log_r) * gw / (gw + math.exp(log_w0))) * 1e3
    if gw & (gw - 1):
        t *= math.exp(log_odd)
    if strided:
        t *= math.exp(log_s2)
    return t + math.exp(log_t0)


def nelder_mead(f, x0, step=0.5, iters=4000):
    n = len(x0)
    pts = [list(x0)] + [[x0[j] + (step if j == i else 0) for j in range(n)] for i in range(n)]
    vals = [f(q) for q in pts]
    for _ in range(iters):
        order = sorted(range(n + 1), key=lambda i: vals[i])
        pts, vals = [pts[i] for i in order], [vals[i] for i in order]
        c = [sum(pts[i][j] for i in range(n)) / n for j in range(n)]
        xr = [c[j] + (c[j] - pts[-1][j]) for j in range(n)]
        fr = f(xr)
        if fr < vals[0]:
            xe = [c[j] + 2 * (c[j] - pts[-1][j]) for j in range(n)]
            fe = f(xe)
            pts[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = xr, fr
        else:
            xc = [c[j] + 0.5 * (pts[-1][j] - c[j]) for j in range(n)]
            fc = f(xc)
            if fc < vals[-1]:
                pts[-1], vals[-1] = xc, fc
            else:
                for i in range(1, n + 1):
                    pts[i] = [pts[0][j] + 0.5 * (pts[i][j] - pts[0][j]) for j in range(n)]
                    vals[i] = f(pts[i])
    return pts[0], vals[0]


def fit_grouped(pts):
    def loss(p):
        return sum(math.log(grouped_time(p, f, w, s) / t) ** 2 for f, w, s, t in pts)
    starts = ([math.log(5e14), math.log(32), math.log(0.05), math.log(5), math.log(1.5)],
              [math.log(1e14), math.log(4), math.log(0.1), math.log(9), math.log(2)])
    return min((nelder_mead(loss, x0) for x0 in starts), key=lambda pv: pv[1])


def large_tensor_amounts(op):
    """(class, forward amount, backward amount) per sample of a measure_large_tensor.py operator name, or None for
    the operators that do not slow down over 2^31 elements (convolutions, ReLU, SiLU). A depthwise convolution's
    amounts are pairs (output elements, input FLOPs = 2 x input elements x k^2) per pass: see dwconv_rates."""
    m = re.fullmatch(r"([a-z0-9x]+)-(\d+)-(\d+)", op)
    if not m:
        return None
    kind, c, h = m.group(1), int(m.group(2)), int(m.group(3))
    if kind == "bn":
        return "bn", c * h * h, c * h * h
    if kind == "maxpool3x3s2":
        walked = c * h * h + c * (h // 2) ** 2 * 9
        return "max_pool", walked, None  # the backward does not slow down (within 1%): no class
    m = re.fullmatch(r"dwconv(\d)x\1(s2)?", kind)
    if m:
        k, s = int(m.group(1)), 2 if m.group(2) else 1
        pair = (c * (h // s) ** 2, 2 * c * h * h * k * k)
        return "dwconv", pair, (2 * pair[0], 2 * pair[1])  # the backward: input and weight gradients
    return None


def large_tensor_records(paths):
    """The operator records of measure_large_tensor.py files that have a wide-index class."""
    for path in paths:
        for line in open(path):
            r = json.loads(line)
            if r.get("kind") == "op" and large_tensor_amounts(r["op"]):
                yield r


def dwconv_rates(points):
    """(output elements/s, input FLOP/s): the two-term time t = out / R_e + input_flops / R_f fitted in log space
    over depthwise convolutions of several kernels and strides (a FLOP rate alone misses the 5x5 and the stride-2
    shapes by -45% and +80%: the wide kernels pay per output written and per input multiply-add)."""
    def loss(x):
        re_, rf = math.exp(x[0]), math.exp(x[1])
        return sum(math.log((e / re_ + f / rf) / t) ** 2 for e, f, t in points)
    x, _ = nelder_mead(loss, [math.log(3e10), math.log(1e12)])
    re_, rf = math.exp(x[0]), math.exp(x[1])
    errs = [(e / re_ + f / rf) / t - 1 for e, f, t in points]
    return re_, rf, {"points": len(points), "max_abs_error": round(max(abs(v) for v in errs), 4)}


def large_tensor_rates(paths):
    """[(key, rate, stats name, stats)] over the limit: BatchNorm and max-pool in G elements/s pooled over their shapes (and for
    comparison the pooled rate just under the limit), depthwise convolution by dwconv_rates. For an operator
    (bn, dwconv3x3, ...) with records whose backward did not also accumulate into x.grad (`grad_accumulated:
    false`, the --sweep run), its backward rate comes from those alone."""
    recs = list(large_tensor_records(paths))
    clean = {r["op"].split("-")[0] for r in recs if r.get("grad_accumulated") is False}
    sums, dw = {}, {"fwd": [], "bwd": []}
    for r in recs:
        cls, fa, ba = large_tensor_amounts(r["op"])
        n, t_f, t_b = r["batch"], r["fwd_ms"] * 1e-3, (r["fwd_bwd_ms"] - r["fwd_ms"]) * 1e-3
        bwd_ok = ba is not None and (r.get("grad_accumulated") is False or r["op"].split("-")[0] not in clean)
        if cls == "dwconv":
            if r["over_2_31"]:
                dw["fwd"].append((fa[0] * n, fa[1] * n, t_f))
                if bwd_ok:
                    dw["bwd"].append((ba[0] * n, ba[1] * n, t_b))
            continue
        side = "over" if r["over_2_31"] else ("under" if r["elements"] > (1 << 30) * 1.5 else None)
        if not side:
            continue
        s = sums.setdefault(cls, {"over": [0, 0, 0, 0], "under": [0, 0, 0, 0], "shapes": set()})
        s[side][0] += fa * n
        s[side][1] += t_f
        if bwd_ok:
            s[side][2] += ba * n
            s[side][3] += t_b
        s["shapes"].add(r["op"])
    res = []
    for cls, s in sorted(sums.items()):
        def rate(v, i):
            return v[i] / (v[i + 1] * 1e9) if v[i + 1] > 0 else None  # per s -> G per s
        st = {"shapes": sorted(s["shapes"]),
              "under_limit_fwd": round(rate(s["under"], 0), 2) if rate(s["under"], 0) else None,
              "under_limit_bwd": round(rate(s["under"], 2), 2) if rate(s["under"], 2) else None}
        res.append((f"wide_{cls}_fwd_gelements_per_s", rate(s["over"], 0), f"wide_{cls}", st))
        res.append((f"wide_{cls}_bwd_gelements_per_s", rate(s["over"], 2), f"wide_{cls}", st))
    for d in ("fwd", "bwd"):
        if dw[d]:
            re_, rf, st = dwconv_rates(dw[d])
            res.append((f"wide_dwconv_{d}_gelements_per_s", re_ / 1e9, f"wide_dwconv_{d}", st))
            res.append((f"wide_dwconv_{d}_input_gflops", rf / 1e9, f"wide_dwconv_{d}", st))
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pool")
    ap.add_argument("conv_layout")
    ap.add_argument("channel_sum")
    ap.add_argument("--fit", default="calibrate/profiles/fit-h200.json", help="fit file (gemm_surface bf16 rate)")
    ap.add_argument("--grouped", action="append", default=[],
                    help="tools/probe_grouped_conv.py output (grouped convolutions by pass); repeat for several")
    ap.add_argument("--grouped-busy", action="append", default=[],
                    help="tools/probe_conv_layout.py --grouped-only output (GPU busy time); replaces --grouped")
    ap.add_argument("--cat", help="tools/probe_cat.py output (channel cat / shuffle / split, channels-last)")
    ap.add_argument("--roll", help="tools/probe_roll.py output (torch.roll alone)")
    ap.add_argument("--elementwise", help="tools/probe_elementwise.py output (elementwise kernels by path)")
    ap.add_argument("--bmm", help="tools/probe_bmm.py output (small batched matmuls alone)")
    ap.add_argument("--bn", help="tools/probe_bn.py output (channels-last BatchNorm alone)")
    ap.add_argument("--bn-fp16", help="tools/probe_bn.py --dtype fp16 output (cuDNN's BatchNorm, fp16 maps)")
    ap.add_argument("--bn-fp32", help="tools/probe_bn.py --dtype fp32 output (cuDNN's BatchNorm, fp32 maps)")
    ap.add_argument("--ln", help="tools/probe_ln.py output (fp32 LayerNorm alone)")
    ap.add_argument("--large-tensor", action="append", default=[],
                    help="tools/measure_large_tensor.py output (operators over 2^31 elements); repeat for several")
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
    gp = grouped_busy_points(a.grouped_busy) if a.grouped_busy else grouped_points(a.grouped)
    if gp:
        p, sse = fit_grouped(gp)
        out["grouped_conv_tflops"] = round(math.exp(p[0]) / 1e12, 2)
        out["grouped_conv_w0"] = round(math.exp(p[1]), 2)
        out["grouped_conv_odd_factor"] = round(math.exp(p[3]), 3)
        out["grouped_conv_stride_factor"] = round(math.exp(p[4]), 3)
        out["grouped_conv_pass_us"] = round(math.exp(p[2]) * 1e3 / 3, 2)
        stats["grouped_conv"] = {"shapes": len(gp), "rms_log_error": round(math.sqrt(sse / len(gp)), 4)}
    if a.roll:
        rp = []
        for line in open(a.roll):
            r = json.loads(line)
            if "ms" in r and r.get("shift", 0) > 0:
                rp.append((r["n"] * r["h"] * r["w"] * r["c"], r["ms"]))
        rate = sum(e for e, _ in rp) / sum(t for _, t in rp) / 1e6  # G elements / s
        errs = [abs(e / (rate * 1e6) / t - 1) for e, t in rp]
        out["roll_gelements_per_s"] = round(rate, 2)
        stats["roll"] = {"shapes": len(rp), "mean_abs_error": round(sum(errs) / len(errs), 4),
                         "max_abs_error": round(max(errs), 4)}
    if a.cat:
        rows = [json.loads(line) for line in open(a.cat)]
        for kind in ("cat", "shuffle", "split"):
            pts = []
            for r in rows:
                if r.get("op") != kind or r["ms"] <= 0:
                    continue
                elems = r["N"] * r["H"] * r["W"] * (sum(r["parts"]) if kind == "cat" else r["C"])
                pts.append(((2 if kind == "split" else 4) * elems, r["ms"]))  # split moves half the channels
            rate = sum(b for b, _ in pts) / sum(t for _, t in pts) / 1e6  # GB/s
            errs = [abs(b / (rate * 1e6) / t - 1) for b, t in pts]
            out[f"channel_{kind}_GBps"] = round(rate, 1)
            stats[f"channel_{kind}"] = {"shapes": len(pts), "mean_abs_error": round(sum(errs) / len(errs), 4),
                                        "max_abs_error": round(max(errs), 4)}
    if a.elementwise:
        # PyTorch's slow elementwise paths, each one rate (GB/s, bytes read + written) pooled over its cases at
        # 2^24 elements and more, where the GPU time dominates the back-to-back calls' launch cost:
        # unrolled_elementwise_kernel (an operand cast in the kernel: bf16 -> fp32 copy, fp32 + bf16), the
        # generic elementwise_kernel (a broadcast operand: [N,1,1,1], [C,1,1], [1,C,1,1]) and the exact GELU
        # (vectorised, but bound by its arithmetic).
        paths = {"unrolled": ("cast_to_fp32", "add_mixed"),
                 "broadcast": ("mul_batch_bf16", "mul_channel_mix", "add_channel_bf16"),
                 "gelu": ("gelu_bf16", "gelu_bwd_bf16")}
        rows = [json.loads(line) for line in open(a.elementwise)]
        for path, cases in paths.items():
            pts = [(r["bytes"], r["ms"]) for r in rows if r.get("case") in cases and r["elements"] >= 1 << 24]
            rate = sum(b for b, _ in pts) / sum(t for _, t in pts) / 1e6  # GB/s
            errs = [abs(b / (rate * 1e6) / t - 1) for b, t in pts]
            out[f"elementwise_{path}_GBps"] = round(rate, 1)
            stats[f"elementwise_{path}"] = {"shapes": len(pts), "cases": list(cases),
                                            "mean_abs_error": round(sum(errs) / len(errs), 4),
                                            "max_abs_error": round(max(errs), 4)}
    if a.bmm:
        # Small batched matmuls, one FLOP rate for those with every dimension a multiple of 8 and one for the
        # rest, pooled (sum FLOPs / sum time) over batches of 6,144 and more (smaller ones time the launch).
        rows = [json.loads(line) for line in open(a.bmm)]
        for kind in ("aligned", "unaligned"):
            pts = [(r["flops"], r["ms"]) for r in rows if "product" in r and r["batches"] >= 6144
                   and (all(r[d] % 8 == 0 for d in ("m", "n", "k")) == (kind == "aligned"))]
            rate = sum(f for f, _ in pts) / sum(t for _, t in pts) / 1e9  # TFLOP/s
            errs = [abs(f / (rate * 1e9) / t - 1) for f, t in pts]
            out[f"bmm_{kind}_tflops"] = round(rate, 2)
            stats[f"bmm_{kind}"] = {"shapes": len(pts), "mean_abs_error": round(sum(errs) / len(errs), 4),
                                    "max_abs_error": round(max(errs), 4)}
    # Channels-last BatchNorm and fp32 LayerNorm: forward and backward rates (G elements / s) per probed shape
    # (rows = N x H x W or tokens, channels), for the model to interpolate as it does the per-channel sums.
    for key, path, rows_of in (("bn_nhwc", a.bn, lambda r: r["N"] * r["H"] * r["W"]),
                               ("bn_nhwc_fp16", a.bn_fp16, lambda r: r["N"] * r["H"] * r["W"]),
                               ("bn_nhwc_fp32", a.bn_fp32, lambda r: r["N"] * r["H"] * r["W"]),
                               ("ln", a.ln, lambda r: r["rows"])):
        if not path:
            continue
        out[key] = []
        for line in open(path):
            r = json.loads(line)
            if "C" not in r or r["fwd_ms"] <= 0 or r["bwd_ms"] <= 0:
                continue
            rows = rows_of(r)
            n = rows * r["C"]
            out[key].append({"rows": rows, "channels": r["C"],
                             "fwd_gelements_per_s": round(n / (r["fwd_ms"] * 1e6), 3),
                             "bwd_gelements_per_s": round(n / (r["bwd_ms"] * 1e6), 3)})
        stats[key] = {"samples": len(out[key])}
    if a.large_tensor:
        for key, rate, name, st in large_tensor_rates(a.large_tensor):
            if rate:
                out[key] = round(rate, 2)
                stats[name] = st
    out["channel_sum"] = []
    for line in open(a.channel_sum):
        r = json.loads(line)
        if "N" not in r or r["ms"] <= 0:
            continue
        rows = r["N"] * r["H"] * r["W"]
        out["channel_sum"].append({"rows": rows, "channels": r["C"], "layout": "nhwc" if r["channels_last"] else "nchw",
                                   "gelements_per_s": round(rows * r["C"] / (r["ms"] * 1e6), 3)})
    stats["channel_sum"] = {"samples": len(out["channel_sum"])}
    inputs = (a.cat, a.roll, a.elementwise, a.bmm, a.bn, a.bn_fp16, a.bn_fp32, a.ln, *a.large_tensor)
    extra = "".join(f", {os.path.basename(x)}" for x in a.grouped + a.grouped_busy + [p for p in inputs if p])
    out["source"] = (f"tools/fit_probe_classes.py over {os.path.basename(a.pool)}, "
                     f"{os.path.basename(a.conv_layout)}{extra} and {os.path.basename(a.channel_sum)}, bf16 large-GEMM rate "
                     f"{rate_bf16:.1f} TFLOP/s from the fit")
    out["fit"] = stats
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
