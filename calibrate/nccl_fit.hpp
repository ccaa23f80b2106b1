// Measured NCCL collectives (calibrate/nccl_io.hpp) against the closed-form collective model
// (models/collective.hpp): per op and size, measured vs predicted bus bandwidth, and a least-squares fit of the
// model's two free terms per algorithm and GPU count: the effective per-hop latency L and the bandwidth
// efficiency e (achieved fraction of the catalog's per-GPU link rate). Method: docs/calibration.md,
// "Multi-GPU calibration (issue 5)".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibrate/nccl_io.hpp"
#include "models/collective.hpp"

namespace gp::calibrate {

// The topology a single-host measurement ran on: `gpus` GPUs of one node joined by `intra`, with NVLink SHARP
// off (the probe runs with NCCL_NVLS_ENABLE=0). Precondition: gpus >= 1.
collective::Topology single_node_topology(const InterconnectSpec& intra, int gpus);

// One measured row and its prediction.
struct CommRow {
  collective::Op op = collective::Op::all_reduce;
  collective::Algorithm algorithm = collective::Algorithm::ring;  // the model's choice (auto, NVLS off)
  Bytes bytes;
  Seconds measured_time, predicted_time;
  ByteRate measured_busbw, predicted_busbw;  // busbw from time by nccl-tests' factor for both
  double err_pct = 0;                        // (predicted - measured) / measured busbw, in percent
  std::optional<double> fitted_err_pct;      // the same with the fitted L and e of the row's group
};

// Fitted terms of one algorithm at one GPU count. Model per row: T = H x L + X / e, where H is the plan's hop
// count and X its transfer time at the full catalog link rate; least squares on relative residuals
// ((model - T) / T), so every size weighs the same.
struct CommFit {
  collective::Algorithm algorithm = collective::Algorithm::ring;
  int gpus = 0;
  int rows = 0;
  bool valid = false;              // false: fewer than 2 usable rows, or the system is singular
  std::string note;                // why not valid, or a warning (e.g. negative latency)
  Seconds hop_latency;             // fitted L
  double efficiency = 0;           // fitted e
  Seconds catalog_hop_latency;     // the catalog's values, for comparison
  double catalog_efficiency = 0;
  double rms_rel_err_pct = 0;      // of the fitted model over the group's rows
};

struct CommSummary {
  Bytes large_from;                      // threshold of the acceptance (64 MiB)
  double tolerance_pct = 10;
  int rows = 0;                          // compared rows (ranks > 1)
  int large_rows = 0;                    // of which >= large_from, all ops
  double large_mean_abs_err_pct = 0;     // all ops, >= large_from
  int allreduce_large_rows = 0;
  double allreduce_large_mean_abs_err_pct = 0;  // the acceptance figure
  double allreduce_large_max_abs_err_pct = 0;
  bool pass = false;                     // all-reduce rows >= large_from exist and their mean is within tolerance
};

struct CommCalibration {
  int gpus = 0;
  std::vector<CommRow> rows;
  std::vector<CommFit> fits;
  CommSummary summary;
};

// Least-squares fit per (algorithm, gpus) over `m`'s rows on `t`. Rows with one rank or zero time are skipped.
// Precondition: collective::check(t) is nullopt and t.ranks() == m.gpus.
std::vector<CommFit> fit_comm(const NcclMeasurement& m, const collective::Topology& t);

// Compares every row of `m` with the model on `t`, fits (fit_comm) and summarises. Same preconditions.
CommCalibration calibrate_comm(const NcclMeasurement& m, const collective::Topology& t,
                               Bytes large_from = Bytes::mib(64), double tolerance_pct = 10);

// Renderings: an aligned table (<= 100 columns) and JSON (rows, fits, summary).
std::string render_comm_table(const CommCalibration& c, const NcclMeasurement& m);
nlohmann::ordered_json render_comm_json(const CommCalibration& c, const NcclMeasurement& m);
// The fit alone, for the catalog / profile: schema gpuplan-comm-fit/1 with its source and as_of.
nlohmann::ordered_json comm_fit_json(const CommCalibration& c, const NcclMeasurement& m,
                                     const std::string& interconnect_id);

}  // namespace gp::calibrate
