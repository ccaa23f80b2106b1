#!/usr/bin/env python3
"""Fits sim-constants.json's step_host_cpu_log_sd and step_gpu_log_sd: how far measured steps fall from the model.

The compute model predicts a step as max(CPU issue time, GPU busy time). A measured step differs from it by the
host (lent hosts of one kind issue the same eager step up to 2x apart) and by the GPU-side model's error. The
spread model (models/compute_model.hpp: StepSpread, step_time_quantile) takes the measured step as
max(cpu x H, gpu x G), H and G independent and log-normal around 1. Their log standard deviations are estimated
from the GPU-bound (synthetic-on-gpu) train records of the FIT files, by each record's ln(measured / predicted):

  host CPU: over the records whose predicted CPU issue is at least 1.5x their GPU busy time (their step is the
            CPU's, so the ratio is H);
  GPU:      over those whose CPU issue is at most half their GPU busy time (the ratio is G);

each as the interdecile range over 2 x 1.2816 (the normal's 10th to 90th percentile; the logs have heavier tails
than a normal, so their standard deviation would make the 80% range too wide, and a median absolute deviation
too narrow). Records in between (each side within a factor 1.5 of the other) set neither.

The script then counts the measured steps of the TEST files that fall inside each record's predicted 80% range
(10th to 90th percentile), and does the same leaving each FIT file out in turn.

With --derived (runs measured on another GPU, predicted through the profile `--gpu` derives), the GPU-side spread
of those runs less the reference GPU's (in quadrature) gives step_derived_gpu_log_sd: the error that deriving a
profile by datasheet ratios adds.

step_known_host_cpu_log_sd is the spread left once a host's factor is measured (cluster.host_cpu_scale): per file
(one host) with at least 4 host-bound records, each record's log ratio less the median of the file's others,
pooled over every file given (--fit, --test, --derived and --known-host-also, the last predicted through --gpu),
checked by leaving each host out.

Usage: python3 tools/fit_step_spread.py --fit F1.jsonl [F2 ...] --test T1.jsonl [T2 ...]
       [--derived D1.jsonl ... --gpu h100-sxm] [--known-host-also H1.jsonl ...]
       [--gpuplan build/gpuplan] [--profile calibrate/profiles/h200.json] [--write calibrate/profiles/sim-constants.json]
With --write the two values (and the method, the files and the date) go into that sim-constants file.
"""
import argparse
import datetime
import json
import math
import statistics
import subprocess
from statistics import NormalDist

Z90 = NormalDist().inv_cdf(0.9)  # 1.2816


def records(a, path, gpu=None):
    res = subprocess.run([a.gpuplan, "calibrate", "check", "--profile", a.profile, "--runs", path,
                          "--format", "json", "--tolerance", "1000"] + (["--gpu", gpu] if gpu else []),
                         capture_output=True, text=True)
    if res.returncode not in (0, 1):
        raise SystemExit(res.stderr.strip())
    out = []
    for r in json.loads(res.stdout)["records"]:
        if not r.get("in_gpu_bound_mape") or r.get("predicted_step_ms") is None:
            continue
        b = r["breakdown_ms"]
        gpu = b["gpu_forward"] + b["gpu_backward"] + b["gpu_optimizer"]
        out.append({"file": path, "id": r["id"], "cpu": b["cpu_issue"], "gpu": gpu,
                    "ratio": r["measured_step_ms"] / r["predicted_step_ms"], "measured": r["measured_step_ms"]})
    return out


def quantile(sorted_v, p):
    x = p * (len(sorted_v) - 1)
    i = int(x)
    f = x - i
    return sorted_v[i] * (1 - f) + sorted_v[min(i + 1, len(sorted_v) - 1)] * f


def interdecile_sd(v):
    s = sorted(v)
    return (quantile(s, 0.9) - quantile(s, 0.1)) / (2 * Z90) if len(s) >= 2 else 0.0


def fit(recs):
    host = [math.log(r["ratio"]) for r in recs if r["cpu"] >= 1.5 * r["gpu"]]
    gpu = [math.log(r["ratio"]) for r in recs if r["cpu"] <= 0.5 * r["gpu"] and not r.get("host_only")]
    return interdecile_sd(host), interdecile_sd(gpu), len(host), len(gpu)


