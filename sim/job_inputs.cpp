#include "sim/job_inputs.hpp"

#include <algorithm>
#include <cmath>

#include "models/collective.hpp"
#include "models/memory_model.hpp"
#include "models/step_ops.hpp"

namespace gp::sim {

namespace {

// Gradient buckets above this count are merged (their times summed) to bound the per-step work.
constexpr std::size_t kMaxBuckets = 4096;

double model_params(const JobConfig& job) {
  const StepOps ops = build_step_ops(job.step);
  return ops.params > 0 ? ops.params : job.step.model.params;
}

int transformer_layers(const ModelSpec& m) { return m.dims.layers > 0 && m.dims.d_model > 0 ? m.dims.layers : 0; }

// The data-parallel group as a topology: dp ranks, as many per node as the node holds after tensor
// (and, in one node, pipeline) parallelism, with that share of the node's NIC bandwidth.
collective::Topology dp_topology(const JobConfig& job) {
  collective::Topology t = collective::topology_from(job.cluster);
  const auto& p = job.parallel;
  const int g = std::min(job.cluster.gpus_per_node, job.cluster.total_gpus());
  const int pp_in_node = job.cluster.nodes == 1 ? p.pp : 1;
  const int per_node = std::clamp(g / std::max(1, p.tp * pp_in_node), 1, std::max(1, p.dp));
  t.gpus_per_node = per_node;
  t.nodes = (p.dp + per_node - 1) / per_node;
  // All g GPUs of a node run their data-parallel collectives at once (one group per tensor/pipeline
  // shard), so this group gets its share of the node's NICs.
  if (g > per_node) t.node_network_bw = t.node_network_bw * (static_cast<double>(per_node) / g);
  return t;
}

Seconds collective_time(collective::Op op, Bytes size, const collective::Topology& t, const JobConfig& job) {
  if (size.value() <= 0 || t.ranks() <= 1) return Seconds(0);
  return collective::estimate(op, size, t, collective::from_config(job.comm.algorithm)).time;
}

// Splits `total` bytes into buckets of `bucket` bytes (the last one smaller), timing each.
std::vector<Seconds> bucket_times(collective::Op op, Bytes total, Bytes bucket, const collective::Topology& t,
                                  const JobConfig& job) {
  std::vector<Seconds> out;
  if (total.value() <= 0 || t.ranks() <= 1) return out;
  const double b = std::max(1.0, bucket.value());
  const auto full = static_cast<std::size_t>(std::floor(total.value() / b));
  const double rest = total.value() - static_cast<double>(full) * b;
  const Seconds t_full = collective_time(op, Bytes(b), t, job);
  const std::size_t n = full + (rest > 0 ? 1 : 0);
  const std::size_t group = (n + kMaxBuckets - 1) / kMaxBuckets;  // buckets merged per entry
  for (std::size_t i = 0; i < full; i += group) {
    out.push_back(t_full * static_cast<double>(std::min(group, full - i)));
  }
  if (rest > 0) out.push_back(collective_time(op, Bytes(rest), t, job));
  return out;
}

void add_comm(const JobConfig& job, double params, StepSimInput& in, std::vector<std::string>& notes) {
  const auto& p = job.parallel;
  CommWork& c = in.comm;
  c.overlap = job.comm.overlap;
  c.pp_stages = p.pp;
  const collective::Topology whole = collective::topology_from(job.cluster);
  if (auto err = collective::check(whole)) {
    notes.push_back("communication not modelled: " + *err);
    return;
  }
  const double shard_params = params / (p.tp * p.pp);
  const double act = activation_bytes(job.step.precision);
  const collective::Topology dp = dp_topology(job);
  constexpr double kFp32 = 4.0;  // gradients and master weights stay fp32 under autocast
  if (p.dp > 1) {
    // DDP / ZeRO-1 without no_sync(), and ZeRO-2 always (PyTorch FSDP's SHARD_GRAD_OP and DeepSpeed's stage 2 reduce-
    // scatter each micro-batch's gradients into the rank's shard, which is what the compute model accumulates on:
    // StepConfig::grad_shards), reduce every micro-batch.
    c.every_micro_batch = job.step.grad_accum > 1 &&
                          (ddp_rank(p).sync_every_micro_batch || p.strategy == DataParallel::zero2);
    switch (p.strategy) {
      case DataParallel::ddp:
        c.grad_buckets = bucket_times(collective::Op::all_reduce, Bytes(shard_params * kFp32), job.comm.bucket, dp, job);
        break;
      case DataParallel::zero1:
        c.grad_buckets = bucket_times(collective::Op::all_reduce, Bytes(shard_params * kFp32), job.comm.bucket, dp, job);
        c.after_optimizer = collective_time(collective::Op::all_gather, Bytes(shard_params * kFp32), dp, job);
        break;
      case DataParallel::zero2:
        c.grad_buckets = bucket_times(collective::Op::reduce_scatter, Bytes(shard_params * kFp32), job.comm.bucket, dp, job);
        c.after_optimizer = collective_time(collective::Op::all_gather, Bytes(shard_params * kFp32), dp, job);
        break;
      case DataParallel::zero3:
      case DataParallel::fsdp: {
        const int units = std::max(1, sharding_units(job.step.model) / p.pp);
        // Gathers and reduce-scatters move fp32 unless FSDP's MixedPrecision casts the units to 16 bits.
        const Bytes unit(shard_params * (job.step.params_16bit ? act : kFp32) / units);
        c.layer_units = units;
        c.unit_allgather = collective_time(collective::Op::all_gather, unit, dp, job);
        c.unit_reduce_scatter = collective_time(collective::Op::reduce_scatter, unit, dp, job);
        break;
      }
    }
  }
  const ModelSpec& m = job.step.model;
  const double tokens = static_cast<double>(job.step.micro_batch) * std::max(1, m.dims.seq);
  const Bytes boundary(tokens * m.dims.d_model * act);
  if (p.tp > 1) {
    if (transformer_layers(m) == 0) {
      notes.push_back("tensor-parallel all-reduces are modelled for transformers only");
    } else {
      collective::Topology t = whole;
      t.gpus_per_node = p.tp;
      t.nodes = 1;
      const double per_dir = 2.0 * transformer_layers(m) / p.pp;  // attention and MLP output, per layer
      const Seconds one = collective_time(collective::Op::all_reduce, boundary, t, job);
      c.tp_forward = one * per_dir;
      c.tp_backward = one * per_dir;
    }
  }
  if (p.pp > 1) {
    const Bytes bytes = transformer_layers(m) > 0 ? boundary : Bytes(m.activation_bytes_per_sample.value() * job.step.micro_batch);
    const bool across = job.cluster.nodes > 1;
    const ByteRate rate = collective::per_gpu_rate(whole, across ? collective::Link::inter_node : collective::Link::intra_node,
                                                   across ? job.cluster.gpus_per_node : 1);
    const Seconds hop = across ? whole.inter.hop_latency : whole.intra.hop_latency;
    if (rate.value() > 0) c.pp_p2p = (bytes / rate + hop) * 2.0;  // activations forward, gradients back
  }
}

}  // namespace

ComputeWork compute_work(const StepPrediction& pred, int m, double split, int pp, double opt_split, double step_cv) {
  const double busy = pred.gpu_busy.value();
  const double cpu = pred.cpu_issue.value();
  auto cpu_part = [&](Seconds gpu_phase) { return Seconds(busy > 0 ? cpu * gpu_phase.value() / busy : 0.0); };
  ComputeWork c;
  c.gpu_forward = pred.gpu_forward / (split * m);
  c.gpu_backward = pred.gpu_backward / (split * m);
  c.gpu_optimizer = pred.gpu_optimizer / opt_split;
  c.cpu_forward = cpu_part(pred.gpu_forward) / (pp * m);
  c.cpu_backward = cpu_part(pred.gpu_backward) / (pp * m);
  c.cpu_optimizer = cpu_part(pred.gpu_optimizer) / pp;
  c.step_cv = step_cv;
  return c;
}

StepSpread step_spread_for(const SimConstants& k, bool derived_profile, bool host_measured) {
  StepSpread s = k.step_spread;
  if (derived_profile) s.gpu_log_sd = std::hypot(s.gpu_log_sd, k.step_derived_gpu_log_sd);
  if (host_measured) s.cpu_log_sd = k.step_known_host_cpu_log_sd;
  return s;
}

double all_core_factor(double busy, double cores, double slowdown) {
  if (!(cores > 1) || !(slowdown > 0)) return 1.0;
  const double b = std::clamp(busy, 1.0, cores);
  return 1.0 + slowdown * (b - 1.0) / (cores - 1.0);
}

ByteRate host_copy_rate(const GpuProfile& p) {
  const double pg = p.h2d_pageable.value(), pin = p.h2d_pinned.value();
  if (pg <= 0 || pin <= 0 || pg >= pin) return ByteRate(0);
  return ByteRate(1.0 / (1.0 / pg - 1.0 / pin));
}

StepSimInput make_step_input(const JobConfig& job, const StepPrediction& pred, const GpuProfile& profile,
                             const SimConstants& k, std::vector<std::string>& notes) {
  StepSimInput in;
  const auto& p = job.parallel;
  const int m = std::max(1, job.step.grad_accum);
  in.grad_accum = m;
  // The compute model times the whole model on one GPU: tensor and pipeline parallelism split the
  // kernels' work (tp x pp) and the pipeline splits the kernels issued (pp); sharded optimizers update
  // 1/dp of the parameters.
  const double split = p.tp * p.pp;
  const bool sharded_opt = p.strategy != DataParallel::ddp;
  const double opt_split = split * (sharded_opt ? p.dp : 1);
  in.compute = compute_work(pred, m, split, p.pp, opt_split, k.compute_step_cv);

  ClusterShape& cl = in.cluster;
  cl.ranks = job.cluster.total_gpus();
  cl.ranks_per_node = std::min(job.cluster.gpus_per_node, job.cluster.total_gpus());
  cl.cpu_cores = job.container.cpus.value_or(job.cluster.cpu_cores_per_node);
  cl.gpus_per_pcie_switch = std::max(1, job.cluster.gpus_per_pcie_switch);

  const DataLoaderConfig& d = job.loader;
  LoaderWork& L = in.loader;
  L.synthetic = d.synthetic;
  if (!d.synthetic) {
    // Given in the scenario, else the instance's; a cluster given by GPU type defaults to a two-socket host
    // (24 of the catalog's 34 instances), documented in docs/scenario.md.
    const int numa = job.cluster.numa_nodes > 0 ? job.cluster.numa_nodes
                     : job.cluster.instance    ? std::max(1, job.cluster.instance->numa_nodes)
                                               : 2;
    const double remote = d.numa_binding ? 0.0 : k.numa_remote_penalty * (numa - 1) / numa;
    const double mb = job.step.micro_batch;
    L.num_workers = d.num_workers;
    L.pin_memory = d.pin_memory;
    L.prefetch_factor = std::max(1, d.prefetch_factor);
    // Busy threads on the node: every rank's training process and its workers.
    const double busy = cl.ranks_per_node * (d.num_workers + 1.0);
    const double load = cl.cpu_cores > 0 ? all_core_factor(busy, cl.cpu_cores, k.cpu_all_core_slowdown) : 1.0;
    L.batch_cpu = d.sample_cpu * (mb * (1.0 + remote) * load);
    L.batch_cpu_cv = d.sample_cpu_cv / std::sqrt(mb);
    L.batch_bytes = d.sample_bytes * mb;
    L.h2d_pinned = profile.h2d_pinned;
    const ByteRate copy = host_copy_rate(profile);
    if (copy.value() > 0) {
      L.collate_cpu = L.batch_bytes / copy;
      L.pin_cpu = L.batch_bytes / copy;
      L.pageable_staging_cpu = L.batch_bytes / copy;
    } else {
      notes.push_back("the GPU profile lacks pageable/pinned copy rates: host copies not modelled");
    }
    if (L.h2d_pinned.value() <= 0) {
      notes.push_back("the GPU profile lacks the pinned host-to-device rate: input copies not modelled");
    }
  }
  add_comm(job, model_params(job), in, notes);
  return in;
}

Bytes checkpoint_bytes(const JobConfig& job) {
  const double params = model_params(job);
  return Bytes(params * (4.0 + optimizer_state_bytes_per_param(job.step.optimizer)));
}

int checkpoint_writer_nodes(const JobConfig& job) {
  return job.parallel.strategy != DataParallel::ddp ? std::max(1, job.cluster.nodes) : 1;
}

JobEvents make_job_events(const JobConfig& job, const GpuProfile& profile, const SimConstants& k, Seconds step_time) {
  JobEvents ev;
  // Start-up: every node pulls and unpacks the image at once (registry and decompression rates per
  // node), then creates its CUDA contexts and starts the DataLoader workers.
  const ImageSpec& im = job.container.image;
  const ByteRate pull = im.pull_bw.value() > 0 ? im.pull_bw : k.image_pull_rate;
  const ByteRate unpack = im.unpack_bw.value() > 0 ? im.unpack_bw : k.image_unpack_rate;
  if (pull.value() > 0) ev.image_startup += im.compressed / pull;
  if (unpack.value() > 0) ev.image_startup += im.compressed / unpack;
  ev.startup = ev.image_startup + k.framework_import + profile.context_create;
  const bool workers = !job.loader.synthetic && job.loader.num_workers > 0;
  if (workers) ev.startup += job.loader.worker_startup;

  const std::int64_t steps = job.length.total_steps(job.global_batch());
  if (job.length.samples && *job.length.samples > 0) {
    ev.epochs = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(job.length.epochs)));
  }
  if (workers && !job.loader.persistent_workers) ev.per_epoch_restart = job.loader.worker_startup;
  (void)steps;

  // Checkpoints: the state is copied to host memory (each GPU its share, in parallel), then written
  // by each node to its storage (a shared system divides its aggregate bandwidth among the nodes).
  if (job.checkpoint.enabled) {
    ev.checkpoint_every_steps = job.checkpoint.every_steps;
    ev.checkpoint_every = job.checkpoint.every;
    const Bytes state = checkpoint_bytes(job);
    const bool sharded = job.parallel.strategy != DataParallel::ddp;
    const double writers_gpus = sharded ? job.cluster.total_gpus() : job.parallel.tp * job.parallel.pp;
    const Bytes per_gpu = state / writers_gpus;
    const int writer_nodes = checkpoint_writer_nodes(job);
    const Bytes per_node = state / writer_nodes;
    const StorageSpec st = job.checkpoint.storage.value_or(job.cluster.storage);
    double bw = st.write_bw.value();
    const double aggregate = st.aggregate_write_bw.value() > 0 ? st.aggregate_write_bw.value() : st.aggregate_bw.value();
    if (st.shared && aggregate > 0) bw = std::min(bw, aggregate / writer_nodes);
    if (k.checkpoint_write_efficiency > 0) bw *= k.checkpoint_write_efficiency;
    double d2h_rate = profile.d2h_pinned.value();
    if (k.checkpoint_d2h_rate.value() > 0 && (d2h_rate <= 0 || k.checkpoint_d2h_rate.value() < d2h_rate)) {
      d2h_rate = k.checkpoint_d2h_rate.value();
    }
    const Seconds d2h = d2h_rate > 0 ? per_gpu / ByteRate(d2h_rate) : Seconds(0);
    const Seconds write = bw > 0 ? per_node / ByteRate(bw) : Seconds(0);
    const Seconds write_all = write + st.latency.p50;
    if (!job.checkpoint.async) {
      ev.checkpoint_stall = d2h + write_all;
    } else {
      // The GPUs stall for the copy; the write runs while training goes on. A write longer than the training
      // between two checkpoints holds up the next one until it is done (the storage cannot take two at once,
      // and the host copy is still in use), so over a job the checkpoints cost at least the storage's time.
      const double interval = job.checkpoint.every ? job.checkpoint.every->value()
                              : job.checkpoint.every_steps
                                  ? static_cast<double>(*job.checkpoint.every_steps) * step_time.value()
                                  : 0.0;
      ev.checkpoint_stall = d2h + Seconds(std::max(0.0, write_all.value() - interval));
    }
  }

  const ReliabilityConfig& rel = job.reliability;
  if (rel.gpu_mtbf_hours > 0) ev.failures_per_hour += job.cluster.total_gpus() / rel.gpu_mtbf_hours;
  if (rel.node_mtbf_hours > 0) ev.failures_per_hour += job.cluster.nodes / rel.node_mtbf_hours;
  if (job.pricing.plan == PricingPlan::spot) ev.failures_per_hour += rel.spot_interruptions_per_day / 24.0;
  ev.restart = rel.restart + ev.startup;
  return ev;
}

}  // namespace gp::sim
