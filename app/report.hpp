// Renders run results: aligned table (<= 100 columns), JSON, Markdown and CSV. Shape: docs/output.md.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/job.hpp"
#include "models/job_result.hpp"

namespace gp::app {

struct ConfigOutcome {
  JobConfig job;
  JobResult result;
};

// The documented per-configuration JSON object.
nlohmann::ordered_json config_json(const ConfigOutcome& c);
// Label of the cluster: the instance id, or "<gpu> x<n>/node".
std::string cluster_label(const JobConfig& job);

// Index of the cheapest configuration that fits and meets `deadline_hours` (when given); -1 when none.
int pick_best(const std::vector<ConfigOutcome>& all, std::optional<double> deadline_hours);

enum class Format { table, json, md, csv };

std::string render(const std::vector<ConfigOutcome>& all, Format f, const std::string& scenario_name,
                   std::optional<double> deadline_hours, long long run_id);

}  // namespace gp::app
