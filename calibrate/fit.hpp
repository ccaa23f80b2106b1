// Global constants of the compute model (models/compute_model.hpp) fitted over measured runs, and their
// JSON file (calibrate/profiles/fit-<gpu>.json, schema "gpuplan-fit/1", with `source` and `as_of`).
//
// Method: Levenberg-Marquardt least squares on r_i = ln(predicted_i / measured_i) over every GPU-bound
// train record with a measured step time, parameters in log space (so they stay positive). The
// generalisation error is estimated by leave-one-out: each record predicted by a fit to all the others.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibrate/reference_runs.hpp"
#include "models/compute_model.hpp"
#include "models/memory_model.hpp"

namespace gp::calibrate {

struct FitConstants {
  ComputeConstants compute;
  MemoryConstants memory;
  std::string profile;   // profile the constants were fitted with
  std::string runs;      // runs file they were fitted on
  nlohmann::json stats;  // fit statistics (records, MAPE, leave-one-out MAPE)
  nlohmann::json memory_fit;  // how memory.largest_block_share and memory.reserve were fitted (null: defaults)
};

// Reads a "gpuplan-fit/1" file; errors as `FILE:/path: expectation` lines.
std::optional<FitConstants> load_constants(const std::string& path, std::vector<std::string>& errors);
// The constants used with the profile at `profile_path`: `given` when not empty, else fit-P.json beside P.json.
// When the profile could not be read (`profile_read` false) and none is given, nothing is read or reported: the
// default file sits beside the profile, and a line about it would only repeat the profile's.
std::string default_constants_path(const std::string& profile_path);
std::optional<FitConstants> load_constants_for(const std::string& profile_path, bool profile_read,
                                               const std::string& given, std::vector<std::string>& errors);
std::optional<FitConstants> parse_constants(const nlohmann::json& doc, const std::string& file,
                                            std::vector<std::string>& errors);
nlohmann::json constants_to_json(const FitConstants& c);

// Reads the kernel-class constants (bn_gelements_per_s, norm_row_cost_ns, transpose_efficiency,
// dwconv_flop_efficiency, dwconv_memory_efficiency, source) written by tools/fit_kernel_classes.py; other
// fields stay default.
// `calibrate fit --kernel-classes FILE` holds them fixed while it fits the rest.
std::optional<ComputeConstants> load_kernel_classes(const std::string& path, std::vector<std::string>& errors);
// Reads the NCHW kernel-class constants written by tools/fit_nchw_classes.py (BatchNorm and depthwise kernels
// in PyTorch's default layout, cuDNN's layout transforms); `calibrate fit --nchw-classes FILE` carries them into
// the fit (no fitted record is NCHW, so they change no other constant). copy_nchw_classes moves just those.
std::optional<ComputeConstants> load_nchw_classes(const std::string& path, std::vector<std::string>& errors);
void copy_nchw_classes(const ComputeConstants& from, ComputeConstants& to);
// Reads the probe-class constants written by tools/fit_probe_classes.py (pooling rates, the first convolution's
// FLOP efficiency, the per-channel sum samples; each from kernels probed one at a time); `calibrate fit
// --probe-classes FILE` holds them fixed.
std::optional<ComputeConstants> load_probe_classes(const std::string& path, std::vector<std::string>& errors);
void copy_probe_classes(const ComputeConstants& from, ComputeConstants& to);

struct FitRecordError {
  std::string id;
  double measured_ms = 0;
  double fitted_ms = 0;   // with the constants fitted to all records
  double loo_ms = 0;      // with constants fitted to all other records
};

struct FitResult {
  ComputeConstants constants;
  std::vector<FitRecordError> records;
  double mape_pct = 0;       // in-sample
  double loo_mape_pct = 0;   // leave-one-out
  double loo_max_pct = 0;
  int iterations = 0;
  std::vector<double> session_cpu_scale;  // per session, its host's CPU costs / the first session's (first = 1)
};

// Records the fit uses: GPU-bound, expressible train records with a measured step time.
std::vector<const RunRecord*> fit_records(const std::vector<RunRecord>& runs);

// Fits nine compute constants (backward CPU cost per kernel tied to forward) starting from `start`. With `leave_one_out`, also refits once per
// record (cost: records x one fit). Deterministic.
// `session_of_run` (optional, parallel to `runs`): the session (host) of each run. With more than one, every
// session after the first gets a CPU speed factor fitted with the constants (all its CPU costs scaled), and the
// constants returned are the first session's host's (docs/calibration.md, "Host CPU speed").
// `progress` (optional) is called with (done, total) after each leave-one-out refit.
FitResult fit_compute_constants(const std::vector<RunRecord>& runs, const DeviceModel& dev,
                                const ComputeConstants& start, bool leave_one_out,
                                const std::vector<int>& session_of_run = {},
                                const std::function<void(std::size_t, std::size_t)>& progress = {});

// Error on one session's records of constants fitted to the other sessions only.
struct SessionError {
  std::string name;        // the session's runs file
  std::size_t records = 0; // its fit records
  double mape_pct = 0;     // mean |error| of its records, in percent
  double max_pct = 0;      // largest |error|
};

// Leave-one-session-out: for each session, fits on all the others (concatenated) and predicts it.
// Preconditions: sessions.size() == names.size() >= 2. Cost: one fit per session. Deterministic.
std::vector<SessionError> leave_one_session_out(const std::vector<std::vector<RunRecord>>& sessions,
                                                const std::vector<std::string>& names, const DeviceModel& dev,
                                                const ComputeConstants& start);

// The CPU cost of activation checkpointing per recomputed forward call (ComputeConstants::cpu_per_recompute_eager),
// fitted to the checkpointed train records of `paths` (tools/measure_ckpt_cpu.py: the same GPT steps with and
// without checkpointing, measured in pairs on one host) with every other constant held: least squares of
// ln(predicted / measured) step time by a grid over 0..2 ms. Errors as `FILE...: expectation` lines; nullopt then.
struct RecomputeCpuFit {
  double seconds = 0;         // the fitted cost per recomputed call
  int records = 0;            // checkpointed records it was fitted to
  double rms_log_before = 0;  // RMS ln(predicted / measured) over them with no such cost
  double rms_log_after = 0;   // and with the fitted one
};
std::optional<RecomputeCpuFit> fit_recompute_cpu(const std::vector<std::string>& paths, const DeviceModel& dev,
                                                 const ComputeConstants& constants, std::vector<std::string>& errors);

// The out-of-memory rule's constants (MemoryConstants::largest_block_share and reserve): a step fits when
// peak + share x largest tensor + reserve <= capacity. Fitted to measured verdicts (a record that ran, with its
// peak, or `oom: true`): for each share on a grid over 0..2 in steps of 0.01, the steps sorted by
// x = peak + share x largest - capacity are cut where the fewest verdicts come out wrong, the widest gap between
// neighbours breaking ties, and the reserve sits in that gap's middle; the share with the fewest wrong verdicts,
// then the widest gap, then the smallest, wins. When the verdicts separate this is the widest-margin rule. margin:
// the distance between the closest steps on either side (negative when the rule errs). Pure; deterministic.
struct OomRow {
  double peak = 0, largest = 0, capacity = 0;  // bytes: predicted device peak, largest tensor, device - context
  bool oom = false;                             // measured
};
struct OomFit {
  double largest_block_share = 0;
  double reserve = 0;  // bytes
  double margin = 0;   // bytes between the closest ran and out-of-memory steps (negative: not separable)
  int records = 0, oom_records = 0, misclassified = 0;
};
std::optional<OomFit> fit_oom_rule(const std::vector<OomRow>& rows);
// The rows of the expressible train records of `runs` with a measured verdict, predicted with `constants`.
std::vector<OomRow> oom_rows(const std::vector<RunRecord>& runs, const GpuProfile& profile,
                             const FitConstants& constants);

}  // namespace gp::calibrate
