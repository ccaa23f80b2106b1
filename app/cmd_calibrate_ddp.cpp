// `gpuplan calibrate ddp`: measured data-parallel train records (tools/measure_ddp.py) against the training-step
// simulation on one node of a catalog instance (calibrate/ddp_check.hpp). Registered by
// add_calibrate_comm_command (app/cmd_calibrate_comm.cpp), so `calibrate` needs one hook for both.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/catalog_io.hpp"
#include "app/cmd_calibrate_comm.hpp"
#include "app/profile_cache.hpp"
#include "calibrate/ddp_check.hpp"
#include "calibrate/fit.hpp"
#include "calibrate/json_text.hpp"
#include "calibrate/profile_io.hpp"

namespace gp::app {

namespace {

struct DdpOptions {
  std::string runs;
  std::string instance = "coreweave-8x-h200";
  std::string profile;    // default: h200.json of the project's profiles (default_profiles_dir), from any folder
  std::string constants;  // default: fit-<profile stem>.json beside the profile
  std::string format = "table";
  double tolerance = 10.0;
};

struct Row {
  const calibrate::RunRecord* rec = nullptr;
  calibrate::DdpPrediction pred;
  std::optional<double> err_pct;
};

int bad(const std::string& msg) {
  std::cerr << "gpuplan calibrate ddp: " << msg << "\n";
  return kExitBadInput;
}

// Multi-GPU records with a measured step that the model could not predict (a node too small, a layout it does not
// express): outside the MAPE, so the summary names how many, as calibrate check counts what it cannot express.
int not_predicted(const std::vector<Row>& rows) {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(), [](const Row& r) {
    return calibrate::record_gpus(*r.rec) > 1 && r.rec->measured.step_ms && !r.pred.step_ms;
  }));
}

void print_table(const std::vector<Row>& rows, double mape, int n, double tol, bool pass) {
  std::printf("%-44s %4s %9s %9s %7s %9s %9s\n", "record", "gpus", "meas ms", "pred ms", "err%", "comm ms",
              "exposed");
  for (const auto& r : rows) {
    char meas[32] = "-", pred[32] = "-", err[32] = "-";
    if (r.rec->measured.step_ms) std::snprintf(meas, sizeof meas, "%.1f", *r.rec->measured.step_ms);
    if (r.pred.step_ms) std::snprintf(pred, sizeof pred, "%.1f", *r.pred.step_ms);
    if (r.err_pct) std::snprintf(err, sizeof err, "%+.1f", *r.err_pct);
    std::printf("%-44.44s %4d %9s %9s %7s %9.1f %9.1f\n", r.rec->id.c_str(), r.pred.gpus, meas, pred, err,
                r.pred.comm_total.ms(), r.pred.comm_exposed.ms());
    if (!r.pred.step_ms) std::printf("    not predicted: %s\n", r.pred.reason.c_str());
  }
  const auto [m, t] = calibrate::verdict_figures(mape, tol, mape <= tol, 2, 1);
  std::printf("\nstep-time MAPE over %d multi-GPU records: %s%% (tolerance %s%%) %s\n", n, m.c_str(), t.c_str(),
              n == 0 ? "not judged" : pass ? "PASS" : "FAIL");
  if (const int left = not_predicted(rows))
    std::printf("not predicted, outside the MAPE: %d multi-GPU record%s with a measured step (reasons above)\n", left,
                left == 1 ? "" : "s");
}

nlohmann::ordered_json to_json(const std::vector<Row>& rows, double mape, int n, double tol, bool pass) {
  nlohmann::ordered_json recs = nlohmann::ordered_json::array();
  for (const auto& r : rows) {
    nlohmann::ordered_json j = {{"id", r.rec->id}, {"gpus", r.pred.gpus}};
    j["measured_step_ms"] = r.rec->measured.step_ms ? nlohmann::ordered_json(*r.rec->measured.step_ms) : nullptr;
    j["predicted_step_ms"] = r.pred.step_ms ? nlohmann::ordered_json(*r.pred.step_ms) : nullptr;
    j["err_pct"] = r.err_pct ? nlohmann::ordered_json(*r.err_pct) : nullptr;
    j["one_gpu_step_ms"] = r.pred.base.step_ms ? nlohmann::ordered_json(*r.pred.base.step_ms) : nullptr;
    j["comm_total_ms"] = r.pred.comm_total.ms();
    j["comm_exposed_ms"] = r.pred.comm_exposed.ms();
    if (!r.pred.reason.empty()) j["reason"] = r.pred.reason;
    recs.push_back(j);
  }
  return {{"records", recs},
          {"summary",
           {{"multi_gpu_records", n}, {"not_predicted", not_predicted(rows)}, {"mape_pct", mape}, {"tolerance_pct", tol},
            {"pass", pass}}}};
}

