#!/usr/bin/env python3
"""Why do convolutional steps slow down at very large batches (ResNet-50 b3072 -24.7%, EfficientNet-B4 b1265 -20.5%,
ResNet-152 tf32 b800 -13.6% in held-out sets 15-17)? Two hypotheses, measured separately:

1. Tensors over 2^31 elements. ResNet-50's stem output and stage-1 tensors hold 802,816 elements per sample, so
   they pass 2^31 between batch 2674 and 2675; EfficientNet-B4's stage-2 expansion (144 x 112 x 112) passes it at
   1189. PyTorch splits cuDNN convolutions over the batch when a tensor exceeds 32-bit indexing and may take other
   kernels for normalisation. Each operator below is timed per sample just under and just over the limit
   (`op` records: fwd_ms and fwd_bwd_ms, median of CUDA-event-timed repetitions after warm-up).
2. Little free device memory for cuDNN's autotuner workspaces. ResNet-50 b1024 and ResNet-152 tf32 b400 training
   steps, each in a fresh process (so that cudnn.benchmark's cache starts empty), without and with a filler
   tensor that leaves about as much memory free as the near-limit step had (`train` records with `filler_gib`).

usage: python3 tools/measure_large_tensor.py OUT.jsonl [--ops-only | --sweep]
(--ops-only: hypothesis 1 alone; the fillers of hypothesis 2 are sized for an H200's 139.8 GiB.
 --sweep: the shapes of the held-out steps that pass the limit, at their batch and under the limit, and the
 probed shapes at twice the limit: does the slow-down follow the class, the shape, the stride or the size? Fits an
 80 GB card.)
"""
import json
import subprocess
import sys

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import measure_holdout as mh  # noqa: E402

LIMIT = 2 ** 31


