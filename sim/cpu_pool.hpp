// CpuPool: the CPU cores a container may use, shared by processor sharing among runnable threads
// (DataLoader workers, pin-memory threads, training processes), as a Linux CFS scheduler would.
//
// Each runnable thread gets min(1 core, cores / runnable threads). Built on SharedBandwidth: one "byte"
// is one nanosecond of single-core CPU work, the link's capacity is `cores` x 1e9 of them per second and
// every job is capped at one core. Permanent threads (a training process's busy main loop) hold a share
// for the whole run; they are jobs that never finish, so stop the simulator explicitly (stop()/run_until).
#pragma once

#include "sim/shared_bandwidth.hpp"

namespace gp::sim {

class CpuPool {
 public:
  // Precondition: cores > 0 (fractional under a `--cpus` limit). Must not outlive sim.
  CpuPool(Simulator& sim, double cores);

  // Runs `work` seconds of single-thread CPU time (>= 0) as one thread; on_done runs when it is done.
  void run(Seconds work, Callback on_done);
  // Adds a thread that is runnable for the rest of the simulation (never completes).
  void add_permanent_thread();

  // Threads runnable now (jobs in progress plus permanent threads).
  [[nodiscard]] int runnable() const { return static_cast<int>(link_.active()); }
  // Speed of one runnable thread now, in cores (1 when there is a free core for it).
  [[nodiscard]] double share_per_thread(int extra_threads = 0) const;
  [[nodiscard]] double cores() const { return cores_; }

  struct RunAwaiter {
    CpuPool* pool;
    Seconds work;
    [[nodiscard]] bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) const { pool->run(work, [h] { h.resume(); }); }
    void await_resume() const noexcept {}
  };
  // `co_await pool.work(dt)`.
  [[nodiscard]] RunAwaiter work(Seconds dt) { return {this, dt}; }

 private:
  double cores_;
  SharedBandwidth link_;
};

}  // namespace gp::sim
