#include <catch2/catch.hpp>

#include <cmath>

#include "models/collective.hpp"
#include "sim/job_inputs.hpp"

using gp::Bytes;
using gp::ByteRate;
using gp::Seconds;
using namespace gp::sim;

namespace {

gp::JobConfig generic_job() {
  gp::JobConfig j;
  j.step.model.id = "g";
  j.step.model.family = gp::ModelFamily::generic;
  j.step.model.params = 1e9;
  j.step.model.fwd_flops_per_sample = 2e12;
  j.step.model.activation_bytes_per_sample = Bytes::mb(10);
  j.step.micro_batch = 4;
  j.step.optimizer = gp::OptimizerKind::adamw_fused;
  j.cluster.gpus_per_node = 8;
  j.cluster.nodes = 2;
  j.cluster.cpu_cores_per_node = 64;
  j.cluster.intra_node.id = "nvlink";
  j.cluster.intra_node.bw_per_gpu = ByteRate::gbps(450);
  j.cluster.intra_node.efficiency = 0.8;
  j.cluster.intra_node.hop_latency = Seconds::us(3.4);
  gp::InterconnectSpec net;
  net.id = "eth";
  net.bw_per_gpu = ByteRate::gbit(100);
  net.efficiency = 0.9;
  net.hop_latency = Seconds::us(10);
  j.cluster.network = net;
  j.cluster.node_network_bw = ByteRate::gbit(100);
  j.parallel.dp = 16;
  j.comm.bucket = Bytes::mib(25);
  j.length.steps = 1000;
  return j;
}

gp::GpuProfile profile() {
  gp::GpuProfile p;
  p.h2d_pinned = ByteRate::gbps(50);
  p.d2h_pinned = ByteRate::gbps(50);
  p.h2d_pageable = ByteRate::gbps(5);
  p.d2h_pageable = ByteRate::gbps(5);
  p.context_create = Seconds(0.15);
  return p;
}

gp::StepPrediction prediction() {
  gp::StepPrediction s;
  s.gpu_forward = Seconds::ms(40);
  s.gpu_backward = Seconds::ms(80);
  s.gpu_optimizer = Seconds::ms(8);
  s.gpu_busy = Seconds::ms(128);
  s.cpu_issue = Seconds::ms(64);
  s.total = Seconds::ms(128);
  return s;
}

SimConstants constants() {
  SimConstants k;
  k.compute_step_cv = 0.01;
  k.numa_remote_penalty = 0.2;
  k.image_pull_rate = ByteRate(193e6);
  k.image_unpack_rate = ByteRate(97e6);
  k.framework_import = Seconds(5);
  return k;
}

// The cluster of generic_job() as a collective topology, written out by hand (not through topology_from).
gp::collective::Topology hand_topology(int gpus_per_node, int nodes) {
  gp::collective::Topology t;
  t.gpus_per_node = gpus_per_node;
  t.nodes = nodes;
  t.intra.id = "nvlink";
  t.intra.bw_per_gpu = ByteRate::gbps(450);
  t.intra.efficiency = 0.8;
  t.intra.hop_latency = Seconds::us(3.4);
  t.inter.id = "eth";
  t.inter.bw_per_gpu = ByteRate::gbit(100);
  t.inter.efficiency = 0.9;
  t.inter.hop_latency = Seconds::us(10);
  t.node_network_bw = ByteRate::gbit(100);
  return t;
}

}  // namespace

