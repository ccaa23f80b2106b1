#!/usr/bin/env python3
"""Peak memory of one data-parallel rank (FSDP, DDP, ZeRO-1), measured on one GPU with PyTorch's fake process group.

gpuplan's memory model divides weights, gradients and optimizer states over the data-parallel ranks for FSDP and
ZeRO-3, but a rank also holds the layers it has gathered: the unit it computes and the one it prefetches, and in
backward that unit's unsharded gradient before the reduce-scatter. No multi-GPU machine is lent to this project;
PyTorch's "fake" backend (torch.testing._internal.distributed.fake_pg, used by PyTorch's own FSDP tests) lets one
process act as rank 0 of a world of any size: every collective returns at once with its output allocated and
unfilled, so the rank's allocations (shards, gathered units, reduce-scatter buffers, activations) are the real
ones while no data moves. Communication times are therefore not measured here; memory is, and the compute: each
record's `step_ms_instant_collectives` is the wall time of one step (mean of the two measured, synchronised at the
end) with every collective taking no time, which is the rank's forward, backward and optimizer kernels and FSDP's
own work on the host (added 2026-12-08; records before that have no such field). DDP's reducer, by
PyTorch's documentation of `gradient_as_bucket_view`, keeps its communication buckets besides the gradients (the
saving of that option "will be equal to the total gradients size"); the DDP rows measure that, with and without the
option, and ZeroRedundancyOptimizer (ZeRO-1) under DDP. The tp rows (one_tp, not yet run) put the whole world
into one tensor-parallel group.

Each configuration runs in a fresh process: GPT as in tools/measure_holdout.py (built on the GPU, then sharded
unit by unit; the peak is taken after warm-up, so the unsharded construction does not count), one FSDP unit per
transformer block plus the root (embeddings, final norm, head), FullyShardedDataParallel with its defaults
(limit_all_gathers, BACKWARD_PRE prefetch, use_orig_params), bf16 autocast as gpuplan's `precision: bf16` (ids
ending in -mp: FSDP's MixedPrecision with bf16 parameters and reductions, or FSDP2's MixedPrecisionPolicy with bf16
parameters and fp32 reductions, instead of autocast), fused AdamW, gradient
accumulation without no_sync (gradients are reduce-scattered every micro-batch). Three warm-up steps, then
torch.cuda.max_memory_allocated over two steps.

--explain replays one more step's allocation history (torch.cuda.memory._record_memory_history with Python stacks)
and groups what is live at the peak by the code that allocated it; with activation checkpointing PyTorch 2.11's
backward fails under that recording, so use it on steps without checkpointing.

usage: python3 tools/measure_dp_memory.py --out FILE.jsonl [--only ID[,ID...]|--prefix P] [--explain] [--kernels]
"""
import argparse
import contextlib
import json
import os
import subprocess
import sys
import time

GIB = 1024 ** 3