def timed(fn, reps=5, warmup=2):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return sorted(times)[len(times) // 2]


def op_cases():
    """(name, output elements per sample, module factory, input shape per sample), all bf16 channels-last."""
    return [
        ("stem-conv7x7s2-3to64", 64 * 112 * 112, lambda: torch.nn.Conv2d(3, 64, 7, 2, 3, bias=False), (3, 224, 224)),
        ("conv1x1-64to256-56", 256 * 56 * 56, lambda: torch.nn.Conv2d(64, 256, 1, bias=False), (64, 56, 56)),
        ("conv3x3-64to64-56", 64 * 56 * 56, lambda: torch.nn.Conv2d(64, 64, 3, 1, 1, bias=False), (64, 56, 56)),
        ("bn-256-56", 256 * 56 * 56, lambda: torch.nn.BatchNorm2d(256), (256, 56, 56)),
        ("relu-256-56", 256 * 56 * 56, lambda: torch.nn.ReLU(), (256, 56, 56)),
        ("maxpool3x3s2-64-112", 64 * 56 * 56, lambda: torch.nn.MaxPool2d(3, 2, 1), (64, 112, 112)),
        ("dwconv3x3-144-112", 144 * 112 * 112,
         lambda: torch.nn.Conv2d(144, 144, 3, 1, 1, groups=144, bias=False), (144, 112, 112)),
        ("bn-144-112", 144 * 112 * 112, lambda: torch.nn.BatchNorm2d(144), (144, 112, 112)),
        ("silu-144-112", 144 * 112 * 112, lambda: torch.nn.SiLU(), (144, 112, 112)),
    ]


def sweep_cases():
    """(name, module factory, input shape per sample, batches): RegNetY-16GF's first block at b1333 (its 224 x 112 x
    112 maps hold 2.81M elements per sample), EfficientNet-B4's stride-2 depthwise convolution at b1265 (input
    144 x 112 x 112), and the probed BatchNorm, SiLU and depthwise shapes at about twice the limit."""
    return [
        ("bn-224-112", lambda: torch.nn.BatchNorm2d(224), (224, 112, 112), (600, 1333)),
        ("conv1x1-32to224-112", lambda: torch.nn.Conv2d(32, 224, 1, bias=False), (32, 112, 112), (600, 1333)),
        ("gconv3x3s2-224-112-g2", lambda: torch.nn.Conv2d(224, 224, 3, 2, 1, groups=2, bias=False), (224, 112, 112),
         (600, 1333)),
        ("relu-224-112", lambda: torch.nn.ReLU(), (224, 112, 112), (600, 1333)),
        ("dwconv3x3s2-144-112", lambda: torch.nn.Conv2d(144, 144, 3, 2, 1, groups=144, bias=False), (144, 112, 112),
         (1172, 1265)),
        ("dwconv5x5-144-112", lambda: torch.nn.Conv2d(144, 144, 5, 1, 2, groups=144, bias=False), (144, 112, 112),
         (1172, 1204)),
        ("bn-144-112", lambda: torch.nn.BatchNorm2d(144), (144, 112, 112), (1265, 2400)),
        ("dwconv3x3-144-112", lambda: torch.nn.Conv2d(144, 144, 3, 1, 1, groups=144, bias=False), (144, 112, 112),
         (1265, 2400)),
        ("silu-144-112", lambda: torch.nn.SiLU(), (144, 112, 112), (2400,)),
        ("maxpool3x3s2-64-112", lambda: torch.nn.MaxPool2d(3, 2, 1), (64, 112, 112), (2658, 2690, 3072, 5000)),
        ("bn-256-56", lambda: torch.nn.BatchNorm2d(256), (256, 56, 56), (2658, 2690)),
        ("bn-144-112", lambda: torch.nn.BatchNorm2d(144), (144, 112, 112), (1172, 1204)),
        ("dwconv3x3-144-112", lambda: torch.nn.Conv2d(144, 144, 3, 1, 1, groups=144, bias=False), (144, 112, 112),
         (1172, 1204)),
    ]


def measure_ops(common, f, sweep=False):
    torch.backends.cudnn.benchmark = True
    cl = torch.channels_last
    cases = ([(n, None, m, s, b) for n, m, s, b in sweep_cases()] if sweep
             else [(n, o, m, s, None) for n, o, m, s in op_cases()])
    for name, out_per_sample, make, in_shape, batches in cases:
        in_per_sample = in_shape[0] * in_shape[1] * in_shape[2]
        if out_per_sample is None:
            with torch.no_grad():
                probe = make().cuda()(torch.zeros((1,) + in_shape, device="cuda"))
            out_per_sample = probe.numel()
        biggest = max(out_per_sample, in_per_sample)
        under = (LIMIT - 1) // biggest
        for batch in batches or (under // 2, under - 16, under + 16):
            mod = make().cuda().to(memory_format=cl)
            x = torch.randn((batch,) + in_shape, device="cuda", dtype=torch.bfloat16).to(memory_format=cl)
            x.requires_grad_(True)

            def fwd():
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    return mod(x)

            y = fwd()
            g = torch.ones_like(y)
            del y

            def fwd_bwd():
                y = fwd()
                if sweep:
                    x.grad = None  # no accumulation into x.grad: the backward alone (the first run added it)
                y.backward(g)

            rec = {"id": f"op/{name}-b{batch}", "kind": "op", "op": name, "batch": batch, "precision": "bf16",
                   "channels_last": True, "elements": batch * biggest, "over_2_31": batch * biggest >= LIMIT,
                   "fwd_ms": round(timed(fwd), 4), "fwd_bwd_ms": round(timed(fwd_bwd), 4),
                   "grad_accumulated": not sweep}
            rec["fwd_bwd_us_per_sample"] = round(1000 * rec["fwd_bwd_ms"] / batch, 4)
            rec.update(common)
            print(f"{rec['id']:<40} over={rec['over_2_31']!s:5} fwd {rec['fwd_ms']:9.3f} ms  fwd+bwd "
                  f"{rec['fwd_bwd_ms']:9.3f} ms  {rec['fwd_bwd_us_per_sample']:.3f} us/sample", flush=True)
            f.write(json.dumps(rec) + "\n")
            f.flush()
            del x, g, mod
            torch.cuda.empty_cache()


def train_case(model, batch, precision, filler_gib):
    """Runs in a fresh process: one training configuration beside a filler tensor; prints its record."""
    filler = torch.empty(int(filler_gib * mh.GIB), dtype=torch.uint8, device="cuda") if filler_gib else None
    c = mh.vision(model, batch, iters=6, precision=precision)
    c["id"] = f"pressure/{model}-b{batch}-{precision}" + (f"-filler{filler_gib}" if filler_gib else "")
    rec = mh.measure(c, mh.common_fields())
    rec["filler_gib"] = filler_gib
    rec["free_gib_with_filler"] = round(torch.cuda.mem_get_info()[0] / mh.GIB, 2) if filler is not None else None
    print("RECORD " + json.dumps(rec), flush=True)


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "--case":
        train_case(sys.argv[2], int(sys.argv[3]), sys.argv[4], float(sys.argv[5]))
        return 0
    ops_only = sys.argv[2:] == ["--ops-only"]
    sweep = sys.argv[2:] == ["--sweep"]
    if len(sys.argv) != 2 and not ops_only and not sweep:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    common = mh.common_fields()
    # (model, batch, precision, filler GiB): the filler leaves about the free memory of the near-limit step
    # (ResNet-50 b3072 peaked at 128.4 GiB, ResNet-152 tf32 b800 at 133.5 GiB, of 139.8 GiB).
    cases = [("resnet50", 1024, "bf16", 0), ("resnet50", 1024, "bf16", 85),
             ("resnet152", 400, "tf32", 0), ("resnet152", 400, "tf32", 66)]
    with open(sys.argv[1], "w") as f:
        measure_ops(common, f, sweep)
        for model, batch, precision, filler in ([] if ops_only or sweep else cases):
            p = subprocess.run([sys.executable, __file__, "--case", model, str(batch), precision, str(filler)],
                               capture_output=True, text=True)
            sys.stdout.write(p.stdout)
            sys.stderr.write(p.stderr[-2000:])
            for line in p.stdout.splitlines():
                if line.startswith("RECORD "):
                    f.write(line[len("RECORD "):] + "\n")
                    f.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
