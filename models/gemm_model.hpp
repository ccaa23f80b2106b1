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

// A probe point's residual against the parametric surface, in log-shape space.
struct GemmResidual {
  double lm = 0, ln = 0, lk = 0;  // ln m, ln n, ln k
  double r = 0;                   // ln(measured time / parametric time)
};

struct GemmSurface {
  WaveGeometry geometry;
  std::map<Dtype, GemmFit> fits;
  // Residual correction: the parametric time is multiplied by exp(IDW average of the nearest probe
  // residuals), fading out with distance in log-shape space, so shapes near probed ones take the measured
  // efficiency and far ones the parametric law. Off when empty.
  std::map<Dtype, std::vector<GemmResidual>> residuals;
  // True when `d` has a fit.
  [[nodiscard]] bool has(Dtype d) const { return fits.count(d) != 0; }
};

// Least-squares fit (log time) of R, k0, t0 per dtype over the profile's GEMM samples; dtypes with no
// sample are absent. Deterministic grid search over k0 and t0, with R found by a 1-D search per grid
// point. Complexity O(samples * grid). `loo_rms_log_error` is left 0 (see gemm_surface_loo).
GemmSurface fit_gemm_surface(const std::vector<GemmSample>& samples, int sm_count);

// Same fit, plus each dtype's leave-one-out error: every probe point predicted from a fit to the others.
// Costs one fit per sample; used to report the surface's generalisation, not in the prediction path.
// `loo_rms_log_error` is that of the surface as returned (with residual correction when `correct`);
// `parametric_loo` receives, per dtype, the leave-one-out error of the parametric law alone.
GemmSurface fit_gemm_surface_with_loo(const std::vector<GemmSample>& samples, int sm_count,
                                      std::map<Dtype, double>* parametric_loo = nullptr, bool correct = true);

// Adds the residual correction (one residual per probe sample) to a fitted surface.
void add_residual_correction(GemmSurface& surface, const std::vector<GemmSample>& samples);

// Multiplicative correction exp(IDW residual) at shape `s` (1 when the dtype has no residuals).
double residual_factor(const GemmSurface& surface, Dtype d, GemmShape s);

// Kernel time of one GEMM on the GPU, without the per-call latency t0, residual correction applied when
// the surface has residuals. Precondition: surface.has(d). O(probe points of d).
Seconds gemm_kernel_time(const GemmSurface& surface, Dtype d, GemmShape s);

// Probe-call time (with t0), for comparison with probe samples.
Seconds gemm_probe_time(const GemmSurface& surface, Dtype d, GemmShape s);

}  // namespace gp
