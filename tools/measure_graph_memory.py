#!/usr/bin/env python3
"""What a CUDA-graph training step holds on the GPU, against what torch.cuda.max_memory_allocated reports.

The reference runs measured GPT-124M b16 x 1,024 tokens at 17.77 GiB eager and 1.71 GiB as a CUDA graph by
torch.cuda.max_memory_allocated() over the timed steps: the graph's private memory pool, which holds the captured
step's activations, is not counted there. `gpuplan run` shows the step's peak with the pool (memory_gib_per_gpu);
this measures the pool directly: per mode, max_memory_allocated over the timed steps (as the reference runs),
torch.cuda.memory_reserved() (every segment the caching allocator holds, the graph pool included) and the device
memory in use by the process (cudaMemGetInfo, the CUDA context included). Each mode runs in a fresh process.

usage: python3 tools/measure_graph_memory.py --out FILE.jsonl
"""
import argparse
import json
import os
import subprocess
import sys

GIB = 1024 ** 3


def one(mode):
    import torch
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import measure_holdout as mh
    c = mh.gpt("124m", 12, 768, 12, 1024, 16, optimizer="sgd-momentum", graphs=(mode == "graph"), iters=10)
    free0, total = torch.cuda.mem_get_info()
    with torch.device("cuda"):
        model = mh.GPT(c["layers"], c["d_model"], c["heads"], c["seq"], False, True)
    model.train()
    mh.set_precision_flags("bf16")
    opt = mh.make_optimizer(c["optimizer"], model.parameters())
    step = mh.gpt_step_fn(c, model, opt)
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    for _ in range(c["iters"]):
        step()
    torch.cuda.synchronize()
    free1, _ = torch.cuda.mem_get_info()
    return {"id": "graph-memory/gpt-124m-b16-s1024-bf16-sgdm-" + mode, "cuda_graphs": mode == "graph",
            "max_memory_allocated_gib": round(torch.cuda.max_memory_allocated() / GIB, 3),
            "max_memory_reserved_gib": round(torch.cuda.max_memory_reserved() / GIB, 3),
            "memory_reserved_gib": round(torch.cuda.memory_reserved() / GIB, 3),
            "device_used_by_process_gib": round((free0 - free1) / GIB, 3),
            "device": torch.cuda.get_device_name(), "torch": torch.__version__}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--mode", choices=("eager", "graph"))
    a = ap.parse_args()
    if a.mode:
        print(json.dumps(one(a.mode)))
        return
    with open(a.out, "w") as f:
        for mode in ("eager", "graph"):
            r = subprocess.run([sys.executable, __file__, "--out", a.out, "--mode", mode], capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"{mode}: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode}")
            line = r.stdout.strip().splitlines()[-1]
            print(line)
            f.write(line + "\n")


if __name__ == "__main__":
    main()
