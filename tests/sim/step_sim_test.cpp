#include <catch2/catch.hpp>

#include <cmath>
#include <utility>
#include <vector>

#include "sim/step_sim.hpp"

using gp::Bytes;
using gp::ByteRate;
using gp::Seconds;
using namespace gp::sim;

namespace {

StepSimInput one_rank(double fwd_ms, double bwd_ms, double opt_ms) {
  StepSimInput in;
  in.compute.gpu_forward = Seconds::ms(fwd_ms);
  in.compute.gpu_backward = Seconds::ms(bwd_ms);
  in.compute.gpu_optimizer = Seconds::ms(opt_ms);
  return in;
}

StepSimOptions quick(int steps = 20) {
  StepSimOptions o;
  o.steps = steps;
  return o;
}

}  // namespace

TEST_CASE("sim::step: one rank, synthetic data, no noise: step = forward + backward per micro-batch + optimizer") {
  StepSimInput in = one_rank(10, 20, 5);
  in.grad_accum = 2;
  const StepSimResult r = simulate_steps(in, quick());
  CHECK(r.step_time.ms() == Approx(2 * (10 + 20) + 5).epsilon(1e-9));
  CHECK(r.compute.ms() == Approx(65).epsilon(1e-9));
  CHECK(r.dataloader_stall.value() == 0);
  CHECK(r.comm_exposed.ms() == Approx(0).margin(1e-9));
  CHECK(r.gpu_busy.ms() == Approx(65).epsilon(1e-9));
}

TEST_CASE("sim::step: launch-bound phase lasts the CPU issue time") {
  StepSimInput in = one_rank(10, 20, 5);
  in.compute.cpu_forward = Seconds::ms(30);  // the CPU issues forward kernels slower than the GPU runs them
  const StepSimResult r = simulate_steps(in, quick());
  CHECK(r.step_time.ms() == Approx(30 + 20 + 5).epsilon(1e-9));
  CHECK(r.gpu_busy.ms() == Approx(35).epsilon(1e-9));
}

TEST_CASE("sim::step: num_workers=0 loads the next batch while the GPU runs this one, the copy waits for both") {
  // GPU 10 + 20 + 5 ms; the CPU issues forward in 2 ms and backward in 3 ms, then is free to load (CUDA runs
  // the kernels asynchronously). The synchronous pageable copy (1 GB at 100 GB/s: 10 ms) waits for the GPU.
  StepSimInput in = one_rank(10, 20, 5);
  in.compute.cpu_forward = Seconds::ms(2);
  in.compute.cpu_backward = Seconds::ms(3);
  in.loader.synthetic = false;
  in.loader.num_workers = 0;
  in.loader.pin_memory = false;
  in.loader.batch_bytes = Bytes::gb(1);
  in.loader.h2d_pinned = ByteRate::gbps(100);
  in.cluster.cpu_cores = 4;
  SECTION("loading (40 ms) outlasts the GPU: step = issue 5 + load 40 + copy 10") {
    in.loader.batch_cpu = Seconds::ms(40);
    const StepSimResult r = simulate_steps(in, quick());
    CHECK(r.step_time.ms() == Approx(5 + 40 + 10).epsilon(1e-6));
    CHECK(r.dataloader_stall.ms() == Approx(20).epsilon(1e-6));  // GPU idle: 10 waiting for the batch, 10 copying
    CHECK(r.compute.ms() == Approx(35).epsilon(1e-6));
  }
  SECTION("loading (20 ms) hides under the GPU's 35 ms: step = compute 35 + copy 10") {
    in.loader.batch_cpu = Seconds::ms(20);
    const StepSimResult r = simulate_steps(in, quick());
    CHECK(r.step_time.ms() == Approx(35 + 10).epsilon(1e-6));
    CHECK(r.dataloader_stall.ms() == Approx(10).epsilon(1e-6));
  }
}

