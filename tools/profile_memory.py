#!/usr/bin/env python3
"""Where a torchvision training step's peak memory comes from (torch.cuda memory statistics).

Same step as tools/measure_holdout.py's vision runs (channels_last, bf16 autocast, SGD with momentum,
cudnn.benchmark). After two warm-up steps, for one step: allocated bytes before the forward (weights, gradients
set to None, optimizer state), after the forward (+ activations saved for backward), the peak during backward, and
the peak over the whole step. Writes one JSON line per model (GiB).

Usage: python3 tools/profile_memory.py OUT.jsonl model:batch [model:batch ...]
"""
import json
import sys

import torch
import torch.nn.functional as F
import torchvision

GIB = 1024 ** 3


def run(name, batch):
    torch.backends.cudnn.benchmark = True
    model = getattr(torchvision.models, name)(weights=None).cuda().to(memory_format=torch.channels_last).train()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    x = torch.randn(batch, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (batch,), device="cuda")
    for _ in range(2):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x).float(), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = F.cross_entropy(model(x).float(), y)
    torch.cuda.synchronize()
    after_fwd = torch.cuda.memory_allocated()
    peak_fwd = torch.cuda.max_memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    loss.backward()
    torch.cuda.synchronize()
    peak_bwd = torch.cuda.max_memory_allocated()
    after_bwd = torch.cuda.memory_allocated()
    opt.step()
    opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    return {"model": name, "batch": batch, "before_fwd_gib": before / GIB, "after_fwd_gib": after_fwd / GIB,
            "saved_gib": (after_fwd - before) / GIB, "peak_fwd_gib": peak_fwd / GIB, "peak_bwd_gib": peak_bwd / GIB,
            "after_bwd_gib": after_bwd / GIB, "peak_gib": max(peak_fwd, peak_bwd) / GIB,
            "torch": torch.__version__, "device": torch.cuda.get_device_name()}


def main():
    with open(sys.argv[1], "w") as f:
        for spec in sys.argv[2:]:
            name, b = spec.split(":")
            try:
                rec = run(name, int(b))
            except Exception as e:  # one failing model must not lose the others
                rec = {"model": name, "batch": int(b), "error": repr(e)[:300]}
            print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in rec.items()}), flush=True)
            f.write(json.dumps(rec) + "\n")
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
