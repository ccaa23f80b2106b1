#!/usr/bin/env python3
"""Measure data-parallel (PyTorch DDP, NCCL) GPT training steps on the GPUs of one host.

Launch with torchrun, one process per GPU:
    torchrun --standalone --nproc_per_node N tools/measure_ddp.py --out FILE.jsonl [--only SUBSTRING]
             [--bucket-cap-mb 25[,100...]] [--iters 12] [--warmup 5]

The GPT is the one of the reference runs, imported from tools/measure_holdout.py (one definition). Every rank
trains a replica on its own synthetic micro-batch (`batch` samples of `seq` tokens, already on the GPU), bf16
autocast, fused AdamW; DistributedDataParallel (bucket_cap_mb as given, gradients all-reduced during backward,
PyTorch's defaults otherwise) averages the gradients. The global batch is batch x gpus.

Timing: `warmup` steps, then a barrier and torch.cuda.synchronize() on every rank, then `iters` steps between two
synchronisations; a rank's step_ms is that wall time / iters. The record's `step_ms` is the mean over ranks (DDP
makes ranks wait for each other, so they agree within noise); `step_ms_per_rank` lists each rank's,
`step_ms_p10/p50/p90` come from CUDA events around each step on rank 0. `peak_mem_gib` is the largest
torch.cuda.max_memory_allocated() over ranks. Rank 0 appends one JSON line per configuration to --out, in the
reference-run format plus `gpus`, `nodes`, `parallel: "ddp"`, `bucket_cap_mb`, `nccl_version`.

NVLink multicast stays off (NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1, NVSHMEM_DISABLE_NVLS=1): set
here before NCCL starts, and exported by tools/run_multi_gpu_calibration.sh too.

`--list` prints the configurations (no torch.distributed needed).
"""
import argparse
import datetime
import json
import os
import sys
import time

for _k, _v in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NVSHMEM_DISABLE_NVLS", "1")):
    os.environ[_k] = _v

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure_holdout as mh  # noqa: E402  (the reference GPT, precision helpers, percentile)

GIB = 1024 ** 3

# The reference set's GPT shapes: gpt-350m (24 x 1024, 16 heads) and gpt-1.3b (24 x 2048, 16 heads).
MODELS = {
    "gpt-350m": dict(layers=24, d_model=1024, heads=16),
    "gpt-1.3b": dict(layers=24, d_model=2048, heads=16),
}
CONFIGS = [("gpt-350m", 16, 1024, "bf16"), ("gpt-1.3b", 8, 1024, "bf16")]


def config(size, batch, seq, precision, gpus, bucket_cap_mb, iters):
    c = dict(model="gpt", size=size, **MODELS[size], seq=seq, batch=batch, grad_accum=1, precision=precision,
             optimizer="adamw-fused", activation_checkpointing=False, iters=iters)
    c["id"] = f"ddp/{size}-b{batch}-s{seq}-{precision}-g{gpus}-bucket{bucket_cap_mb:g}"
    c.update(gpus=gpus, nodes=1, parallel="ddp", bucket_cap_mb=bucket_cap_mb)
    return c


def describe(c):
    rec = {"id": c["id"], "kind": "train"}
    rec.update({k: v for k, v in c.items() if k not in ("id", "iters")})
    rec.update(vocab=mh.VOCAB, attention="sdpa-causal", tied_embeddings=True, logits_kept=False,
               data="synthetic-on-gpu")
    return rec


def nccl_version(torch):
    try:
        v = torch.cuda.nccl.version()
        return ".".join(str(x) for x in v) if isinstance(v, tuple) else str(v)
    except Exception:
        return None


def ddp_step_fn(c, ddp_model, opt, torch):
    b, s = c["batch"], c["seq"]
    gen = torch.Generator(device="cuda").manual_seed(1000 + torch.distributed.get_rank())
    x = torch.randint(0, mh.VOCAB, (b, s), device="cuda", generator=gen)
    y = torch.randint(0, mh.VOCAB, (b, s), device="cuda", generator=gen)

    def step():
        with mh.autocast(c["precision"]):
            loss = ddp_model(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step


def time_rank(step, warmup, iters, torch):
    """Warm-up, barrier, then `iters` steps between synchronisations: (step_ms, sorted per-step event ms)."""
    dist = torch.distributed
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    dist.barrier()
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(iters)]
    t0 = time.perf_counter()
    for a, b in ev:
        a.record()
        step()
        b.record()
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    return (t1 - t0) * 1000.0 / iters, sorted(a.elapsed_time(b) for a, b in ev)


