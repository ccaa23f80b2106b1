// Event-engine throughput: PHOLD (Fujimoto's synthetic benchmark for discrete-event simulators).
// N logical processes (LPs) start with one event each; every event bumps its LP's counter and
// schedules one new event at now + exponential delay (mean 1 us, at least 1 ns) on a uniformly random
// LP, so the queue holds N pending events throughout. Fixed seed. The counter `events_per_s` is
// events executed per second of benchmark CPU time, setup included.
// Run: build-engine/engine_bench --benchmark_filter=PHOLD
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "sim/capacity_resource.hpp"
#include "sim/engine.hpp"
#include "sim/random.hpp"
#include "sim/shared_bandwidth.hpp"

namespace {

using gp::sim::SimTime;
using gp::sim::Simulator;

struct Phold {
  Simulator sim;
  gp::sim::Rng rng{2026};
  std::vector<std::uint64_t> per_lp;
  std::uint64_t remaining;
  Phold(std::size_t lps, std::uint64_t events) : per_lp(lps, 0), remaining(events) {}
};

struct Hop {
  Phold* p;
  std::uint32_t lp;
  void operator()() const {
    ++p->per_lp[lp];
    if (--p->remaining == 0) {
      p->sim.stop();
      return;
    }
    const SimTime dt = 1 + static_cast<SimTime>(p->rng.exponential(1000.0));
    const auto dest = static_cast<std::uint32_t>(p->rng.below(p->per_lp.size()));
    p->sim.schedule_in(dt, Hop{p, dest});
  }
};

void BM_PHOLD(benchmark::State& state) {
  const auto lps = static_cast<std::size_t>(state.range(0));
  const std::uint64_t events = 2'000'000;
  std::uint64_t total = 0;
  for (auto _ : state) {
    Phold p(lps, events);
    for (std::uint32_t lp = 0; lp < lps; ++lp) {
      p.sim.schedule_at(static_cast<SimTime>(p.rng.below(1000)), Hop{&p, lp});
    }
    p.sim.run();
    total += p.sim.events_executed();
    benchmark::DoNotOptimize(p.per_lp.data());
  }
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(total), benchmark::Counter::kIsRate);
  state.counters["pending"] = static_cast<double>(lps);
}
BENCHMARK(BM_PHOLD)->Arg(1'000)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);

// Capacity resource under load: 64 workers cycling 1 ms jobs on 16 cores (2 events per job).
void BM_CapacityResource(benchmark::State& state) {
  std::uint64_t jobs = 0;
  for (auto _ : state) {
    Simulator sim;
    gp::sim::CapacityResource cores(sim, 16);
    struct Loop {
      Simulator* sim;
      gp::sim::CapacityResource* cores;
      std::uint32_t id;
      std::uint64_t* jobs;
      void operator()() const {
        if (++*jobs % 500'000 == 0) sim->stop();
        cores->request(id, gp::sim::kMillisecond, Loop{*this});
      }
    };
    for (std::uint32_t w = 0; w < 64; ++w) cores.request(w, gp::sim::kMillisecond, Loop{&sim, &cores, w, &jobs});
    sim.run();
  }
  state.counters["jobs_per_s"] = benchmark::Counter(static_cast<double>(jobs), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_CapacityResource)->Unit(benchmark::kMillisecond);

// Shared link with k concurrent transfers, each restarting when done: the re-sharing cost is O(k log k).
void BM_SharedBandwidth(benchmark::State& state) {
  const auto k = static_cast<std::uint32_t>(state.range(0));
  std::uint64_t transfers = 0;
  for (auto _ : state) {
    Simulator sim;
    gp::sim::SharedBandwidth link(sim, gp::ByteRate::gbps(50));
    gp::sim::Rng rng(5);
    struct Loop {
      Simulator* sim;
      gp::sim::SharedBandwidth* link;
      gp::sim::Rng* rng;
      std::uint64_t* n;
      void operator()() const {
        if (++*n % 200'000 == 0) sim->stop();
        link->start(gp::Bytes(1e6 * (1.0 + rng->uniform())), Loop{*this});
      }
    };
    for (std::uint32_t i = 0; i < k; ++i) Loop{&sim, &link, &rng, &transfers}();
    sim.run();
  }
  state.counters["transfers_per_s"] =
      benchmark::Counter(static_cast<double>(transfers), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SharedBandwidth)->Arg(2)->Arg(8)->Arg(64)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
