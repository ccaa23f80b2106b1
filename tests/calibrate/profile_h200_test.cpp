// Physical invariants of the measured H200 profile (calibrate/profiles/h200.json, written by gpuplan-probe on
// a lent H200), of the NCCL self-test and of the held-out training runs. The bounds come from the GPU catalog
// (datasheet peaks) and from physics (nothing beats its datasheet peak, pinned beats pageable, a graph replay
// costs less than an eager launch); none is copied from the profile itself.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

using nlohmann::json;

namespace {

std::filesystem::path project_root() { return std::filesystem::path(GPUPLAN_TEST_DATA).parent_path().parent_path(); }

json load(const std::string& rel) {
  std::ifstream f(project_root() / rel);
  REQUIRE(f.good());
  return json::parse(f, nullptr, true, /*ignore_comments=*/true);  // catalogs carry comments
}

std::vector<json> load_lines(const std::string& rel) {
  std::ifstream f(project_root() / rel);
  REQUIRE(f.good());
  std::vector<json> out;
  for (std::string line; std::getline(f, line);)
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

json catalog_gpu(const std::string& id) {
  const json catalog = load("catalogs/gpus.json");  // named: a range-for over a temporary's member dangles
  for (const auto& g : catalog["gpus"])
    if (g["id"] == id) return g;
  FAIL("GPU " << id << " not in catalogs/gpus.json");
  return {};
}

const char* kDtypes[] = {"bf16", "fp16", "tf32", "fp32", "fp8"};

}  // namespace

TEST_CASE("calibrate::profile_h200: identity matches the catalog", "[calibrate][profile]") {
  const json p = load("calibrate/profiles/h200.json");
  CHECK(p["schema"] == "gpuplan-profile/1");
  CHECK(p["derived"] == false);
  const json g = catalog_gpu(p["gpu_id"]);
  CHECK(p["device"]["sm_count"] == g["sm_count"]);
  // The runtime reported 150.1e9 bytes (139.8 GiB): more than "141 GB" read as decimal, so the datasheet figure
  // is in binary units. Bound the measurement by the figure read both ways.
  const double total = p["device"]["memory_total_bytes"].get<double>();
  const double sold = g["hbm_GiB"].get<double>();
  CHECK(total <= sold * 1024.0 * 1024.0 * 1024.0);
  CHECK(total > 0.9 * sold * 1e9);
}

TEST_CASE("calibrate::profile_h200: GEMM rates below datasheet peaks, large GEMMs above half of them",
          "[calibrate][profile]") {
  const json p = load("calibrate/profiles/h200.json");
  const json peak = catalog_gpu(p["gpu_id"])["peak_tflops"];
  for (const char* list : {"gemm", "gemm_burst"}) {
    for (const char* dt : kDtypes) {
      double best = 0;
      int n = 0;
      for (const auto& e : p[list]) {
        if (e["dtype"] != dt) continue;
        ++n;
        // Each entry is self-consistent: tflops = 2mnk / ms (to the rounding of the stored figures).
        const double flop = 2.0 * e["m"].get<double>() * e["n"].get<double>() * e["k"].get<double>();
        const double rate = flop / (e["ms"].get<double>() * 1e-3) / 1e12;
        CHECK(rate == Approx(e["tflops"].get<double>()).epsilon(0.01).margin(0.06));
        CHECK(e["tflops"].get<double>() <= peak[dt].get<double>());
        best = std::max(best, e["tflops"].get<double>());
      }
      INFO(list << " " << dt);
      CHECK(n >= 40);
      CHECK(best >= 0.5 * peak[dt].get<double>());
    }
  }
}

TEST_CASE("calibrate::profile_h200: small GEMMs are less efficient than large ones", "[calibrate][profile]") {
  const json p = load("calibrate/profiles/h200.json");
  for (const char* dt : {"bf16", "fp16", "tf32"}) {
    double small = -1, large = -1;
    for (const auto& e : p["gemm_burst"]) {
      if (e["dtype"] != dt || e["tag"] != "square") continue;
      if (e["m"] == 512) small = e["tflops"];
      if (e["m"] == 8192) large = e["tflops"];
    }
    INFO(dt);
    REQUIRE(small > 0);
    REQUIRE(large > 0);
    CHECK(small < 0.5 * large);
  }
}

TEST_CASE("calibrate::profile_h200: memory, host link and launch obey physics", "[calibrate][profile]") {
  const json p = load("calibrate/profiles/h200.json");
  const json g = catalog_gpu(p["gpu_id"]);
  const double hbm_peak = g["hbm_bw_GBps"];
  const json& m = p["memory"];
  for (const char* k : {"hbm_copy_GBps", "hbm_read_GBps", "hbm_write_GBps"}) {
    INFO(k);
    CHECK(m[k].get<double>() < hbm_peak);
    CHECK(m[k].get<double>() > 0.5 * hbm_peak);
  }
  CHECK(m["l2_GBps"].get<double>() > m["hbm_read_GBps"].get<double>());
  const json& h = p["host_link"];
  const double pcie = g["pcie_GBps"];
  for (const char* dir : {"h2d", "d2h"}) {
    const double pinned = h[std::string(dir) + "_pinned_GBps"], pageable = h[std::string(dir) + "_pageable_GBps"];
    INFO(dir);
    CHECK(pinned < pcie);
    CHECK(pageable < pinned);
  }
  CHECK(p["launch"]["graph_us"].get<double>() < p["launch"]["eager_us"].get<double>());
  CHECK(p["launch"]["graph_us"].get<double>() > 0);
  // A CUDA context costs some time and a few hundred MB of device memory, never nothing.
  CHECK(p["context"]["create_s"].get<double>() > 0);
  CHECK(p["context"]["memory_bytes"].get<double>() > 0);
  CHECK(p["context"]["memory_bytes"].get<double>() < 0.05 * p["device"]["memory_total_bytes"].get<double>());
}

TEST_CASE("calibrate::profile_h200: NCCL self-test passed its checks and is consistent",
          "[calibrate][profile][nccl]") {
  const json n = load("calibrate/probes/results/nccl-selftest-h200x1-2026-12-02.json")["nccl"];
  CHECK(n["gpus"].get<int>() >= 1);
  CHECK(n["checks"].get<int>() > 0);
  CHECK(n["check_failures"].empty());
  for (const char* op : {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast"}) {
    const json& rows = n["ops"][op];
    INFO(op);
    REQUIRE(rows.size() >= 20);
    CHECK(rows.back()["bytes"].get<double>() >= 1e9);
    for (const auto& r : rows) {  // algbw = bytes / time (GB/s = 1e9 B/s)
      const double algbw = r["bytes"].get<double>() / (r["time_us"].get<double>() * 1e-6) / 1e9;
      CHECK(algbw == Approx(r["algbw_GBps"].get<double>()).epsilon(0.01));
    }
  }
}

TEST_CASE("calibrate::holdout: held-out runs are well formed and not in the reference set", "[calibrate][holdout]") {
  std::set<std::string> reference;
  for (const auto& r : load_lines("calibrate/measured/h200-2026-12.jsonl")) reference.insert(r["id"]);
  std::set<std::string> seen;
  int ooms = 0;
  for (const auto& r : load_lines("calibrate/measured/h200-holdout-2026-12-02.jsonl")) {
    const std::string id = r["id"];
    INFO(id);
    CHECK(seen.insert(id).second);
    CHECK(reference.count(id) == 0);
    CHECK(r["kind"] == "train");
    CHECK(r["data"] == "synthetic-on-gpu");
    if (r.value("oom", false)) {
      ++ooms;
      CHECK_FALSE(r.contains("step_ms"));
      continue;
    }
    CHECK(r["step_ms"].get<double>() > 0);
    CHECK(r["step_ms_p10"].get<double>() <= r["step_ms_p90"].get<double>());
    CHECK(r["peak_mem_gib"].get<double>() > 0);
    CHECK(r["params"].get<double>() > 0);
    if (r["model"] != "gpt") CHECK(r["fwd_flops_per_sample"].get<double>() > 0);
  }
  CHECK(seen.size() >= 15);
  CHECK(ooms >= 1);
}
