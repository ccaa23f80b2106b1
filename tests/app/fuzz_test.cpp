// Random corruptions of the example scenarios and of measured-run records (fixed seeds): each is reported as bad
// input, naming the file, or predicted; none throws or crashes. Fuzzing the binary this way found crashes on
// 2026-12-05 (a runs record's num_workers -1 or pin_memory 0); those have their own tests in
// tests/calibrate/check_test.cpp and loader_check_test.cpp; this is the general guard, in-process.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/catalog_io.hpp"
#include "app/diagnostics.hpp"
#include "app/evaluate.hpp"
#include "app/scenario.hpp"
#include "calibrate/check.hpp"
#include "calibrate/fit.hpp"
#include "calibrate/loader_check.hpp"
#include "calibrate/profile_io.hpp"
#include "calibrate/reference_runs.hpp"

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// Values that break types, signs and magnitudes.
std::vector<json> nasty_values() {
  return {0, -1, 1e308, -1e308, 1e-300, "", json::array(), json::object(), nullptr, true, "x", 3.5, 1099511627776.0,
          1e9, json::array({1, 2}), json{{"a", 1}}, -0.5};
}

// Every JSON pointer inside `j` (not the root).
void pointers(const json& j, const json::json_pointer& at, std::vector<json::json_pointer>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      out.push_back(at / it.key());
      pointers(it.value(), at / it.key(), out);
    }
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) {
      out.push_back(at / i);
      pointers(j[i], at / i, out);
    }
  }
}

// One to `most` random replacements or removals.
json corrupt(json j, std::mt19937& rng, int most = 3) {
  static const std::vector<json> values = nasty_values();
  const int n = std::uniform_int_distribution<int>(1, most)(rng);
  for (int k = 0; k < n; ++k) {
    std::vector<json::json_pointer> ps;
    pointers(j, json::json_pointer(), ps);
    if (ps.empty()) break;
    const auto p = ps[std::uniform_int_distribution<std::size_t>(0, ps.size() - 1)(rng)];
    if (std::uniform_int_distribution<int>(0, 4)(rng) == 0) {
      json& parent = j[p.parent_pointer()];
      if (parent.is_object()) parent.erase(p.back());
      else if (parent.is_array() && !parent.empty()) parent.erase(parent.size() - 1);
    } else {
      j[p] = values[std::uniform_int_distribution<std::size_t>(0, values.size() - 1)(rng)];
    }
  }
  return j;
}

}  // namespace

TEST_CASE("app::fuzz: corrupted example scenarios are reported or predicted, never thrown", "[fuzz]") {
  gp::app::Diagnostics cat_diags;
  const gp::Catalog cat = gp::app::load_catalogs(std::string(GPUPLAN_SOURCE_DIR) + "/catalogs", {}, cat_diags);
  REQUIRE(cat_diags.empty());
  std::vector<json> examples;
  for (const auto& e : fs::directory_iterator(std::string(GPUPLAN_SOURCE_DIR) + "/scenarios")) {
    if (e.path().extension() != ".json") continue;
    std::ifstream in(e.path());
    examples.push_back(json::parse(in, nullptr, true, /*ignore_comments=*/true));
  }
  REQUIRE(examples.size() >= 5);
  gp::app::EvaluateOptions o;
  o.profiles_dir = std::string(GPUPLAN_SOURCE_DIR) + "/calibrate/profiles";
  o.sim_steps = 20;
  std::mt19937 rng(20261205);
  int reported = 0, predicted = 0;
  for (int it = 0; it < 150; ++it) {
    const json doc = corrupt(examples[static_cast<std::size_t>(it) % examples.size()], rng);
    INFO("case " << it << ": " << doc.dump());
    gp::app::Diagnostics diags;
    std::optional<gp::app::Scenario> sc;
    REQUIRE_NOTHROW(sc = gp::app::load_scenario_text(doc.dump(), "case.json", cat, diags));
    if (!sc) {
      ++reported;
      REQUIRE_FALSE(diags.empty());
      std::istringstream lines(diags.render());
      for (std::string l; std::getline(lines, l);) CHECK(l.rfind("case.json:", 0) == 0);
      continue;
    }
    CHECK(diags.empty());
    std::vector<gp::app::ConfigOutcome> out;
    REQUIRE_NOTHROW(out = gp::app::evaluate(*sc, cat, o));
    for (const auto& c : out) {
      if (!c.result.fits) continue;
      CHECK(std::isfinite(c.result.step_time.value()));
      CHECK(c.result.step_time.value() > 0);
    }
    ++predicted;
  }
  // Both paths were exercised.
  CHECK(reported > 20);
  CHECK(predicted > 5);
}

TEST_CASE("calibrate::fuzz: corrupted measured-run records are named or predicted, never thrown", "[fuzz]") {
  std::vector<std::string> errors;
  const std::string dir = std::string(GPUPLAN_SOURCE_DIR) + "/calibrate/";
  auto profile = gp::calibrate::load_profile(dir + "profiles/h200.json", errors);
  auto constants = gp::calibrate::load_constants(dir + "profiles/fit-h200.json", errors);
  REQUIRE(profile);
  REQUIRE(constants);
  std::vector<json> recs;
  for (const char* f : {"measured/h200-2026-12.jsonl", "probes/results/h200-holdout15-2026-12-04.jsonl"}) {
    std::ifstream in(dir + f);
    for (std::string l; std::getline(in, l);)
      if (!l.empty()) recs.push_back(json::parse(l));
  }
  REQUIRE(recs.size() > 50);
  std::mt19937 rng(5122026);
  int named = 0;
  std::vector<gp::calibrate::RunRecord> valid;
  for (int it = 0; it < 3000; ++it) {
    // One fault per record, so that the rest of it stays valid and the fault reaches the prediction.
    const json r = corrupt(recs[std::uniform_int_distribution<std::size_t>(0, recs.size() - 1)(rng)], rng, 1);
    INFO("case " << it << ": " << r.dump());
    std::vector<std::string> errs;
    std::vector<gp::calibrate::RunRecord> runs;
    REQUIRE_NOTHROW(runs = gp::calibrate::parse_runs({r.dump()}, "runs.jsonl", errs));
    for (const auto& e : errs) CHECK(e.rfind("runs.jsonl:1", 0) == 0);
    if (!errs.empty()) ++named;
    valid.insert(valid.end(), runs.begin(), runs.end());
  }
  // The records that parsed, predicted together (one device model for all: building it dominates one check).
  gp::calibrate::CheckReport rep;
  REQUIRE_NOTHROW(rep = gp::calibrate::run_check(valid, *profile, *constants, 10.0,
                                                 gp::calibrate::loader_pipeline(*profile, 0.21)));
  int predicted = 0;
  for (const auto& rr : rep.records) {
    if (!rr.prediction.step_ms) continue;
    CHECK(std::isfinite(*rr.prediction.step_ms));
    ++predicted;
  }
  CHECK(named > 20);
  CHECK(predicted > 20);
}
