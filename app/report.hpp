// Renders run results: aligned table (<= 100 columns), JSON, Markdown and CSV. Shape: docs/output.md.
#pragma once

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/job.hpp"
#include "models/job_result.hpp"

namespace gp::app {

struct ConfigOutcome {
  JobConfig job;
  JobResult result;
  // What sets this configuration apart in its sweep: each scenario field whose value differs between the
  // configurations, by dotted path ("workload.micro_batch"), with this configuration's value (null where unset).
  // Empty for one configuration.
  nlohmann::ordered_json sweep = nlohmann::ordered_json::object();
  // The same for the table, short: see sweep_label.
  std::string sweep_label;
};

// The swept fields of each configuration (ConfigOutcome::sweep) from the concrete scenario documents, one per
// configuration in sweep order: the leaves (object members; arrays count as one value) that are not equal in all.
std::vector<nlohmann::ordered_json> sweep_values(const std::vector<nlohmann::json>& concrete);

// A configuration's sweep in a few words ("micro_batch=4 cuda_graphs=true"), one entry per place the sweep chose
// (`dims`, Scenario::sweep_dims): a chosen value as name=value; a chosen object by its first two fields that differ
// and are set ("plan=on-prem capex_per_node_usd=310000 ..."). The cluster's nodes, instance and GPU are left out:
// the table shows them in its own columns.
std::string sweep_label(const nlohmann::ordered_json& sweep, const std::vector<std::string>& dims);

// Whether the model predicted the configuration at all (bottleneck `not-predicted`: a GPU without the precision,
// a model it cannot express); one that does not fit is predicted.
inline bool predicted(const JobResult& r) { return r.bottleneck != "not-predicted"; }

// Whether the job ever finishes: failures that come faster than the work between checkpoints make its expected
// time (and cost) infinite. JSON: null; CSV: empty; never recommended.
inline bool finishes(const JobResult& r) { return std::isfinite(r.time_to_train.value()); }

// The documented per-configuration JSON object; null figures where nothing was predicted.
nlohmann::ordered_json config_json(const ConfigOutcome& c);
// Label of the cluster: the instance id, or "<gpu> x<n>/node".
std::string cluster_label(const JobConfig& job);

// Index of the cheapest configuration that fits and meets `deadline_hours` (when given); -1 when none.
int pick_best(const std::vector<ConfigOutcome>& all, std::optional<double> deadline_hours);

// A positive figure in three significant digits, in at most seven characters from 0.001 to 10^15 (0.00123,
// 0.0123, 1.23, 12.3, 123, 12300, 1.23M, 45.6G): the table's step time, throughput and time to train.
std::string sig3(double x);

// Dollars as the table prints them: $12.34, $123, $12.3k, $1.23M, $4.56B, $7.89T, beyond that $1.23e15.
std::string usd_text(double x);

enum class Format { table, json, md, csv };

// `run --plot FILE`: an SVG scatter of time to train (x) against cost (y), one point per configuration that fits,
// coloured by bottleneck, with its 80% range as bars on both axes, the configurations no other beats on both
// (the Pareto front) joined by a line, the deadline as a vertical line and the recommendation ringed. Axes are
// logarithmic where the values span a factor of 10 or more, linear otherwise.
std::string render_plot(const std::vector<ConfigOutcome>& all, const std::string& scenario_name,
                        std::optional<double> deadline_hours);

// `notes`: what the prediction rests on or what the planner should know about the comparison (different amounts
// of data, derived GPU profiles, fields not used yet). JSON carries them as `notes`, Markdown as a list under the
// recommendation; the table and CSV leave them to standard error (cmd_run).
std::string render(const std::vector<ConfigOutcome>& all, Format f, const std::string& scenario_name,
                   std::optional<double> deadline_hours, long long run_id, const std::vector<std::string>& notes = {});

}  // namespace gp::app
