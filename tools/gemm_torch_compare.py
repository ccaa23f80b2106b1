#!/usr/bin/env python3
"""Times torch.matmul on the GEMM shapes of the reference runs' micro records, several ways, so that the
probe's cuBLAS figures (calibrate/profiles/h200.json) can be compared with what PyTorch sees on the same machine
(docs/calibration.md, "Probes and the H200 profile").

Methods, each after 3 warm-up calls, operands random:
  loop10   CUDA events around 10 back-to-back calls on the same operands, / 10 (launch gaps included when the
           kernel is shorter than PyTorch's per-call CPU cost)
  loop200  the same with enough calls to last >= 2 ms (launch gaps hidden)
  single   median of 10 single calls, each between two events after a synchronize
usage: python3 tools/gemm_torch_compare.py --out FILE.json
"""
import argparse
import json

import torch

SHAPES = [("bf16", s, s, s) for s in (1024, 2048, 4096, 8192)] + \
         [("fp16", s, s, s) for s in (1024, 2048, 4096, 8192)] + \
         [("tf32", s, s, s) for s in (1024, 2048, 4096, 8192)] + \
         [("fp32", s, s, s) for s in (1024, 2048, 4096, 8192)] + \
         [("bf16", 8192, 3072, 768), ("bf16", 8192, 768, 3072), ("bf16", 16384, 8192, 2048),
          ("bf16", 16384, 2048, 8192), ("bf16", 4096, 50304, 768)]
DT = {"bf16": torch.bfloat16, "fp16": torch.float16, "tf32": torch.float32, "fp32": torch.float32}


def timed(fn, n):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    a.record()
    for _ in range(n):
        fn()
    b.record()
    b.synchronize()
    return a.elapsed_time(b) / n


def measure(dtype, m, n, k, data):
    torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
    gen = (lambda *s: torch.randn(*s, device="cuda", dtype=DT[dtype])) if data == "randn" else \
          (lambda *s: torch.rand(*s, device="cuda", dtype=DT[dtype]) * 2 - 1)
    x, w = gen(m, k), gen(k, n)
    fn = lambda: torch.matmul(x, w)
    for _ in range(3):
        fn()
    t10 = timed(fn, 10)
    reps = max(10, min(400, int(2.0 / max(t10, 1e-4))))
    tl = timed(fn, reps)
    singles = sorted(timed(fn, 1) for _ in range(10))
    flop = 2.0 * m * n * k
    r = {"dtype": dtype, "m": m, "n": n, "k": k, "data": data}
    for name, ms in (("loop10", t10), ("loop", tl), ("single", 0.5 * (singles[4] + singles[5]))):
        r[name + "_ms"] = round(ms, 5)
        r[name + "_tflops"] = round(flop / (ms * 1e-3) / 1e12, 1)
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    for _ in range(200):  # ~0.3 s of large GEMMs: clocks up before the first timed shape
        x @ x
    rows = []
    for data in ("randn", "uniform"):
        for s in SHAPES:
            r = measure(*s, data)
            rows.append(r)
            print(f"{r['dtype']:4s} {r['m']:6d}x{r['n']:6d}x{r['k']:6d} {data:7s}  loop10 {r['loop10_tflops']:7.1f}  "
                  f"loop {r['loop_tflops']:7.1f}  single {r['single_tflops']:7.1f} TFLOP/s", flush=True)
    meta = {"torch": torch.__version__, "blas": str(torch.backends.cuda.preferred_blas_library()),
            "device": torch.cuda.get_device_name()}
    with open(a.out, "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