# id: (layers, d_model, heads, seq, world, micro_batch, grad_accum, checkpointing, sharding, mixed_precision)
CONFIGS = {
    "fsdp/gpt-6.7b-dp32-b2x8-s1024": (32, 4096, 32, 1024, 32, 2, 8, False, "full", False),
    "fsdp/gpt-6.7b-dp32-b4x4-s1024": (32, 4096, 32, 1024, 32, 4, 4, False, "full", False),
    "fsdp/gpt-6.7b-dp32-b2x8-s1024-ckpt": (32, 4096, 32, 1024, 32, 2, 8, True, "full", False),
    "fsdp/gpt-6.7b-dp32-b4x4-s1024-ckpt": (32, 4096, 32, 1024, 32, 4, 4, True, "full", False),
    "fsdp/gpt-6.7b-dp8-b4x1-s1024-ckpt": (32, 4096, 32, 1024, 8, 4, 1, True, "full", False),
    "fsdp/gpt-1.3b-dp16-b8x1-s2048-ckpt": (24, 2048, 16, 2048, 16, 8, 1, True, "full", False),
    "fsdp/gpt-1.3b-dp16-b8x1-s2048": (24, 2048, 16, 2048, 16, 8, 1, False, "full", False),
    "fsdp/gpt-6.7b-dp32-b2x8-s1024-ckpt-mp": (32, 4096, 32, 1024, 32, 2, 8, True, "full", True),
    "fsdp-grad-op/gpt-1.3b-dp16-b8x1-s2048-ckpt": (24, 2048, 16, 2048, 16, 8, 1, True, "grad_op", False),
    "fsdp/gpt-6.7b-dp32-b2x8-s1024-mp": (32, 4096, 32, 1024, 32, 2, 8, False, "full", True),
    "fsdp/gpt-6.7b-dp32-b4x4-s1024-ckpt-mp": (32, 4096, 32, 1024, 32, 4, 4, True, "full", True),
    "fsdp/gpt-6.7b-dp8-b4x1-s1024-ckpt-mp": (32, 4096, 32, 1024, 8, 4, 1, True, "full", True),
    "fsdp/gpt-1.3b-dp16-b8x1-s2048-ckpt-mp": (24, 2048, 16, 2048, 16, 8, 1, True, "full", True),
    "fsdp/gpt-1.3b-dp16-b8x1-s2048-mp": (24, 2048, 16, 2048, 16, 8, 1, False, "full", True),
    "fsdp2/gpt-6.7b-dp32-b2x8-s1024": (32, 4096, 32, 1024, 32, 2, 8, False, "fsdp2", False),
    "fsdp2/gpt-6.7b-dp32-b2x8-s1024-ckpt": (32, 4096, 32, 1024, 32, 2, 8, True, "fsdp2", False),
    "fsdp2/gpt-1.3b-dp16-b8x1-s2048-ckpt": (24, 2048, 16, 2048, 16, 8, 1, True, "fsdp2", False),
    "fsdp2/gpt-6.7b-dp32-b2x8-s1024-ckpt-mp": (32, 4096, 32, 1024, 32, 2, 8, True, "fsdp2", True),
    "fsdp2/gpt-1.3b-dp16-b8x1-s2048-ckpt-mp": (24, 2048, 16, 2048, 16, 8, 1, True, "fsdp2", True),
    # The checkpointed b2 x 8 under autocast held 10.4 GiB more than FSDP1's: without accumulation, and with
    # autocast's weight cache off, to tell which it is.
    "fsdp2/gpt-6.7b-dp32-b2x1-s1024-ckpt": (32, 4096, 32, 1024, 32, 2, 1, True, "fsdp2", False),
    "fsdp2-nocache/gpt-6.7b-dp32-b2x8-s1024-ckpt": (32, 4096, 32, 1024, 32, 2, 8, True, "fsdp2-nocache", False),
    # FSDP's host cost: a GPT too small to keep the GPU busy (32 blocks of width 256, 128 tokens a micro-batch), so a
    # step is as long as the host takes to issue it, wrapped and not ("none": the same loop on the bare model).
    "host-fsdp/gpt-32x256-dp32-b1x8-s128": (32, 256, 4, 128, 32, 1, 8, False, "full", False),
    "host-fsdp/gpt-32x256-dp32-b1x8-s128-mp": (32, 256, 4, 128, 32, 1, 8, False, "full", True),
    "host-fsdp/gpt-32x256-dp32-b1x8-s128-ckpt": (32, 256, 4, 128, 32, 1, 8, True, "full", False),
    "host-fsdp/gpt-32x256-dp32-b1x8-s128-ckpt-mp": (32, 256, 4, 128, 32, 1, 8, True, "full", True),
    "host-none/gpt-32x256-b1x8-s128": (32, 256, 4, 128, 1, 1, 8, False, "none", False),
    "host-none/gpt-32x256-b1x8-s128-ckpt": (32, 256, 4, 128, 1, 1, 8, True, "none", False),
    "tp/gpt-1.3b-tp4-b8x1-s1024": (24, 2048, 16, 1024, 4, 8, 1, False, "tp", False),
    "tp/gpt-1.3b-tp8-b8x1-s1024": (24, 2048, 16, 1024, 8, 8, 1, False, "tp", False),
    "tp/gpt-1.3b-tp8-b8x1-s1024-ckpt": (24, 2048, 16, 1024, 8, 8, 1, True, "tp", False),
    "ddp/gpt-350m-dp8-b8x1-s1024": (24, 1024, 16, 1024, 8, 8, 1, False, "ddp", False),
    "ddp/gpt-1.3b-dp8-b8x1-s1024": (24, 2048, 16, 1024, 8, 8, 1, False, "ddp", False),
    "ddp/gpt-1.3b-dp8-b8x1-s1024-ckpt": (24, 2048, 16, 1024, 8, 8, 1, True, "ddp", False),
    "ddp/gpt-1.3b-dp8-b4x4-s1024-ckpt": (24, 2048, 16, 1024, 8, 4, 4, True, "ddp", False),
    "ddp-bucket-view/gpt-1.3b-dp8-b8x1-s1024-ckpt": (24, 2048, 16, 1024, 8, 8, 1, True, "ddp-view", False),
    "zero1/gpt-1.3b-dp8-b8x1-s1024-ckpt": (24, 2048, 16, 1024, 8, 8, 1, True, "zero1", False),
}


