// GEMM timing from an efficiency surface fitted to a profile's probe grid (one fit per dtype).
//
//   t(m,n,k) = 2mnk / (R_d * w(m,n) * k / (k + k0_d)) + t0_d
//
// R_d: sustained rate of large GEMMs in dtype d; w: wave quantisation (output tiles spread over the SMs,
// the last wave partly idle); k/(k+k0): pipeline fill/drain of the k-loop, which makes short-k GEMMs slow;
// t0: fixed latency of one probe call. The training model uses the first term only (its per-kernel
// overhead is a fitted global constant of the compute model). Pure functions, no I/O.
#pragma once

#include <map>
#include <vector>

#include "models/gpu_profile.hpp"
#include "models/units.hpp"

namespace gp {

struct GemmShape {
  double m = 0, n = 0, k = 0;  // C[m,n] = A[m,k] * B[k,n]; may be non-integer when averaged
};

// FLOPs of one GEMM: 2mnk (a multiply-add counts as 2).
Flops gemm_flops(GemmShape s);

// Output tile of one CTA and SM count used by the wave-quantisation term.
struct WaveGeometry {
  double tile_m = 128, tile_n = 128;  // typical Hopper/Ampere cuBLAS CTA tile (CUTLASS defaults)
  int sm_count = 132;
};

// Fraction of SM-slots busy over all waves: tiles / (waves * SMs), in (0, 1].
double wave_efficiency(GemmShape s, const WaveGeometry& g);

// Fitted surface parameters of one dtype.
struct GemmFit {
  FlopRate rate;    // R: sustained large-GEMM rate
  double k0 = 0;    // k at which the k-loop runs at half efficiency
  Seconds t0;       // per-call latency seen by the probe
  double rms_log_error = 0;      // fit residual, natural-log units
  double loo_rms_log_error = 0;  // leave-one-out residual (predicting each probe point from the others)
  int points = 0;
};

struct GemmSurface {
  WaveGeometry geometry;
  std::map<Dtype, GemmFit> fits;
  // True when `d` has a fit.
  [[nodiscard]] bool has(Dtype d) const { return fits.count(d) != 0; }
};

// Least-squares fit (log time) of R, k0, t0 per dtype over the profile's GEMM samples; dtypes with no
// sample are absent. Deterministic grid search over k0 and t0, with R found by a 1-D search per grid
// point. Complexity O(samples * grid). `loo_rms_log_error` is left 0 (see gemm_surface_loo).
GemmSurface fit_gemm_surface(const std::vector<GemmSample>& samples, int sm_count);

// Same fit, plus each dtype's leave-one-out error: every probe point predicted from a fit to the others.
// Costs one fit per sample; used to report the surface's generalisation, not in the prediction path.
GemmSurface fit_gemm_surface_with_loo(const std::vector<GemmSample>& samples, int sm_count);

// Kernel time of one GEMM on the GPU, without the per-call latency t0. Precondition: surface.has(d).
Seconds gemm_kernel_time(const GemmSurface& surface, Dtype d, GemmShape s);

// Probe-call time (with t0), for comparison with probe samples.
Seconds gemm_probe_time(const GemmSurface& surface, Dtype d, GemmShape s);

}  // namespace gp
