// Measured runs in the format of shared/reference-runs/README.md (one JSON object per line).
// Input fields (what was run) and measured fields (what was seen) are kept apart: the StepConfig of a
// record is built from its input fields only, so predictions cannot read measurements.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/workload.hpp"

namespace gp::calibrate {

// Fields of a record that hold measurements (removed before anything is predicted).
const std::vector<std::string>& measured_fields();

struct Measured {
  std::optional<double> step_ms;
  std::optional<double> peak_mem_gib;
  bool oom = false;
};

struct RunRecord {
  std::string id;
  std::string kind;           // train, micro, checkpoint
  int line = 0;               // 1-based line in the file
  nlohmann::json input;       // the record with measured fields removed
  Measured measured;
  // train records only:
  std::string data;           // synthetic-on-gpu or cpu-jpeg-pipeline
  bool expressible = false;   // StepConfig could be built
  std::string reason;         // why not, when !expressible
  StepConfig step;
};

// True when the record's step is GPU-bound by construction (inputs already on the GPU).
bool gpu_bound(const RunRecord& r);
// Whether any record of `runs` is a train record (a file of micro or checkpoint records alone has nothing to check).
bool has_train_record(const std::vector<RunRecord>& runs);

// Builds the StepConfig of a train record from its input fields. Returns the reason it cannot when the
// model cannot express it (message), nullopt on success. Unknown model names become generic models
// from `params` and `fwd_flops_per_sample`.
std::optional<std::string> step_from_input(const nlohmann::json& input, StepConfig& step);

// The paths of several runs files as one string ("a.jsonl, b.jsonl"; the fit file's `runs` uses " + ").
std::string join_paths(const std::vector<std::string>& paths, const std::string& sep = ", ");

// Reads a JSONL file. Malformed lines and fields give `FILE:LINE:/path: expectation` errors.
std::vector<RunRecord> load_runs(const std::string& path, std::vector<std::string>& errors);
// Parses already-read lines (`file` names them in errors).
std::vector<RunRecord> parse_runs(const std::vector<std::string>& lines, const std::string& file,
                                  std::vector<std::string>& errors);

}  // namespace gp::calibrate
