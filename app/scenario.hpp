// Scenario files: JSON (comments allowed) describing a training job and candidate clusters. Any field may
// hold a list; the scenario is then a sweep over the cartesian product of all lists. Reference:
// docs/scenario.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/diagnostics.hpp"
#include "app/json_reader.hpp"
#include "models/job.hpp"

namespace gp::app {

// A scenario after expansion and validation: one JobConfig per point of the sweep.
struct Scenario {
  std::string path;
  std::string text;                 // the file's bytes, as stored with each run
  std::string name;
  std::string description;
  std::vector<JobConfig> configs;
  std::vector<json> concrete;       // the concrete JSON of each configuration (same order as configs)
  // Where the sweep chose: the dotted path ("workload.micro_batch") of each place a list was replaced by one of its
  // elements, in the order first met. Empty for a scenario without lists.
  std::vector<std::string> sweep_dims;
};

// Most configurations one scenario may expand to; more is reported as an error.
inline constexpr std::size_t kMaxSweepConfigs = 100000;

// One point of a sweep: the concrete document and, for each place where a list was replaced by one of its
// elements, the pointer in the concrete document and the pointer of the chosen element in the original.
struct SweepPoint {
  json doc;
  std::vector<std::pair<std::string, std::string>> origin;  // concrete pointer -> original pointer
  // Rewrites a pointer into the concrete document as a pointer into the original file.
  [[nodiscard]] std::string original_pointer(const std::string& concrete_pointer) const;
};

// Expands every array in `doc` into alternatives (cartesian product over members of an object; an array's
// elements are alternatives). Returns nullopt when the product exceeds `limit`.
std::optional<std::vector<SweepPoint>> expand_sweep(const json& doc, std::size_t limit);

// Reads, expands and validates a scenario. Every problem (from every point of the sweep, deduplicated) goes
// to `diags`; returns nullopt when there was any.
std::optional<Scenario> load_scenario(const std::string& path, const Catalog& catalog, Diagnostics& diags);
// Same, from text in memory (`name` is used in diagnostics).
std::optional<Scenario> load_scenario_text(const std::string& text, const std::string& name,
                                           const Catalog& catalog, Diagnostics& diags);

}  // namespace gp::app
