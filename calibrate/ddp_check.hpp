// Multi-GPU data-parallel train records (tools/measure_ddp.py: `gpus` > 1, `nodes` 1, `parallel: "ddp"`,
// `bucket_cap_mb`) predicted through the training-step simulation (sim/step_sim via sim/job_inputs) on the
// measured node, rather than as one GPU: compute from the calibrated compute model, DDP gradient buckets
// all-reduced over NVLink (NVLS off, as measured) overlapping backward, the slowest rank ending the step.
//
// Hook for `calibrate check` (calibrate/check.cpp): a record with record_gpus(rec) > 1 takes its step time from
// predict_ddp_record instead of the one-GPU step (see docs/calibration.md, "Multi-GPU calibration").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "calibrate/check.hpp"
#include "calibrate/reference_runs.hpp"
#include "models/hardware.hpp"
#include "models/job.hpp"
#include "sim/job_inputs.hpp"

namespace gp::calibrate {

// `gpus` of a record's input (1 when absent).
int record_gpus(const RunRecord& rec);

// One `FILE:LINE:/gpus: ...` line when a file meant for the one-GPU model (`calibrate fit`'s --runs, --oom-runs,
// --ckpt-cpu) holds train records of more than one GPU (tools/measure_ddp.py's): their step times include the
// gradient all-reduce, so fitted as one GPU's step they skew the constants. Empty when there is none.
std::optional<std::string> multi_gpu_problem(const std::vector<RunRecord>& runs, const std::string& file);

// One node of catalog instance `instance_id` with its first `gpus` GPUs, as a measurement on a subset of a
// node's GPUs sees it (NVLink SHARP off: the runs set NCCL_NVLS_ENABLE=0). nullopt with `error` when the
// instance or its links are unknown, or gpus is not in 1..instance GPUs.
std::optional<ClusterConfig> single_node_cluster(const Catalog& cat, const std::string& instance_id, int gpus,
                                                 std::string& error);

struct DdpPrediction {
  RecordPrediction base;              // the one-GPU prediction (compute, memory, OOM) it starts from
  std::optional<double> step_ms;      // empty: not predicted (reason)
  std::string reason;
  int gpus = 1;
  double bucket_mib = 25;             // bucket_cap_mb (PyTorch: 2^20 bytes)
  Seconds compute, comm_exposed, comm_hidden, comm_total;  // the simulated step's breakdown (per step)
};

// Predicts a DDP record on `node` (single_node_cluster, gpus = the record's). Uses only the record's input
// fields. `k`: simulation constants (per-step noise); `steps`: simulated steps.
DdpPrediction predict_ddp_record(const RunRecord& rec, const DeviceModel& dev, const GpuProfile& profile,
                                 const FitConstants& constants, const ClusterConfig& node,
                                 const sim::SimConstants& k, int steps = 200);

}  // namespace gp::calibrate
