// The discrete-event engine: a clock in integer nanoseconds and a queue of callbacks.
//
// Everything the training-job simulator models is written against this file, sim/capacity_resource.hpp
// and sim/shared_bandwidth.hpp:
//   Simulator          the clock (now()), schedule_at / schedule_in, cancel, run / run_until / stop
//   Callback           the `void()` callable an event runs (inline, no heap; sim/callback.hpp)
//   Process            a C++20 coroutine: `co_await sim.delay(dt)`, `co_await cores.acquire(h)` ...
//   CapacityResource   N identical servers with a FIFO queue (CPU cores, copy engines)
//   SharedBandwidth    a link shared max-min fairly by concurrent transfers (PCIe switch, NIC, storage)
//   Latch, BoundedBuffer   wait for n completions; a prefetch queue with capacity (sim/sync.hpp)
//   Rng                a reproducible PRNG (sim/random.hpp)
//
// Determinism: events at the same time run in the order they were scheduled (FIFO), so a run depends only
// on its inputs and its seed. Callbacks must not throw (an exception escaping a callback terminates);
// an exception escaping a Process stops the run and is rethrown by run()/run_until().
//
// Example, callbacks:
//   gp::sim::Simulator sim;
//   sim.schedule_in(gp::Seconds::ms(1), [&] { std::puts("1 ms"); });
//   sim.run();
//
// Example, a process (a coroutine's first Simulator& parameter ties its frame to that simulator,
// which destroys it if the run ends while the process is suspended):
//   gp::sim::Process loader(gp::sim::Simulator& sim, gp::sim::CapacityResource& cores,
//                           gp::sim::SharedBandwidth& pcie, int batches) {
//     for (int b = 0; b < batches; ++b) {
//       co_await cores.use(/*holder=*/0, gp::Seconds::ms(3));   // decode on one core (queues if busy)
//       co_await pcie.transfer(gp::Bytes::mb(50));              // host-to-device copy, shared link
//     }
//   }
//   ...  loader(sim, cores, pcie, 10); sim.run();
#pragma once

#include <coroutine>
#include <cstdint>
#include <exception>
#include <utility>

#include "sim/callback.hpp"
#include "sim/event_queue.hpp"
#include "sim/time.hpp"

namespace gp::sim {

class ProcessPromiseBase;

class Simulator {
 public:
  Simulator() = default;
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;
  // Destroys the frames of processes still suspended; pending callbacks are dropped without running.
  ~Simulator();

  // Current simulated time (ns); starts at 0 and never decreases.
  [[nodiscard]] SimTime now() const { return now_; }
  [[nodiscard]] Seconds now_seconds() const { return to_seconds(now_); }

  // Runs cb at absolute time t. Precondition: t >= now(). O(log n).
  template <class F>
  EventId schedule_at(SimTime t, F&& cb) {
    assert(t >= now_ && "Simulator::schedule_at: time in the past");
    return queue_.insert(t, std::forward<F>(cb));
  }
  template <class F>
  EventId schedule_at(Seconds t, F&& cb) {
    return schedule_at(to_sim_time(t), std::forward<F>(cb));
  }
  // Runs cb after dt ns. Precondition: dt >= 0 (dt == 0 runs after the events already due now).
  template <class F>
  EventId schedule_in(SimTime dt, F&& cb) {
    assert(dt >= 0 && "Simulator::schedule_in: negative delay");
    return queue_.insert(now_ + dt, std::forward<F>(cb));
  }
  template <class F>
  EventId schedule_in(Seconds dt, F&& cb) {
    return schedule_in(to_sim_time(dt), std::forward<F>(cb));
  }

  // Cancels a pending event; false if it already ran or was cancelled. O(1).
  bool cancel(EventId id) { return queue_.cancel(id); }

  // Runs events until none is left or stop() is called.
  void run() { run_until(kTimeMax); }
  // Runs every event with time <= t, then advances the clock to t (unless stopped earlier or t is
  // kTimeMax). Precondition: t >= now().
  void run_until(SimTime t);
  void run_until(Seconds t) { run_until(to_sim_time(t)); }
  // Makes run()/run_until() return after the current event; pending events stay queued.
  void stop() { stopped_ = true; }

  // Events executed since construction (cancelled ones excluded).
  [[nodiscard]] std::uint64_t events_executed() const { return executed_; }
  // Live pending events.
  [[nodiscard]] std::size_t pending() const { return queue_.size(); }
  // Processes (coroutines) started and not finished.
  [[nodiscard]] std::size_t live_processes() const { return live_processes_; }

  // Awaitable: `co_await sim.delay(dt)` resumes the process dt later (dt >= 0).
  struct DelayAwaiter {
    Simulator* sim;
    SimTime dt;
    [[nodiscard]] bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) const {
      sim->schedule_in(dt, [h] { h.resume(); });
    }
    void await_resume() const noexcept {}
  };
  [[nodiscard]] DelayAwaiter delay(SimTime dt) { return DelayAwaiter{this, dt}; }
  [[nodiscard]] DelayAwaiter delay(Seconds dt) { return DelayAwaiter{this, to_sim_time(dt)}; }

 private:
  friend class ProcessPromiseBase;

  EventQueue queue_;
  SimTime now_ = 0;
  std::uint64_t executed_ = 0;
  bool stopped_ = false;
  ProcessPromiseBase* processes_ = nullptr;  // intrusive list of live process frames
  std::size_t live_processes_ = 0;
  std::exception_ptr process_error_;
};

// Common part of Process promises: links the frame into its Simulator's list of live processes.
class ProcessPromiseBase {
 public:
  explicit ProcessPromiseBase(Simulator& sim);
  ~ProcessPromiseBase();
  ProcessPromiseBase(const ProcessPromiseBase&) = delete;
  ProcessPromiseBase& operator=(const ProcessPromiseBase&) = delete;
  // Records the exception and stops the simulator; run() rethrows it.
  void unhandled_exception() noexcept;

 protected:
  virtual void destroy_frame() = 0;

 private:
  friend class Simulator;
  Simulator* sim_;
  ProcessPromiseBase* prev_ = nullptr;
  ProcessPromiseBase* next_ = nullptr;
};

namespace detail {
template <class T>
Simulator* as_sim(T& x) {
  if constexpr (std::is_same_v<std::remove_cvref_t<T>, Simulator>) {
    return &x;
  } else {
    return nullptr;
  }
}
template <class... A>
Simulator& find_sim(A&... a) {
  static_assert((std::is_same_v<std::remove_cvref_t<A>, Simulator> || ...),
                "gp::sim::Process: the coroutine needs a Simulator& parameter");
  Simulator* s = nullptr;
  ((s = s != nullptr ? s : as_sim(a)), ...);
  return *s;
}
}  // namespace detail

// Return type of a simulation process: a coroutine that starts at once (eagerly, at the current
// simulated time), suspends at co_await, and frees its frame when it returns.
// Rule: one parameter must be `Simulator&` (for a lambda, after the closure). Capture nothing by
// reference in a coroutine lambda that may outlive its scope; pass state as parameters.
class Process {
 public:
  class promise_type : public ProcessPromiseBase {
   public:
    template <class... A>
    explicit promise_type(A&... args) : ProcessPromiseBase(detail::find_sim(args...)) {}
    Process get_return_object() noexcept { return {}; }
    std::suspend_never initial_suspend() noexcept { return {}; }
    std::suspend_never final_suspend() noexcept { return {}; }
    void return_void() noexcept {}

   protected:
    void destroy_frame() override { std::coroutine_handle<promise_type>::from_promise(*this).destroy(); }
  };
};

}  // namespace gp::sim
