// GPU profiles (calibrate/profile_io.cpp) with one measured figure corrupted: each is one line naming the file, the
// JSON path and the accepted range. Before, a launch of 1e15 us or a host link of 1e-300 GB/s made `calibrate check`
// hang, and a GEMM of 1e308 TFLOP/s, an HBM copy of 1e-300 GB/s or a context of 1e308 bytes printed overflowed tables.
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "calibrate/profile_io.hpp"
#include "tests/support/run_gpuplan.hpp"

using namespace gp::calibrate;

namespace {

nlohmann::json committed_profile() {
  return nlohmann::json::parse(std::ifstream("calibrate/profiles/h200.json"), nullptr, true, true);
}

}  // namespace

TEST_CASE("calibrate::profile_io: figures that hung or overflowed the check are named with their range",
          "[calibrate][profile]") {
  struct Case {
    nlohmann::json::json_pointer where;
    nlohmann::json value;
    std::string expected;  // "" when the value must be accepted
  };
  using ptr = nlohmann::json::json_pointer;
  const std::vector<Case> cases = {
      {ptr("/launch/eager_us"), 1e15, "p.json:/launch/eager_us: must be a number in [0.01, 100000], got 1e+15"},
      {ptr("/launch/graph_us"), 0, "p.json:/launch/graph_us: must be a number in [0.01, 100000], got 0"},
      {ptr("/host_link/h2d_pinned_GBps"), 1e-300,
       "p.json:/host_link/h2d_pinned_GBps: must be 0 (not measured) or a number in [0.01, 100000], got 1e-300"},
      {ptr("/host_link/d2h_pageable_GBps"), -5,
       "p.json:/host_link/d2h_pageable_GBps: must be 0 (not measured) or a number in [0.01, 100000], got -5"},
      {ptr("/gemm/0/tflops"), 1e308, "p.json:/gemm/0/tflops: must be a number in [0.001, 100000], got 1e+308"},
      {ptr("/gemm/0/m"), 1.5, "p.json:/gemm/0/m: must be an integer in [1, 10000000], got 1.5"},
      {ptr("/memory/hbm_copy_GBps"), 1e-300, "p.json:/memory/hbm_copy_GBps: must be a number in [10, 1000000], got 1e-300"},
      {ptr("/memory/l2_GBps"), 1e-300,
       "p.json:/memory/l2_GBps: must be 0 (not measured) or a number in [10, 10000000], got 1e-300"},
      {ptr("/context/memory_bytes"), 1e308,
       "p.json:/context/memory_bytes: must be a number in [0, 1000000000000], got 1e+308"},
      {ptr("/context/create_s"), 1e300, "p.json:/context/create_s: must be a number in [0, 3600], got 1e+300"},
      {ptr("/device/memory_total_bytes"), 1e308,
       "p.json:/device/memory_total_bytes: must be a number in [1000000, 1e+15], got 1e+308"},
      {ptr("/device/sm_count"), 0.5, "p.json:/device/sm_count: must be an integer in [1, 100000], got 0.5"},
      // Zero where it means "not measured", and the ends of the ranges, stay valid.
      {ptr("/host_link/h2d_pinned_GBps"), 0, ""},
      {ptr("/host_link/h2d_pinned_GBps"), 0.01, ""},
      {ptr("/launch/eager_us"), 1e5, ""},
      {ptr("/gemm/0/tflops"), 0.001, ""},
      {ptr("/context/memory_bytes"), 0, ""},
  };
  for (const auto& c : cases) {
    auto doc = committed_profile();
    REQUIRE(doc.contains(c.where));
    doc[c.where] = c.value;
    std::vector<std::string> errors;
    const auto p = parse_profile(doc, "p.json", errors);
    INFO(c.where.to_string() << " = " << c.value.dump());
    if (c.expected.empty()) {
      CHECK(errors.empty());
      CHECK(p.has_value());
    } else {
      CHECK_FALSE(p.has_value());
      CHECK(errors == std::vector<std::string>{c.expected});
    }
  }
  // The committed profiles, the H100's probe and the tests' provisional profile lie within every range.
  for (const char* f : {"calibrate/profiles/h200.json", "calibrate/probes/results/h100-probe-2026-12-06.json",
                        "tests/data/h200-provisional-profile.json"}) {
    std::vector<std::string> errors;
    INFO(f);
    CHECK(load_profile(f, errors).has_value());
    CHECK(errors.empty());
  }
}

TEST_CASE("calibrate::profile_io: calibrate check with a GEMM of 1e308 TFLOP/s is one line and exit 2", "[calibrate][cli]") {
  // (A launch of 1e15 us, refused the same way above, made this command hang.)
  auto doc = committed_profile();
  doc["gemm"][0]["tflops"] = 1e308;
  const std::string path = "/tmp/gpuplan-profile-io-" + std::to_string(::getpid()) + ".json";
  std::ofstream(path) << doc.dump();
  const auto r = gp::test::run_gpuplan("calibrate check --profile " + path +
                                       " --constants calibrate/profiles/fit-h200.json --runs calibrate/measured/h200-2026-12.jsonl");
  std::remove(path.c_str());
  CHECK(r.code == 2);
  CHECK(r.out == path + ":/gemm/0/tflops: must be a number in [0.001, 100000], got 1e+308\n");
}
