#!/usr/bin/env bash
# Runs on the lent H200 machine (the device tool), from the repository root, with the probe binary built
# beforehand into .probe-bin/ (see docs/calibration.md, "Probes and the H200 profile"). Steps (STEPS env, default
# all of them):
#   probe    gpuplan-probe -> $OUT/h200.json (committed as calibrate/profiles/h200.json)
#   nccl     gpuplan-probe --nccl-only over the visible GPUs -> $OUT/nccl-selftest.json
#   gemmdiag the reference GEMM shapes again with operands reused (no rotation) -> $OUT/gemm-norotate.json, and
#            torch.matmul on them -> $OUT/torch-gemm.json (explains probe vs reference differences)
#   burst    the GEMM grid again with 100 ms idle before each shape (clocks not held down by the 700 W limit)
#            -> $OUT/gemm-burst.json, merged into the profile as "gemm_burst" by tools/merge_gemm_burst.py
#   holdout  tools/measure_holdout.py -> $OUT/h200-holdout.jsonl (calibrate/measured/h200-holdout-*.jsonl)
#   kernels  tools/profile_vision_kernels.py over KERNEL_MODELS (model:batch ...) -> $OUT/h200-kernels.jsonl
# GPU_ID (default h200-sxm) names the catalog GPU; on another GPU (GPU_ID=h100-sxm) every file is named after it
# (h100.json, h100-holdout.jsonl, ...): a measured profile of that GPU, to set against the one derived for it.
# nvidia-smi dmon samples power and clocks every second into $OUT/dmon.txt meanwhile.
# Each step has its own time limit, so one failure does not cost the others.
set -u -o pipefail
OUT=${OUT:-out}
STEPS=${STEPS:-probe nccl gemmdiag burst holdout}
GPU_ID=${GPU_ID:-h200-sxm}
NAME=${GPU_ID%%-*}
mkdir -p "$OUT"
BIN=${PROBE_BIN:-.probe-bin/gpuplan-probe}
# NVLink multicast stays off everywhere (it can take a shared host's GPUs out of service).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
# cuBLAS and NCCL come from the machine's CUDA install, else from PyTorch's wheels.
for lib in libcublasLt.so.13 libcublas.so.13 libnccl.so.2; do
  if ! ldconfig -p | grep -q "$lib"; then
    f=$(find /usr/local/cuda/ /usr/local/cuda*/ /opt /usr/lib -name "$lib" -print -quit 2>/dev/null)
    [ -n "$f" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$(dirname "$f")"
  fi
done
echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu \
  --format=csv || true
nvidia-smi dmon -s pc -d 1 >"$OUT/dmon.txt" 2>&1 &
DMON=$!
has() { [[ " $STEPS " == *" $1 "* ]]; }

if has probe; then
  echo "== probe"
  timeout 200 "$BIN" --gpu-id "$GPU_ID" --out "$OUT/$NAME.json" --verbose 2>"$OUT/probe.log"
  echo "probe rc=$?"
  grep -v '^gemm' "$OUT/probe.log" | tail -n 5
fi
if has nccl; then
  echo "== nccl self-test"
  timeout 90 "$BIN" --nccl-only --gpu-id "$GPU_ID" --nccl-out "$OUT/nccl-selftest.json" --verbose 2>"$OUT/nccl.log"
  echo "nccl rc=$?"
  tail -n 3 "$OUT/nccl.log"
fi
if has gemmdiag; then
  echo "== gemm diagnostics"
  timeout 60 "$BIN" --gpu-id "$GPU_ID" --gemm-only --gemm-tags ref-micro,square --gemm-no-rotate \
    --out "$OUT/gemm-norotate.json" 2>&1 | tail -n 3
  PYTHONUNBUFFERED=1 timeout 90 python3 tools/gemm_torch_compare.py --out "$OUT/torch-gemm.json"
  echo "gemmdiag rc=$?"
fi
if has burst; then
  echo "== gemm burst grid"
  timeout 240 "$BIN" --gpu-id "$GPU_ID" --gemm-only --gemm-gap-ms 100 --out "$OUT/gemm-burst.json" --verbose \
    2>"$OUT/burst.log"
  echo "burst rc=$?"
  tail -n 3 "$OUT/burst.log"
fi
if has holdout; then
  echo "== held-out training runs"
  PYTHONUNBUFFERED=1 timeout 290 python3 tools/measure_holdout.py --out "$OUT/$NAME-holdout.jsonl"
  echo "holdout rc=$?"
fi
if has kernels; then
  echo "== kernel profiles: ${KERNEL_MODELS:-}"
  # shellcheck disable=SC2086  # KERNEL_MODELS is a list of model:batch words
  (cd tools && PYTHONUNBUFFERED=1 timeout 300 python3 profile_vision_kernels.py "$OUT/$NAME-kernels.jsonl" ${KERNEL_MODELS:-})
  echo "kernels rc=$?"
fi
kill "$DMON" 2>/dev/null || true