def known_host(files_recs):
    """The host's spread once its factor is measured: per file (one host) with at least 4 host-bound records, each
    record's ln(measured / predicted) less the median of the file's others (the factor a user measures from a few
    steps on the host), pooled. Returns (residuals, errors of the point with / without that factor)."""
    res, with_f, without = [], [], []
    for recs in files_recs:
        v = [math.log(r["ratio"]) for r in recs if r["cpu"] >= 1.5 * r["gpu"]]
        if len(v) < 4:
            continue
        for i, x in enumerate(v):
            m = statistics.median(v[:i] + v[i + 1:])
            res.append(x - m)
            with_f.append(abs(math.exp(m - x) - 1))
            without.append(abs(math.exp(-x) - 1))
    return res, with_f, without


def step_quantile(cpu, gpu, sh, sg, q):
    """Mirror of models/compute_model.cpp step_time_quantile (bisection on ln t)."""
    n = NormalDist()

    def cdf(t, x, sd):
        if sd <= 0:
            return 1.0 if t >= x else 0.0
        return n.cdf(math.log(t / x) / sd)

    top = max(cpu, gpu)
    lo, hi = math.log(top) - 8 * max(sh, sg), math.log(top) + 8 * max(sh, sg)
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if cdf(math.exp(mid), cpu, sh) * cdf(math.exp(mid), gpu, sg) < q:
            lo = mid
        else:
            hi = mid
    return math.exp(hi)


def coverage(recs, sh, sg, sd_derived):
    within = {"launch-bound": [0, 0], "gpu-bound": [0, 0]}
    for r in recs:
        k = "launch-bound" if r["cpu"] > r["gpu"] else "gpu-bound"
        g = math.hypot(sg, sd_derived) if r.get("host_only") else sg  # a derived profile adds its own
        lo = step_quantile(r["cpu"], r["gpu"], sh, g, 0.1)
        hi = step_quantile(r["cpu"], r["gpu"], sh, g, 0.9)
        within[k][1] += 1
        within[k][0] += lo <= r["measured"] <= hi
    return within


