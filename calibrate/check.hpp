// `gpuplan calibrate check`: predicts every train record of a measured-runs file from its input fields
// and compares with what was measured. Library API used by the CLI, CI tests and other code.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibrate/fit.hpp"
#include "calibrate/reference_runs.hpp"
#include "models/compute_model.hpp"
#include "models/memory_model.hpp"

namespace gp::calibrate {

// Prediction of one train record. Built from record.step / record.input only (never measured fields).
struct RecordPrediction {
  std::optional<double> step_ms;        // empty: not predicted (see reason)
  std::optional<double> peak_mem_gib;   // comparable with torch.cuda.max_memory_allocated
  bool oom = false;
  // False when the model cannot express the record: its inputs (RunRecord::expressible) or its step's operators
  // (a Swin step with activation checkpointing, ...). Such a record has no verdict to agree or disagree with.
  bool expressible = true;
  std::string reason;                   // why step_ms is empty
  StepPrediction step;
  MemoryPrediction memory;
  // What sets the pace: the compute model's verdict, or "dataloader" when the data-loader simulation's step is
  // longer than the GPU-side step by a tenth of the step or more (as `gpuplan run` says it); and the GPU's busy
  // share of the predicted step.
  std::string bottleneck;
  double gpu_busy_frac = 0;
  // The 80% range of the step (10th and 90th percentiles under the check's StepSpread), for records whose step
  // the compute model sets (synthetic-on-gpu); empty otherwise or without a spread.
  std::optional<double> step_ms_p10, step_ms_p90;
};

// Extension point for records whose pace is set by the CPU data pipeline (data: cpu-jpeg-pipeline):
// given the record and its GPU-side prediction, return the step time in ms, or nullopt when it cannot.
using PipelinePredictor = std::function<std::optional<double>(const RunRecord&, const RecordPrediction&)>;

// Predicts one train record on `dev` (memory against `profile`). Records with a CPU data pipeline get a
// step time only through `pipeline` (otherwise reason = "needs the data-loader simulation").
// With host_cpu_scale > 0 (a factor measured on the runs' host, as the scenario's cluster.host_cpu_scale) the CPU's
// issue time is scaled by it first.
RecordPrediction predict_train_record(const RunRecord& rec, const DeviceModel& dev, const GpuProfile& profile,
                                      const FitConstants& constants, const PipelinePredictor& pipeline = {},
                                      double host_cpu_scale = 0);

struct RecordResult {
  const RunRecord* record = nullptr;
  RecordPrediction prediction;
  std::optional<double> step_err_pct;   // (predicted - measured) / measured
  std::optional<double> mem_err_pct;
  std::optional<bool> oom_agrees;      // unset where the record is not expressible or carries no outcome
  bool in_mape = false;                 // counted in the GPU-bound step-time MAPE
};

struct CheckSummary {
  int train_records = 0;
  int gpu_bound = 0;          // data: synthetic-on-gpu
  int predicted = 0;          // with a predicted step time and a measured one ("step times compared")
  int not_expressible = 0;    // the model cannot express the record (reason per record)
  int needs_pipeline = 0;     // CPU data-pipeline records without a pipeline predictor
  double mape_pct = 0;        // over GPU-bound records with both times
  double max_abs_err_pct = 0;
  std::string max_err_id;
  int mape_records = 0;       // GPU-bound records with both times (those the MAPE averages)
  int within_25 = 0;
  int oom_records = 0, oom_agree = 0;  // OOM agreement over expressible train records with an outcome
  double mem_mape_pct = 0;    // mean |peak-mem error| over records with a measured peak
  int mem_records = 0;
  double tolerance_pct = 10;
  bool pass = false;          // mape_pct <= tolerance_pct
  // The same MAPE records split by the predicted bottleneck: where the GPU's work sets the step, and where the
  // host's kernel issue does (launch-bound: its speed varies between hosts of the same kind, docs/calibration.md).
  double mape_gpu_pct = 0, mape_launch_pct = 0;
  int mape_gpu_records = 0, mape_launch_records = 0;
  // Of the MAPE records with a predicted 80% range, those whose measured step lies inside it.
  int range_records = 0, range_within = 0;
  StepSpread spread;
  // The host factor the check ran with (0: none), and the one these runs suggest for their host: the median of
  // measured / predicted step time over the records whose predicted CPU issue is at least 1.5x their GPU busy time
  // (their step is the host's), times the factor applied; 0 with fewer than 3 such records.
  double host_cpu_scale = 0, host_cpu_scale_suggested = 0;
  int host_bound_records = 0;
};

struct CheckReport {
  std::vector<RecordResult> records;
  CheckSummary summary;
};

// Runs the check over `runs` (non-train records are skipped). With a non-zero `spread`, each GPU-bound record also
// gets its predicted 80% range, and the summary counts the measured steps inside it.
CheckReport run_check(const std::vector<RunRecord>& runs, const GpuProfile& profile, const FitConstants& constants,
                      double tolerance_pct, const PipelinePredictor& pipeline = {}, const StepSpread& spread = {},
                      double host_cpu_scale = 0);

// The GPU model in a device name as torch.cuda.get_device_name, NVML and the GPU catalog write it: the first word
// (split at spaces, hyphens, commas and brackets) holding a digit, upper-cased. "NVIDIA H100 80GB HBM3" -> "H100",
// "NVIDIA A100-SXM4-80GB" -> "A100", "AMD Instinct MI300X" -> "MI300X", "NVIDIA GH200 480GB" -> "GH200";
// "" when there is none (the name says nothing to compare).
std::string gpu_model_token(const std::string& device_name);

// Train records measured on another GPU model than `profile`'s (their `device` field against the profile's
// device_name, by gpu_model_token): one line per such model, "FILE:LINE:/device: ..." at its first record, with the
// count. Empty when every record's device matches or says nothing (no `device`, as in blind-prediction files).
// Checking them against this profile compares one GPU's predictions with another's measurements. `remedy` ends
// each line (what the command offers instead: `calibrate check` derives a profile with --gpu).
std::vector<std::string> device_mismatches(
    const std::vector<RunRecord>& runs, const GpuProfile& profile, const std::string& file,
    const std::string& remedy =
        "check them against a profile of that GPU, or derive one with --gpu and its catalog id (catalogs/gpus.json)");

// Renderings: an aligned text table (<= 100 columns), the JSON document, an SVG scatter plot
// (log-log predicted vs measured step time with y = x and a +-10% band).
std::string render_table(const CheckReport& r);
// The operator breakdown of one record's step (`calibrate check --ops ID`): per operator name, phase,
// kernels per step and GPU milliseconds per step, largest first. Empty when the record is not expressible.
std::string render_ops(const RunRecord& rec, const DeviceModel& dev, const FitConstants& constants);
nlohmann::json render_json(const CheckReport& r);
std::string render_svg(const CheckReport& r);
// JUnit XML (as pytest --junitxml writes it, read by GitLab, Jenkins and GitHub test reporters): one testcase
// "step-time MAPE" that fails exactly when the check does (its exit code), one per record whose OOM verdict
// disagrees, and one per GPU-bound record of the MAPE, failing when its step error exceeds record_tolerance_pct.
std::string render_junit(const CheckReport& r, double record_tolerance_pct);
// Text for SVG and HTML: ids and names are user input and may hold markup characters.
std::string xml_escape(const std::string& s);

}  // namespace gp::calibrate
