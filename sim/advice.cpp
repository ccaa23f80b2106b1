#include "sim/advice.hpp"

#include "sim/job_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gp::sim {

namespace {

// A part of the step (or of the job) is worth a suggestion above these shares.
constexpr double kStepShare = 0.10;
constexpr double kJobShare = 0.05;

std::string fmt(const char* f, double a, double b = 0, double c = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a, b, c);
  return buf;
}

}  // namespace

// FSDP / ZeRO-3 under 16-bit autocast without MixedPrecision: the units could be gathered in 16 bits.
bool fsdp_mixed_precision_applies(const JobConfig& j) {
  return shards_weights(j.parallel.strategy) && j.parallel.dp > 1 && !j.step.params_16bit &&
         is_autocast(j.step.precision);
}

namespace {

// The option as a PyTorch user writes it, and as the scenario names it.
std::string mixed_precision_option(const JobConfig& j) {
  const std::string dt = to_string(j.step.precision);
  return "use FSDP's MixedPrecision(param_dtype=" + dt + ", reduce_dtype=" + dt + ") (parallelism.fsdp_mixed_precision)";
}

// Whether an earlier line of `out` already names `text` (an option advised once, not by every section).
bool names(const std::vector<std::string>& out, const char* text) {
  return std::any_of(out.begin(), out.end(), [&](const std::string& s) { return s.find(text) != std::string::npos; });
}

// What would shrink a rank's memory that the job does not do yet, in the order of least cost to the step.
// Empty when the step has nothing left to shrink (micro-batch 1, checkpointing, parameters sharded).
// When the resident state alone (weights, gradients, optimizer states) exceeds the GPU, only sharding helps.
std::vector<std::string> memory_remedies(const JobConfig& j, const MemoryPrediction& m, bool state_alone_too_big) {
  std::vector<std::string> r;
  // DDP's buckets are a second copy of the gradients; as views the gradients are the buckets, and the step does one
  // pass over them instead of two (models/step_ops.cpp, add_ddp_reducer_ops). That helps the memory where the
  // gradients are part of the peak: accumulating, or a peak at the end of backward.
  if (m.grad_buckets.value() > 0 && !j.parallel.gradient_as_bucket_view &&
      (j.step.grad_accum > 1 || m.peak_at == "end of backward"))
    r.push_back(fmt("set DDP's gradient_as_bucket_view=True (nccl.gradient_as_bucket_view): the gradients become "
                    "its all-reduce buckets instead of a second %.1f GiB copy (and are not copied back after it)",
                    m.grads.gib()));
  // FSDP's MixedPrecision: 16-bit gathered units and no autocast copies, at no cost to the step.
  if (m.fsdp_mixed_precision_saving.value() > 0)
    r.push_back(mixed_precision_option(j) + fmt(": 16-bit gathered units and residual stream, no autocast copies, "
                                                "%.1f GiB less",
                                                m.fsdp_mixed_precision_saving.gib()));
  // Sequence parallelism splits the LayerNorm activations each tp rank holds whole, at no extra communication.
  if (!state_alone_too_big && m.sequence_parallel_saving.value() > 0)
    r.push_back(fmt("enable sequence parallelism (parallelism.sequence_parallel, Megatron's --sequence-parallel): "
                    "the LayerNorm activations each of the %.0f tensor-parallel ranks holds whole are split, %.1f "
                    "GiB less",
                    static_cast<double>(j.parallel.tp), m.sequence_parallel_saving.gib()));
  if (!state_alone_too_big && j.step.micro_batch > 1)
    r.push_back("lower micro_batch (raise grad_accum to keep the global batch)");
  if (!state_alone_too_big && !j.step.activation_checkpointing) r.push_back("enable activation checkpointing");
  // DDP and ZeRO-1/2 keep every parameter on every rank; FSDP and ZeRO-3 shard them too.
  if (!shards_weights(j.parallel.strategy))
    r.push_back("shard the parameters with FSDP or ZeRO-3");
  return r;
}

std::string join_or(const std::vector<std::string>& ways) {
  std::string s;
  for (std::size_t i = 0; i < ways.size(); ++i) s += (i == 0 ? "" : i + 1 == ways.size() ? "; or " : "; ") + ways[i];
  return s;
}

// Beyond the step itself: more ranks to shard over, model parallelism, a larger GPU.
constexpr const char* kBeyondTheStep =
    "nothing in the step is left to shrink: more GPUs to shard over, tensor or pipeline parallelism (tp, pp), or "
    "a GPU with more memory";

void memory_advice(const AdviceInputs& a, std::vector<std::string>& out) {
  const JobConfig& j = *a.job;
  const MemoryPrediction& m = *a.memory;
  // Measured steps whose need came within 4% of the capacity went either way (docs/calibration.md, "The memory
  // limit"): the verdict there is a coin the allocator tosses.
  constexpr double kUncertain = 0.04;
  const double ratio = m.capacity.value() > 0 ? m.needed / m.capacity : 0.0;
  const Bytes state = m.weights + m.grads + m.optimizer_states + m.autocast_copies + m.grad_buckets;
  const bool state_too_big = m.capacity.value() > 0 && state > m.capacity;
  const std::vector<std::string> ways = memory_remedies(j, m, state_too_big);
  if (m.fits) {
    if (ratio < 1 - kUncertain) return;
    std::string s = fmt("close to the memory limit: %.1f of %.1f GiB usable per GPU (peak %.1f GiB plus the "
                        "allocator's headroom); measured steps this close to the limit went either way",
                        m.needed.gib(), m.capacity.gib(), m.peak_device.gib());
    // The cheapest way to leave room is enough here: the step already fits.
    s += "; leave room: " + (ways.empty() ? std::string(kBeyondTheStep) : ways.front());
    out.push_back(s);
    return;
  }
  std::string s = fmt("does not fit: %.1f GiB needed per GPU (peak %.1f GiB plus the allocator's headroom), %.1f "
                      "GiB usable",
                      m.needed.gib(), m.peak_device.gib(), m.capacity.gib());
  if (ratio < 1 + kUncertain) s += " (within 4% of the limit: it may run; measured steps this close went either way)";
  if (state_too_big)
    s += fmt("; the weights, gradients and optimizer states alone take %.1f GiB, so no micro-batch or "
             "checkpointing makes it fit",
             state.gib());
  s += ": " + (ways.empty() ? std::string(kBeyondTheStep) : join_or(ways));
  out.push_back(s);
}

void loader_advice(const AdviceInputs& a, std::vector<std::string>& out) {
  const JobConfig& j = *a.job;
  const StepSimResult& r = *a.step;
  if (j.loader.synthetic || r.dataloader_stall.value() < kStepShare * r.step_time.value()) return;
  const int need = workers_needed(*a.input, r);
  const int g = std::max(1, a.input->cluster.ranks_per_node);
  const double cores = a.input->cluster.cpu_cores;
  const double demand = g * (need + 1.0 + (j.loader.pin_memory ? 0.5 : 0.0));  // workers, main, pin thread
  const double share = r.dataloader_stall / r.step_time;
  if (j.loader.num_workers == 0) {
    out.push_back(fmt("num_workers=0 starves the GPU (%.0f%% of the step waits for input): set num_workers>=%.0f",
                      100 * share, need));
  } else if (j.loader.num_workers < need) {
    out.push_back(fmt("data loader too slow (%.0f%% of the step waits for input): raise num_workers from %.0f to >=%.0f",
                      100 * share, j.loader.num_workers, need));
  }
  if (cores > 0 && demand > cores) {
    out.push_back(fmt("CPU-bound input: %.0f GPUs need ~%.0f cores of data loading, the container has %g: decode on "
                      "the GPU (e.g. DALI), pre-process offline, or use an instance with more vCPUs",
                      g, demand, cores));
  }
  if (!j.loader.pin_memory) out.push_back("set pin_memory=true: pageable copies block the training process");
  if (!j.loader.numa_binding) out.push_back("bind DataLoader workers to the GPU's NUMA node (numa_binding)");
}

void compute_advice(const AdviceInputs& a, std::vector<std::string>& out) {
  const JobConfig& j = *a.job;
  const StepPrediction& p = *a.compute;
  const RankPace pace = rank_pace(*a.input);
  const int pp = std::max(1, j.parallel.pp);
  if (!j.step.channels_last && p.gpu_nchw.value() > kStepShare * p.total.value()) {
    out.push_back(fmt("set channels_last (model and inputs .to(memory_format=torch.channels_last)): NCHW BatchNorm, "
                      "depthwise and layout-transform kernels take %.1f of the %.1f ms step",
                      p.gpu_nchw.ms(), p.total.ms()));
  }
  // FSDP under autocast casts every fp32 weight in every micro-batch (its parameters are views autocast does not
  // cache), and runs its residual stream and its gradient path in fp32; on MixedPrecision's 16-bit parameters the
  // casts do not run and the rest moves half the bytes. The figure is the compute model's on both.
  const Seconds saving = a.mixed_precision_gpu_saving;
  if (fsdp_mixed_precision_applies(j) && !pace.launch_bound() && !names(out, "parallelism.fsdp_mixed_precision") &&
      saving.value() > kStepShare * p.gpu_busy.value()) {
    out.push_back(mixed_precision_option(j) +
                  fmt(": on 16-bit parameters autocast's casts of the fp32 weights and activations do not run, and "
                      "the residual stream and FSDP's gradients are half the bytes: %.0f%% less GPU time (%.1f of "
                      "%.1f ms per step); it also halves the bytes FSDP gathers and reduce-scatters",
                      100.0 * saving.value() / p.gpu_busy.value(), saving.ms() / pp, p.gpu_busy.ms() / pp));
  }
  if (pace.launch_bound() && j.step.activation_checkpointing &&
      p.cpu_recompute.value() > kStepShare * p.total.value()) {
    out.push_back(fmt("activation checkpointing keeps the CPU busy: its saved-tensor hooks and recompute bookkeeping "
                      "take %.1f ms of the %.1f ms the host needs to issue a step, and the GPU waits: turn it off if "
                      "memory allows, or raise micro_batch",
                      p.cpu_recompute.ms() / pp, pace.cpu_issue.ms()));
  }
  if (pace.launch_bound()) {
    if (!j.step.cuda_graphs) {
      std::string s = fmt("enable CUDA graphs: launch-bound (CPU issues kernels for %.1f ms, GPU busy %.1f ms per step "
                          "on each GPU)",
                          pace.cpu_issue.ms(), pace.gpu_busy.ms());
      if (j.parallel.tp > 1) s += "; tensor parallelism divides each GPU's work but not its kernel count: lower tp";
      // Eager issue time follows the host's CPU: lent hosts of one kind ran the same step up to 2x apart.
      if (a.step_p90.value() > a.step_p10.value())
        s += j.cluster.host_cpu_scale > 0
                 ? fmt("; eager, the host's CPU sets the step: %.0f to %.0f ms (80%% range on your host, CPU factor "
                       "%.2f as measured)",
                       a.step_p10.ms(), a.step_p90.ms(), j.cluster.host_cpu_scale)
                 : fmt("; eager, the host's CPU sets the step: %.0f to %.0f ms (80%% range over the hosts measured), "
                       "so time a few steps on yours and set cluster.host_cpu_scale",
                       a.step_p10.ms(), a.step_p90.ms());
      out.push_back(s);
    } else {
      out.push_back("launch-bound even with CUDA graphs: raise micro_batch");
    }
  }
}

void comm_advice(const AdviceInputs& a, std::vector<std::string>& out) {
  const JobConfig& j = *a.job;
  const StepSimResult& r = *a.step;
  if (r.comm_exposed.value() < kStepShare * r.step_time.value()) return;
  const StepSimInput& in = *a.input;
  if (r.straggler.value() > 0.5 * r.comm_exposed.value()) {
    out.push_back(fmt("stragglers: the slowest of %.0f ranks costs %.1f ms per step; find noisy nodes or raise work per step",
                      static_cast<double>(in.cluster.ranks), r.straggler.ms()));
    return;
  }
  // Advice for the largest source of the exposed time, not the first kind of collective the job has.
  const ExposedParts parts = exposed_parts(in, r);
  const double pct = 100.0 / r.step_time.value();
  const double bubble = parts.bubble.value() + parts.pp_p2p.value(), tp = parts.tensor_parallel.value(),
               dp = parts.data_parallel.value();
  if (bubble >= tp && bubble >= dp) {
    // At micro_batch 1 there is no smaller micro-batch to split the global batch into: more micro-batches then
    // take a larger global batch or fewer data-parallel replicas; fewer stages shrink the bubble instead.
    out.push_back(j.step.micro_batch > 1
                      ? fmt("pipeline bubble (%.0f%% of the step): more micro-batches per step, well above the %.0f "
                            "stages (lower micro_batch and raise grad_accum at the same global batch)",
                            pct * bubble, in.comm.pp_stages)
                      : fmt("pipeline bubble (%.0f%% of the step): more micro-batches per step, well above the %.0f "
                            "stages; micro_batch is 1 already, so raise the global batch, lower the data-parallel size "
                            "(fewer GPUs, or a larger tp), or use fewer stages",
                            pct * bubble, in.comm.pp_stages));
    return;
  }
  if (tp >= dp) {
    out.push_back(fmt("tensor-parallel all-reduces exposed (%.0f%% of the step): lower tp (tp = 1 where the model "
                      "fits), and keep tp within a node's NVLink",
                      pct * tp));
    return;
  }
  if (in.comm.layer_units > 0) {
    // Without MixedPrecision the units travel as fp32: bf16 halves every gather and reduce-scatter.
    out.push_back(fmt("FSDP gathers exposed (%.0f%% of the step): ", pct * dp) +
                  (fsdp_mixed_precision_applies(j) && !names(out, "parallelism.fsdp_mixed_precision")
                       ? mixed_precision_option(j) + ", which halves the bytes gathered and reduce-scattered; "
                       : std::string()) +
                  "raise micro_batch or use hybrid sharding within nodes");
    return;
  }
  if (in.comm.grad_buckets.empty()) return;
  // Accumulating without no_sync(): every micro-batch all-reduces the whole gradient and waits for it, grad_accum
  // times the traffic the step needs. Wrapping the micro-batches before the last in no_sync() costs nothing.
  if (in.comm.every_micro_batch && ddp_rank(j.parallel).sync_every_micro_batch) {  // not ZeRO-2's, by design
    double once = 0;
    for (const Seconds b : in.comm.grad_buckets) once += b.value();
    const double m = in.grad_accum;
    out.push_back(fmt("gradients all-reduced after each of the %.0f micro-batches (%.0f%% of the step exposed; ", m,
                      pct * dp) +
                  fmt("%.1f ms of all-reduce per step where one would take %.1f ms): ", 1e3 * once * m, 1e3 * once) +
                  fmt("run the first %.0f inside model.no_sync() (parallelism.no_sync), so that only the last "
                      "micro-batch all-reduces",
                      m - 1));
    return;
  }
  // ZeRO-1/2 gather the updated parameters after the optimizer, where nothing overlaps them: that part of the
  // exposed time is no bucket's tail, and smaller buckets do not shorten it (ZeRO-2 with 5 MB buckets was slower
  // than with 25 MB on 2 x 4 A100 over 100 Gb/s, where the advice had said "lower bucket_mb").
  const double gather = std::min(dp, in.comm.after_optimizer.value());
  const double grads = dp - gather;
  const std::string collective = j.parallel.strategy == DataParallel::zero2 ? "reduce-scatter" : "all-reduce";
  if (gather > 0 && gather >= grads) {
    out.push_back(fmt("ZeRO parameter all-gather exposed (%.0f%% of the step, %.1f ms after the optimizer, which "
                      "nothing overlaps): a faster network or fewer GPUs, or more micro-batches per optimizer step "
                      "(grad_accum: it is paid once per step)",
                      pct * gather, 1e3 * gather));
    return;
  }
  const double share = pct * grads;
  if (!j.comm.overlap) {
    out.push_back(collective + fmt(" exposed (%.0f%% of the step): enable overlap with backward", share));
    return;
  }
  // Overlapped buckets leave exposed what does not fit under backward (the collectives outlast it) plus the tail:
  // buckets that fill late, the last one only when backward ends. When the exposed time is mostly tail, smaller
  // buckets start sooner; when it is mostly excess, only less traffic per unit of work helps.
  double total = 0;
  for (const Seconds b : in.comm.grad_buckets) total += b.value();
  const double backward = in.compute.gpu_backward.value();  // the last micro-batch's, which the buckets overlap
  const double last = in.comm.grad_buckets.back().value();
  const double excess = std::max(0.0, total - backward);
  if (grads < 2.0 * excess) {
    out.push_back(collective + fmt(" exposed (%.0f%% of the step): the gradient ", share) + collective +
                  fmt(" takes %.1f ms, longer than the %.1f ms of backward it overlaps: a faster network or fewer "
                      "GPUs, or more work per step (micro_batch, grad_accum: fewer steps for the same data)",
                      1e3 * total, 1e3 * backward));
  } else {
    out.push_back(collective + fmt(" exposed (%.0f%% of the step): %.0f gradient bucket(s), the last one's ", share,
                                   static_cast<double>(in.comm.grad_buckets.size())) +
                  collective + fmt(" (%.1f ms) starting only when backward ends: lower bucket_mb so that less is "
                                   "left for the end",
                                   1e3 * last));
  }
  if (gather > 0) {
    out.back() += fmt("; the ZeRO parameter all-gather after the optimizer adds %.1f ms, exposed", 1e3 * gather);
    if (j.parallel.strategy == DataParallel::zero1)
      out.back() += " (zero2 reduce-scatters the gradients instead of all-reducing them: half their traffic)";
  }
  if (j.comm.algorithm == CollectiveAlgo::ring || j.comm.algorithm == CollectiveAlgo::tree) {
    out.back() += "; or leave comm.algorithm to auto (it picks the fastest, hierarchical across nodes)";
  }
}

void job_advice(const AdviceInputs& a, std::vector<std::string>& out) {
  const JobConfig& j = *a.job;
  const TimeBreakdown& b = a.times->breakdown;
  const double total = b.total().value();
  if (total <= 0) return;
  if (b.checkpoint.value() > kJobShare * total) {
    // Local NVMe is the fast target the advice would name; a job already writing there is told only what is left.
    const bool local = j.checkpoint.storage.value_or(j.cluster.storage).kind == "local-nvme";
    std::vector<std::string> ways;
    if (!j.checkpoint.async) ways.push_back("write asynchronously");
    if (!local) ways.push_back("checkpoint to local NVMe and upload in the background");
    ways.push_back("checkpoint less often");
    out.push_back(fmt("checkpoints stall %.0f%% of the job: ", 100 * b.checkpoint.value() / total) + join_or(ways));
  }
  if (a.times->diverges) {
    out.push_back("failures arrive faster than the work between checkpoints completes: checkpoint far more often");
  } else if (b.failures.value() > kJobShare * total) {
    out.push_back(fmt("failures cost %.0f%% of the job (%.3g expected interruptions): checkpoint more often "
                      "(Young/Daly: interval ~ sqrt(2 x MTBF x checkpoint time))",
                      100 * b.failures.value() / total, a.times->expected_failures));
  }
  if (b.startup.value() > kJobShare * total) {
    // Name the part that dominates: the image (pull and unpack, which pre-pulling or a slimmer image removes) or
    // the rest (import torch, the CUDA context, the DataLoader workers), a fixed cost per job that no image
    // changes (a planner's audit found "run more steps per job" given to a fixed one-epoch job, and "use a smaller
    // image" without saying how much of the start-up the image was).
    const double image = a.times->image_startup.value();
    const double rest = b.startup.value() - image;
    const double pct = 100 * b.startup.value() / total;
    if (!j.container.image.id.empty() && image >= rest)
      out.push_back(fmt("start-up is %.0f%% of the job, ", pct) +
                    fmt("%.0f s of it pulling and unpacking the image on every node: pre-pull the image (or cache "
                        "it on the nodes' disks), or use a slimmer one",
                        image));
    else
      out.push_back(std::string("start-up (import torch, the CUDA context") +
                    (a.input && a.input->loader.num_workers > 0 && !a.input->loader.synthetic
                         ? ", the DataLoader workers"
                         : "") +
                    fmt(") is %.0f%% of this short job", pct) +
                    fmt(" (%.1f s, paid once per job and again after each failure): if you run many such jobs, "
                        "run them one after another in one process or allocation",
                        b.startup.value()));
  }
}

}  // namespace

