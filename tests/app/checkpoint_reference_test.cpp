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

gp::JobConfig checkpoint_job(const std::string& model) {
  gp::app::Diagnostics cat_diags, diags;
  const gp::Catalog cat = gp::app::load_catalogs(std::string(GPUPLAN_SOURCE_DIR) + "/catalogs", {}, cat_diags);
  const std::string text = R"({"name": "ckpt", "workload": {"model": ")" + model +
                           R"(", "micro_batch": 4, "steps": 100, "optimizer": "adamw-fused"},
      "cluster": {"instance": "runpod-1x-h200"},
      "checkpoint": {"every_steps": 10, "storage": "ref-h200-host-disk"}})";
  auto sc = gp::app::load_scenario_text(text, "ckpt.json", cat, diags);
  REQUIRE(sc);
  gp::app::ProfileCache cache(std::string(GPUPLAN_SOURCE_DIR) + "/calibrate/profiles", cat);
  return sc->configs.front();
}

double predicted_stall(const std::string& model) {
  gp::app::Diagnostics cat_diags;
  const gp::Catalog cat = gp::app::load_catalogs(std::string(GPUPLAN_SOURCE_DIR) + "/catalogs", {}, cat_diags);
  gp::app::ProfileCache cache(std::string(GPUPLAN_SOURCE_DIR) + "/calibrate/profiles", cat);
  const gp::JobConfig job = checkpoint_job(model);
  std::string err;
  const auto* dev = cache.get(job.cluster.gpu, err);
  REQUIRE(dev);
  return gp::sim::make_job_events(job, dev->profile, cache.sim_constants(), gp::Seconds(1)).checkpoint_stall.value();
}

}  // namespace

TEST_CASE("app::checkpoint: torch.save stalls of GPT-350M and GPT-1.3B with AdamW on the H200 host disk") {
  CHECK(predicted_stall("gpt-350m") == Approx(2.886 + 4.185).epsilon(0.10));
  CHECK(predicted_stall("gpt-1.3b") == Approx(10.15 + 15.682).epsilon(0.10));
}

TEST_CASE("app::checkpoint: checkpoint size and the stall's growth with it against the measured files") {
  // Out of the fit: the records' file sizes (ckpt_bytes) against fp32 weights + AdamW's two fp32 moments, 12 B a
  // parameter (354,871,296 x 12 = 4.258 GB against 4.465 GB measured, -4.6%: torch.save adds the step counters and
  // pickling; 1,313,722,368 x 12 = 15.76 GB against 16.18 GB, -2.5%).
  CHECK(gp::sim::checkpoint_bytes(checkpoint_job("gpt-350m")).value() == Approx(4464824594.0).epsilon(0.06));
  CHECK(gp::sim::checkpoint_bytes(checkpoint_job("gpt-1.3b")).value() == Approx(16177093166.0).epsilon(0.06));
  // The rates are means over both records, but they do not force the stall to grow in proportion: measured
  // (10.15 + 15.682) / (2.886 + 4.185) = 3.653.
  CHECK(predicted_stall("gpt-1.3b") / predicted_stall("gpt-350m") == Approx(3.653).epsilon(0.03));
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

TEST_CASE("app::profile_cache: a derived GPU scales the H200-probed class rates by its own bandwidth, GEMM and CUDA-core rates") {
  gp::app::Diagnostics cat_diags;
  const gp::Catalog cat = gp::app::load_catalogs(std::string(GPUPLAN_SOURCE_DIR) + "/catalogs", {}, cat_diags);
  gp::app::ProfileCache cache(std::string(GPUPLAN_SOURCE_DIR) + "/calibrate/profiles", cat);
  std::string err;
  const auto* h200 = cache.get(*gp::Catalog::find(cat.gpus, "h200-sxm"), err);
  const auto* a100 = cache.get(*gp::Catalog::find(cat.gpus, "a100-sxm-80gb"), err);
  REQUIRE(h200);
  REQUIRE(a100);
  const auto [ms_h200, fs_h200] = gp::rate_scales(h200->device, h200->constants.compute);
  CHECK(ms_h200 == Approx(1.0));  // the constants were fitted, and the classes probed, on this H200 profile
  CHECK(fs_h200 == Approx(1.0));
  const auto [ms_a100, fs_a100] = gp::rate_scales(a100->device, a100->constants.compute);
  // The A100 profile is derived from the H200's by datasheet ratios (HBM 2.04 against 4.8 TB/s, dense bf16 312
  // against 989 TFLOP/s): the probed rates shrink by the same ratios.
  CHECK(ms_a100 == Approx(a100->device.copy_bw.value() / h200->device.copy_bw.value()));
  CHECK(ms_a100 < 0.5);
  CHECK(fs_a100 < 0.5);
  // The classes bound by their kernels scale by the CUDA-core rate: the derived profile's large fp32 GEMM rate, the
  // datasheet's 19.5 against 67 TFLOP/s (0.291) as refitted over the A100's 108 SMs (0.278).
  CHECK(gp::cuda_core_scale(h200->device, h200->constants.compute) == Approx(1.0));
  CHECK(gp::cuda_core_scale(a100->device, a100->constants.compute) == Approx(19.5 / 67.0).epsilon(0.05));
}