def one(cid, explain=False):
    import torch
    import torch.distributed as dist
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, MixedPrecision, ShardingStrategy
    from torch.distributed.fsdp.wrap import ModuleWrapPolicy
    from torch.testing._internal.distributed.fake_pg import FakeStore
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import measure_holdout as mh

    layers, d, heads, seq, world, mb, accum, ckpt, sharding, mp = CONFIGS[cid]
    torch.cuda.set_device(0)
    dist.init_process_group("fake", rank=0, world_size=world, store=FakeStore())
    mh.set_precision_flags("bf16")
    with torch.device("cuda"):
        model = mh.GPT(layers, d, heads, seq, ckpt, sharding != "tp")
    params = mh.n_params(model)
    dev = torch.device("cuda", 0)
    if sharding in ("ddp", "ddp-view", "zero1"):
        return one_ddp(torch, dist, mh, cid, model, params, dev)
    if sharding == "tp":
        return one_tp(torch, mh, cid, model, params, dev)
    cache = sharding != "fsdp2-nocache"
    sharding = "fsdp2" if sharding == "fsdp2-nocache" else sharding
    if sharding == "none":  # the bare model, the same loop: what FSDP adds is the difference
        fsdp = model
    elif sharding == "fsdp2":  # FSDP2 (torch.distributed.fsdp.fully_shard): per block, then the root
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import fully_shard
        mesh = init_device_mesh("cuda", (world,))
        from torch.distributed.fsdp import MixedPrecisionPolicy
        policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if mp else None
        kw = {"mesh": mesh, **({"mp_policy": policy} if policy else {})}
        for blk in model.blocks:
            fully_shard(blk, **kw)
        fsdp = fully_shard(model, **kw)
    else:
        fsdp = FSDP(model, auto_wrap_policy=ModuleWrapPolicy({mh.Block}), device_id=dev, use_orig_params=True,
                    sharding_strategy=(ShardingStrategy.FULL_SHARD if sharding == "full"
                                       else ShardingStrategy.SHARD_GRAD_OP),
                    mixed_precision=(MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16)
                                     if mp else None))
    fsdp.train()
    opt = torch.optim.AdamW(fsdp.parameters(), lr=1e-4, fused=True)
    x = torch.randint(0, mh.VOCAB, (mb, seq), device=dev)
    y = torch.randint(0, mh.VOCAB, (mb, seq), device=dev)
    ctx = (torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=cache) if not mp
           else torch.autocast("cuda", enabled=False))

    def step():
        for _ in range(accum):
            with ctx:
                loss = fsdp(x, y) / accum
            loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    rec = measured_record(torch, mh, cid, params, step)
    if KERNELS:
        rec["kernels"] = kernel_summary(torch, step)
    rec.update({"autocast": not mp, "fsdp_mixed_precision": mp, "autocast_cache": cache and not mp,
                "sharding": {"full": "FULL_SHARD", "grad_op": "SHARD_GRAD_OP", "fsdp2": "fully_shard",
                             "none": "none"}[sharding]})
    if explain:
        rec["live_at_peak"] = what_is_live_at_peak(torch, step)
    return rec


KERNELS = False


def kernel_summary(torch, step):
    """One more step under torch.profiler: its wall time, the summed time of its CUDA kernels (the GPU's busy time
    when they do not overlap), and the kernels that took the most, grouped by name. The fake group's all-gathers
    show as device-to-device copies (one per rank's chunk, on FSDP's unshard stream): work a real all-gather does
    in NCCL's kernels instead."""
    from torch.profiler import profile, ProfilerActivity
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        wall = (time.perf_counter() - t0) * 1e3
    groups = {}
    for e in prof.events():
        # GPU-side ranges of record_function (FSDP's "FullyShardedDataParallel.forward" and the like) are annotations,
        # not kernels; the 2026-12-08 file counted them in kernel_ms (its checks subtract them by name).
        if e.device_type == torch.autograd.DeviceType.CUDA and not getattr(e, "is_user_annotation", False):
            g = groups.setdefault(e.name[:90], [0, 0.0])
            g[0] += 1
            g[1] += e.time_range.elapsed_us() / 1e3
    busy = sum(g[1] for g in groups.values())
    top = sorted(groups.items(), key=lambda kv: -kv[1][1])[:25]
    return {"profiled_step_ms": round(wall, 2), "kernel_ms": round(busy, 2),
            "kernel_count": sum(g[0] for g in groups.values()),
            "top": [{"name": k, "n": n, "ms": round(ms, 2)} for k, (n, ms) in top]}


