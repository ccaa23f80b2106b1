// The checkpoint stall model against the two measured torch.save checkpoints of the reference runs
// (calibrate/measured/h200-2026-12.jsonl, kind: checkpoint): d2h_s + write_fsync_s.
// sim-constants' checkpoint_d2h_GBps and checkpoint_write_efficiency are means over these same two
// records, so this is an in-sample consistency check of the whole chain (state bytes per parameter,
// storage catalog rate, rates), not a held-out validation.
#include <catch2/catch.hpp>

#include <string>

#include "app/catalog_io.hpp"
#include "app/diagnostics.hpp"
#include "app/profile_cache.hpp"
#include "app/scenario.hpp"
#include "sim/job_inputs.hpp"

namespace {

double predicted_stall(const std::string& model) {
  gp::app::Diagnostics cat_diags, diags;
  const gp::Catalog cat = gp::app::load_catalogs(std::string(GPUPLAN_SOURCE_DIR) + "/catalogs", {}, cat_diags);
  const std::string text = R"({"name": "ckpt", "workload": {"model": ")" + model +
                           R"(", "micro_batch": 4, "steps": 100, "optimizer": "adamw-fused"},
      "cluster": {"instance": "runpod-1x-h200"},
      "checkpoint": {"every_steps": 10, "storage": "ref-h200-host-disk"}})";
  auto sc = gp::app::load_scenario_text(text, "ckpt.json", cat, diags);
  REQUIRE(sc);
  gp::app::ProfileCache cache(std::string(GPUPLAN_SOURCE_DIR) + "/calibrate/profiles", cat);
  std::string err;
  const auto* dev = cache.get(sc->configs.front().cluster.gpu, err);
  REQUIRE(dev);
  return gp::sim::make_job_events(sc->configs.front(), dev->profile, cache.sim_constants(), gp::Seconds(1))
      .checkpoint_stall.value();
}

}  // namespace

TEST_CASE("app::checkpoint: torch.save stalls of GPT-350M and GPT-1.3B with AdamW on the H200 host disk") {
  CHECK(predicted_stall("gpt-350m") == Approx(2.886 + 4.185).epsilon(0.10));
  CHECK(predicted_stall("gpt-1.3b") == Approx(10.15 + 15.682).epsilon(0.10));
}

TEST_CASE("app::profile_cache: `run` prices the H200 with the default constants fit-h200.json, as calibrate check does") {
  // calibrate/profiles holds two fits of h200.json: fit-h200-bytes.json sorts first by name, but the default is
  // fit-h200.json (docs/calibration.md, section 4), the only one with the probe classes (a 16-bit convolution
  // efficiency among them).
  gp::app::Diagnostics cat_diags;
  const gp::Catalog cat = gp::app::load_catalogs(std::string(GPUPLAN_SOURCE_DIR) + "/catalogs", {}, cat_diags);
  gp::app::ProfileCache cache(std::string(GPUPLAN_SOURCE_DIR) + "/calibrate/profiles", cat);
  const gp::GpuSpec* h200 = gp::Catalog::find(cat.gpus, "h200-sxm");
  REQUIRE(h200);
  std::string err;
  const auto* dev = cache.get(*h200, err);
  REQUIRE(dev);
  CHECK(dev->constants_path.size() >= 13);
  CHECK(dev->constants_path.substr(dev->constants_path.size() - 13) == "fit-h200.json");
  CHECK(dev->constants.compute.conv_16bit_efficiency > 0);
}
