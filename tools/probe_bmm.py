#!/usr/bin/env python3
"""torch.bmm alone on the small per-window products of Swin's attention.

Swin computes window attention with explicit batched matmuls: q @ k^T and attn @ v over B = batch x windows x heads
matrices of w^2 x head_dim (w^2 = 49 for Swin V1's 7x7 windows, 64 for V2's 8x8; head_dim 32), and their
backward products. Swin-T b128's profile (calibrate/probes/results/holdout8-kernels-2026-12-03.jsonl) spends
5.9 ms in these at 17-22 TFLOP/s: 49 is no multiple of 8, so cuBLAS runs an unaligned (align1) tensor-core kernel
far below the GEMM surface the compute model times a GEMM by. This probe times each product alone, bf16, with CUDA
events (mean of 20 back-to-back calls after warm-up), for B from 2,048 to 24,576 and w^2 in 49 and 64.

Products (as autograd runs them; T = a transposed view):
  qk     [B, m, d] @ [B, d, m]      (q @ k^T)          out m x m, k = d
  av     [B, m, m] @ [B, m, d]      (attn @ v)         out m x d, k = m
  dp     [B, m, d] @ [B, d, m]T     (grad @ v^T)       out m x m, k = d
  dv     [B, m, m]T @ [B, m, d]     (attn^T @ grad)    out m x d, k = m
  dq     [B, m, m] @ [B, m, d]      (dS @ k)           out m x d, k = m
  dk     [B, m, m]T @ [B, m, d]     (dS^T @ q)         out m x d, k = m

Writes one JSON line per product: product, batches, m, n, k, flops, ms, tflops, kernel.
Usage: python3 tools/probe_bmm.py OUT.jsonl
"""
import json
import sys

import torch

from torch_kernels import cuda_ms, first_kernel_name

D = 32


def products(b, m):
    bf = torch.bfloat16
    q = torch.randn(b, m, D, device="cuda", dtype=bf)
    kt = torch.randn(b, D, m, device="cuda", dtype=bf)
    p = torch.randn(b, m, m, device="cuda", dtype=bf)
    v = torch.randn(b, m, D, device="cuda", dtype=bf)
    vt = torch.randn(b, m, D, device="cuda", dtype=bf).transpose(1, 2)
    pt = torch.randn(b, m, m, device="cuda", dtype=bf).transpose(1, 2)
    return [
        ("qk", lambda: torch.bmm(q, kt), m, m, D),
        ("av", lambda: torch.bmm(p, v), m, D, m),
        ("dp", lambda: torch.bmm(q, vt), m, m, D),
        ("dv", lambda: torch.bmm(pt, v), m, D, m),
        ("dq", lambda: torch.bmm(p, v), m, D, m),
        ("dk", lambda: torch.bmm(pt, q), m, D, m),
    ]


def main():
    with open(sys.argv[1], "w") as f:
        for m in (49, 64):
            for b in (2048, 6144, 12288, 24576):
                for name, fn, mm, nn, kk in products(b, m):
                    ms = cuda_ms(fn, 20)
                    flops = 2.0 * b * mm * nn * kk
                    f.write(json.dumps({"product": name, "batches": b, "m": mm, "n": nn, "k": kk, "flops": flops,
                                        "ms": round(ms, 6), "tflops": round(flops / ms / 1e9, 2),
                                        "kernel": first_kernel_name(fn) if b == 6144 else ""}) + "\n")
                torch.cuda.empty_cache()
        f.write(json.dumps({"torch": torch.__version__, "device": torch.cuda.get_device_name()}) + "\n")


if __name__ == "__main__":
    main()
