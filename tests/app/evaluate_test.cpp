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
  // fp16 is fine, and no faster than the roofline: ResNet-50's 8.178 GFLOP forward a sample, x 3 with the
  // backward, x 64 samples = 1.570 TFLOP at the V100's 125 TFLOP/s fp16 tensor peak is 12.56 ms at least.
  CHECK(out[1].result.step_time.ms() >= 3 * 8.178e9 * 64 / 125e12 * 1e3);
  CHECK(out[1].result.fits);
}

namespace {

// The one configuration of a scenario on one H200 with the given workload and software objects (JSON text).
gp::JobResult evaluate_one_h200(const std::string& workload, const std::string& software) {
  gp::app::Diagnostics cat_diags, diags;
  const gp::Catalog cat = gp::app::load_catalogs(std::string(GPUPLAN_SOURCE_DIR) + "/catalogs", {}, cat_diags);
  auto sc = gp::app::load_scenario_text(
      R"({"name": "t", "workload": )" + workload + R"(, "software": )" + software +
          R"(, "cluster": {"gpu": "h200-sxm", "gpus_per_node": 1, "intra_node": "nvlink4-h100"},
          "pricing": {"price_per_gpu_hour": 3.0}})",
      "t.json", cat, diags);
  INFO(diags.render());
  REQUIRE(sc);
  gp::app::EvaluateOptions o;
  o.profiles_dir = std::string(GPUPLAN_SOURCE_DIR) + "/calibrate/profiles";
  const auto out = gp::app::evaluate(*sc, cat, o);
  REQUIRE(out.size() == 1);
  return out[0].result;
}

}  // namespace

TEST_CASE("app::evaluate: logits the loop keeps cost one logits tensor of peak memory") {
  const std::string gpt = R"({"model": "gpt-124m", "micro_batch": 8, "seq": 1024, "steps": 100, "precision": "bf16"})";
  const auto kept = evaluate_one_h200(gpt, R"({"logits_kept": true})");
  const auto dropped = evaluate_one_h200(gpt, R"({"logits_kept": false})");
  // 8 x 1,024 tokens x 50,304 bf16 logits = 824,180,736 bytes, at the start of backward where this step peaks.
  CHECK(kept.memory_per_gpu.value() - dropped.memory_per_gpu.value() == Approx(2.0 * 8192 * 50304));
}

TEST_CASE("app::evaluate: an NCHW BatchNorm network is slower and told to use channels_last") {
  const std::string r50 = R"({"model": "resnet50", "micro_batch": 128, "steps": 100, "precision": "bf16"})";
  const auto a = evaluate_one_h200(r50, R"({"channels_last": true})");
  const auto b = evaluate_one_h200(r50, R"({"channels_last": false})");
  // Measured on the H200 (calibrate/probes/results/h200-holdout4-2026-12-03.jsonl): 55.5 ms NCHW against
  // 29.4-30.6 ms channels-last for this step.
  CHECK(b.step_time.value() > 1.5 * a.step_time.value());
  bool told = false;
  for (const auto& s : b.advice) told = told || s.find("channels_last") != std::string::npos;
  CHECK(told);
  for (const auto& s : a.advice) CHECK(s.find("channels_last") == std::string::npos);
}

TEST_CASE("app::evaluate: a checkpointed small-batch GPT is CPU-bound and told what checkpointing costs") {
  // Measured (calibrate/probes/results/ckpt-cpu-2026-12-04.jsonl): gpt-760m b4 x 1,024 tokens 59.8 ms plain,
  // 122.6 ms checkpointed (the host's issue time doubles); at b16 the GPU sets the pace either way.
  const std::string small =
      R"({"model": "gpt-760m", "micro_batch": 4, "seq": 1024, "steps": 100, "precision": "bf16"})";
  const auto plain = evaluate_one_h200(small, R"({"activation_checkpointing": false})");
  const auto ck = evaluate_one_h200(small, R"({"activation_checkpointing": true})");
  CHECK(ck.step_time.value() > 1.4 * plain.step_time.value());
  auto told = [](const gp::JobResult& r) {
    for (const auto& s : r.advice)
      if (s.find("activation checkpointing keeps the CPU busy") != std::string::npos) return true;
    return false;
  };
  CHECK(told(ck));
  CHECK_FALSE(told(plain));
  const auto big = evaluate_one_h200(R"({"model": "gpt-760m", "micro_batch": 16, "seq": 1024, "steps": 100,
                                         "precision": "bf16"})",
                                     R"({"activation_checkpointing": true})");
  CHECK_FALSE(told(big));
}

TEST_CASE("app::evaluate: a step near the memory limit is told so, either side of it") {
  // Held-out set 15 (calibrate/probes/results/h200-holdout15-2026-12-04.jsonl), gpt-1.3b with fused AdamW on one
  // H200: b44 ran (121.6 GiB), b46 ran (126.3 GiB), b48 ran out of memory. b46 needs within 4% of the capacity,
  // where measured steps went either way; b48 does not fit but is as close; b32 is far from the limit.
  auto gpt13 = [](int b) {
    return evaluate_one_h200(R"({"model": "gpt-1.3b", "micro_batch": )" + std::to_string(b) +
                                 R"(, "seq": 1024, "steps": 100, "precision": "bf16"})",
                             "{}");
  };
  auto has = [](const gp::JobResult& r, const char* text) {
    for (const auto& s : r.advice)
      if (s.find(text) != std::string::npos) return true;
    return false;
  };
  const auto b32 = gpt13(32), b46 = gpt13(46), b48 = gpt13(48);
  CHECK(b32.fits);
  CHECK_FALSE(has(b32, "memory limit"));
  CHECK(b46.fits);
  CHECK(has(b46, "close to the memory limit"));
  CHECK(b46.memory_needed.value() > 0.96 * b46.memory_capacity.value());
  CHECK_FALSE(b48.fits);
  CHECK(has(b48, "does not fit"));
  CHECK(has(b48, "within 4% of the limit"));
}
