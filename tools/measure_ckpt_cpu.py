#!/usr/bin/env python3
"""The CPU cost of activation checkpointing, measured in pairs on one host.

torch.utils.checkpoint (non-reentrant, use_reentrant=False, as the harness and PyTorch recommend) runs the block
forward under saved-tensor hooks: every tensor autograd saves goes through a Python pack hook, the backward's first
unpack re-runs the block's forward from Python, and each recomputed tensor passes the hooks again. A held-out
checkpointed gpt-350m b8 step ran 12-23% slower than predicted with the GPU time right: its host issue time doubles
with checkpointing (docs/calibration.md, "Activation checkpointing's CPU cost").

For each GPT size and optimizer this times the same step with and without checkpointing, interleaved over ROUNDS
rounds: the host's issue time alone (after a synchronize, until step() returns; median) and the pipelined step time.
Writes `kind: train` records in the reference-run format (so `gpuplan calibrate check` predicts them) with `step_ms`
(pipelined, median over rounds), `issue_ms` and `issue_ms_rounds`, and the host's launch probe before and after.
Usage: python3 tools/measure_ckpt_cpu.py OUT.jsonl [--rounds 4]
"""
import argparse
import gc
import sys

import torch

import measure_holdout as mh

SIZES = [("gpt-124m", 12, 768, 12, 1024, 4), ("d512-l8", 8, 512, 8, 512, 8), ("gpt-350m", 24, 1024, 16, 1024, 8),
         ("gpt-760m", 24, 1536, 16, 1024, 4), ("gpt-1.3b", 24, 2048, 16, 1024, 2)]
OPTIMIZERS = ["adamw-fused", "sgd-momentum"]


def build(c):
    with torch.device("cuda"):
        model = mh.GPT(c["layers"], c["d_model"], c["heads"], c["seq"], c["activation_checkpointing"])
    model.train()
    opt = mh.make_optimizer(c["optimizer"], model.parameters())
    rec = mh.describe(c)
    rec["params"] = mh.n_params(model)
    return mh.gpt_step_fn(c, model, opt), rec, (model, opt)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--rounds", type=int, default=4)
    a = ap.parse_args()
    started = mh.begin_host_measurement("measure_ckpt_cpu", "ckpt")
    if not started:
        return 1
    common, before = started
    out = [before]
    for size, layers, d, heads, seq, batch in SIZES:
        group = []
        for opt_name in OPTIMIZERS:
            for ckpt in (False, True):
                c = mh.gpt(size, layers, d, heads, seq, batch, optimizer=opt_name, ckpt=ckpt)
                c["id"] = c["id"].replace("holdout/", "ckpt-cpu/")
                step, rec, keep = build(c)
                for _ in range(4):
                    step()
                torch.cuda.synchronize()
                group.append((step, rec, keep))
        out += mh.time_interleaved([g[0] for g in group], [g[1] for g in group], common, a.rounds, 5, 8)
        del group
        gc.collect()
        torch.cuda.empty_cache()
    return mh.end_host_measurement(a.out, out, common, "ckpt")


if __name__ == "__main__":
    sys.exit(main())
