#!/usr/bin/env bash
# The device measurements that sessions without a lent GPU left named (docs/calibration.md; the stop notes), in one
# call of the device tool, most wanted first, each under its own time limit so that one failure or overrun does not
# cost the rest. Runs on the lent machine from the repository root; writes under $OUT. One GPU is enough.
#   ddp      DDP's reducer kernels: the ddp/ rows of tools/measure_dp_memory.py with --kernels, against the blind
#            predictions in calibrate/probes/results/ddp-reducer-predictions-2026-12-08.txt
#   host     FSDP's host cost: the host- rows (a 32-block GPT of width 256, FSDP-wrapped against bare, with and
#            without checkpointing), for the per-unit CPU cost that checkpointed FSDP steps showed
#   holdout  held-out set 19 on an H200 (its H200 predictions:
#            calibrate/probes/results/holdout18-21-h200-predictions-2026-12-07.txt); skipped on another GPU
# STEPS (default "ddp host holdout") picks and orders them. Usage on the device tool:
#   bash tools/run_pending_device_work.sh      (OUT is set by the tool)
set -u -o pipefail
OUT=${OUT:-out}
STEPS=${STEPS:-ddp host holdout}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
case "$gpu" in
  *H200*) name=h200 ;;
  *H100*) name=h100 ;;
  *) name=gpu ;;
esac
date=$(date -u +%Y-%m-%d)
echo "GPU: ${gpu:-none} ($name), date $date, steps: $STEPS"
for step in $STEPS; do
  start=$(date +%s)
  case "$step" in
    ddp) timeout 170 python3 tools/measure_dp_memory.py --kernels --prefix ddp --out "$OUT/ddp-kernels-$name-$date.jsonl" ;;
    host) timeout 170 python3 tools/measure_dp_memory.py --kernels --prefix host- --out "$OUT/fsdp-host-$name-$date.jsonl" ;;
    holdout)
      if [ "$name" = h200 ]; then
        timeout 230 python3 tools/measure_holdout.py --set 19 --micro-launch --out "$OUT/h200-holdout19-$date.jsonl"
      else
        echo "holdout: set 19 is wanted on an H200, this is $name: skipped"
      fi ;;
    *) echo "unknown step $step (ddp, host, holdout)"; continue ;;
  esac
  echo "step $step: exit $? after $(( $(date +%s) - start )) s"
done
ls -l "$OUT"
