#include <catch2/catch.hpp>

#include <string>

#include "app/catalog_io.hpp"
#include "app/diagnostics.hpp"
#include "app/evaluate.hpp"
#include "app/scenario.hpp"

TEST_CASE("app::evaluate: a precision the GPU cannot compute in is not predicted, and never recommended") {
  gp::app::Diagnostics cat_diags, diags;
  const gp::Catalog cat = gp::app::load_catalogs(std::string(GPUPLAN_SOURCE_DIR) + "/catalogs", {}, cat_diags);
  auto sc = gp::app::load_scenario_text(
      R"({"name": "v100", "workload": {"model": "resnet50", "micro_batch": 64, "steps": 100,
          "precision": ["bf16", "fp16"]}, "cluster": {"instance": "aws-p3.2xlarge"}})",
      "v100.json", cat, diags);
  REQUIRE(sc);
  gp::app::EvaluateOptions o;
  o.profiles_dir = std::string(GPUPLAN_SOURCE_DIR) + "/calibrate/profiles";
  const auto out = gp::app::evaluate(*sc, cat, o);
  REQUIRE(out.size() == 2);
  CHECK(out[0].result.bottleneck == "not-predicted");  // V100: no bf16 tensor cores (datasheet)
  CHECK_FALSE(out[0].result.fits);
  REQUIRE_FALSE(out[0].result.advice.empty());
  CHECK(out[0].result.advice.front().find("bf16") != std::string::npos);
  CHECK(out[1].result.step_time.value() > 0);        // fp16 is fine
  CHECK(out[1].result.fits);
}

TEST_CASE("app::evaluate: logits the loop keeps cost one logits tensor of peak memory") {
  gp::app::Diagnostics cat_diags, diags;
  const gp::Catalog cat = gp::app::load_catalogs(std::string(GPUPLAN_SOURCE_DIR) + "/catalogs", {}, cat_diags);
  auto scenario = [&](bool kept) {
    return gp::app::load_scenario_text(
        std::string(R"({"name": "g", "workload": {"model": "gpt-124m", "micro_batch": 8, "seq": 1024,
            "steps": 100, "precision": "bf16"}, "software": {"logits_kept": )") + (kept ? "true" : "false") +
            R"(}, "cluster": {"gpu": "h200-sxm", "gpus_per_node": 1, "intra_node": "nvlink4-h100"},
            "pricing": {"price_per_gpu_hour": 3.0}})",
        "g.json", cat, diags);
  };
  auto kept = scenario(true), dropped = scenario(false);
  INFO(diags.render());
  REQUIRE(kept);
  REQUIRE(dropped);
  gp::app::EvaluateOptions o;
  o.profiles_dir = std::string(GPUPLAN_SOURCE_DIR) + "/calibrate/profiles";
  const auto a = gp::app::evaluate(*kept, cat, o), b = gp::app::evaluate(*dropped, cat, o);
  REQUIRE(a.size() == 1);
  REQUIRE(b.size() == 1);
  // 8 x 1,024 tokens x 50,304 bf16 logits = 824,180,736 bytes, at the start of backward where this step peaks.
  CHECK(a[0].result.memory_per_gpu.value() - b[0].result.memory_per_gpu.value() == Approx(2.0 * 8192 * 50304));
}

TEST_CASE("app::evaluate: an NCHW BatchNorm network is slower and told to use channels_last") {
  gp::app::Diagnostics cat_diags, diags;
  const gp::Catalog cat = gp::app::load_catalogs(std::string(GPUPLAN_SOURCE_DIR) + "/catalogs", {}, cat_diags);
  auto scenario = [&](bool channels_last) {
    return gp::app::load_scenario_text(
        std::string(R"({"name": "r50", "workload": {"model": "resnet50", "micro_batch": 128, "steps": 100,
            "precision": "bf16"}, "software": {"channels_last": )") + (channels_last ? "true" : "false") +
            R"(}, "cluster": {"gpu": "h200-sxm", "gpus_per_node": 1, "intra_node": "nvlink4-h100"},
            "pricing": {"price_per_gpu_hour": 3.0}})",
        "r50.json", cat, diags);
  };
  auto nhwc = scenario(true), nchw = scenario(false);
  INFO(diags.render());
  REQUIRE(nhwc);
  REQUIRE(nchw);
  gp::app::EvaluateOptions o;
  o.profiles_dir = std::string(GPUPLAN_SOURCE_DIR) + "/calibrate/profiles";
  const auto a = gp::app::evaluate(*nhwc, cat, o), b = gp::app::evaluate(*nchw, cat, o);
  REQUIRE(a.size() == 1);
  REQUIRE(b.size() == 1);
  // Measured on the H200 (calibrate/probes/results/h200-holdout4-2026-12-03.jsonl): 55.5 ms NCHW against
  // 29.4-30.6 ms channels-last for this step.
  CHECK(b[0].result.step_time.value() > 1.5 * a[0].result.step_time.value());
  bool told = false;
  for (const auto& s : b[0].result.advice) told = told || s.find("channels_last") != std::string::npos;
  CHECK(told);
  for (const auto& s : a[0].result.advice) CHECK(s.find("channels_last") == std::string::npos);
}