RankPace rank_pace(const StepSimInput& in) {
  const double m = std::max(1, in.grad_accum);
  const ComputeWork& c = in.compute;
  return {(c.cpu_forward + c.cpu_backward) * m + c.cpu_optimizer, (c.gpu_forward + c.gpu_backward) * m + c.gpu_optimizer};
}

ExposedParts exposed_parts(const StepSimInput& in, const StepSimResult& r) {
  const double m = std::max(1, in.grad_accum);
  const CommWork& k = in.comm;
  ExposedParts p;
  p.bubble = r.pipeline_bubble;  // as simulated
  if (k.pp_stages > 1) p.pp_p2p = k.pp_p2p * m;
  p.tensor_parallel = (k.tp_forward + k.tp_backward) * m;
  const double rest = r.comm_exposed.value() - r.straggler.value() - p.bubble.value() - p.pp_p2p.value() -
                      p.tensor_parallel.value();
  p.data_parallel = Seconds(std::max(0.0, rest));
  return p;
}

int workers_needed(const StepSimInput& in, const StepSimResult& r) {
  const double per_micro = r.compute.value() / std::max(1, in.grad_accum);
  const double work = (in.loader.batch_cpu + in.loader.collate_cpu).value();
  if (per_micro <= 0) return 1;
  return std::max(1, static_cast<int>(std::ceil(work / per_micro)));
}

