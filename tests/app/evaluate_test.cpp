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
