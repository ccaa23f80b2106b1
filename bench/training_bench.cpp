// Speed of the training-job simulation (issue 4: one 1,024-GPU configuration with 200 simulated steps
// in under 200 ms on a 2-core machine).
//   BM_Step1024Gpus      the step simulation alone: GPT-1.3B-like DDP step on 128 nodes x 8 GPUs, 211
//                        gradient buckets, per-step noise (symmetry shortcut: one node simulated)
//   BM_Step1024GpusCpuLoader  same with a CPU DataLoader (8 workers per GPU sharing 192 cores)
//   BM_Evaluate1024Gpus  the whole `gpuplan run` path for one configuration with the GPU type's profile
//                        already loaded: compute and memory models, simulation, job totals, pricing, advice
//   BM_EvaluateColdProfile  the same plus reading the profile, fitting its GEMM surface and the constants
//                        (paid once per GPU type per run)
// Run: build-sim/bench/training_bench   (docs/performance.md, "Training-job simulation")
#include <benchmark/benchmark.h>

#include "app/catalog_io.hpp"
#include "app/diagnostics.hpp"
#include "app/evaluate.hpp"
#include "app/scenario.hpp"
#include "sim/step_sim.hpp"

namespace {

using gp::Bytes;
using gp::ByteRate;
using gp::Seconds;
using namespace gp::sim;

StepSimInput gpt_1024() {
  StepSimInput in;
  in.compute.gpu_forward = Seconds::ms(48);
  in.compute.gpu_backward = Seconds::ms(96);
  in.compute.gpu_optimizer = Seconds::ms(9);
  in.compute.cpu_forward = Seconds::ms(20);
  in.compute.cpu_backward = Seconds::ms(25);
  in.compute.step_cv = 0.01;
  in.cluster.ranks = 1024;
  in.cluster.ranks_per_node = 8;
  in.cluster.cpu_cores = 192;
  in.comm.grad_buckets.assign(211, Seconds::ms(1.2));
  return in;
}

void BM_Step1024Gpus(benchmark::State& state) {
  const StepSimInput in = gpt_1024();
  StepSimOptions o;
  o.steps = 200;
  for (auto _ : state) {
    auto r = simulate_steps(in, o);
    benchmark::DoNotOptimize(r.step_time);
    state.counters["events"] = static_cast<double>(r.events);
  }
}
BENCHMARK(BM_Step1024Gpus)->Unit(benchmark::kMillisecond);

void BM_Step1024GpusCpuLoader(benchmark::State& state) {
  StepSimInput in = gpt_1024();
  in.loader.synthetic = false;
  in.loader.num_workers = 8;
  in.loader.batch_cpu = Seconds::ms(25.0 * 8);
  in.loader.batch_cpu_cv = 0.2 / 4;
  in.loader.pin_cpu = Seconds::ms(1);
  in.loader.collate_cpu = Seconds::ms(1);
  in.loader.batch_bytes = Bytes::mb(8);
  in.loader.h2d_pinned = ByteRate::gbps(55);
  StepSimOptions o;
  o.steps = 200;
  for (auto _ : state) {
    auto r = simulate_steps(in, o);
    benchmark::DoNotOptimize(r.step_time);
    state.counters["events"] = static_cast<double>(r.events);
  }
}
BENCHMARK(BM_Step1024GpusCpuLoader)->Unit(benchmark::kMillisecond);

const char* kScenario = R"({
  "name": "bench: GPT-1.3B on 128 p5en nodes",
  "workload": {"model": "gpt-1.3b", "micro_batch": 8, "steps": 20000, "precision": "bf16"},
  "software": {"parallelism": {"strategy": "ddp"}, "nccl": {"bucket_mb": 25}},
  "cluster": {"instance": "aws-p5en.48xlarge", "nodes": 128, "storage": "local-nvme-raid0-8x"},
  "checkpoint": {"every_minutes": 60},
  "reliability": {"gpu_mtbf_hours": 50000, "node_mtbf_hours": 20000, "restart_minutes": 10}
})";

void BM_Evaluate1024Gpus(benchmark::State& state) {
  gp::app::Diagnostics diags;
  const gp::Catalog cat = gp::app::load_catalogs(gp::app::default_catalog_dir(), {}, diags);
  auto sc = gp::app::load_scenario_text(kScenario, "bench.json", cat, diags);
  if (!sc) {
    state.SkipWithError("scenario did not load");
    return;
  }
  gp::app::Evaluator ev(cat, gp::app::EvaluateOptions{});
  ev.run(sc->configs.front());  // loads the profile and fits the GEMM surface once, as `run` does per GPU type
  for (auto _ : state) {
    auto r = ev.run(sc->configs.front());
    benchmark::DoNotOptimize(r.step_time);
  }
}
BENCHMARK(BM_Evaluate1024Gpus)->Unit(benchmark::kMillisecond);

void BM_EvaluateColdProfile(benchmark::State& state) {
  gp::app::Diagnostics diags;
  const gp::Catalog cat = gp::app::load_catalogs(gp::app::default_catalog_dir(), {}, diags);
  auto sc = gp::app::load_scenario_text(kScenario, "bench.json", cat, diags);
  if (!sc) {
    state.SkipWithError("scenario did not load");
    return;
  }
  for (auto _ : state) {
    auto r = gp::app::evaluate(*sc, cat, gp::app::EvaluateOptions{});
    benchmark::DoNotOptimize(r.front().result.step_time);
  }
}
BENCHMARK(BM_EvaluateColdProfile)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