TEST_CASE("sim::job_inputs: DDP gradients in 25 MiB buckets: ceil(4e9 / 26,214,400) = 153") {
  std::vector<std::string> notes;
  const StepSimInput in = make_step_input(generic_job(), prediction(), profile(), constants(), notes);
  CHECK(in.comm.grad_buckets.size() == 153);
  CHECK(in.comm.layer_units == 0);
  CHECK(in.cluster.ranks == 16);
  CHECK(in.cluster.cpu_cores == 64);
  gp::JobConfig limited = generic_job();
  limited.container.cpus = 12.5;  // docker run --cpus=12.5
  CHECK(make_step_input(limited, prediction(), profile(), constants(), notes).cluster.cpu_cores == 12.5);
  // Each full bucket is one 25 MiB all-reduce over the 16 ranks (8 a node, 2 nodes), the remainder
  // (4e9 - 152 x 26,214,400 = 15,411,200 B) one smaller one.
  const gp::collective::Topology t = hand_topology(8, 2);
  const double full = gp::collective::estimate(gp::collective::Op::all_reduce, Bytes::mib(25), t).time.value();
  const double rest = gp::collective::estimate(gp::collective::Op::all_reduce, Bytes(15411200), t).time.value();
  for (std::size_t i = 0; i + 1 < in.comm.grad_buckets.size(); ++i)
    CHECK(in.comm.grad_buckets[i].value() == Approx(full).epsilon(1e-12));
  CHECK(in.comm.grad_buckets.back().value() == Approx(rest).epsilon(1e-12));
  CHECK(rest < full);
}

TEST_CASE("sim::job_inputs: compute split by tp x pp and micro-batches, CPU issue in proportion") {
  gp::JobConfig j = generic_job();
  j.parallel.tp = 2;
  j.parallel.pp = 2;
  j.parallel.dp = 4;
  j.step.grad_accum = 4;
  std::vector<std::string> notes;
  const StepSimInput in = make_step_input(j, prediction(), profile(), constants(), notes);
  CHECK(in.compute.gpu_forward.ms() == Approx(40.0 / (4 * 4)));
  CHECK(in.compute.gpu_backward.ms() == Approx(80.0 / (4 * 4)));
  CHECK(in.compute.gpu_optimizer.ms() == Approx(8.0 / 4));
  CHECK(in.compute.cpu_forward.ms() == Approx(64.0 * 40 / 128 / (2 * 4)));  // issue split by pp only
  CHECK(in.comm.pp_stages == 2);
  // Stage boundary of a generic model: 10 MB a sample x 4 = 40 MB, across nodes at the node's 100 Gb/s x 0.9
  // shared by its 8 GPUs (1.40625 GB/s), + the 10 us hop; there and back: 2 x (28.444 + 0.010) = 56.909 ms.
  CHECK(in.comm.pp_p2p.ms() == Approx(56.909).epsilon(1e-4));
  CHECK_FALSE(notes.empty());  // tensor parallelism of a generic model is not modelled, and it says so
}

TEST_CASE("sim::job_inputs: unbound workers pay the NUMA penalty on half their work (2 NUMA nodes)") {
  gp::JobConfig j = generic_job();
  j.loader.synthetic = false;
  j.loader.num_workers = 4;
  j.loader.sample_cpu = Seconds::ms(3);
  j.loader.sample_bytes = Bytes::mb(1);
  std::vector<std::string> notes;
  CHECK(make_step_input(j, prediction(), profile(), constants(), notes).loader.batch_cpu.ms() == Approx(12));
  j.loader.numa_binding = false;
  CHECK(make_step_input(j, prediction(), profile(), constants(), notes).loader.batch_cpu.ms() == Approx(12 * 1.1));
  // The scenario's numa_nodes sets the remote share (n-1)/n: one node none, four nodes 3/4 of the work.
  j.cluster.numa_nodes = 1;
  CHECK(make_step_input(j, prediction(), profile(), constants(), notes).loader.batch_cpu.ms() == Approx(12));
  j.cluster.numa_nodes = 4;
  CHECK(make_step_input(j, prediction(), profile(), constants(), notes).loader.batch_cpu.ms() ==
        Approx(12 * (1 + 0.2 * 3 / 4)));
  j.cluster.numa_nodes = 0;
  // Host copy rate from the profile: 1 / (1/5 - 1/50) GB/s = 5.556 GB/s; a 4 MB batch pins in 0.72 ms.
  CHECK(make_step_input(j, prediction(), profile(), constants(), notes).loader.pin_cpu.ms() == Approx(4.0 / 5.5556).epsilon(1e-3));
}

