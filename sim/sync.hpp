// Synchronisation between simulated activities: a Latch (wait until n things are done) and a
// BoundedBuffer (a producer/consumer queue of identical items with a capacity).
//
// Uses in a training step: a Latch ends a synchronous step when every rank (or every gradient bucket's
// all-reduce) is done; a BoundedBuffer is a DataLoader's prefetch queue of prefetch_factor x workers
// batches, where workers block when it is full and the training loop stalls when it is empty (its
// get-wait time is the data-loader stall).
// Waiters are served first-in first-out and are resumed through events at the current time, never from
// inside the call that released them, so no callback runs re-entrantly.
#pragma once

#include <coroutine>
#include <cstddef>
#include <deque>
#include <vector>

#include "sim/engine.hpp"

namespace gp::sim {

// Counts down from n; waiters run once it reaches zero.
class Latch {
 public:
  // count >= 0; a latch created at 0 is already open.
  Latch(Simulator& sim, std::size_t count) : sim_(sim), remaining_(count) {}
  // Precondition: n <= remaining().
  void count_down(std::size_t n = 1);
  // on_open runs (as an event) when the count reaches zero, at once if it is zero already.
  void wait(Callback on_open);
  [[nodiscard]] std::size_t remaining() const { return remaining_; }

  struct WaitAwaiter {
    Latch* latch;
    [[nodiscard]] bool await_ready() const noexcept { return latch->remaining_ == 0; }
    void await_suspend(std::coroutine_handle<> h) const { latch->wait([h] { h.resume(); }); }
    void await_resume() const noexcept {}
  };
  // `co_await latch.wait()`: continues at once when open, else when the count reaches zero.
  [[nodiscard]] WaitAwaiter wait() { return {this}; }

 private:
  Simulator& sim_;
  std::size_t remaining_;
  std::vector<Callback> waiters_;
};

// Statistics of a BoundedBuffer from its construction to now().
struct BufferStats {
  std::uint64_t puts = 0;        // items stored
  std::uint64_t gets = 0;        // items taken
  Seconds put_wait;              // summed time producers waited for room (blocked workers)
  Seconds get_wait;              // summed time consumers waited for an item (stalls)
  double mean_occupancy = 0.0;   // time-averaged items held; 0 when no time has passed
};

// A FIFO of identical items (e.g. ready batches) holding at most `capacity`.
class BoundedBuffer {
 public:
  // Precondition: capacity >= 1. `initial` items (<= capacity) are present at the start.
  BoundedBuffer(Simulator& sim, std::size_t capacity, std::size_t initial = 0);
  BoundedBuffer(const BoundedBuffer&) = delete;
  BoundedBuffer& operator=(const BoundedBuffer&) = delete;

  // Stores one item, waiting while full; on_stored runs (as an event) once it is in.
  void put(Callback on_stored);
  // Takes one item, waiting while empty; on_taken runs (as an event) once it is taken.
  void get(Callback on_taken);

  [[nodiscard]] std::size_t size() const { return items_; }
  [[nodiscard]] std::size_t capacity() const { return capacity_; }
  [[nodiscard]] BufferStats stats() const;

  struct PutAwaiter {
    BoundedBuffer* b;
    [[nodiscard]] bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) const { b->put([h] { h.resume(); }); }
    void await_resume() const noexcept {}
  };
  struct GetAwaiter {
    BoundedBuffer* b;
    [[nodiscard]] bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) const { b->get([h] { h.resume(); }); }
    void await_resume() const noexcept {}
  };
  // `co_await buf.put()` / `co_await buf.get()`.
  [[nodiscard]] PutAwaiter put() { return {this}; }
  [[nodiscard]] GetAwaiter get() { return {this}; }

 private:
  struct Waiter {
    SimTime since;
    Callback cb;
  };
  void settle();                  // serves waiting getters and putters while possible
  void account();                 // brings the occupancy integral up to now

  Simulator& sim_;
  std::size_t capacity_;
  std::size_t items_;
  std::deque<Waiter> putters_;
  std::deque<Waiter> getters_;
  SimTime created_;
  SimTime last_;
  double occupancy_integral_ = 0.0;  // item-ns
  SimTime put_wait_ = 0;
  SimTime get_wait_ = 0;
  std::uint64_t puts_ = 0;
  std::uint64_t gets_ = 0;
};

}  // namespace gp::sim