TEST_CASE("sim::step: workers sharing too few cores set the pace (processor sharing, hand-computed)") {
  StepSimInput in = one_rank(20, 30, 0);  // 50 ms compute
  in.loader.synthetic = false;
  in.loader.pin_memory = false;
  in.loader.batch_cpu = Seconds::ms(100);
  in.loader.h2d_pinned = ByteRate::gbps(100);
  SECTION("one worker: one batch per 100 ms") {
    in.loader.num_workers = 1;
    in.cluster.cpu_cores = 8;
    CHECK(simulate_steps(in, quick(40)).step_time.ms() == Approx(100).epsilon(1e-3));
  }
  SECTION("four workers on plenty of cores: 25 ms per batch, so compute-bound at 50 ms") {
    in.loader.num_workers = 4;
    in.cluster.cpu_cores = 8;
    const auto r = simulate_steps(in, quick(40));
    CHECK(r.step_time.ms() == Approx(50).epsilon(1e-3));
    CHECK(r.dataloader_stall.ms() == Approx(0).margin(1e-3));
  }
  SECTION("four workers and the main process on 2 cores: 0.4 core each, 250 ms per batch, 62.5 ms per step") {
    in.loader.num_workers = 4;
    in.cluster.cpu_cores = 2;
    // Batches arrive four at a time every 250 ms; 400 steps keep the window's phase error under 0.2%.
    const auto r = simulate_steps(in, quick(400));
    CHECK(r.step_time.ms() == Approx(62.5).epsilon(3e-3));
    CHECK(r.dataloader_stall.ms() == Approx(12.5).epsilon(2e-2));
  }
}

TEST_CASE("sim::step: DDP buckets overlap backward, without overlap they are all exposed") {
  StepSimInput in = one_rank(10, 40, 5);
  in.cluster.ranks = 2;
  in.cluster.ranks_per_node = 2;
  in.comm.grad_buckets = {Seconds::ms(5), Seconds::ms(5), Seconds::ms(5), Seconds::ms(5)};
  SECTION("overlap: buckets ready at 10, 20, 30, 40 ms of backward; only the last 5 ms is exposed") {
    const auto r = simulate_steps(in, quick());
    CHECK(r.step_time.ms() == Approx(10 + 40 + 5 + 5).epsilon(1e-9));
    CHECK(r.comm_exposed.ms() == Approx(5).epsilon(1e-9));
    CHECK(r.comm_hidden.ms() == Approx(15).epsilon(1e-9));  // three of the four buckets run inside backward
  }
  SECTION("no overlap: 20 ms exposed") {
    in.comm.overlap = false;
    const auto r = simulate_steps(in, quick());
    CHECK(r.step_time.ms() == Approx(10 + 40 + 20 + 5).epsilon(1e-9));
    CHECK(r.comm_hidden.value() == 0);
  }
  SECTION("one bucket: nothing to overlap") {
    in.comm.grad_buckets = {Seconds::ms(20)};
    CHECK(simulate_steps(in, quick()).comm_exposed.ms() == Approx(20).epsilon(1e-9));
  }
}

TEST_CASE("sim::step: accumulating without no_sync all-reduces after every micro-batch and waits for it") {
  // Two ranks, 3 micro-batches of 10 + 40 ms, 4 buckets of 5 ms that overlap each backward as in the test above:
  // with no_sync only the last micro-batch's last bucket is exposed (5 ms); without it every micro-batch's is, and
  // each backward returns only once its buckets are done.
  StepSimInput in = one_rank(10, 40, 5);
  in.grad_accum = 3;
  in.cluster.ranks = 2;
  in.cluster.ranks_per_node = 2;
  in.comm.grad_buckets = {Seconds::ms(5), Seconds::ms(5), Seconds::ms(5), Seconds::ms(5)};
  const auto with = simulate_steps(in, quick());
  CHECK(with.step_time.ms() == Approx(3 * 50 + 5 + 5).epsilon(1e-9));
  CHECK(with.comm_total.ms() == Approx(20).epsilon(1e-9));
  in.comm.every_micro_batch = true;
  const auto without = simulate_steps(in, quick());
  CHECK(without.step_time.ms() == Approx(3 * (50 + 5) + 5).epsilon(1e-9));
  CHECK(without.comm_exposed.ms() == Approx(15).epsilon(1e-9));
  CHECK(without.comm_hidden.ms() == Approx(3 * 15).epsilon(1e-9));
  CHECK(without.comm_total.ms() == Approx(60).epsilon(1e-9));
  SECTION("without overlap each micro-batch's 20 ms of buckets follows its backward") {
    in.comm.overlap = false;
    CHECK(simulate_steps(in, quick()).step_time.ms() == Approx(3 * (50 + 20) + 5).epsilon(1e-9));
  }
}

