#include "models/profile_derive.hpp"

#include <string>

namespace gp {
namespace {

double peak_ratio(const GpuSpec& from, const GpuSpec& to, Dtype d) {
  auto a = from.peak_dense.find(d);
  auto b = to.peak_dense.find(d);
  if (a == from.peak_dense.end() || b == to.peak_dense.end() || a->second.value() <= 0) return 0;
  return b->second / a->second;
}

// target / base, or 1 where either figure is missing.
double ratio(double target, double base) { return base > 0 && target > 0 ? target / base : 1.0; }

}  // namespace

GpuProfile derive_profile(const GpuProfile& measured, const GpuSpec& measured_spec, const GpuSpec& target) {
  GpuProfile p = measured;
  const std::string from = measured.gpu_id.empty() ? measured_spec.id : measured.gpu_id;
  p.derived = true;
  p.derived_from = from + (measured.measured_on.empty() ? "" : " measured " + measured.measured_on);
  p.gpu_id = target.id;
  p.device_name = target.name;
  p.sm_count = target.sm_count > 0 ? target.sm_count : measured.sm_count;
  p.memory_total = target.hbm.value() > 0 ? target.hbm : measured.memory_total;
  p.command = "derived by datasheet ratios from " + from;
  p.gemm.clear();
  for (const GemmSample& s : measured.gemm) {
    const double r = peak_ratio(measured_spec, target, s.dtype);
    if (r <= 0) continue;
    GemmSample t = s;
    t.rate = s.rate * r;
    p.gemm.push_back(t);
  }
  const double bw = ratio(target.hbm_bw.value(), measured_spec.hbm_bw.value());
  p.hbm_copy_bw = measured.hbm_copy_bw * bw;
  p.hbm_read_bw = measured.hbm_read_bw * bw;
  p.hbm_write_bw = measured.hbm_write_bw * bw;
  // L2 is on the chip: it scales with the SMs that feed it, not with HBM (an H100 probed 2026-12-06 read 6,712
  // GB/s against the H200's 6,767 with the same 132 SMs; by the HBM ratio it would have been 4,722).
  p.l2_bw = measured.l2_bw * ratio(target.sm_count, measured_spec.sm_count);
  const double pcie = ratio(target.pcie_bw.value(), measured_spec.pcie_bw.value());
  p.h2d_pinned = measured.h2d_pinned * pcie;
  p.d2h_pinned = measured.d2h_pinned * pcie;
  p.h2d_pageable = measured.h2d_pageable * pcie;
  p.d2h_pageable = measured.d2h_pageable * pcie;
  return p;
}

}  // namespace gp