def measured_record(torch, mh, cid, params, step):
    """Three warm-up steps, then the allocator's figures over two: the record's common fields."""
    layers, d, heads, seq, world, mb, accum, ckpt, _, _ = CONFIGS[cid]
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    resident = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    for _ in range(2):
        step()
    torch.cuda.synchronize()
    step_ms = (time.perf_counter() - t0) * 1e3 / 2
    return {"kind": "memory", "id": cid, "model": "gpt", "layers": layers, "d_model": d, "heads": heads, "seq": seq,
            "params": params, "vocab": mh.VOCAB, "tied_embeddings": True, "world_size": world, "batch": mb,
            "grad_accum": accum, "activation_checkpointing": ckpt, "optimizer": "adamw-fused", "precision": "bf16",
            "backend": "fake (one rank, no data moved)",
            "step_ms_instant_collectives": round(step_ms, 2),
            "max_memory_allocated_gib": round(torch.cuda.max_memory_allocated() / GIB, 3),
            "allocated_between_steps_gib": round(resident / GIB, 3),
            "max_memory_reserved_gib": round(torch.cuda.max_memory_reserved() / GIB, 3),
            "device": torch.cuda.get_device_name(), "torch": torch.__version__}


def one_ddp(torch, dist, mh, cid, model, params, dev):
    """DDP (25 MiB buckets, PyTorch's default) with fused AdamW, or ZeroRedundancyOptimizer over fused AdamW."""
    import torch.nn.parallel.distributed as ddp_mod
    from torch.distributed.optim import ZeroRedundancyOptimizer
    _, _, _, seq, _, mb, accum, _, sharding, _ = CONFIGS[cid]
    # The shape check all-gathers every rank's parameter shapes; the fake group returns them unfilled.
    ddp_mod._verify_param_shape_across_processes = lambda *a, **k: None
    net = ddp_mod.DistributedDataParallel(model, device_ids=[0], gradient_as_bucket_view=(sharding == "ddp-view"))

    # The fake group's all-reduce completes with no result, which the reducer refuses; this hook stands in for it,
    # returning the bucket's own buffer as NCCL's in-place all-reduce does (no memory added or taken away).
    def in_place_hook(_state, bucket):
        fut = torch.futures.Future()
        fut.set_result(bucket.buffer())
        return fut

    net.register_comm_hook(None, in_place_hook)
    if sharding == "zero1":
        opt = ZeroRedundancyOptimizer(net.parameters(), optimizer_class=torch.optim.AdamW, lr=1e-4, fused=True)
    else:
        opt = torch.optim.AdamW(net.parameters(), lr=1e-4, fused=True)
    x = torch.randint(0, mh.VOCAB, (mb, seq), device=dev)
    y = torch.randint(0, mh.VOCAB, (mb, seq), device=dev)

    def step():
        for i in range(accum):  # gradients all-reduced on the last micro-batch only (no_sync before it)
            with contextlib.nullcontext() if i == accum - 1 else net.no_sync():
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = net(x, y) / accum
                loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    rec = measured_record(torch, mh, cid, params, step)
    rec.update({"autocast": True, "fsdp_mixed_precision": False,
                "strategy": {"ddp": "ddp", "ddp-view": "ddp", "zero1": "zero1"}[sharding],
                "gradient_as_bucket_view": sharding == "ddp-view", "bucket_cap_mb": 25})
    return rec


