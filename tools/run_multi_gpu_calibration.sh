#!/usr/bin/env bash
# Issue 5: the single command for a lent multi-GPU H200 machine (nvidia-h200-x8, or -x4 / -x2), run from the
# repository root with the probe binary built beforehand on the workstation into .probe-bin/ and carried
# (nothing is built here). docs/calibration.md, "Multi-GPU calibration (issue 5)", gives the device call.
# Steps (STEPS env, default all):
#   nccl   gpuplan-probe --nccl-only over all visible GPUs, then over the first 4 and the first 2
#          (CUDA_VISIBLE_DEVICES) -> $OUT/nccl-h200x{8,4,2}.json (schema gpuplan-nccl/1)
#   ddp    tools/measure_ddp.py under torchrun (python3 -m torch.distributed.run: no PATH needed) for
#          N = 1, 2, 4, 8 GPUs (those available)
#          -> $OUT/h200-ddp.jsonl (one record per model and N)
# nvidia-smi topo -m goes to $OUT/topo.txt, nvidia-smi dmon to $OUT/dmon.txt. Each step has its own time limit,
# so one failure does not cost the others. Total: about 7 minutes on 8 GPUs (under the 10-minute call limit).
set -u -o pipefail
OUT=${OUT:-out}
STEPS=${STEPS:-nccl ddp}
BUCKET_CAP_MB=${BUCKET_CAP_MB:-25}
mkdir -p "$OUT"
BIN=${PROBE_BIN:-.probe-bin/gpuplan-probe}
# NVLink multicast stays off everywhere (it can take a shared host's GPUs out of service).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
# cuBLAS and NCCL come from the machine's CUDA install, else from PyTorch's wheels.
for lib in libcublasLt.so.13 libcublas.so.13 libnccl.so.2; do
  if ! ldconfig -p | grep -q "$lib"; then
    f=$(find /usr/local/cuda/ /usr/local/cuda*/ /opt /usr/lib /usr/local/lib -name "$lib" -print -quit 2>/dev/null)
    [ -n "$f" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$(dirname "$f")"
  fi
done
echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
echo "GPUs: $NGPU"
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv || true
nvidia-smi topo -m >"$OUT/topo.txt" 2>&1 || true
nvidia-smi dmon -s pc -d 1 >"$OUT/dmon.txt" 2>&1 &
DMON=$!
has() { [[ " $STEPS " == *" $1 "* ]]; }
first() { seq -s, 0 $(($1 - 1)); }  # "0,1,...,n-1"

if has nccl; then
  if [ ! -x "$BIN" ]; then
    echo "nccl: $BIN missing (build gpuplan-probe here and carry .probe-bin)"
  else
    for n in $(printf '%s\n' "$NGPU" 4 2 | sort -rnu); do
      [ "$n" -gt "$NGPU" ] || [ "$n" -lt 2 ] && continue
      echo "== nccl over $n GPUs"
      CUDA_VISIBLE_DEVICES=$(first "$n") timeout 80 "$BIN" --nccl-only --gpu-id h200-sxm \
        --nccl-out "$OUT/nccl-h200x$n.json" --verbose 2>"$OUT/nccl-x$n.log"
      echo "nccl x$n rc=$?"
      tail -n 3 "$OUT/nccl-x$n.log"
    done
  fi
fi
if has ddp; then
  for n in 1 2 4 8; do
    [ "$n" -gt "$NGPU" ] && continue
    echo "== DDP on $n GPU(s)"
    CUDA_VISIBLE_DEVICES=$(first "$n") PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1 timeout 120 \
      python3 -m torch.distributed.run --standalone --nproc_per_node "$n" tools/measure_ddp.py --out "$OUT/h200-ddp.jsonl" \
      --bucket-cap-mb "$BUCKET_CAP_MB" 2>"$OUT/ddp-x$n.log"
    echo "ddp x$n rc=$?"
    tail -n 4 "$OUT/ddp-x$n.log"
  done
fi
kill "$DMON" 2>/dev/null || true
ls -l "$OUT"
