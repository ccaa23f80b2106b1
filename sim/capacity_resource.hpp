// CapacityResource: N identical servers with one FIFO wait queue (CPU cores, copy engines, DMA queues).
//
// A request waits until a server is free, holds it, and releases it. Two ways to use it:
//   request(holder, service_time, on_done)   hold for a known time; on_done runs at completion
//   acquire(holder, on_granted) ... release(holder)   hold for as long as the holder decides
// and the coroutine forms `co_await r.use(holder, dt)` and `co_await r.acquire(holder)`.
// Requests are granted strictly in arrival order (ties: call order), so runs are deterministic.
// Utilisation statistics integrate the number of busy servers over time (exact, integer ns).
// Costs: request/release O(1) amortised; memory O(waiting + in service).
#pragma once

#include <coroutine>
#include <cstdint>
#include <deque>
#include <vector>

#include "sim/engine.hpp"

namespace gp::sim {

// Who holds a server (a worker, a rank): small dense integers, used for per-holder busy time.
using HolderId = std::uint32_t;

// Statistics of a CapacityResource from its construction to now().
struct CapacityStats {
  Seconds busy_server_time;      // integral of busy servers over time (server-seconds)
  Seconds elapsed;               // simulated time since construction
  double utilisation = 0.0;      // busy_server_time / (servers * elapsed); 0 when elapsed is 0
  std::uint64_t granted = 0;     // requests that obtained a server
  std::uint64_t completed = 0;   // servers released
  Seconds total_wait;            // summed time granted requests spent queued
  std::size_t max_queue_length = 0;
};

class CapacityResource {
 public:
  // Precondition: servers >= 1. The resource must not outlive sim.
  CapacityResource(Simulator& sim, int servers);
  CapacityResource(const CapacityResource&) = delete;
  CapacityResource& operator=(const CapacityResource&) = delete;

  // Waits for a server, holds it for service_time (>= 0), releases it, then runs on_done.
  void request(HolderId holder, SimTime service_time, Callback on_done);
  void request(HolderId holder, Seconds service_time, Callback on_done) {
    request(holder, to_sim_time(service_time), std::move(on_done));
  }
  // Waits for a server; on_granted runs as an event at the grant time. The holder must call
  // release(holder) once done.
  void acquire(HolderId holder, Callback on_granted);
  // Frees a server held through acquire(). Precondition: holder holds one.
  void release(HolderId holder);

  [[nodiscard]] int servers() const { return servers_; }
  [[nodiscard]] int busy() const { return busy_; }
  [[nodiscard]] std::size_t queue_length() const { return waiting_.size(); }
  [[nodiscard]] CapacityStats stats() const;
  // Time this holder has held servers (server-seconds), up to now().
  [[nodiscard]] Seconds busy_time_of(HolderId holder) const;

  // Awaitable for processes: `co_await r.use(holder, dt)` = request(holder, dt, resume).
  struct UseAwaiter {
    CapacityResource* r;
    HolderId holder;
    SimTime service;
    [[nodiscard]] bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) const { r->request(holder, service, [h] { h.resume(); }); }
    void await_resume() const noexcept {}
  };
  [[nodiscard]] UseAwaiter use(HolderId holder, SimTime service) { return {this, holder, service}; }
  [[nodiscard]] UseAwaiter use(HolderId holder, Seconds service) { return {this, holder, to_sim_time(service)}; }

  // Awaitable for processes: `co_await r.acquire(holder)`; call release(holder) afterwards.
  struct AcquireAwaiter {
    CapacityResource* r;
    HolderId holder;
    [[nodiscard]] bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) const { r->acquire(holder, [h] { h.resume(); }); }
    void await_resume() const noexcept {}
  };
  [[nodiscard]] AcquireAwaiter acquire(HolderId holder) { return {this, holder}; }

 private:
  static constexpr SimTime kUntilReleased = -1;
  struct Waiter {
    HolderId holder;
    SimTime service;  // kUntilReleased for acquire()
    SimTime enqueued;
    Callback cb;
  };
  struct HolderUse {
    std::uint32_t held = 0;
    SimTime since = 0;    // last change of `held`
    SimTime integral = 0; // server-ns
  };

  void grant(Waiter w);
  void finish_service(std::uint32_t done_slot, HolderId holder);
  void account();                      // brings busy_integral_ up to now
  void holder_change(HolderId holder, int delta);

  Simulator& sim_;
  int servers_;
  int busy_ = 0;
  std::deque<Waiter> waiting_;
  std::vector<Callback> done_;         // on_done of requests in service, indexed by slot
  std::vector<std::uint32_t> free_done_;
  std::vector<HolderUse> holders_;
  SimTime created_;
  SimTime last_change_;
  SimTime busy_integral_ = 0;          // server-ns
  std::uint64_t granted_ = 0;
  std::uint64_t completed_ = 0;
  SimTime total_wait_ = 0;
  std::size_t max_queue_ = 0;
};

}  // namespace gp::sim
