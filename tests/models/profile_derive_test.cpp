#include <catch2/catch.hpp>

#include "models/profile_derive.hpp"

using namespace gp;

TEST_CASE("models::profile_derive: scales GEMM rates and bandwidth by datasheet ratios", "[models]") {
  // Datasheet figures (shared/facts/public-figures.md): H200 989 bf16 / 67 fp32 TFLOP/s, 4.8 TB/s, 141 GB;
  // A100 SXM 312 bf16 / 19.5 fp32, 2.04 TB/s, 80 GB, 108 SMs, no fp8.
  GpuSpec h200, a100;
  h200.id = "h200-sxm";
  h200.peak_dense = {{Dtype::bf16, FlopRate::tflops(989)}, {Dtype::fp32, FlopRate::tflops(67)},
                     {Dtype::fp8, FlopRate::tflops(1979)}};
  h200.hbm_bw = ByteRate::gbps(4800);
  a100.id = "a100-sxm-80gb";
  a100.name = "A100 SXM 80GB";
  a100.peak_dense = {{Dtype::bf16, FlopRate::tflops(312)}, {Dtype::fp32, FlopRate::tflops(19.5)}};
  a100.hbm_bw = ByteRate::gbps(2040);
  a100.hbm = Bytes::gb(80);
  a100.sm_count = 108;
  a100.pcie_bw = ByteRate::gbps(32);  // PCIe 4.0 x16 against the H200's 5.0
  h200.pcie_bw = ByteRate::gbps(64);
  h200.sm_count = 132;
  GpuProfile m;
  m.gpu_id = "h200-sxm";
  m.measured_on = "2026-12-02";
  m.sm_count = 132;
  m.gemm = {{Dtype::bf16, 8192, 8192, 8192, FlopRate::tflops(780)},
            {Dtype::fp32, 8192, 8192, 8192, FlopRate::tflops(51)},
            {Dtype::fp8, 8192, 8192, 8192, FlopRate::tflops(1300)}};
  m.hbm_copy_bw = ByteRate::gbps(3873.6);
  m.l2_bw = ByteRate::gbps(6766.5);
  m.h2d_pinned = ByteRate::gbps(55);
  m.launch_eager = Seconds::us(4);
  const GpuProfile d = derive_profile(m, h200, a100);
  CHECK(d.derived);
  CHECK(d.derived_from.find("h200-sxm") != std::string::npos);
  CHECK(d.gpu_id == "a100-sxm-80gb");
  REQUIRE(d.gemm.size() == 2);  // no fp8 on the A100
  CHECK(d.gemm[0].rate.tflops() == Approx(780.0 * 312 / 989));
  CHECK(d.gemm[1].rate.tflops() == Approx(51.0 * 19.5 / 67));
  CHECK(d.hbm_copy_bw.gbps() == Approx(3873.6 * 2040 / 4800));
  CHECK(d.sm_count == 108);
  CHECK(d.l2_bw.gbps() == Approx(6766.5 * 108 / 132));  // on-chip: by SMs, not by HBM
  CHECK(d.h2d_pinned.gbps() == Approx(55.0 * 32 / 64));
  CHECK(d.memory_total.gb() == Approx(80));
  CHECK(d.launch_eager.us() == Approx(4));  // host-side cost is not scaled
}