TEST_CASE("sim::job_inputs: the loader's CPU cost grows with the busy cores (all-core slowdown)") {
  // 1 + s (busy - 1) / (cores - 1): alone = 1; all 16 of 16 busy at s = 0.2 = 1.2; 5 of 16 = 1 + 0.2 * 4/15.
  CHECK(all_core_factor(1, 16, 0.2) == Approx(1.0));
  CHECK(all_core_factor(16, 16, 0.2) == Approx(1.2));
  CHECK(all_core_factor(40, 16, 0.2) == Approx(1.2));  // more threads than cores: still every core busy
  CHECK(all_core_factor(5, 16, 0.2) == Approx(1.0 + 0.2 * 4 / 15));
  CHECK(all_core_factor(8, 1, 0.2) == Approx(1.0));   // one core: nothing to share
  CHECK(all_core_factor(8, 16, 0.0) == Approx(1.0));
  // In a job: 8 GPUs per node x (4 workers + 1 training process) = 40 busy threads on 64 cores.
  gp::JobConfig j = generic_job();
  j.loader.synthetic = false;
  j.loader.num_workers = 4;
  j.loader.sample_cpu = Seconds::ms(3);
  j.loader.sample_bytes = Bytes::mb(1);
  SimConstants k = constants();
  k.cpu_all_core_slowdown = 0.25;
  std::vector<std::string> notes;
  const StepSimInput in = make_step_input(j, prediction(), profile(), k, notes);
  CHECK(in.loader.batch_cpu.ms() == Approx(12 * (1 + 0.25 * 39.0 / 63.0)));
}

TEST_CASE("sim::job_inputs: checkpoint stall = device-to-host copy + write at the storage rate (+ latency)") {
  gp::JobConfig j = generic_job();
  j.checkpoint.enabled = true;
  j.checkpoint.every_steps = 100;
  gp::StorageSpec st;
  st.write_bw = ByteRate::gbps(2);
  st.latency.p50 = Seconds::ms(10);
  j.checkpoint.storage = st;
  // AdamW: 1e9 x (4 + 8) = 12 GB; DDP writes it from one GPU: 12/50 s copy + 12/2 s write + 10 ms.
  CHECK(checkpoint_bytes(j).gb() == Approx(12));
  CHECK(make_job_events(j, profile(), constants(), Seconds(1)).checkpoint_stall.value() == Approx(0.24 + 6 + 0.01));
  j.checkpoint.async = true;
  CHECK(make_job_events(j, profile(), constants(), Seconds(1)).checkpoint_stall.value() == Approx(0.24));
  // Async, but every 2 steps of 1 s: the 6.01 s write outlasts the 2 s of training between checkpoints, and the
  // next one waits 4.01 s for it: 0.24 + 4.01. Every 0.05 minutes (3 s): 0.24 + 3.01.
  j.checkpoint.every_steps = 2;
  CHECK(make_job_events(j, profile(), constants(), Seconds(1)).checkpoint_stall.value() == Approx(0.24 + 4.01));
  j.checkpoint.every_steps.reset();
  j.checkpoint.every = Seconds(3);
  CHECK(make_job_events(j, profile(), constants(), Seconds(1)).checkpoint_stall.value() == Approx(0.24 + 3.01));
  j.checkpoint.every.reset();
  j.checkpoint.every_steps = 100;
  j.checkpoint.async = false;
  j.parallel.strategy = gp::DataParallel::fsdp;  // every GPU its shard, every node its half
  CHECK(make_job_events(j, profile(), constants(), Seconds(1)).checkpoint_stall.value() ==
        Approx(12.0 / 16 / 50 + 6.0 / 2 + 0.01));
}

