#!/usr/bin/env python3
"""Fuzz gpuplan's user inputs: every exit must be 0, 1 or 2 within the time limit, and an exit 2 must print lines
that name the file. Standard library only; run from the repository root after building.

Modes:
  scenario  mutate scenarios/*.json (a value replaced by null, a wrong type, 0, negative, 1e-300, 1e308, ...; or a
            key removed) and run `gpuplan run --no-db -q FILE`
  records   mutate three records of the reference and held-out measured-run files the same way and run
            `gpuplan calibrate check --profile calibrate/profiles/h200.json --runs FILE --tolerance 100`
  catalog   set one or two numbers of a catalog entry (same id, so it overrides) to 1e-300, 0, -1, 1e300, ... and
            run an example scenario with `gpuplan --catalog FILE run --no-db -q`
  nccl      mutate the NCCL self-test file (calibrate/probes/results/nccl-selftest-*.json) and run
            `gpuplan calibrate comm --nccl FILE --instance coreweave-8x-h200`
  ddp       mutate two reference GPT records made 8-GPU DDP records and run `gpuplan calibrate ddp --runs FILE`

Usage: python3 tools/fuzz_inputs.py [--mode scenario|records|catalog|nccl|ddp|all] [--cases N] [--seed S] [--bin PATH]
A failing case is kept under --keep (default /tmp/gpuplan-fuzz) and printed; passing cases are deleted.
"""
import argparse
import copy
import glob
import json
import os
import random
import subprocess
import sys

WEIRD = [None, -1, 0, 1e308, -1e308, 1e-300, "x", "", [], {}, True, 2**63, -2**63, 3.5, "nan", [1, 2], {"a": 1}]
NUMBERS = [1e-300, 1e-9, 0, -1, 1e300, 1e9, 0.5]


def load_commented(path):
    return json.loads("\n".join(l for l in open(path).read().splitlines() if not l.lstrip().startswith("//")))


def paths(o, p=()):
    yield p
    if isinstance(o, dict):
        for k, v in o.items():
            yield from paths(v, p + (k,))
    elif isinstance(o, list):
        for i, v in enumerate(o):
            yield from paths(v, p + (i,))


def parent_of(o, p):
    for k in p[:-1]:
        o = o[k]
    return o


def mutate(o, rng):
    """One to three values replaced by a weird one, or their keys removed."""
    for _ in range(rng.randint(1, 3)):
        ps = [p for p in paths(o) if p]
        if not ps:
            return
        p = rng.choice(ps)
        parent = parent_of(o, p)
        if rng.random() < 0.15:
            if isinstance(parent, dict):
                parent.pop(p[-1], None)
            elif parent:
                parent.pop(p[-1])
        else:
            parent[p[-1]] = copy.deepcopy(rng.choice(WEIRD))  # a shared list or dict would make a cycle


def mutate_numbers(e, rng):
    """One or two of the entry's numbers set to an extreme one."""
    nums = [p for p in paths(e) if p and isinstance(parent_of(e, p)[p[-1]], (int, float))
            and not isinstance(parent_of(e, p)[p[-1]], bool)]
    for _ in range(rng.randint(1, 2)):
        if nums:
            p = rng.choice(nums)
            parent_of(e, p)[p[-1]] = rng.choice(NUMBERS)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", default="all", choices=("scenario", "records", "catalog", "nccl", "ddp", "all"))
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bin", default="build/gpuplan")
    ap.add_argument("--keep", default="/tmp/gpuplan-fuzz")
    ap.add_argument("--timeout", type=float, default=60)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    os.makedirs(a.keep, exist_ok=True)
    scen_files = sorted(glob.glob("scenarios/*.json"))
    scens = [load_commented(f) for f in scen_files]
    recs = [json.loads(l) for f in ["calibrate/measured/h200-2026-12.jsonl"] +
            sorted(glob.glob("calibrate/probes/results/h*-holdout*.jsonl")) for l in open(f) if l.strip()]
    cats = {f: load_commented(f) for f in sorted(glob.glob("catalogs/*.json"))}
    nccl = json.load(open(sorted(glob.glob("calibrate/probes/results/nccl-selftest-*.json"))[0]))
    gpt = [dict(r, gpus=8, nodes=1) for r in recs if r.get("model") == "gpt" and r.get("kind") == "train"
           and r.get("data") == "synthetic-on-gpu"]
    modes = ("scenario", "records", "catalog", "nccl", "ddp") if a.mode == "all" else (a.mode,)
    bad = 0
    for i in range(a.cases):
        mode = modes[i % len(modes)]
        if mode == "scenario":
            o = copy.deepcopy(rng.choice(scens))
            mutate(o, rng)
            fn = os.path.join(a.keep, f"case{i}.json")
            json.dump(o, open(fn, "w"))
            cmd = [a.bin, "run", "--no-db", "-q", fn]
        elif mode == "records":
            o = [copy.deepcopy(rng.choice(recs)) for _ in range(3)]
            mutate(o, rng)
            fn = os.path.join(a.keep, f"case{i}.jsonl")
            open(fn, "w").write("\n".join(json.dumps(r) for r in o) + "\n")
            cmd = [a.bin, "calibrate", "check", "--profile", "calibrate/profiles/h200.json", "--runs", fn,
                   "--tolerance", "100"]
        elif mode == "nccl":
            o = copy.deepcopy(nccl)
            mutate(o, rng)
            fn = os.path.join(a.keep, f"case{i}-nccl.json")
            json.dump(o, open(fn, "w"))
            cmd = [a.bin, "calibrate", "comm", "--nccl", fn, "--instance", "coreweave-8x-h200"]
        elif mode == "ddp":
            o = [copy.deepcopy(rng.choice(gpt)) for _ in range(2)]
            mutate(o, rng)
            fn = os.path.join(a.keep, f"case{i}-ddp.jsonl")
            open(fn, "w").write("\n".join(json.dumps(r) for r in o) + "\n")
            cmd = [a.bin, "calibrate", "ddp", "--runs", fn]
        else:
            f = rng.choice(list(cats))
            top = next(k for k in cats[f] if isinstance(cats[f][k], list))
            e = copy.deepcopy(rng.choice(cats[f][top]))
            mutate_numbers(e, rng)
            fn = os.path.join(a.keep, f"case{i}-catalog.json")
            json.dump({top: [e]}, open(fn, "w"))
            cmd = [a.bin, "--catalog", fn, "run", "--no-db", "-q", rng.choice(scen_files)]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
            ok = r.returncode in (0, 1, 2)
            if r.returncode == 2:
                lines = r.stderr.strip().splitlines()
                ok = ok and bool(lines) and (mode == "catalog" or all(fn in l for l in lines))
            why = f"exit {r.returncode}: {r.stderr.strip()[:200]}"
        except subprocess.TimeoutExpired:
            ok, why = False, f"no exit within {a.timeout:.0f} s"
        if ok:
            os.remove(fn)
        else:
            bad += 1
            print(f"BAD {' '.join(cmd)}  ({why})", flush=True)
    print(f"{a.cases} cases ({', '.join(modes)}), {bad} bad")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