TEST_CASE("sim::step: FSDP units wait for their all-gathers (hand-computed recurrence)") {
  StepSimInput in = one_rank(20, 0, 0);
  in.cluster.ranks = 2;
  in.cluster.ranks_per_node = 2;
  in.comm.layer_units = 2;
  in.comm.unit_allgather = Seconds::ms(15);
  // gathers end at 15 and 30 ms; unit 0 computes 15-25, unit 1 30-40. Backward of zero length: gather 15
  // then reduce-scatters (0) -> 15 + 15 ms of re-gathers.
  const auto r = simulate_steps(in, quick());
  CHECK(r.step_time.ms() == Approx(40 + 30).epsilon(1e-9));
  CHECK(r.compute.ms() == Approx(20).epsilon(1e-9));
  CHECK(r.comm_hidden.ms() == Approx(10).epsilon(1e-9));  // 60 ms of gathers, 50 ms of them exposed
}

TEST_CASE("sim::step: pipeline 1F1B bubble is (stages-1) slots of forward+backward") {
  StepSimInput in = one_rank(10, 20, 0);
  in.grad_accum = 4;
  in.comm.pp_stages = 4;
  // (m + p - 1) x (f + b) = 7 x 30 ms, of which the bubble is (p - 1) x 30 ms, reported as such within the exposed part
  const auto r = simulate_steps(in, quick());
  CHECK(r.step_time.ms() == Approx(7 * 30).epsilon(1e-9));
  CHECK(r.pipeline_bubble.ms() == Approx(3 * 30).epsilon(1e-9));
  CHECK(r.comm_exposed.ms() == Approx(3 * 30).epsilon(1e-9));
}

TEST_CASE("sim::step: a 1F1B slot includes the stage's tensor-parallel all-reduces and pipeline sends") {
  // Each micro-batch on a stage takes forward 10 + its tp all-reduces 2, backward 20 + 3, and 1 ms of sends:
  // a 36 ms slot. 1F1B with p = 4 stages and m = 4 micro-batches takes (m + p - 1) slots = 7 x 36 = 252 ms,
  // the bubble (p - 1) x 36 = 108 ms. Counting only compute in the bubble's slots gave 4 x 36 + 3 x 30 = 234 ms.
  StepSimInput in = one_rank(10, 20, 0);
  in.grad_accum = 4;
  in.comm.pp_stages = 4;
  in.comm.tp_forward = Seconds::ms(2);
  in.comm.tp_backward = Seconds::ms(3);
  in.comm.pp_p2p = Seconds::ms(1);
  const auto r = simulate_steps(in, quick());
  CHECK(r.step_time.ms() == Approx(7 * 36).epsilon(1e-9));
  CHECK(r.pipeline_bubble.ms() == Approx(3 * 36).epsilon(1e-9));
  CHECK(r.compute.ms() == Approx(4 * 30).epsilon(1e-9));
}

TEST_CASE("sim::step: parts add up to the step time, same seed, same result") {
  StepSimInput in = one_rank(10, 30, 4);
  in.compute.step_cv = 0.05;
  in.cluster.ranks = 16;
  in.cluster.ranks_per_node = 8;
  in.cluster.cpu_cores = 32;
  in.loader.synthetic = false;
  in.loader.num_workers = 2;
  in.loader.batch_cpu = Seconds::ms(70);
  in.loader.batch_cpu_cv = 0.3;
  in.loader.pin_cpu = Seconds::ms(1);
  in.loader.batch_bytes = Bytes::mb(50);
  in.loader.h2d_pinned = ByteRate::gbps(50);
  in.comm.grad_buckets = {Seconds::ms(3), Seconds::ms(3), Seconds::ms(3)};
  StepSimOptions o = quick(50);
  o.seed = 7;
  const auto a = simulate_steps(in, o);
  const auto b = simulate_steps(in, o);
  CHECK((a.compute + a.dataloader_stall + a.comm_exposed).value() == Approx(a.step_time.value()).epsilon(1e-12));
  CHECK(a.step_time.value() == b.step_time.value());
  CHECK(a.events == b.events);
  o.seed = 8;
  CHECK(simulate_steps(in, o).step_time.value() != a.step_time.value());
}

