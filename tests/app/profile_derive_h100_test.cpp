// The H100 profile that `run` and `calibrate check --gpu h100-sxm` derive from the H200's by datasheet ratios,
// checked against the probes run on a lent H100 (calibrate/probes/results/h100-probe-2026-12-06.json, the same
// gpuplan-probe binary and command as the H200's; docs/calibration.md "An H100 probed").
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "app/catalog_io.hpp"
#include "app/diagnostics.hpp"
#include "calibrate/profile_io.hpp"
#include "models/profile_derive.hpp"

namespace {

std::string src(const std::string& rel) { return std::string(GPUPLAN_TEST_DATA) + "/../../" + rel; }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

TEST_CASE("app::profile_derive: the derived H100 profile against one probed on an H100", "[app]") {
  gp::app::Diagnostics diags;
  const gp::Catalog cat = gp::app::load_catalogs(src("catalogs"), {}, diags);
  const gp::GpuSpec* h200 = gp::Catalog::find(cat.gpus, "h200-sxm");
  const gp::GpuSpec* h100 = gp::Catalog::find(cat.gpus, "h100-sxm");
  REQUIRE(h200);
  REQUIRE(h100);
  std::vector<std::string> errors;
  const auto base = gp::calibrate::load_profile(src("calibrate/profiles/h200.json"), errors);
  const auto probed = gp::calibrate::load_profile(src("calibrate/probes/results/h100-probe-2026-12-06.json"), errors);
  REQUIRE(errors.empty());
  REQUIRE(base);
  REQUIRE(probed);
  REQUIRE(probed->device_name.find("H100") != std::string::npos);
  const gp::GpuProfile derived = gp::derive_profile(*base, *h200, *h100);

  // GEMMs: the same 763 shapes. Same SMs, clocks and dense peaks, so the derivation keeps each rate; the probed
  // H100 agrees to a median of 0.5% per dtype (bf16 0.997, fp16 1.000, tf32 0.996, fp32 1.002, fp8 0.995).
  std::map<std::tuple<int, long, long, long>, double> rate;
  for (const auto& s : derived.gemm) rate[{static_cast<int>(s.dtype), s.m, s.n, s.k}] = s.rate.tflops();
  std::map<int, std::vector<double>> ratios;
  for (const auto& s : probed->gemm) {
    auto it = rate.find({static_cast<int>(s.dtype), s.m, s.n, s.k});
    if (it != rate.end()) ratios[static_cast<int>(s.dtype)].push_back(s.rate.tflops() / it->second);
  }
  REQUIRE(ratios.size() == 5);
  for (const auto& [dtype, r] : ratios) {
    INFO("dtype " << dtype << ", " << r.size() << " shapes");
    CHECK(r.size() >= 50);
    CHECK(median(r) == Approx(1.0).margin(0.02));
  }
  // Device memory by the HBM ratio (3.35 / 4.8 TB/s): the probed H100 reaches a little more of its datasheet
  // figure than the H200 (read 3,175 GB/s against 3,114 derived, copy 2,871 against 2,703).
  CHECK(probed->hbm_read_bw.gbps() / derived.hbm_read_bw.gbps() == Approx(1.0).margin(0.05));
  CHECK(probed->hbm_copy_bw.gbps() / derived.hbm_copy_bw.gbps() == Approx(1.0).margin(0.10));
  CHECK(probed->hbm_copy_bw.gbps() > derived.hbm_copy_bw.gbps());
  // L2 by SM count: 6,712 probed against 6,767 derived (by the HBM ratio it would be 4,722).
  CHECK(probed->l2_bw.gbps() / derived.l2_bw.gbps() == Approx(1.0).margin(0.03));
  // Host copies by PCIe (both Gen5 x16): pinned 55.3 GB/s probed, 55.1 derived.
  CHECK(probed->h2d_pinned.gbps() / derived.h2d_pinned.gbps() == Approx(1.0).margin(0.05));
  CHECK(derived.sm_count == probed->sm_count);
}