TEST_CASE("sim::job_inputs: failure rate and start-up from their parts") {
  gp::JobConfig j = generic_job();
  j.reliability.gpu_mtbf_hours = 1000;
  j.reliability.node_mtbf_hours = 500;
  j.reliability.restart = Seconds(600);
  j.container.image.compressed = Bytes::gb(2.9);
  j.loader.synthetic = false;
  j.loader.num_workers = 2;
  j.loader.worker_startup = Seconds(1);
  const JobEvents ev = make_job_events(j, profile(), constants(), Seconds(1));
  CHECK(ev.failures_per_hour == Approx(16.0 / 1000 + 2.0 / 500));
  CHECK(ev.startup.value() == Approx(2.9e9 / 193e6 + 2.9e9 / 97e6 + 5 + 0.15 + 1));
  // The image's part (pull at 193 MB/s and unpack at 97 MB/s of 2.9 GB) is kept apart for the advice, and the job
  // carries it through.
  CHECK(ev.image_startup.value() == Approx(2.9e9 / 193e6 + 2.9e9 / 97e6));
  CHECK(gp::sim::job_times(10, {}, ev).image_startup.value() == Approx(ev.image_startup.value()));
  CHECK(ev.restart.value() == Approx(600 + ev.startup.value()));
  j.pricing.plan = gp::PricingPlan::spot;
  j.reliability.spot_interruptions_per_day = 2;
  CHECK(make_job_events(j, profile(), constants(), Seconds(1)).failures_per_hour == Approx(0.02 + 2.0 / 24));
}

TEST_CASE("sim::job_inputs: FSDP gathers per transformer layer, tensor parallelism all-reduces inside layers") {
  gp::JobConfig j = generic_job();
  j.step.model.family = gp::ModelFamily::gpt;
  j.step.model.dims.layers = 12;
  j.step.model.dims.d_model = 768;
  j.step.model.dims.heads = 12;
  j.step.model.dims.seq = 1024;
  j.parallel.strategy = gp::DataParallel::fsdp;
  j.step.params_16bit = true;
  std::vector<std::string> notes;
  StepSimInput in = make_step_input(j, prediction(), profile(), constants(), notes);
  CHECK(in.comm.layer_units == 12);
  CHECK(in.comm.grad_buckets.empty());
  // The dims make it GPT-2 small with nanoGPT's padded vocabulary, 124,475,904 parameters (12 x 7,087,872 in the
  // blocks, 50,304 x 768 + 1,024 x 768 embeddings, 1,536 final norm; the head tied): one unit of bf16 weights
  // (FSDP's MixedPrecision) is 124,475,904 x 2 B / 12 = 20.7 MB, gathered and reduce-scattered over the 16 ranks.
  const Bytes unit(124475904.0 * 2 / 12);
  const gp::collective::Topology t16 = hand_topology(8, 2);
  CHECK(in.comm.unit_allgather.value() ==
        Approx(gp::collective::estimate(gp::collective::Op::all_gather, unit, t16).time.value()).epsilon(1e-12));
  CHECK(in.comm.unit_reduce_scatter.value() ==
        Approx(gp::collective::estimate(gp::collective::Op::reduce_scatter, unit, t16).time.value()).epsilon(1e-12));
  // Without MixedPrecision (PyTorch's default) the units stay fp32 under autocast: twice the bytes.
  j.step.params_16bit = false;
  in = make_step_input(j, prediction(), profile(), constants(), notes);
  CHECK(in.comm.unit_allgather.value() ==
        Approx(gp::collective::estimate(gp::collective::Op::all_gather, unit * 2.0, t16).time.value()).epsilon(1e-12));
  CHECK(in.comm.unit_reduce_scatter.value() ==
        Approx(gp::collective::estimate(gp::collective::Op::reduce_scatter, unit * 2.0, t16).time.value())
            .epsilon(1e-12));
  CHECK(in.compute.gpu_optimizer.ms() == Approx(8.0 / 16));  // sharded over dp = 16
  j.parallel.strategy = gp::DataParallel::ddp;
  j.parallel.tp = 2;
  j.parallel.dp = 8;
  in = make_step_input(j, prediction(), profile(), constants(), notes);
  // Two all-reduces a layer (attention and MLP outputs) of 4 x 1024 tokens x 768 x 2 B = 6,291,456 B over the
  // two GPUs of the pair, for 12 layers: 24 all-reduces each way.
  const double one_tp =
      gp::collective::estimate(gp::collective::Op::all_reduce, Bytes(6291456), hand_topology(2, 1)).time.value();
  CHECK(in.comm.tp_forward.value() == Approx(24 * one_tp).epsilon(1e-12));
  CHECK(in.comm.tp_backward.value() == Approx(in.comm.tp_forward.value()));
}