// Host memory a node needs at least, against the container's --memory limit (or the instance's RAM): the
// DataLoader's queue of prefetch_factor x num_workers batches and the one in use, per GPU (without workers the
// training process holds the batch it loads and the one in use), and an asynchronous checkpoint's copy of the
// node's share of the state in host memory. A lower bound: worker processes' own memory is not counted.
static void host_memory_advice(const AdviceInputs& a, std::vector<std::string>& out) {
  const JobConfig& j = *a.job;
  double limit = 0;
  const char* what = "";
  if (j.container.memory && j.container.memory->value() > 0) {
    limit = j.container.memory->value();
    what = "container's memory_gib";
  } else if (j.cluster.instance && j.cluster.instance->ram.value() > 0) {
    limit = j.cluster.instance->ram.value();
    what = "instance's RAM";
  }
  if (limit <= 0) return;
  const LoaderWork& L = a.input->loader;
  const double batches = L.synthetic ? 0.0 : L.num_workers > 0 ? L.prefetch_factor * L.num_workers + 1.0 : 2.0;
  const double loader = j.cluster.gpus_per_node * batches * L.batch_bytes.value();
  double ckpt = 0;
  if (j.checkpoint.enabled && j.checkpoint.async) ckpt = checkpoint_bytes(j).value() / checkpoint_writer_nodes(j);
  const double need = loader + ckpt;
  if (need <= limit) return;
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  std::string s = fmt("host memory: at least %.1f GiB per node (", need / kGiB);
  if (loader > 0)
    s += fmt("%.0f DataLoader batches of %.2f GB per GPU", batches, L.batch_bytes.value() / 1e9);
  if (loader > 0 && ckpt > 0) s += " and ";
  if (ckpt > 0) s += fmt("the asynchronous checkpoint's %.1f GB host copy", ckpt / 1e9);
  s += std::string("), more than the ") + what + fmt(" of %.1f GiB: the job would be killed for memory", limit / kGiB);
  if (loader > 0) s += "; lower prefetch_factor or num_workers";
  if (j.container.memory) s += "; or raise memory_gib";
  out.push_back(s);
}

