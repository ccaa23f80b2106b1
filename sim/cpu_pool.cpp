#include "sim/cpu_pool.hpp"

#include <algorithm>

namespace gp::sim {

namespace {
constexpr double kNsPerSecond = 1e9;
// A permanent thread's "work": 10^18 ns = 31.7 years of CPU time, longer than any simulated run.
constexpr double kForeverNs = 1e18;
}  // namespace

CpuPool::CpuPool(Simulator& sim, double cores)
    : cores_(cores), link_(sim, ByteRate(cores * kNsPerSecond)) {}

void CpuPool::run(Seconds work, Callback on_done) {
  link_.start(Bytes(work.value() * kNsPerSecond), std::move(on_done), ByteRate(kNsPerSecond));
}

void CpuPool::add_permanent_thread() {
  link_.start(Bytes(kForeverNs), [] {}, ByteRate(kNsPerSecond));
}

double CpuPool::share_per_thread(int extra_threads) const {
  const int n = runnable() + extra_threads;
  if (n <= 0) return 1.0;
  return std::min(1.0, cores_ / n);
}

}  // namespace gp::sim
