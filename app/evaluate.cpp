#include "app/evaluate.hpp"

#include "models/pricing.hpp"

namespace gp::app {

namespace {

// Analytical placeholder until the compute model and the simulator are wired in: the ideal step at the
// datasheet peak (6 x params x tokens for a transformer, 3 x forward FLOPs otherwise).
JobResult estimate(const JobConfig& job) {
  JobResult r;
  const auto& m = job.step.model;
  double fwd = m.fwd_flops_per_sample;
  if (m.family == ModelFamily::gpt) {
    double d = m.dims.d_model, L = m.dims.layers;
    double params = 12 * L * d * d + m.dims.vocab * d;
    fwd = 2 * params * m.dims.seq;
  }
  const double samples = static_cast<double>(job.step.micro_batch) * job.step.grad_accum;
  Dtype dt = job.step.precision == Precision::fp32 ? Dtype::fp32
             : job.step.precision == Precision::tf32 ? Dtype::tf32 : Dtype::bf16;
  double peak = job.cluster.gpu.peak_dense.count(dt) ? job.cluster.gpu.peak_dense.at(dt).value() : 1e12;
  r.step_time = Seconds(3 * fwd * samples / peak);
  r.steps = job.length.total_steps(job.global_batch());
  r.throughput_samples_per_s = job.global_batch() / r.step_time.value();
  r.breakdown.compute = r.step_time * static_cast<double>(r.steps);
  r.time_to_train = r.breakdown.total();
  r.gpu_busy_frac = 1.0;
  r.mfu = 1.0;
  r.bottleneck = "placeholder";
  r.price_per_hour = cluster_price_per_hour(job);
  r.cost = r.price_per_hour * r.time_to_train.hours();
  r.cost_per_1k_steps = r.price_per_hour * (r.step_time.hours() * 1000);
  r.memory_capacity = job.cluster.gpu.hbm;
  return r;
}

}  // namespace

std::vector<ConfigOutcome> evaluate(const Scenario& sc, const Catalog& /*cat*/, const EvaluateOptions& opts) {
  const Progress& progress = opts.progress;
  std::vector<ConfigOutcome> out;
  out.reserve(sc.configs.size());
  for (std::size_t i = 0; i < sc.configs.size(); ++i) {
    out.push_back({sc.configs[i], estimate(sc.configs[i])});
    if (progress) progress(i + 1, sc.configs.size());
  }
  return out;
}

}  // namespace gp::app
