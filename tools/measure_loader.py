#!/usr/bin/env python3
"""Measure ResNet-50 training fed by a CPU JPEG pipeline, in the format of the reference runs' loader records.

Held-out check of the data-loader simulation (issue 4): the same pipeline as the reference runs' `data:
cpu-jpeg-pipeline` records (README: a ~100 KB 375x500 JPEG decoded on the CPU with torchvision.io.decode_jpeg,
RandomResizedCrop to 224, horizontal flip, normalize; ResNet-50, batch 256, bf16 autocast, channels_last,
SGD with momentum), on whatever host this runs on. The JPEGs are made here: smooth random images plus noise,
encoded at a quality that gives about 100 KB each, held in memory (no disk I/O, as a warm page cache).

Writes one `kind: micro`, `probe: cpu_sample` record (single-thread cost per sample, torch.set_num_threads(1),
median of 5 passes over 64 samples) and one `kind: train` record per DataLoader configuration with
step_ms = wall time of `iters` steps after 3 warm-up steps / iters, samples_per_s, first_batch_s, gpu_util_pct
(NVML, 50 ms), sample_cpu_ms_1thread and host.cpu_cores (os.cpu_count()).

usage: python3 tools/measure_loader.py --out FILE.jsonl [--workers 0,1,2,4,8,12,15]
"""
import argparse
import datetime
import io
import json
import os
import sys
import threading
import time

import torch
import torch.nn.functional as F
import torchvision
from torchvision.io import decode_jpeg, encode_jpeg
from torchvision.transforms import v2

BATCH = 256
N_IMAGES = 1024


def make_jpegs(n, seed=0):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        base = torch.rand(3, 24, 32, generator=g)
        img = F.interpolate(base[None], size=(375, 500), mode="bicubic", align_corners=False)[0]
        img = (img + 0.08 * torch.randn(3, 375, 500, generator=g)).clamp(0, 1)
        out.append(encode_jpeg((img * 255).to(torch.uint8), quality=90))
    return out


class JpegDataset(torch.utils.data.Dataset):
    def __init__(self, jpegs, length):
        self.jpegs = jpegs
        self.length = length
        self.tf = v2.Compose([v2.RandomResizedCrop(224, antialias=True), v2.RandomHorizontalFlip(),
                              v2.ToDtype(torch.float32, scale=True),
                              v2.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])

    def __len__(self):
        return self.length

    def __getitem__(self, i):
        img = decode_jpeg(self.jpegs[i % len(self.jpegs)])
        return self.tf(img), i % 1000


class GpuSampler:
    def __init__(self):
        self.util, self.stop = [], threading.Event()

    def __enter__(self):
        try:
            import pynvml
            pynvml.nvmlInit()
            h = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())

            def run():
                while not self.stop.is_set():
                    self.util.append(pynvml.nvmlDeviceGetUtilizationRates(h).gpu)
                    time.sleep(0.05)
            self.t = threading.Thread(target=run, daemon=True)
            self.t.start()
        except Exception:
            self.t = None
        return self

    def __exit__(self, *exc):
        self.stop.set()
        if self.t:
            self.t.join()

    def mean(self):
        return round(sum(self.util) / len(self.util), 1) if self.util else None


def sample_cost_ms(ds):
    torch.set_num_threads(1)
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        for i in range(64):
            ds[i]
        times.append((time.perf_counter() - t0) * 1000 / 64)
    torch.set_num_threads(os.cpu_count())
    return sorted(times)[2]


def run(workers, pin, ds, model, opt, iters):
    kw = dict(batch_size=BATCH, shuffle=True, num_workers=workers, pin_memory=pin, drop_last=True)
    if workers > 0:
        kw.update(persistent_workers=True, prefetch_factor=2)
    t_start = time.perf_counter()
    loader = torch.utils.data.DataLoader(ds, **kw)
    it = iter(loader)

    def step(batch):
        x, y = batch
        x = x.cuda(non_blocking=pin).to(memory_format=torch.channels_last)
        y = y.cuda(non_blocking=pin)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x).float(), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    first = next(it)
    first_batch_s = time.perf_counter() - t_start
    step(first)
    for _ in range(2):
        step(next(it))
    torch.cuda.synchronize()
    with GpuSampler() as g:
        t0 = time.perf_counter()
        for _ in range(iters):
            step(next(it))
        torch.cuda.synchronize()
        step_ms = (time.perf_counter() - t0) * 1000 / iters
    del it, loader
    return step_ms, first_batch_s, g.mean()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--workers", default="0,1,2,4,8,12,15")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("measure_loader: no CUDA device", file=sys.stderr)
        return 1
    jpegs = make_jpegs(N_IMAGES)
    mean_bytes = sum(j.numel() for j in jpegs) / len(jpegs)
    ds = JpegDataset(jpegs, length=BATCH * 200)
    cpu_ms = sample_cost_ms(ds)
    torch.backends.cudnn.benchmark = True
    model = torchvision.models.resnet50(weights=None).cuda().to(memory_format=torch.channels_last).train()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    today = datetime.date.today().isoformat()
    host = {"cpu_cores": os.cpu_count()}
    common = {"device": torch.cuda.get_device_name(), "measured_on": today,
              "software": {"torch": torch.__version__, "torchvision": torchvision.__version__}}
    with open(a.out, "w") as f:
        f.write(json.dumps({"id": "loader2/cpu-sample-cost", "kind": "micro", "probe": "cpu_sample",
                            "jpeg_bytes_mean": round(mean_bytes), "image_hw": [375, 500], "out_hw": [224, 224],
                            "ms_per_sample_1thread": round(cpu_ms, 3), **common}) + "\n")
        print(f"sample cost {cpu_ms:.3f} ms, jpeg {mean_bytes / 1000:.0f} KB", flush=True)
        for w in [int(x) for x in a.workers.split(",")]:
            pin = w > 0
            iters = 6 if w <= 1 else 10
            step_ms, first_s, util = run(w, pin, ds, model, opt, iters)
            rec = {"id": f"loader2/resnet50-b256-w{w}-{'pin' if pin else 'nopin'}", "kind": "train",
                   "model": "resnet50", "batch": BATCH, "precision": "bf16", "channels_last": True,
                   "optimizer": "sgd-momentum", "cudnn_benchmark": True, "data": "cpu-jpeg-pipeline",
                   "num_workers": w, "pin_memory": pin, "persistent_workers": w > 0,
                   "prefetch_factor": 2 if w > 0 else None, "jpeg_bytes_mean": round(mean_bytes),
                   "transforms": "decode_jpeg+RandomResizedCrop224+flip+normalize",
                   "step_ms": round(step_ms, 2), "samples_per_s": round(BATCH * 1000 / step_ms, 1),
                   "first_batch_s": round(first_s, 3), "iters": iters, "gpu_util_pct": util,
                   "image_hw": [224, 224], "sample_cpu_ms_1thread": round(cpu_ms, 3), "host": host, **common}
            f.write(json.dumps(rec) + "\n")
            f.flush()
            print(f"{rec['id']:36s} {step_ms:8.1f} ms  {rec['samples_per_s']:7.1f} samples/s  util {util}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