int run(const DdpOptions& o, CliContext& ctx) {
  std::vector<std::string> errors;
  const auto runs = calibrate::load_runs(o.runs, errors);
  for (const auto& e : errors) std::cerr << e << "\n";
  if (!errors.empty()) return kExitBadInput;
  // An empty file or one of micro records printed an empty table, "MAPE over 0 multi-GPU records ... FAIL", exit 1.
  if (!calibrate::has_train_record(runs))
    return bad(o.runs + ": no train record to compare (expected lines with \"kind\": \"train\", as "
                        "tools/measure_ddp.py writes)");
  // The default profile was "calibrate/profiles/h200.json" relative to the working folder: from anywhere but the
  // project root it could not be opened.
  const std::string profile_path = o.profile.empty() ? default_profiles_dir() + "/h200.json" : o.profile;
  const auto cat = load_catalogs_or_report(ctx);
  if (!cat) return kExitBadInput;
  std::string err;
  const auto probe_node = calibrate::single_node_cluster(*cat, o.instance, 1, err);
  if (!probe_node) return bad(err);
  // Profile and fitted constants as `calibrate check` reads them; simulation constants from their folder.
  const auto profile = calibrate::load_profile(profile_path, errors);
  const auto constants = calibrate::load_constants_for(profile_path, profile.has_value(), o.constants, errors);
  for (const auto& e : errors) std::cerr << e << "\n";
  if (!profile || !constants) return kExitBadInput;
  if (profile->gpu_id != probe_node->gpu.id)
    return bad(profile_path + " is a profile of \"" + profile->gpu_id + "\"; instance \"" + o.instance + "\" has \"" +
               probe_node->gpu.id + "\"");
  // Runs of another GPU (an H100 file against the H200 profile) passed or failed on a comparison of two GPUs.
  if (const auto other = calibrate::device_mismatches(
          runs, *profile, o.runs, "compare them with --profile and --instance of that GPU (calibrate/profiles, "
                                  "gpuplan catalog list instances)");
      !other.empty()) {
    for (const auto& line : other) std::cerr << line << "\n";
    return kExitBadInput;
  }
  const DeviceModel device = make_device_model(*profile);
  ProfileCache cache(std::filesystem::path(profile_path).parent_path().string(), *cat);
  for (const auto& n : cache.sim_notes()) std::cerr << "note: " << n << "\n";
  std::vector<Row> rows;
  double sum = 0;
  int n = 0;
  for (const auto& rec : runs) {
    if (rec.kind != "train") continue;
    Row r{&rec, {}, std::nullopt};
    const int g = calibrate::record_gpus(rec);
    const auto node = calibrate::single_node_cluster(*cat, o.instance, g, err);
    if (!node) {
      r.pred.gpus = g;
      r.pred.reason = err;
    } else {
      r.pred = calibrate::predict_ddp_record(rec, device, *profile, *constants, *node, cache.sim_constants());
    }
    if (r.pred.step_ms && rec.measured.step_ms) {
      r.err_pct = 100.0 * (*r.pred.step_ms - *rec.measured.step_ms) / *rec.measured.step_ms;
      if (g > 1) {
        sum += std::abs(*r.err_pct);
        ++n;
      }
    }
    rows.push_back(std::move(r));
  }
  const double mape = n ? sum / n : 0;
  const bool pass = n > 0 && mape <= o.tolerance;
  if (o.format == "json") std::cout << calibrate::dump_json(to_json(rows, mape, n, o.tolerance, pass), 2) << "\n";
  else print_table(rows, mape, n, o.tolerance, pass);
  // Nothing measured on more than one GPU was predicted (one-GPU records only, no step_ms, or records the node
  // cannot hold): the predictions stand above, but there is no MAPE to pass or fail (it said "0.00% ... FAIL").
  if (n == 0)
    return bad(o.runs + ": no record with gpus > 1 and a measured step_ms was predicted: nothing to judge");
  return pass ? kExitOk : kExitCheckFailed;
}

}  // namespace

void add_calibrate_ddp_command(CLI::App* calibrate, CliContext& ctx) {
  auto o = std::make_shared<DdpOptions>();
  auto* cmd = calibrate->add_subcommand(
      "ddp", "Predict measured multi-GPU DDP train records through the step simulation and compare");
  cmd->add_option("--runs", o->runs, "measured runs, JSON lines (tools/measure_ddp.py)")->check(non_empty())->required();
  cmd->add_option("--instance", o->instance, "catalog instance of the measured node (default coreweave-8x-h200)")
      ->type_name("ID");
  cmd->add_option("--profile", o->profile, "GPU profile JSON (default calibrate/profiles/h200.json)")->check(non_empty());
  cmd->add_option("--constants", o->constants, "fitted constants (default: fit-<profile>.json beside it)")->check(non_empty());
  cmd->add_option("--tolerance", o->tolerance, "step-time MAPE tolerance over gpus > 1, percent (default 10)")
      ->check(finite_range(0.001, 1e6));
  cmd->add_option("--format", o->format, "table or json")->check(CLI::IsMember({"table", "json"}));
  cmd->callback([o, &ctx] { ctx.exit_code = run(*o, ctx); });
}

}  // namespace gp::app
