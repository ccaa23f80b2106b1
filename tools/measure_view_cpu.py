#!/usr/bin/env python3
"""The CPU cost of a view-like call (view, transpose, permute, unsqueeze, ...) in an eager training step, measured
in pairs on one host.

Views launch no kernel, so the compute model did not charge them; torchvision's ViT issues 269 of them per step and
Swin-T 458 (tools/count_cpu_ops.py), each with an autograd node in the backward. This probe times the same launch-bound
GPT step (the harness's Block) with K extra pairs of views per block that undo each other (x.transpose(1, 2) then
back, x.view(b, t, h, -1) then back, x.unsqueeze(0) then squeeze(0), x.permute(0, 2, 1) then back: the tensor, and the
GPU's work, stay the same), for several K, interleaved over ROUNDS rounds: the slope of the host's issue time in K is
the cost of one view (its call and its backward node); the K = 0 step against the model's CPU time gives this host's
speed relative to the fitted constants. Writes `kind: train` records (the reference-run format, with
`extra_views_per_step`), `issue_ms` per record, and the host's launch probe.
Usage: python3 tools/measure_view_cpu.py OUT.jsonl [--rounds 6]
"""
import argparse
import sys

import torch
import torch.nn as nn

import measure_holdout as mh

PAIRS = (lambda x, b, t, c: x.transpose(1, 2).transpose(1, 2),
         lambda x, b, t, c: x.view(b, t, 4, c // 4).view(b, t, c),
         lambda x, b, t, c: x.unsqueeze(0).squeeze(0),
         lambda x, b, t, c: x.permute(0, 2, 1).permute(0, 2, 1))


class ViewBlock(mh.Block):
    """The harness's GPT block with `pairs` pairs of views on its input (2 x pairs view calls per block)."""

    def __init__(self, d, heads, pairs):
        super().__init__(d, heads)
        self.pairs = pairs

    def forward(self, x):
        b, t, c = x.shape
        for i in range(self.pairs):
            x = PAIRS[i % len(PAIRS)](x, b, t, c)
        return super().forward(x)


def build(layers, d, heads, seq, batch, pairs):
    c = mh.gpt(f"d{d}-l{layers}", layers, d, heads, seq, batch, optimizer="sgd-momentum", graphs=False)
    c["id"] = c["id"].replace("holdout/", "view-cpu/") + f"-views{2 * pairs * layers}"
    with torch.device("cuda"):
        model = mh.GPT(layers, d, heads, seq, False)
        model.blocks = nn.ModuleList(ViewBlock(d, heads, pairs) for _ in range(layers))
        model.head.weight = model.wte.weight
    model.train()
    opt = mh.make_optimizer(c["optimizer"], model.parameters())
    rec = mh.describe(c)
    rec["params"] = mh.n_params(model)
    rec["extra_views_per_step"] = 2 * pairs * layers
    return mh.gpt_step_fn(c, model, opt), rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--rounds", type=int, default=6)
    a = ap.parse_args()
    started = mh.begin_host_measurement("measure_view_cpu", "views")
    if not started:
        return 1
    common, before = started
    out = [before]
    group = []
    for layers, d, heads, seq, batch in ((4, 256, 4, 128, 8), (12, 768, 12, 256, 4)):
        for pairs in (0, 8, 16, 32):
            step, rec = build(layers, d, heads, seq, batch, pairs)
            for _ in range(5):
                step()
            torch.cuda.synchronize()
            group.append((step, rec))
    out += mh.time_interleaved([g[0] for g in group], [g[1] for g in group], common, a.rounds, 7, 10)
    return mh.end_host_measurement(a.out, out, common, "views")


if __name__ == "__main__":
    sys.exit(main())
