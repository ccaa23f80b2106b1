#!/usr/bin/env python3
"""What a training step keeps for backward, measured: the bytes of the distinct storages that autograd saves
during one forward, per transformer block and token, and the CUDA kernels of one block's forward and backward.

Saved tensors are caught with torch.autograd.graph.saved_tensors_hooks (the pack hook sees every tensor an
autograd node saves); a storage is counted once however many nodes save a view of it. Parameters (and their
autocast copies, which the memory model counts separately: a saved tensor of a parameter's shape) are left out.
Compare with the memory model's saved bytes per block (models/transformer_ops.cpp add_block): under autocast
38 bytes per token and width with a 4x MLP, 68 in fp32.

usage: python3 tools/measure_saved_tensors.py OUT.jsonl
"""
import json
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import measure_holdout as mh  # noqa: E402


def saved_bytes(fn, params):
    """Runs fn() (a forward) and returns (bytes of distinct non-parameter storages saved, count)."""
    pids = {p.untyped_storage().data_ptr() for p in params}
    shapes = {tuple(p.shape) for p in params} | {tuple(p.shape)[::-1] for p in params}
    seen = {}

    def pack(t):
        s = t.untyped_storage()
        ptr = s.data_ptr()
        if ptr not in pids and ptr not in seen and not (t.dim() <= 2 and tuple(t.shape) in shapes):
            seen[ptr] = s.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    return sum(seen.values()), len(seen), out


def kernels_of(step):
    from torch.profiler import ProfilerActivity, profile
    step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    names = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            names[e.name] = names.get(e.name, 0) + 1
    return names


def gpt_case(precision, layers=4, d=768, heads=12, b=4, s=1024):
    mh.set_precision_flags(precision)
    with torch.device("cuda"):
        m = mh.GPT(layers, d, heads, s, False)
    x = torch.randint(0, mh.VOCAB, (b, s), device="cuda")
    blk = m.blocks[0]
    h = torch.randn(b, s, d, device="cuda", requires_grad=True)

    def block_fwd():
        with mh.autocast(precision):
            return blk(h)

    one, n_one, _ = saved_bytes(block_fwd, list(blk.parameters()))

    def block_step():
        y = block_fwd()
        y.float().sum().backward()

    k = kernels_of(block_step)
    N = b * s
    return {"id": f"saved/gpt-d{d}-b{b}-s{s}-{precision}", "model": "gpt", "precision": precision, "d_model": d,
            "tokens": N, "saved_bytes_per_block": one, "saved_tensors_per_block": n_one,
            "saved_bytes_per_token_dim": round(one / (N * d), 3), "block_kernels": k}


def vit_case(precision, b=32):
    import torchvision
    mh.set_precision_flags(precision)
    m = torchvision.models.vit_b_16(weights=None).cuda().train()
    blk = m.encoder.layers[0]
    N, d = b * 197, 768
    h = torch.randn(b, 197, d, device="cuda", requires_grad=True)

    def block_fwd():
        with mh.autocast(precision):
            return blk(h)

    one, n_one, _ = saved_bytes(block_fwd, list(blk.parameters()))

    def block_step():
        y = block_fwd()
        y.float().sum().backward()

    k = kernels_of(block_step)
    return {"id": f"saved/vit_b_16-b{b}-{precision}", "model": "vit_b_16", "precision": precision, "d_model": d,
            "tokens": N, "saved_bytes_per_block": one, "saved_tensors_per_block": n_one,
            "saved_bytes_per_token_dim": round(one / (N * d), 3), "block_kernels": k}


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    common = mh.common_fields()
    with open(sys.argv[1], "w") as f:
        for case in (lambda: gpt_case("bf16"), lambda: gpt_case("tf32"), lambda: gpt_case("bf16", d=2048, heads=16),
                     lambda: vit_case("bf16"), lambda: vit_case("tf32")):
            r = case()
            r.update(common)
            print(r["id"], r["saved_bytes_per_token_dim"], "B per token and width;", r["saved_tensors_per_block"],
                  "tensors;", sum(r["block_kernels"].values()), "kernels", flush=True)
            for name, n in sorted(r["block_kernels"].items()):
                print(f"   {n:3d}  {name[:150]}")
            f.write(json.dumps(r) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