def one_tp(torch, mh, cid, model, params, dev):
    """Megatron-style tensor parallelism over the whole world with PyTorch's DTensor API, no sequence parallelism:
    QKV and the first MLP linear column-parallel, the projection and the second MLP linear row-parallel, the head
    vocabulary-parallel under loss_parallel, the token embedding vocabulary-parallel; LayerNorms, the position
    embedding and the residual stream replicated. Embeddings untied, as Megatron's GPT may be. The packed QKV output is split in
    contiguous columns, so a rank's q, k and v are not the model's heads: the shapes and memory are Megatron's,
    the values are not. Not yet run (written 2026-12-07 when no device was left)."""
    import torch.nn.functional as F
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, loss_parallel, parallelize_module
    _, d, heads, seq, world, mb, accum, _, _, _ = CONFIGS[cid]
    mesh = init_device_mesh("cuda", (world,))

    class TPBlock(mh.Block):
        def forward(self, x):  # mh.Block's, with the local width and heads of a column-parallel QKV
            b, t, _ = x.shape
            qkv = self.qkv(self.ln1(x))
            c = qkv.shape[-1] // 3
            q, k, v = (z.view(b, t, c // self.head_dim, self.head_dim).transpose(1, 2) for z in qkv.split(c, dim=2))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).contiguous().view(b, t, c))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    for blk in model.blocks:
        blk.__class__ = TPBlock
        blk.head_dim = d // heads
        parallelize_module(blk, mesh, {"qkv": ColwiseParallel(), "proj": RowwiseParallel(),
                                       "fc1": ColwiseParallel(), "fc2": RowwiseParallel()})
    # The token embedding vocabulary-parallel as Megatron's (PyTorch's TP recipe for Llama's tok_embeddings); the
    # position embedding (seq x d) and the LayerNorms stay replicated.
    parallelize_module(model, mesh, {"wte": RowwiseParallel(input_layouts=Replicate()),
                                     "head": ColwiseParallel(output_layouts=Shard(-1), use_local_output=False)})
    # The replicated parameters (LayerNorms, embeddings) stay plain tensors; the fused and foreach kernels refuse a
    # list that mixes them with DTensors, so the update runs per parameter (its states are the same 8 bytes each).
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=False)
    x = torch.randint(0, mh.VOCAB, (mb, seq), device=dev)
    y = torch.randint(0, mh.VOCAB, (mb, seq), device=dev)

    def step():
        for _ in range(accum):
            with torch.autocast("cuda", dtype=torch.bfloat16), loss_parallel():
                loss = model(x, y) / accum
                loss.backward()  # loss_parallel needs the backward inside it
        opt.step()
        opt.zero_grad(set_to_none=True)

    rec = measured_record(torch, mh, cid, params, step)
    rec.update({"autocast": True, "fsdp_mixed_precision": False, "strategy": "tp", "tp": world,
                "sequence_parallel": False, "tied_embeddings": False})
    return rec


def what_is_live_at_peak(torch, step):
    """One more step under the allocator's history: replay its allocations, take the moment the allocated bytes
    peak, and group the blocks allocated during the step that are live then by the code that allocated them."""
    base = torch.cuda.memory_allocated()
    torch.cuda.memory._record_memory_history(max_entries=2_000_000, stacks="python")
    step()
    torch.cuda.synchronize()
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    live, cur, peak, peak_live = {}, 0, 0, {}
    for e in snap["device_traces"][0]:
        if e["action"] == "alloc":
            live[e["addr"]] = e
            cur += e["size"]
            if cur > peak:
                peak, peak_live = cur, dict(live)
        elif e["action"] == "free_completed" and e["addr"] in live:
            cur -= live.pop(e["addr"])["size"]
    groups = {}
    for e in peak_live.values():
        frames = [f for f in e.get("frames", []) if f.get("filename") and "python" not in f["filename"].split("/")[-1]]
        unknown = {"filename": "?", "name": "?"}
        where = next((f for f in frames if "/torch/" in f["filename"]), frames[0] if frames else unknown)
        mine = next((f for f in frames if "measure_" in f["filename"]), {"name": "?", "line": 0})
        key = f"{where['filename'].split('/torch/')[-1]}:{where['name']} <- {mine['name']}:{mine['line']}"
        g = groups.setdefault(key, [0, 0])
        g[0] += 1
        g[1] += e["size"]
    rows = sorted(groups.items(), key=lambda kv: -kv[1][1])
    return {"allocated_before_step_gib": round(base / GIB, 3), "step_peak_above_before_gib": round(peak / GIB, 3),
            "groups": [{"where": k, "blocks": n, "gib": round(b / GIB, 3)} for k, (n, b) in rows[:14]]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--only")
    ap.add_argument("--prefix", help="only the configurations whose id starts with this (e.g. ddp)")
    ap.add_argument("--explain", action="store_true",
                    help="also replay one step's allocations and group what is live at its peak by allocating code")
    ap.add_argument("--kernels", action="store_true",
                    help="also profile one step: its CUDA kernels' summed time and the 25 that took the most (FSDP ids)")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    a = ap.parse_args()
    global KERNELS
    KERNELS = a.kernels
    if a.one:
        print(json.dumps(one(a.one, a.explain)))
        return
    ids = a.only.split(",") if a.only else [c for c in CONFIGS if c.startswith(a.prefix or "")]
    with open(a.out, "w") as f:
        for cid in ids:
            cmd = [sys.executable, __file__, "--out", a.out, "--one", cid] + (["--explain"] if a.explain else []) + (
                ["--kernels"] if a.kernels else [])
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                tail = r.stderr.strip().splitlines()[-3:] if r.stderr.strip() else [str(r.returncode)]
                print(f"{cid}: failed: {' | '.join(tail)}", flush=True)
                continue
            line = r.stdout.strip().splitlines()[-1]
            print(line, flush=True)
            f.write(line + "\n")
            f.flush()


if __name__ == "__main__":
    main()