TEST_CASE("sim::step: waiting at the all-reduce for a rank whose input was late counts as input time") {
  // Eight ranks on one node, compute without noise, one 0.1 ms gradient bucket, a loader with noisy samples:
  // each step waits for the rank whose batch came last. Independent truth: with identical compute on every
  // rank the only communication that can be exposed is the bucket itself, which runs once the last rank's
  // backward ends, so comm_exposed <= 0.1 ms. Before, the wait for the late rank's input (tens of ms) was
  // reported as exposed communication and the bottleneck was called communication.
  StepSimInput in = one_rank(10, 20, 2);
  in.cluster.ranks = 8;
  in.cluster.ranks_per_node = 8;
  in.cluster.cpu_cores = 64;
  in.loader.synthetic = false;
  in.loader.num_workers = 2;
  in.loader.batch_cpu = Seconds::ms(80);
  in.loader.batch_cpu_cv = 0.8;
  in.loader.h2d_pinned = ByteRate::gbps(50);
  in.comm.grad_buckets = {Seconds::ms(0.1)};
  StepSimOptions o = quick(200);
  o.seed = 3;
  const auto r = simulate_steps(in, o);
  CHECK(r.step_time.ms() > 39);  // input-bound: two workers give a batch per 40 ms, compute takes 32
  CHECK(r.comm_exposed.ms() <= 0.1 + 1e-6);
  CHECK(r.dataloader_stall.ms() > 5);
  CHECK((r.compute + r.dataloader_stall + r.comm_exposed).value() == Approx(r.step_time.value()).epsilon(1e-12));
}

TEST_CASE("sim::step: more workers never slow a CPU-bound loader down (monotone)") {
  StepSimInput in = one_rank(10, 20, 2);
  in.loader.synthetic = false;
  in.loader.batch_cpu = Seconds::ms(200);
  in.loader.h2d_pinned = ByteRate::gbps(50);
  in.cluster.cpu_cores = 16;
  double prev = 1e9;
  for (int w : {1, 2, 4, 8, 12}) {
    in.loader.num_workers = w;
    const double t = simulate_steps(in, quick(60)).step_time.value();
    CHECK(t <= prev * 1.0001);
    prev = t;
  }
}

TEST_CASE("sim::step: stragglers cost more as ranks grow", "[scenario]") {
  StepSimInput in = one_rank(20, 40, 5);
  in.compute.step_cv = 0.05;
  in.cluster.ranks_per_node = 8;
  in.comm.grad_buckets = {Seconds::ms(1)};
  // The step waits for the slowest rank: 65 ms x E[max of n log-normal factors, cv 5%] + the 1 ms all-reduce.
  // E[max] by Monte Carlo outside gpuplan (Python, 20,000 draws of n normals; 3,000 for n = 1024):
  // 1.0729 (n = 8), 1.1231 (64), 1.1748 (1024), so 70.74, 74.00 and 77.36 ms.
  double prev = 0;
  for (const auto& [n, expect_ms] : {std::pair<std::int64_t, double>{8, 70.74}, {64, 74.00}, {1024, 77.36}}) {
    in.cluster.ranks = n;
    const auto r = simulate_steps(in, quick(200));
    INFO(n << " ranks");
    CHECK(r.step_time.value() > prev);
    CHECK(r.step_time.ms() == Approx(expect_ms).epsilon(0.015));
    prev = r.step_time.value();
  }
}

