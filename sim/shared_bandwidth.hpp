// SharedBandwidth: one link (PCIe switch uplink, NIC, network link, storage system) whose bandwidth
// concurrent transfers share max-min fairly (processor sharing, with optional per-transfer caps).
//
// Each active transfer gets an equal share of the capacity, except that a transfer never exceeds its
// own max_rate (e.g. a GPU's x16 link behind a faster switch); what a capped transfer leaves unused is
// shared by the others (water-filling). Whenever a transfer starts or ends, the remaining bytes are
// brought up to date, the shares recomputed, and the one pending completion event rescheduled.
// Latency is not modelled here: schedule the start after the latency if the link has one.
// Costs: start/complete O(k) for k concurrent transfers (O(k log k) when a cap binds); one pending
// event per link.
// Finish times are rounded to whole nanoseconds (to the nearest one when within 1e-6 ns of it).
#pragma once

#include <coroutine>
#include <cstdint>
#include <limits>
#include <vector>

#include "sim/engine.hpp"

namespace gp::sim {

// Statistics of a SharedBandwidth from its construction to now().
struct BandwidthStats {
  Bytes delivered;              // bytes moved so far (integral of the allocated rates)
  Seconds busy_time;            // time with at least one transfer active
  Seconds elapsed;              // simulated time since construction
  double utilisation = 0.0;     // delivered / (capacity * elapsed); 0 when elapsed is 0
  std::uint64_t started = 0;
  std::uint64_t completed = 0;
};

class SharedBandwidth {
 public:
  static constexpr ByteRate kUncapped = ByteRate(std::numeric_limits<double>::infinity());

  // Precondition: capacity > 0. The link must not outlive sim.
  SharedBandwidth(Simulator& sim, ByteRate capacity);
  SharedBandwidth(const SharedBandwidth&) = delete;
  SharedBandwidth& operator=(const SharedBandwidth&) = delete;

  // Starts moving `bytes` (>= 0) over the link; on_done runs when the last byte has arrived.
  // The transfer's rate is its max-min fair share, never above max_rate (> 0).
  void start(Bytes bytes, Callback on_done, ByteRate max_rate = kUncapped);

  [[nodiscard]] ByteRate capacity() const { return ByteRate(capacity_); }
  // Transfers in progress.
  [[nodiscard]] std::size_t active() const { return active_.size(); }
  [[nodiscard]] BandwidthStats stats() const;

  // Awaitable for processes: `co_await link.transfer(bytes)`.
  struct TransferAwaiter {
    SharedBandwidth* link;
    Bytes bytes;
    ByteRate max_rate;
    [[nodiscard]] bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) const { link->start(bytes, [h] { h.resume(); }, max_rate); }
    void await_resume() const noexcept {}
  };
  [[nodiscard]] TransferAwaiter transfer(Bytes bytes, ByteRate max_rate = kUncapped) {
    return {this, bytes, max_rate};
  }

 private:
  struct Transfer {
    std::uint64_t id;      // start order, for deterministic completion order
    double remaining;      // bytes
    double cap;            // bytes/s
    double rate = 0.0;     // bytes/s, current share
    Callback on_done;
    bool finished = false;
  };

  void advance();          // moves every transfer forward to now()
  void reshare();          // recomputes rates and reschedules the completion event
  void water_fill();       // max-min fair rates when some cap binds
  void on_completion();    // the completion event

  Simulator& sim_;
  double capacity_;        // bytes/s
  std::vector<Transfer> active_;
  std::vector<std::size_t> order_;  // scratch for water-filling
  std::vector<Callback> done_scratch_;  // scratch for on_completion()
  EventId next_;
  SimTime created_;
  SimTime last_;
  double delivered_ = 0.0;
  SimTime busy_ = 0;
  std::uint64_t next_id_ = 0;
  std::uint64_t completed_ = 0;
};

}  // namespace gp::sim
