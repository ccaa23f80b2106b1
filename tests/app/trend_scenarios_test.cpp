// Trends users report, reproduced by the scenarios in scenarios/ through the whole library path
// (catalogs, scenario parsing, profiles, compute/memory models, simulation, pricing).
#include <catch2/catch.hpp>

#include <string>

#include "app/catalog_io.hpp"
#include "app/diagnostics.hpp"
#include "app/evaluate.hpp"
#include "app/scenario.hpp"

namespace {

struct Loaded {
  gp::Catalog cat;
  gp::app::Scenario sc;
};

Loaded load(const std::string& name) {
  gp::app::Diagnostics cat_diags, diags;  // catalog problems are the catalog tests' business
  Loaded l;
  l.cat = gp::app::load_catalogs(std::string(GPUPLAN_SOURCE_DIR) + "/catalogs", {}, cat_diags);
  auto sc = gp::app::load_scenario(std::string(GPUPLAN_SOURCE_DIR) + "/scenarios/" + name, l.cat, diags);
  REQUIRE(sc);
  l.sc = *sc;
  return l;
}

gp::app::EvaluateOptions options() {
  gp::app::EvaluateOptions o;
  o.profiles_dir = std::string(GPUPLAN_SOURCE_DIR) + "/calibrate/profiles";
  return o;
}

}  // namespace

TEST_CASE("app::trend: ResNet-50 DataLoader workers 0 -> 8 lift GPU busy from < 30% to > 85%", "[scenario]") {
  Loaded l = load("resnet50-dataloader-workers.json");
  const auto out = gp::app::evaluate(l.sc, l.cat, options());
  double busy0 = -1, busy8 = -1, prev = 0;
  for (const auto& c : out) {
    INFO(c.job.loader.num_workers << " workers: busy " << c.result.gpu_busy_frac << ", step "
                                  << c.result.step_time.ms() << " ms, bottleneck " << c.result.bottleneck);
    CHECK(c.result.gpu_busy_frac >= prev - 0.01);  // more workers never idle the GPU more
    prev = c.result.gpu_busy_frac;
    if (c.job.loader.num_workers == 0) busy0 = c.result.gpu_busy_frac;
    if (c.job.loader.num_workers == 8) busy8 = c.result.gpu_busy_frac;
  }
  CHECK(busy0 >= 0);
  CHECK(busy0 < 0.30);
  CHECK(busy8 > 0.85);
  CHECK(out.front().result.bottleneck == "dataloader");
  REQUIRE_FALSE(out.front().result.advice.empty());
  CHECK(out.front().result.advice.front().find("num_workers=0 starves the GPU") != std::string::npos);
}

TEST_CASE("app::trend: 4 -> 64 GPUs over 100 Gb/s: cost per 1,000 steps > 5x, speed-up < 2x", "[scenario]") {
  Loaded l = load("gpt-scaling-100g.json");
  const auto out = gp::app::evaluate(l.sc, l.cat, options());
  REQUIRE(out.size() == 2);
  const auto& small = out[0].job.cluster.total_gpus() == 4 ? out[0] : out[1];
  const auto& big = out[0].job.cluster.total_gpus() == 64 ? out[0] : out[1];
  REQUIRE(small.job.cluster.total_gpus() == 4);
  REQUIRE(big.job.cluster.total_gpus() == 64);
  const double cost_ratio = big.result.cost_per_1k_steps / small.result.cost_per_1k_steps;
  const double speedup = big.result.throughput_samples_per_s / small.result.throughput_samples_per_s;
  INFO("cost ratio " << cost_ratio << ", speed-up " << speedup << ", steps " << small.result.step_time.ms() << " / "
                     << big.result.step_time.ms() << " ms");
  CHECK(cost_ratio > 5.0);
  CHECK(speedup < 2.0);
  CHECK(speedup > 1.0);  // still faster: the trend is diminishing returns, not a slowdown
  CHECK(big.result.bottleneck == "communication");
}

TEST_CASE("app::trend: DDP overlap hides the all-reduce until the bucket count is too small", "[scenario]") {
  Loaded l = load("ddp-bucket-overlap.json");
  const auto out = gp::app::evaluate(l.sc, l.cat, options());
  REQUIRE(out.size() == 4);  // bucket_mb 5, 25, 100, 1000 (gradients: 0.5 GB -> 1 bucket at 1000)
  auto exposed = [&](std::size_t i) { return out[i].result.breakdown.comm_exposed.value() / out[i].result.steps; };
  for (std::size_t i = 0; i < out.size(); ++i) {
    INFO("bucket " << out[i].job.comm.bucket.mib() << " MiB: exposed " << exposed(i) * 1e3 << " ms of "
                   << out[i].result.step_time.ms() << " ms");
    CHECK(exposed(i) >= 0);
  }
  CHECK(exposed(1) < 0.5 * exposed(3));  // 25 MB buckets hide at least half of what one bucket exposes
  CHECK(exposed(3) > 0.10 * out[3].result.step_time.value());
  CHECK(out[3].result.step_time > out[1].result.step_time);
}

TEST_CASE("app::trend: straggler cost grows with rank count", "[scenario]") {
  Loaded l = load("straggler-scaling.json");
  double prev = -1;
  for (const auto& job : l.sc.configs) {
    gp::app::ConfigDetail d;
    gp::app::evaluate_config(job, l.cat, options(), nullptr, &d);
    INFO(job.cluster.total_gpus() << " GPUs: straggler " << d.step.straggler.ms() << " ms of "
                                  << d.step.step_time.ms() << " ms");
    CHECK(d.step.straggler.value() > prev);
    prev = d.step.straggler.value();
  }
}

TEST_CASE("app::evaluate: same scenario and seed, same result, parts add up to time to train") {
  Loaded l = load("resnet50-dataloader-workers.json");
  const auto a = gp::app::evaluate(l.sc, l.cat, options());
  const auto b = gp::app::evaluate(l.sc, l.cat, options());
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].result.step_time.value() == b[i].result.step_time.value());
    CHECK(a[i].result.time_to_train.value() == b[i].result.time_to_train.value());
    CHECK(a[i].result.breakdown.total().value() == Approx(a[i].result.time_to_train.value()).epsilon(1e-12));
    CHECK(a[i].result.cost.value() > 0);
  }
}

TEST_CASE("app::evaluate: --trace writes Chrome trace JSON with every simulated rank's first steps") {
  Loaded l = load("ddp-bucket-overlap.json");
  std::string trace;
  gp::app::evaluate_config(l.sc.configs.front(), l.cat, options(), &trace);
  CHECK(trace.rfind("{\"displayTimeUnit\"", 0) == 0);
  for (int rank = 0; rank < 8; ++rank) {
    CHECK(trace.find("\"name\":\"rank " + std::to_string(rank) + " gpu\"") != std::string::npos);
  }
  CHECK(trace.find("\"name\":\"backward\"") != std::string::npos);
  CHECK(trace.find("\"name\":\"wait gradients\"") != std::string::npos);
  CHECK(trace.find("\"name\":\"gradient collective\"") != std::string::npos);
}
