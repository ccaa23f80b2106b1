// Measured NCCL collectives as gpuplan-probe writes them (--nccl-only --nccl-out FILE; schema gpuplan-nccl/1,
// calibrate/probes/nccl_probe.hpp): per collective, nccl-tests' rows (bytes, time, algbw, busbw) over the
// GPUs of one host. The same "nccl" section may also sit inside a full profile JSON; both are accepted.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/collective.hpp"
#include "models/units.hpp"

namespace gp::calibrate {

// One message size of one collective (sizes as in nccl-tests, see collective::Op).
struct NcclRow {
  Bytes bytes;
  Seconds time;          // mean per iteration
  ByteRate algbw;        // bytes / time
  ByteRate busbw;        // algbw x bus factor (0 with one GPU)
};

struct NcclMeasurement {
  std::string file;                                   // where it was read from (for messages)
  std::string gpu_id;                                 // catalog GPU id given to the probe ("unknown" if none)
  std::string measured_on;
  std::string nccl_version;
  int gpus = 0;                                       // ranks (GPUs of one host), >= 1
  std::map<collective::Op, std::vector<NcclRow>> ops; // rows in file order (increasing bytes)
  std::vector<std::string> check_failures;            // the probe's result checks that failed
};

// Probe key ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast") of an op, and back.
const char* probe_key(collective::Op op);
std::optional<collective::Op> op_from_probe_key(const std::string& key);

// Parses a document (`file` names it in errors). Every problem becomes one `FILE:/json/path: expectation`
// line in `errors`; nullopt when any was found. Unknown op keys are problems (likely typos).
std::optional<NcclMeasurement> parse_nccl(const nlohmann::json& doc, const std::string& file,
                                          std::vector<std::string>& errors);

// Reads and parses a file (syntax errors give `FILE:LINE:COL: ...`).
std::optional<NcclMeasurement> load_nccl(const std::string& path, std::vector<std::string>& errors);

}  // namespace gp::calibrate
