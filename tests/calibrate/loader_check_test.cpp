#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "calibrate/check.hpp"
#include "calibrate/fit.hpp"
#include "calibrate/loader_check.hpp"
#include "calibrate/profile_io.hpp"
#include "calibrate/reference_runs.hpp"

namespace {
const std::string kRuns = std::string(GPUPLAN_SOURCE_DIR) + "/calibrate/measured/h200-2026-12.jsonl";
const std::string kProfile = std::string(GPUPLAN_SOURCE_DIR) + "/calibrate/profiles/h200.json";
const std::string kFit = std::string(GPUPLAN_SOURCE_DIR) + "/calibrate/profiles/fit-h200.json";
const std::string kSim = std::string(GPUPLAN_SOURCE_DIR) + "/calibrate/profiles/sim-constants.json";

double fitted_slowdown() {
  std::ifstream in(kSim);
  return nlohmann::json::parse(in).at("cpu_all_core_slowdown").at("value").get<double>();
}
}  // namespace

TEST_CASE("calibrate::loader_check: CPU JPEG pipeline records through the data-loader simulation") {
  std::vector<std::string> errors;
  auto runs = gp::calibrate::load_runs(kRuns, errors);
  auto profile = gp::calibrate::load_profile(kProfile, errors);
  REQUIRE(profile);
  REQUIRE_FALSE(runs.empty());
  auto constants = gp::calibrate::load_constants(kFit, errors);
  REQUIRE(constants);
  const double slowdown = fitted_slowdown();
  const auto rep = gp::calibrate::run_check(runs, *profile, *constants, 10.0,
                                            gp::calibrate::loader_pipeline(*profile, slowdown));
  const auto s = gp::calibrate::summarize_loader(rep);
  for (const auto& e : s.records) {
    std::cout << "loader check " << e.id << ": measured " << e.measured_samples_per_s << " samples/s, predicted "
              << e.predicted_samples_per_s << " (" << e.err_pct << "%)\n";
  }
  std::cout << "loader check: " << s.within_20 << " of " << s.records.size() << " within 20%, mean |err| "
            << s.mean_abs_err_pct << "%\n";
  REQUIRE(s.records.size() >= 9);  // w0 nopin, w1..w15 pin, w8 nopin (+ GPU-only)
  // The runs repeat within +-30% (README: 1,710 vs 2,955 samples/s for one configuration), so no single
  // record is held to 20%; the pipeline as a whole is.
  CHECK(s.mean_abs_err_pct <= 20.0);
  CHECK(s.within_20 * 3 >= static_cast<int>(s.records.size()) * 2);  // at least two thirds within 20%
  // Without the all-core slowdown every worker runs at its idle-host speed: the errors are larger.
  const auto s0 = gp::calibrate::summarize_loader(gp::calibrate::run_check(runs, *profile, *constants, 10.0));
  CHECK(slowdown > 0);
  CHECK(s.mean_abs_err_pct < s0.mean_abs_err_pct);
}

TEST_CASE("calibrate::loader_check: more workers, more samples per second until the cores or the GPU run out") {
  std::vector<std::string> errors;
  auto profile = gp::calibrate::load_profile(kProfile, errors);
  REQUIRE(profile);
  auto runs = gp::calibrate::load_runs(kRuns, errors);
  auto constants = gp::calibrate::load_constants(kFit, errors);
  REQUIRE(constants);
  const auto rep = gp::calibrate::run_check(runs, *profile, *constants, 10.0);
  double gpu_only_ms = 0;
  for (const auto& rr : rep.records)
    if (rr.record->id == "loader/resnet50-b256-gpu-only" && rr.prediction.step_ms) gpu_only_ms = *rr.prediction.step_ms;
  REQUIRE(gpu_only_ms > 0);
  double prev = 0;
  for (int w : {1, 2, 4, 6, 8, 12, 15}) {
    for (const auto& e : gp::calibrate::summarize_loader(rep).records) {
      if (e.id != "loader/resnet50-b256-w" + std::to_string(w) + "-pin") continue;
      CHECK(e.predicted_samples_per_s > prev);
      // One worker decodes one sample in 3.159 ms of one thread at best (sample_cpu_ms_1thread), 316.6 samples/s:
      // w workers deliver at most w x 316.6, and never more than the GPU alone (256 per predicted GPU-only step).
      INFO(e.id);
      CHECK(e.predicted_samples_per_s <= w * 1000 / 3.159);
      CHECK(e.predicted_samples_per_s <= 256 / (gpu_only_ms / 1000) * (1 + 1e-9));
      prev = e.predicted_samples_per_s;
    }
  }
}

