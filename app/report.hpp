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

// A positive figure in three significant digits, in at most seven characters from 0.001 to 10^15 (0.00123,
// 0.0123, 1.23, 12.3, 123, 12300, 1.23M, 45.6G): the table's step time, throughput and time to train.
std::string sig3(double x);

enum class Format { table, json, md, csv };

std::string render(const std::vector<ConfigOutcome>& all, Format f, const std::string& scenario_name,
                   std::optional<double> deadline_hours, long long run_id);

}  // namespace gp::app