def measure(c, args, torch):
    """Runs one configuration on every rank; returns the record (rank 0) or None."""
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    rank = dist.get_rank()
    rec = describe(c)
    mh.set_precision_flags(c["precision"])
    torch.manual_seed(0)
    local = {"rank": rank, "oom": False}
    model = ddp = opt = None
    try:
        with torch.device("cuda"):
            model = mh.GPT(c["layers"], c["d_model"], c["heads"], c["seq"], False)
        model.train()
        local["params"] = mh.n_params(model)
        ddp = DDP(model, device_ids=[torch.cuda.current_device()], bucket_cap_mb=c["bucket_cap_mb"])
        opt = mh.make_optimizer(c["optimizer"], ddp.parameters())
        step_ms, per = time_rank(ddp_step_fn(c, ddp, opt, torch), args.warmup, c["iters"], torch)
        local.update(step_ms=step_ms, per=per, peak=torch.cuda.max_memory_allocated() / GIB)
    except torch.cuda.OutOfMemoryError:
        local["oom"] = True
    del model, ddp, opt
    torch.cuda.empty_cache()
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, local)  # every rank reaches this, OOM or not
    if rank != 0:
        return None
    if any(g["oom"] for g in gathered):
        rec.update(oom=True, error="OutOfMemoryError")
        return rec
    per_rank = [g["step_ms"] for g in gathered]
    per = gathered[0]["per"]
    b = c["batch"] * c["gpus"]
    step_ms = sum(per_rank) / len(per_rank)
    rec.update(step_ms=round(step_ms, 3), step_ms_per_rank=[round(v, 3) for v in per_rank],
               step_ms_p10=round(mh.percentile(per, 0.1), 3), step_ms_p50=round(mh.percentile(per, 0.5), 3),
               step_ms_p90=round(mh.percentile(per, 0.9), 3),
               peak_mem_gib=round(max(g["peak"] for g in gathered), 2), iters=c["iters"],
               params=gathered[0]["params"], samples_per_s=round(b / (step_ms / 1000.0), 2),
               tokens_per_s=round(b * c["seq"] / (step_ms / 1000.0)))
    return rec


def common_fields(torch):
    f = mh.common_fields()
    f["nccl_version"] = nccl_version(torch)
    f["env"] = {k: os.environ.get(k) for k in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST",
                                                "NVSHMEM_DISABLE_NVLS", "NCCL_ALGO", "NCCL_PROTO")
                if os.environ.get(k) is not None}
    return f


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="JSONL file to append to (rank 0 writes)")
    ap.add_argument("--only", default="", help="run only configurations whose id contains this")
    ap.add_argument("--bucket-cap-mb", default="25", help="DDP bucket_cap_mb, comma-separated for several")
    ap.add_argument("--iters", type=int, default=12, help="timed steps")
    ap.add_argument("--warmup", type=int, default=5, help="untimed steps before timing")
    ap.add_argument("--list", action="store_true", help="print the configurations for --gpus and exit")
    ap.add_argument("--gpus", type=int, default=int(os.environ.get("WORLD_SIZE", "1")),
                    help="GPU count used by --list (under torchrun: WORLD_SIZE)")
    return ap.parse_args()


def configs_for(args, gpus):
    buckets = [float(x) for x in args.bucket_cap_mb.split(",") if x]
    out = [config(*m, gpus, bc, args.iters) for m in CONFIGS for bc in buckets]
    return [c for c in out if args.only in c["id"]]


def main():
    args = parse_args()
    if args.list:
        for c in configs_for(args, args.gpus):
            print(json.dumps(describe(c)))
        return 0
    if not args.out:
        print("measure_ddp: --out is required", file=sys.stderr)
        return 2
    import torch
    import torch.distributed as dist
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    world = dist.get_world_size()
    common = common_fields(torch) if dist.get_rank() == 0 else None
    failed = 0
    for c in configs_for(args, world):
        t0 = time.perf_counter()
        try:
            rec = measure(c, args, torch)
        except Exception as e:  # a broken configuration is reported; the group may not survive it
            failed += 1
            print(f"[rank {dist.get_rank()}] {c['id']}: FAILED {type(e).__name__}: {e}", file=sys.stderr, flush=True)
            break
        if rec is None:
            continue
        rec.update(common)
        rec["measured_on"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
        with open(args.out, "a") as f:
            f.write(json.dumps(rec) + "\n")
        print(f"{c['id']:<52} {rec.get('step_ms', 'OOM')!s:>10} ms  per rank {rec.get('step_ms_per_rank')}  "
              f"peak {rec.get('peak_mem_gib', '-')} GiB  ({time.perf_counter() - t0:.1f} s)", flush=True)
    dist.destroy_process_group()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