TEST_CASE("sim::step: the symmetry shortcut agrees with simulating every rank") {
  StepSimInput in = one_rank(20, 40, 5);
  in.compute.step_cv = 0.05;
  in.cluster.ranks = 64;
  in.cluster.ranks_per_node = 8;
  in.comm.grad_buckets = {Seconds::ms(2), Seconds::ms(2), Seconds::ms(2)};
  StepSimOptions full = quick(400);
  full.force_full = true;
  StepSimOptions cut = quick(400);
  cut.full_ranks_limit = 8;
  const auto a = simulate_steps(in, full);
  const auto b = simulate_steps(in, cut);
  CHECK(b.shortcut);
  CHECK(b.simulated_ranks == 8);
  CHECK(a.simulated_ranks == 64);
  CHECK(b.step_time.value() == Approx(a.step_time.value()).epsilon(0.01));
  CHECK(b.straggler.value() == Approx(a.straggler.value()).epsilon(0.05));
}

TEST_CASE("sim::step: GPUs behind one PCIe switch share its uplink for host-to-device copies") {
  StepSimInput in = one_rank(10, 20, 0);
  in.cluster.ranks = 2;
  in.cluster.ranks_per_node = 2;
  in.cluster.cpu_cores = 8;
  in.loader.synthetic = false;
  in.loader.num_workers = 0;
  in.loader.pin_memory = false;
  in.loader.batch_cpu = Seconds::ms(10);
  in.loader.batch_bytes = Bytes::gb(1);
  in.loader.h2d_pinned = ByteRate::gbps(50);  // 1 GB alone: 20 ms; two at once on one uplink: 40 ms
  // The 10 ms load of the next batch hides under the 30 ms of GPU work; the copies do not.
  SECTION("one switch per GPU") {
    in.cluster.gpus_per_pcie_switch = 1;
    CHECK(simulate_steps(in, quick()).step_time.ms() == Approx(20 + 30).epsilon(1e-6));
  }
  SECTION("two GPUs behind one switch") {
    in.cluster.gpus_per_pcie_switch = 2;
    CHECK(simulate_steps(in, quick()).step_time.ms() == Approx(40 + 30).epsilon(1e-6));
  }
  SECTION("pageable memory: the staging copy blocks the training process first") {
    in.cluster.gpus_per_pcie_switch = 1;
    in.loader.pageable_staging_cpu = Seconds::ms(5);
    CHECK(simulate_steps(in, quick()).step_time.ms() == Approx(5 + 20 + 30).epsilon(1e-6));
  }
}

TEST_CASE("sim::step: shortcut with one GPU per node keeps a normal rank beside the straggler proxy") {
  StepSimInput in = one_rank(20, 40, 5);
  in.compute.step_cv = 0.05;
  in.cluster.ranks = 256;
  in.cluster.ranks_per_node = 1;
  in.comm.grad_buckets = {Seconds::ms(2)};
  StepSimOptions cut = quick(400);
  cut.full_ranks_limit = 8;
  StepSimOptions full = quick(400);
  full.force_full = true;
  const auto b = simulate_steps(in, cut);
  const auto a = simulate_steps(in, full);
  CHECK(b.simulated_ranks == 2);
  CHECK(b.step_time.value() == Approx(a.step_time.value()).epsilon(0.01));
  CHECK(b.compute.value() == Approx(a.compute.value()).epsilon(0.01));  // the mean rank, not the slowest
}

TEST_CASE("sim::step: a long gradient accumulation measures fewer steps and keeps the step time") {
  // Every micro-batch is simulated: 2^20 of them a step took minutes. Steps x grad_accum stop at kMicroBatchBudget
  // (20,000) measured micro-batches, at least one step. Hand-computed: no noise, 1 ms forward + 2 ms backward per
  // micro-batch and a 5 ms optimizer step, so a step is 3 ms x grad_accum + 5 ms whatever the number measured.
  StepSimInput in = one_rank(1, 2, 5);
  for (const auto& [accum, measured] : std::vector<std::pair<int, int>>{{1, 200}, {100, 200}, {1000, 20}, {65536, 1}}) {
    in.grad_accum = accum;
    const auto r = simulate_steps(in, quick(200));
    INFO(accum);
    CHECK(r.measured_steps == measured);
    CHECK(r.step_time.ms() == Approx(3.0 * accum + 5).epsilon(1e-9));
  }
}
