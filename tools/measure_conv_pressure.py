#!/usr/bin/env python3
"""Does a convolutional step slow down near the memory limit, or at a large batch? ResNet-50 bf16 channels-last
(SGD-momentum, cudnn.benchmark on, as tools/measure_holdout.py) at batch 1024, 2048 and 3072, and at batch 1024 again
with a filler tensor holding the device memory the batch-3072 step would use, so that cuDNN's autotuner sees as
little free memory for its workspaces. Writes train records (`filler_gib` says how much was held).

usage: python3 tools/measure_conv_pressure.py OUT.jsonl
"""
import gc
import json
import sys

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import measure_holdout as mh  # noqa: E402


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    common = mh.common_fields()
    cases = [(1024, 0), (2048, 0), (3072, 0), (1024, 84)]
    with open(sys.argv[1], "w") as f:
        for batch, filler_gib in cases:
            c = mh.vision("resnet50", batch, iters=6)
            c["id"] = f"pressure/resnet50-b{batch}-bf16" + (f"-filler{filler_gib}" if filler_gib else "")
            filler = torch.empty(int(filler_gib * mh.GIB), dtype=torch.uint8, device="cuda") if filler_gib else None
            rec = mh.measure(c, common)
            rec["filler_gib"] = filler_gib
            del filler
            gc.collect()
            torch.cuda.empty_cache()
            f.write(json.dumps(rec) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
