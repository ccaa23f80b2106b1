#include "models/profile_derive.hpp"

namespace gp {
namespace {

double peak_ratio(const GpuSpec& from, const GpuSpec& to, Dtype d) {
  auto a = from.peak_dense.find(d);
  auto b = to.peak_dense.find(d);
  if (a == from.peak_dense.end() || b == to.peak_dense.end() || a->second.value() <= 0) return 0;
  return b->second / a->second;
}

}  // namespace

GpuProfile derive_profile(const GpuProfile& measured, const GpuSpec& measured_spec, const GpuSpec& target) {
  GpuProfile p = measured;
  p.derived = true;
  p.derived_from = measured.gpu_id + (measured.measured_on.empty() ? "" : " measured " + measured.measured_on);
  p.gpu_id = target.id;
  p.device_name = target.name;
  p.sm_count = target.sm_count > 0 ? target.sm_count : measured.sm_count;
  p.memory_total = target.hbm.value() > 0 ? target.hbm : measured.memory_total;
  p.command = "derived by datasheet ratios from " + measured.gpu_id;
  p.gemm.clear();
  for (const GemmSample& s : measured.gemm) {
    const double r = peak_ratio(measured_spec, target, s.dtype);
    if (r <= 0) continue;
    GemmSample t = s;
    t.rate = s.rate * r;
    p.gemm.push_back(t);
  }
  const double bw = measured_spec.hbm_bw.value() > 0 && target.hbm_bw.value() > 0
                        ? target.hbm_bw / measured_spec.hbm_bw
                        : 1.0;
  p.hbm_copy_bw = measured.hbm_copy_bw * bw;
  p.hbm_read_bw = measured.hbm_read_bw * bw;
  p.hbm_write_bw = measured.hbm_write_bw * bw;
  p.l2_bw = measured.l2_bw * bw;
  return p;
}

}  // namespace gp
