#include "models/gemm_model.hpp"

#include <algorithm>
#include <cmath>

namespace gp {
namespace {

struct Point {
  double flops_over_w;  // F / w: time at 1 FLOP/s before the k-loop efficiency
  double k;
  double t;             // measured seconds
  double lm, ln, lk;    // log shape
};

constexpr int kNeighbours = 4;
constexpr double kSoft = 0.05;          // distance softening (log units)
constexpr double kFade = 0.6931471806;  // correction fades beyond ~2x in shape (ln 2)

// IDW average of the nearest residuals, faded by the distance to the nearest one.
double idw(const std::vector<GemmResidual>& res, double lm, double ln, double lk) {
  if (res.empty()) return 0;
  std::vector<std::pair<double, double>> d;  // squared distance, residual
  d.reserve(res.size());
  for (const auto& r : res) {
    const double dm = r.lm - lm, dn = r.ln - ln, dk = r.lk - lk;
    d.push_back({dm * dm + dn * dn + dk * dk, r.r});
  }
  const std::size_t k = std::min<std::size_t>(kNeighbours, d.size());
  std::partial_sort(d.begin(), d.begin() + static_cast<long>(k), d.end());
  double num = 0, den = 0;
  for (std::size_t i = 0; i < k; ++i) {
    const double w = 1.0 / (d[i].first + kSoft * kSoft);
    num += w * d[i].second;
    den += w;
  }
  return num / den * std::exp(-d[0].first / (kFade * kFade));
}

double k_efficiency(double k, double k0) { return k / (k + k0); }

// Sum of squared log errors for rate exp(u).
double sse(const std::vector<Point>& pts, double k0, double t0, double u) {
  const double inv_r = std::exp(-u);
  double s = 0;
  for (const auto& p : pts) {
    const double pred = p.flops_over_w / k_efficiency(p.k, k0) * inv_r + t0;
    const double e = std::log(pred) - std::log(p.t);
    s += e * e;
  }
  return s;
}

// Golden-section search of log R for fixed k0, t0.
double best_log_rate(const std::vector<Point>& pts, double k0, double t0, double* out_sse) {
  double lo = std::log(1e9), hi = std::log(1e17);
  const double g = (std::sqrt(5.0) - 1) / 2;
  double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
  double f1 = sse(pts, k0, t0, x1), f2 = sse(pts, k0, t0, x2);
  for (int i = 0; i < 60; ++i) {
    if (f1 < f2) {
      hi = x2; x2 = x1; f2 = f1; x1 = hi - g * (hi - lo); f1 = sse(pts, k0, t0, x1);
    } else {
      lo = x1; x1 = x2; f1 = f2; x2 = lo + g * (hi - lo); f2 = sse(pts, k0, t0, x2);
    }
  }
  const double u = (lo + hi) / 2;
  *out_sse = sse(pts, k0, t0, u);
  return u;
}

GemmFit fit_points(const std::vector<Point>& pts) {
  GemmFit best;
  double best_sse = INFINITY;
  // k0 from 0 to 2048 (log grid), t0 from 0 to 30 us.
  std::vector<double> k0s = {0};
  for (double k0 = 8; k0 <= 2048; k0 *= 1.3) k0s.push_back(k0);
  for (double k0 : k0s) {
    for (double t0us = 0; t0us <= 30.0; t0us += 1.0) {
      double s = 0;
      const double u = best_log_rate(pts, k0, t0us * 1e-6, &s);
      if (s < best_sse) {
        best_sse = s;
        best.rate = FlopRate(std::exp(u));
        best.k0 = k0;
        best.t0 = Seconds::us(t0us);
      }
    }
  }
  best.points = static_cast<int>(pts.size());
  best.rms_log_error = pts.empty() ? 0 : std::sqrt(best_sse / static_cast<double>(pts.size()));
  return best;
}

std::map<Dtype, std::vector<Point>> group(const std::vector<GemmSample>& samples, const WaveGeometry& g) {
  std::map<Dtype, std::vector<Point>> by;
  for (const auto& s : samples) {
    if (s.rate.value() <= 0 || s.m <= 0 || s.n <= 0 || s.k <= 0) continue;
    GemmShape sh{static_cast<double>(s.m), static_cast<double>(s.n), static_cast<double>(s.k)};
    const double f = gemm_flops(sh).value();
    by[s.dtype].push_back({f / wave_efficiency(sh, g), sh.k, f / s.rate.value(), std::log(sh.m), std::log(sh.n),
                           std::log(sh.k)});
  }
  return by;
}

double predict(const GemmFit& f, const Point& p) {
  return p.flops_over_w / k_efficiency(p.k, f.k0) / f.rate.value() + f.t0.value();
}

}  // namespace

Flops gemm_flops(GemmShape s) { return Flops(2.0 * s.m * s.n * s.k); }

double wave_efficiency(GemmShape s, const WaveGeometry& g) {
  const double tiles = std::ceil(s.m / g.tile_m) * std::ceil(s.n / g.tile_n);
  const double sms = std::max(1, g.sm_count);
  // cuBLAS splits a long k-loop over several CTAs (split-K / stream-K) when the output has too few tiles
  // to fill the SMs; allow splits that keep at least 512 of k per CTA.
  const int max_split = std::max(1, static_cast<int>(s.k / 512));
  double best = 0;
  for (int split = 1; split <= std::min(max_split, 16); ++split) {
    const double work = tiles * split;
    const double waves = std::ceil(work / sms);
    best = std::max(best, waves > 0 ? work / (waves * sms) : 1.0);
  }
  return best > 0 ? best : 1.0;
}

GemmSurface fit_gemm_surface(const std::vector<GemmSample>& samples, int sm_count) {
  GemmSurface surf;
  if (sm_count > 0) surf.geometry.sm_count = sm_count;
  for (const auto& [d, pts] : group(samples, surf.geometry)) surf.fits[d] = fit_points(pts);
  return surf;
}

std::vector<GemmResidual> residuals_of(const GemmFit& f, const std::vector<Point>& pts) {
  std::vector<GemmResidual> out;
  for (const auto& p : pts) out.push_back({p.lm, p.ln, p.lk, std::log(p.t / predict(f, p))});
  return out;
}

GemmSurface fit_gemm_surface_with_loo(const std::vector<GemmSample>& samples, int sm_count,
                                      std::map<Dtype, double>* parametric_loo, bool correct) {
  GemmSurface surf = fit_gemm_surface(samples, sm_count);
  for (const auto& [d, pts] : group(samples, surf.geometry)) {
    if (pts.size() < 3) continue;
    double s_par = 0, s_cor = 0;
    for (std::size_t i = 0; i < pts.size(); ++i) {
      std::vector<Point> rest;
      for (std::size_t j = 0; j < pts.size(); ++j)
        if (j != i) rest.push_back(pts[j]);
      const GemmFit f = fit_points(rest);
      const double e = std::log(predict(f, pts[i])) - std::log(pts[i].t);
      const double c = idw(residuals_of(f, rest), pts[i].lm, pts[i].ln, pts[i].lk);
      s_par += e * e;
      s_cor += (e + c) * (e + c);
    }
    const double n = static_cast<double>(pts.size());
    surf.fits[d].loo_rms_log_error = std::sqrt((correct ? s_cor : s_par) / n);
    if (parametric_loo) (*parametric_loo)[d] = std::sqrt(s_par / n);
  }
  if (correct) add_residual_correction(surf, samples);
  return surf;
}

void add_residual_correction(GemmSurface& surface, const std::vector<GemmSample>& samples) {
  for (const auto& [d, pts] : group(samples, surface.geometry))
    if (surface.has(d)) surface.residuals[d] = residuals_of(surface.fits.at(d), pts);
}

double residual_factor(const GemmSurface& surface, Dtype d, GemmShape s) {
  auto it = surface.residuals.find(d);
  if (it == surface.residuals.end()) return 1.0;
  return std::exp(idw(it->second, std::log(s.m), std::log(s.n), std::log(s.k)));
}

Seconds gemm_kernel_time(const GemmSurface& surface, Dtype d, GemmShape s) {
  const GemmFit& f = surface.fits.at(d);
  const double eff = wave_efficiency(s, surface.geometry) * k_efficiency(s.k, f.k0);
  return Seconds(gemm_flops(s).value() / (f.rate.value() * eff) * residual_factor(surface, d, s));
}

Seconds gemm_probe_time(const GemmSurface& surface, Dtype d, GemmShape s) {
  return gemm_kernel_time(surface, d, s) + surface.fits.at(d).t0;
}

}  // namespace gp
