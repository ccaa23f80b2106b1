// Profiles for GPUs that were not probed, derived from a measured profile by datasheet ratios: each GEMM
// sample's rate scales by the target's dense peak over the measured GPU's for that dtype (so the measured
// efficiency surface, as a fraction of peak, carries over), device-memory bandwidths by the HBM bandwidth
// ratio, L2 bandwidth by the SM-count ratio, host copies by the PCIe bandwidth ratio, SM count and memory size
// come from the target's datasheet, and host-side costs (launch, context) stay as measured. The result says
// `derived` and names what it came from.
#pragma once

#include "models/gpu_profile.hpp"
#include "models/hardware.hpp"

namespace gp {

// Preconditions: `measured_spec` describes the GPU `measured` was probed on. Dtypes without a positive
// peak in both specs are dropped from the derived GEMM grid.
GpuProfile derive_profile(const GpuProfile& measured, const GpuSpec& measured_spec, const GpuSpec& target);

}  // namespace gp