// A batch scaled blindly: with the GPU count at a fixed micro-batch, the global batch grows, and past the model's
// critical batch size a larger batch needs more samples to reach the same loss (McCandlish et al. 2018, "An
// Empirical Model of Large-Batch Training", arXiv:1812.06162), which a time to train for a fixed dataset or step
// count does not count. The yardstick is the batch the model was published with (catalog train_batch_tokens).
void batch_advice(const AdviceInputs& a, std::vector<std::string>& out) {
  const JobConfig& j = *a.job;
  const ModelSpec& m = j.step.model;
  if (m.family != ModelFamily::gpt || m.train_batch_tokens <= 0 || m.dims.seq <= 0) return;
  const double tokens = static_cast<double>(j.global_batch()) * m.dims.seq;
  constexpr double kBeyond = 2.0;  // within a factor of two of a published batch is ordinary practice
  if (tokens <= kBeyond * m.train_batch_tokens) return;
  out.push_back(fmt("global batch of %.3gM tokens is %.1fx the ", tokens / 1e6, tokens / m.train_batch_tokens) +
                fmt("%.3gM tokens per step this model was published with", m.train_batch_tokens / 1e6) +
                ": past the critical batch size a larger batch needs more samples for the same loss, which this time "
                "to train does not count; keep the global batch near it (a smaller micro_batch or grad_accum as GPUs "
                "are added) or retune the learning rate and its warm-up");
}

std::vector<std::string> advise(const AdviceInputs& a) {
  std::vector<std::string> out;
  memory_advice(a, out);
  loader_advice(a, out);
  compute_advice(a, out);
  comm_advice(a, out);
  job_advice(a, out);
  host_memory_advice(a, out);
  batch_advice(a, out);
  return out;
}

}  // namespace gp::sim