def show(label, w):
    inside = sum(v[0] for v in w.values())
    total = sum(v[1] for v in w.values())
    parts = ", ".join(f"{k} {v[0]} of {v[1]}" for k, v in w.items())
    print(f"{label}: {inside} of {total} inside the 80% range ({100 * inside / max(total, 1):.1f}%; {parts})")
    return inside, total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fit", nargs="+", required=True)
    ap.add_argument("--test", nargs="*", default=[])
    ap.add_argument("--gpuplan", default="build/gpuplan")
    ap.add_argument("--profile", default="calibrate/profiles/h200.json")
    ap.add_argument("--derived", nargs="*", default=[],
                    help="runs measured on another GPU, predicted through the profile derived for --gpu")
    ap.add_argument("--gpu", help="the catalog GPU of the --derived runs")
    ap.add_argument("--known-host-also", nargs="*", default=[],
                    help="runs on further --gpu hosts that set only the known-host spread")
    ap.add_argument("--write")
    a = ap.parse_args()
    if a.derived and not a.gpu:
        raise SystemExit("--derived needs --gpu")
    fit_recs = {f: records(a, f) for f in a.fit}
    # Runs on another GPU sit on other hosts too: their host-bound records join the host's spread (their GPU-bound
    # ones set the derived profile's own, below).
    derived_recs = {f: records(a, f, a.gpu) for f in a.derived}
    for f, recs in derived_recs.items():
        fit_recs[f] = [dict(r, host_only=True) for r in recs]
    test_recs = [r for f in a.test for r in records(a, f)]
    allfit = [r for v in fit_recs.values() for r in v]
    sh, sg, nh, ng = fit(allfit)
    sd_derived = 0.0
    if a.derived:
        dg = [math.log(r["ratio"]) for v in derived_recs.values() for r in v if r["cpu"] <= 0.5 * r["gpu"]]
        total_sd = interdecile_sd(dg)
        sd_derived = math.sqrt(max(0.0, total_sd ** 2 - sg ** 2))
    print(f"fit over {len(allfit)} records of {len(fit_recs)} files: host CPU log sd {sh:.4f} ({nh} records), "
          f"GPU log sd {sg:.4f} ({ng} records)")
    if a.derived:
        print(f"derived {a.gpu}: GPU log sd {total_sd:.4f} over {len(dg)} records, so {sd_derived:.4f} beyond the "
              f"reference GPU's {sg:.4f}")
    show("in-sample", coverage(allfit, sh, sg, sd_derived))
    if test_recs:
        show(f"test ({len(a.test)} files)", coverage(test_recs, sh, sg, sd_derived))
    inside = total = 0
    for f, recs in fit_recs.items():
        others = [r for g, v in fit_recs.items() if g != f for r in v]
        s1, s2, _, _ = fit(others)
        w = coverage(recs, s1, s2, sd_derived)
        inside += sum(v[0] for v in w.values())
        total += sum(v[1] for v in w.values())
    print(f"leave one fit file out: {inside} of {total} inside ({100 * inside / max(total, 1):.1f}%)")
    for f, recs in derived_recs.items():
        show(f"{f} ({a.gpu}), reference GPU spread only", coverage(recs, sh, sg, 0.0))
    # The known-host spread: first fitted on the fit files and tested on the others, then pooled over every host
    # given (each file one host), checked by leaving each file out.
    res, wf, wo = known_host(fit_recs.values())
    sk_fit = interdecile_sd(res)
    also = [records(a, f, a.gpu) for f in a.known_host_also]
    tres, twf, two = known_host([records(a, f) for f in a.test] + also)
    print(f"known host, fit files: within-host log sd {sk_fit:.4f} over {len(res)} host-bound records; point error "
          f"with the factor from the same host's other steps {100 * sum(wf) / max(len(wf), 1):.1f}% (without "
          f"{100 * sum(wo) / max(len(wo), 1):.1f}%)")
    if tres:
        inside = sum(1 for x in tres if abs(x) <= Z90 * sk_fit)
        print(f"known host, test and --known-host-also files: {inside} of {len(tres)} inside that 80% range; point "
              f"error {100 * sum(twf) / len(twf):.1f}% (without the factor {100 * sum(two) / len(two):.1f}%)")
    hosts = list(fit_recs.values()) + [records(a, f) for f in a.test] + also
    res_all, wf_all, wo_all = known_host(hosts)
    sk = interdecile_sd(res_all)
    inside = total = 0
    for i, h in enumerate(hosts):
        r_i, _, _ = known_host([h])
        if r_i:
            s_o = interdecile_sd(known_host(hosts[:i] + hosts[i + 1:])[0])
            inside += sum(1 for x in r_i if abs(x) <= Z90 * s_o)
            total += len(r_i)
    print(f"known host, every host pooled: log sd {sk:.4f} over {len(res_all)} records; leaving each host out "
          f"{inside} of {total} inside; point error {100 * sum(wf_all) / len(wf_all):.1f}% (without "
          f"{100 * sum(wo_all) / len(wo_all):.1f}%)")
    if a.write:
        with open(a.write) as fh:
            doc = json.load(fh)
        today = datetime.date.today().isoformat()
        files = ", ".join(a.fit + [f"{f} (through the {a.gpu} profile)" for f in a.derived])
        common = ("interdecile range of ln(measured / predicted) step time over 2 x 1.2816 (the normal's 10th to 90th "
                  "percentile), tools/fit_step_spread.py")
        doc["step_host_cpu_log_sd"] = {
            "value": round(sh, 4),
            "method": f"{common}, over the {nh} GPU-bound train records whose predicted CPU issue time is at least "
                      "1.5x their GPU busy time (their step is the host's): the spread of lent hosts' eager kernel "
                      "issue around the model. With step_gpu_log_sd it sets the 80% range of a predicted step "
                      "(models/compute_model.hpp: step_time_quantile)",
            "source": files, "as_of": today}
        doc["step_gpu_log_sd"] = {
            "value": round(sg, 4),
            "method": f"{common}, over the {ng} GPU-bound train records whose predicted CPU issue time is at most "
                      "half their GPU busy time (their step is the GPU's): the GPU-side model's error",
            "source": ", ".join(a.fit), "as_of": today}
        doc["step_known_host_cpu_log_sd"] = {
            "value": round(sk, 4),
            "method": f"{common}, of the {len(res_all)} host-bound records (as step_host_cpu_log_sd's) of every "
                      "file with at least 4 (one file, one host), each less the median of its file's others: the "
                      "spread left once the host's CPU factor is measured on a few steps (cluster.host_cpu_scale)",
            "source": ", ".join(a.fit + a.test + a.derived + a.known_host_also), "as_of": today}
        if a.derived:
            doc["step_derived_gpu_log_sd"] = {
                "value": round(sd_derived, 4),
                "method": f"sqrt(s^2 - step_gpu_log_sd^2), s the interdecile log sd (as above) of the {len(dg)} "
                          f"GPU-bound records measured on a {a.gpu} and predicted through the profile derived for it "
                          "from the reference GPU's by datasheet ratios (calibrate check --gpu): the error those "
                          "ratios add. `run` and `calibrate check` add it in quadrature for every derived profile",
                "source": ", ".join(a.derived), "as_of": today}
        with open(a.write, "w") as fh:
            json.dump(doc, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
        print(f"wrote step_host_cpu_log_sd {sh:.4f} and step_gpu_log_sd {sg:.4f} into {a.write}")


if __name__ == "__main__":
    main()