TEST_CASE("calibrate::loader_check: the GPU's busy share of a loader-bound step against the measured NVML "
          "utilisation") {
  std::vector<std::string> errors;
  auto runs = gp::calibrate::load_runs(kRuns, errors);
  auto profile = gp::calibrate::load_profile(kProfile, errors);
  auto constants = gp::calibrate::load_constants(kFit, errors);
  REQUIRE(profile);
  REQUIRE(constants);
  // The measured utilisation is NVML's mean over the timed steps (gpu_util_pct), which the prediction never reads.
  std::map<std::string, double> util;
  std::ifstream in(kRuns);
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.at("id").get<std::string>().rfind("loader/", 0) == 0 && j.contains("gpu_util_pct"))
      util[j.at("id").get<std::string>()] = j.at("gpu_util_pct").get<double>();
  }
  const auto rep = gp::calibrate::run_check(runs, *profile, *constants, 10.0,
                                            gp::calibrate::loader_pipeline(*profile, fitted_slowdown()));
  int compared = 0, within_10_points = 0;
  for (const auto& rr : rep.records) {
    const auto it = util.find(rr.record->id);
    if (it == util.end() || !rr.prediction.step_ms) continue;
    ++compared;
    const double busy_pct = 100 * rr.prediction.gpu_busy_frac;
    std::cout << "loader busy " << rr.record->id << ": predicted " << busy_pct << "%, NVML " << it->second << "% ("
              << rr.prediction.bottleneck << ")\n";
    if (std::abs(busy_pct - it->second) <= 10) ++within_10_points;
    // Workers set the pace of every one of these steps (the GPU alone runs b256 at ~55 ms, 99.7% busy).
    if (rr.record->id != "loader/resnet50-b256-gpu-only") {
      CHECK(rr.prediction.bottleneck == "dataloader");
      CHECK(busy_pct < 90);
    } else {
      CHECK(rr.prediction.bottleneck != "dataloader");
    }
  }
  CHECK(compared == 10);
  // w8-pin (NVML 27.5%) is the run the reference README names as repeating at 1,710 and 2,955 samples/s: the
  // prediction (48%) sits with its repeat and w8-nopin (42.7%). Every other record is within 10 points.
  CHECK(within_10_points >= 9);
}

TEST_CASE("calibrate::loader_check: a loader record whose pin_memory is null is predicted as pinned, not thrown on") {
  std::vector<std::string> errors;
  auto profile = gp::calibrate::load_profile(kProfile, errors);
  auto constants = gp::calibrate::load_constants(kFit, errors);
  REQUIRE(profile);
  REQUIRE(constants);
  const std::string rec = R"({"id":"%","kind":"train","model":"resnet50","data":"cpu-jpeg-pipeline",)"
                          R"("precision":"bf16",)"
                          R"("batch":256,"num_workers":8,"host":{"cpu_cores":16},"sample_cpu_ms_1thread":3.159,)"
                          R"("image_hw":[224,224],"step_ms":150,"pin_memory":)";
  auto line = [&](const std::string& id, const std::string& pin) {
    std::string s = rec + pin + "}";
    return s.replace(s.find('%'), 1, id);
  };
  const auto runs = gp::calibrate::parse_runs({line("null", "null"), line("true", "true")}, "runs.jsonl", errors);
  REQUIRE(errors.empty());
  REQUIRE(runs.size() == 2);
  const auto rep = gp::calibrate::run_check(runs, *profile, *constants, 10.0, gp::calibrate::loader_pipeline(*profile));
  REQUIRE(rep.records.size() == 2);
  REQUIRE(rep.records[0].prediction.step_ms);
  REQUIRE(rep.records[1].prediction.step_ms);
  // null reads like an absent field: the predictor's default, pinned.
  CHECK(*rep.records[0].prediction.step_ms == *rep.records[1].prediction.step_ms);
}
