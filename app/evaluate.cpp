#include "app/evaluate.hpp"

#include <cmath>

#include <algorithm>
#include <memory>

#include "app/output_file.hpp"
#include "app/profile_cache.hpp"
#include "models/memory_model.hpp"
#include "models/pricing.hpp"
#include "models/step_ops.hpp"
#include "sim/advice.hpp"
#include "sim/job_inputs.hpp"
#include "sim/job_sim.hpp"
#include "sim/step_sim.hpp"
#include "sim/trace.hpp"

namespace gp::app {

namespace {

// Launch-bound when one rank's issue time outlasts its GPU time (tensor and pipeline parallelism divide the GPU's
// work, not the kernels a tp rank issues); else the compute model's FLOP- or memory-bound verdict.
const char* compute_bottleneck(const StepPrediction& p, const sim::StepSimInput& in) {
  if (sim::rank_pace(in).launch_bound()) return "launch-overhead";
  return gpu_side_bottleneck(p) == Bottleneck::gpu_compute ? "gpu-compute" : "gpu-memory";
}

// What sets the pace: input or communication when the GPU waits for it a noticeable share of the step
// (sim::kBottleneckWaitShare); otherwise the compute side's verdict (FLOP-bound, memory-bound or launch-bound).
std::string bottleneck_of(const StepPrediction& p, const sim::StepSimInput& in, const sim::StepSimResult& r, bool fits) {
  if (!fits) return "out-of-memory";
  const double t = r.step_time.value(), d = r.dataloader_stall.value(), k = r.comm_exposed.value();
  if (std::max(d, k) >= sim::kBottleneckWaitShare * t) {
    if (d >= k) return "dataloader";
    return r.straggler.value() > 0.5 * k ? "stragglers" : "communication";
  }
  return compute_bottleneck(p, in);
}

JobResult not_predicted(const JobConfig& job, const std::string& why) {
  JobResult r;
  r.steps = job.length.total_steps(job.global_batch());
  r.bottleneck = "not-predicted";  // report.hpp predicted()
  r.fits = false;  // keeps it out of the recommendation (report::pick_best); the advice says why
  r.advice.push_back("not predicted: " + why);
  r.price_per_hour = cluster_price_per_hour(job);
  return r;
}

double peak_flops(const JobConfig& job) {
  const auto& pk = job.cluster.gpu.peak_dense;
  auto it = pk.find(gemm_dtype(job.step.precision));
  return it == pk.end() ? 0.0 : it->second.value();
}

JobResult run_one(const JobConfig& job, ProfileCache& cache, const EvaluateOptions& opts, std::string* trace,
                  std::vector<std::string>& notes, ConfigDetail* detail = nullptr) {
  const Dtype dt = gemm_dtype(job.step.precision);
  if (!job.cluster.gpu.peak_dense.count(dt)) {
    return not_predicted(job, job.cluster.gpu.id + " has no " + to_string(dt) +
                                  " tensor math (catalog peak_dense): choose another precision");
  }
  std::string err;
  const DeviceBundle* dev = cache.get(job.cluster.gpu, err);
  if (!dev) return not_predicted(job, err);
  notes.insert(notes.end(), dev->notes.begin(), dev->notes.end());
  StepConfig step = job.step;
  step.grad_shards = gradient_shards(job.parallel);  // the one rank's gradient work follows the data-parallel split
  step.ddp = ddp_rank(job.parallel);
  StepPrediction pred = predict_step(step, dev->device, dev->constants.compute);
  if (!pred.not_expressible.empty()) return not_predicted(job, pred.not_expressible);
  if (job.cluster.host_cpu_scale > 0) apply_host_cpu_scale(pred, job.cluster.host_cpu_scale);
  const MemoryPrediction mem = predict_memory(job.step, job.parallel, dev->profile, dev->constants.memory);

  const sim::SimConstants& k = cache.sim_constants();
  sim::StepSimInput in = sim::make_step_input(job, pred, dev->profile, k, notes);
  sim::StepSimOptions so;
  so.steps = opts.sim_steps;
  so.seed = job.seed;
  if (trace) {
    so.trace_steps = opts.trace_steps;
    so.trace_max_ranks = opts.trace_max_ranks;
  }
  sim::StepSimResult st = sim::simulate_steps(in, so);
  if (trace) *trace = sim::chrome_trace_json(st.trace);

  const sim::JobEvents ev = sim::make_job_events(job, dev->profile, k, st.step_time);
  JobResult r;
  r.steps = job.length.total_steps(job.global_batch());
  const sim::JobTimes jt =
      sim::job_times(r.steps, {st.step_time, st.compute, st.dataloader_stall, st.comm_exposed}, ev);
  r.step_time = st.step_time;
  r.throughput_samples_per_s = static_cast<double>(job.global_batch()) / st.step_time.value();
  r.breakdown = jt.breakdown;
  r.step_breakdown = {st.compute, st.dataloader_stall, st.comm_exposed, st.comm_hidden, st.straggler};
  r.time_to_train = jt.breakdown.total();
  r.gpu_busy_frac = std::min(1.0, st.gpu_busy / st.step_time);
  const double peak = peak_flops(job);
  const double flops_per_gpu = pred.flops.value() / (job.parallel.tp * job.parallel.pp);
  r.mfu = peak > 0 ? flops_per_gpu / (st.step_time.value() * peak) : 0.0;
  // What the step holds on the GPU. With CUDA graphs that includes the graph's private pool, which
  // torch.cuda.max_memory_allocated leaves out (calibrate check compares that figure, peak_allocated); a planner
  // shown it read 2.0 GiB for a GPT-124M step that occupies 17.5.
  r.memory_per_gpu = mem.peak_device;
  r.memory_capacity = mem.capacity;
  r.memory_needed = mem.needed;
  r.memory_parts = mem.at_peak;
  r.memory_peak_at = mem.peak_at;
  r.fits = mem.fits;
  r.bottleneck = bottleneck_of(pred, in, st, mem.fits);
  r.price_per_hour = cluster_price_per_hour(job);
  r.cost = r.price_per_hour * r.time_to_train.hours();
  r.cost_per_1k_steps = r.price_per_hour * (r.step_time.hours() * 1000.0);
  // The step's 80% range: the compute part of the simulated step scaled by the compute model's own quantiles over
  // its point value (a derived profile's GPU side adds its measured cross-GPU error); the job's time moves by
  // that much per step.
  const StepSpread spread = sim::step_spread_for(k, dev->profile.derived, job.cluster.host_cpu_scale > 0);
  // Where the loader sets the pace (the step waits for input a noticeable share of it), the step is the loader's
  // batch time, and the data-loader simulation's own spread (loader_log_sd, fitted over the reference loader
  // records) moves it too: the two shifts add in quadrature, and the fast end stops at the step without the wait.
  const bool loader_paced = !job.loader.synthetic && st.dataloader_stall.value() >=
                                                          sim::kBottleneckWaitShare * st.step_time.value();
  auto at = [&](double q, Seconds& step, Seconds& ttt, Dollars& cost) {
    const double f = pred.total.value() > 0 ? step_time_quantile(pred, spread, q) / pred.total : 1.0;
    step = st.step_time + st.compute * (f - 1.0);
    if (loader_paced && k.loader_log_sd > 0) {
      constexpr double kZ90 = 1.2815515655446004;  // the standard normal's 90th percentile
      const double z = q < 0.5 ? -kZ90 : kZ90;
      const double dc = (st.compute * (f - 1.0)).value();
      const double dl = st.step_time.value() * std::expm1(z * k.loader_log_sd);
      const double shift = std::copysign(std::hypot(dc, dl), z);
      step = Seconds(std::max(st.step_time.value() - st.dataloader_stall.value(), st.step_time.value() + shift));
    }
    ttt = r.time_to_train + (step - st.step_time) * static_cast<double>(r.steps);
    cost = r.price_per_hour * ttt.hours();
  };
  at(0.1, r.step_time_p10, r.time_to_train_p10, r.cost_p10);
  at(0.9, r.step_time_p90, r.time_to_train_p90, r.cost_p90);
  sim::AdviceInputs ai{&job, &pred, &mem, &in, &st, &jt, r.step_time_p10, r.step_time_p90, Seconds(0)};
  if (sim::fsdp_mixed_precision_applies(job)) {
    StepConfig mixed = step;
    mixed.params_16bit = true;
    ai.mixed_precision_gpu_saving = pred.gpu_busy - predict_step(mixed, dev->device, dev->constants.compute).gpu_busy;
  }
  r.advice = sim::advise(ai);
  if (detail) {
    st.trace.clear();
    detail->input = in;
    detail->step = std::move(st);
  }
  return r;
}

void write_trace(const EvaluateOptions& opts, const std::string& text, std::vector<std::string>& notes) {
  if (auto problem = write_output_file(opts.trace_path, text, "the trace")) {
    if (opts.trace_error) *opts.trace_error = std::move(*problem);
    else notes.push_back(std::move(*problem));
  }
}

}  // namespace

Evaluator::Evaluator(const Catalog& cat, EvaluateOptions opts)
    : opts_(std::move(opts)),
      cache_(std::make_unique<ProfileCache>(opts_.profiles_dir.empty() ? default_profiles_dir() : opts_.profiles_dir,
                                            cat)) {
  notes_ = cache_->sim_notes();
}

Evaluator::~Evaluator() = default;

JobResult Evaluator::run(const JobConfig& job, std::string* trace, ConfigDetail* detail) {
  return run_one(job, *cache_, opts_, trace, notes_, detail);
}

std::vector<std::string> Evaluator::notes() const {
  std::vector<std::string> n = notes_;
  std::sort(n.begin(), n.end());
  n.erase(std::unique(n.begin(), n.end()), n.end());
  return n;
}

JobResult evaluate_config(const JobConfig& job, const Catalog& cat, const EvaluateOptions& opts, std::string* trace,
                          ConfigDetail* detail) {
  Evaluator ev(cat, opts);
  JobResult r = ev.run(job, trace, detail);
  if (opts.warnings) {
    const auto n = ev.notes();
    opts.warnings->insert(opts.warnings->end(), n.begin(), n.end());
  }
  return r;
}

std::vector<ConfigOutcome> evaluate(const Scenario& sc, const Catalog& cat, const EvaluateOptions& opts) {
  Evaluator ev(cat, opts);
  std::vector<std::string> io_notes;
  std::vector<ConfigOutcome> out;
  out.reserve(sc.configs.size());
  // --trace: the first configuration that fits (one that does not fit never runs; tracing it as if it did showed
  // steps that cannot happen), else the first, with a note. The simulation is deterministic for a configuration and
  // its seed, so a configuration simulated again with the trace on shows the steps its result came from.
  const bool want_trace = !opts.trace_path.empty();
  bool traced = false;
  for (std::size_t i = 0; i < sc.configs.size(); ++i) {
    std::string trace;
    ConfigOutcome c;
    c.job = sc.configs[i];
    c.result = ev.run(sc.configs[i], want_trace && !traced ? &trace : nullptr);
    if (want_trace && !traced && c.result.fits) {
      traced = true;
      write_trace(opts, trace, io_notes);
      if (i > 0) io_notes.push_back("--trace shows " + c.job.id + ", the first configuration that fits in memory");
    }
    out.push_back(std::move(c));
    if (opts.progress) opts.progress(i + 1, sc.configs.size());
  }
  if (want_trace && !traced && !sc.configs.empty()) {
    std::string trace;
    ev.run(sc.configs[0], &trace);
    write_trace(opts, trace, io_notes);
    io_notes.push_back("--trace shows " + out[0].job.id +
                       ", which does not fit in memory (no configuration does): its steps cannot run as traced");
  }
  if (sc.concrete.size() == out.size()) {
    auto sweep = sweep_values(sc.concrete);
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i].sweep = std::move(sweep[i]);
      out[i].sweep_label = sweep_label(out[i].sweep, sc.sweep_dims);
    }
  }
  if (opts.warnings) {
    const auto n = ev.notes();
    opts.warnings->insert(opts.warnings->end(), n.begin(), n.end());
    opts.warnings->insert(opts.warnings->end(), io_notes.begin(), io_notes.end());
  }
  return out;
}

}  // namespace gp::app