TEST_CASE("sim::job_inputs: an over-subscribed fabric slows every inter-node bucket") {
  gp::JobConfig j = generic_job();
  std::vector<std::string> notes;
  const StepSimInput a = make_step_input(j, prediction(), profile(), constants(), notes);
  j.cluster.oversubscription = 4;
  const StepSimInput b = make_step_input(j, prediction(), profile(), constants(), notes);
  REQUIRE(a.comm.grad_buckets.size() == b.comm.grad_buckets.size());
  // Only the network phase slows: a 25 MiB bucket crosses the node's 100 Gb/s x 0.9 = 11.25 GB/s as
  // 26,214,400 B / 11.25 GB/s = 2.330 ms; at 4:1 it takes 4x that, 6.991 ms more.
  CHECK((b.comm.grad_buckets.front().ms() - a.comm.grad_buckets.front().ms()) == Approx(3 * 26214400 / 11.25e9 * 1e3).epsilon(0.01));
}

TEST_CASE("sim::job_inputs: tensor-parallel shards share the node's NICs for their data-parallel all-reduces") {
  // tp=2 halves the data-parallel ranks per node, and each of the two groups gets half the NIC: the
  // inter-node bandwidth per GPU stays that of tp=1, so a bucket does not get faster (it would, 2x on the
  // network phase, if each group had the whole NIC).
  gp::JobConfig j = generic_job();
  j.comm.bucket = Bytes::mib(200);
  j.comm.algorithm = gp::CollectiveAlgo::ring;
  std::vector<std::string> notes;
  const Seconds t1 = make_step_input(j, prediction(), profile(), constants(), notes).comm.grad_buckets.front();
  j.parallel.tp = 2;
  j.parallel.dp = 8;
  j.comm.bucket = Bytes::mib(100);  // the same share of the (halved) gradients per bucket
  const Seconds t2 = make_step_input(j, prediction(), profile(), constants(), notes).comm.grad_buckets.front();
  CHECK(t2.value() >= 0.45 * t1.value());  // half the bytes over the same per-GPU network rate
}

TEST_CASE("sim::job_inputs: the step spread widens for a derived profile and narrows for a measured host "
          "(hand-computed)", "[sim]") {
  gp::sim::SimConstants k;
  k.step_spread = {0.28, 0.03};
  k.step_derived_gpu_log_sd = 0.04;
  k.step_known_host_cpu_log_sd = 0.18;
  const auto plain = gp::sim::step_spread_for(k, false, false);
  CHECK(plain.cpu_log_sd == 0.28);
  CHECK(plain.gpu_log_sd == 0.03);
  const auto both = gp::sim::step_spread_for(k, true, true);
  CHECK(both.cpu_log_sd == 0.18);
  CHECK(both.gpu_log_sd == Approx(0.05));  // sqrt(0.03^2 + 0.04^2)
}

TEST_CASE("sim::job_inputs: which data-parallel steps reduce their gradients after every micro-batch") {
  // PyTorch: DDP (and ZeRO-1 inside it) all-reduces once a step when the micro-batches before the last run under
  // no_sync(), and after every one without it; FSDP's SHARD_GRAD_OP (ZeRO-2) reduce-scatters every micro-batch into
  // the rank's shard. One micro-batch a step has nothing to choose.
  std::vector<std::string> notes;
  auto every = [&](gp::DataParallel d, int accum, bool no_sync) {
    gp::JobConfig j = generic_job();
    j.parallel.strategy = d;
    j.parallel.no_sync = no_sync;
    j.step.grad_accum = accum;
    return make_step_input(j, prediction(), profile(), constants(), notes).comm.every_micro_batch;
  };
  CHECK_FALSE(every(gp::DataParallel::ddp, 4, true));
  CHECK(every(gp::DataParallel::ddp, 4, false));
  CHECK_FALSE(every(gp::DataParallel::ddp, 1, false));
  CHECK_FALSE(every(gp::DataParallel::zero1, 4, true));
  CHECK(every(gp::DataParallel::zero1, 4, false));
  CHECK(every(gp::DataParallel::zero2, 4, true));
  CHECK_FALSE(every(gp::DataParallel::zero2, 1, true));
}
