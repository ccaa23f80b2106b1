#include <catch2/catch.hpp>

#include "models/gemm_model.hpp"

using namespace gp;

TEST_CASE("models::gemm: FLOPs are 2mnk", "[models]") {
  CHECK(gemm_flops({1024, 2048, 512}).value() == Approx(2.0 * 1024 * 2048 * 512));
}

TEST_CASE("models::gemm: wave quantisation of output tiles over SMs", "[models]") {
  WaveGeometry g;  // 128x128 tiles, 132 SMs
  // 12 x 11 = 132 tiles fill one wave exactly.
  CHECK(wave_efficiency({12 * 128, 11 * 128, 256}, g) == Approx(1.0));
  // 133 tiles with a short k (no split-K): two waves, 133 / 264 busy.
  CHECK(wave_efficiency({7 * 128, 19 * 128, 256}, g) == Approx(133.0 / 264.0));
  // A long k lets cuBLAS split it: 33 tiles x 4 splits (k = 4 x 512) = 132 slots; k = 512 cannot split.
  CHECK(wave_efficiency({3 * 128, 11 * 128, 2048}, g) == Approx(1.0));
  CHECK(wave_efficiency({3 * 128, 11 * 128, 512}, g) == Approx(33.0 / 132.0));
}

TEST_CASE("models::gemm: the surface fit recovers the parameters of synthetic probe data", "[models]") {
  // Samples generated from the model itself with R = 700 TFLOP/s, k0 = 100, t0 = 5 us.
  const double R = 700e12, k0 = 100, t0 = 5e-6;
  WaveGeometry g;
  std::vector<GemmSample> s;
  for (long m : {512L, 2048L, 8192L})
    for (long n : {768L, 3072L})
      for (long k : {256L, 1024L, 4096L}) {
        GemmShape sh{double(m), double(n), double(k)};
        const double t = gemm_flops(sh).value() / (R * wave_efficiency(sh, g) * k / (k + k0)) + t0;
        s.push_back({Dtype::bf16, m, n, k, FlopRate(gemm_flops(sh).value() / t)});
      }
  const GemmSurface surf = fit_gemm_surface(s, 132);
  REQUIRE(surf.has(Dtype::bf16));
  CHECK_FALSE(surf.has(Dtype::fp32));
  const GemmFit& f = surf.fits.at(Dtype::bf16);
  CHECK(f.rate.value() == Approx(R).epsilon(0.05));
  CHECK(f.t0.us() == Approx(5.0).margin(1.0));
  CHECK(f.rms_log_error < 0.03);
  // Kernel time excludes t0 and is slower per FLOP for a short k.
  const double fast = gemm_kernel_time(surf, Dtype::bf16, {8192, 8192, 8192}).value();
  CHECK(gemm_flops({8192, 8192, 8192}).value() / fast == Approx(R * 8192 / (8192 + f.k0)).epsilon(0.01));
  CHECK(gemm_probe_time(surf, Dtype::bf16, {512, 768, 256}).value() >
        gemm_kernel_time(surf, Dtype::bf16, {512, 768, 256}).value());
}
