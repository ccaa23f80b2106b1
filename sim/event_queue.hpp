// EventQueue: pending events ordered by (time, sequence number), with cancellation by handle.
//
// Ties in time run first-in first-out because every insertion takes the next sequence number and the
// heap orders on (time, sequence); the order of a run therefore depends only on what was scheduled, in
// which order, never on the heap's internals, and two runs of the same inputs are identical.
//
// Layout: a binary min-heap of 24-byte keys {time, sequence, slot}; the callbacks live in a slab of
// fixed-size chunks (stable addresses, slots reused through a free list), so sifting moves only keys
// and a callback may schedule new events while it runs.
// Cancellation is lazy: cancel() destroys the callback and frees its slot at once; the key stays in the
// heap and is discarded when it reaches the top (its sequence no longer matches the slot's).
//
//   operation        time                 memory
//   insert           O(log n)             24 B key + 64 B slot per pending event
//   peek_time        O(1) amortised       -
//   pop              O(log n)             -
//   cancel           O(1) (+ lazy pop)    key stays until popped
//   size / empty     O(1)                 -
// n counts keys, cancelled ones included until they reach the top.
#pragma once

#include <cassert>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "sim/callback.hpp"
#include "sim/time.hpp"

namespace gp::sim {

// Handle to a scheduled event, for cancel(). A default-constructed EventId refers to no event.
struct EventId {
  std::uint64_t seq = 0;   // 0: no event
  std::uint32_t slot = 0;
  [[nodiscard]] bool valid() const { return seq != 0; }
  friend bool operator==(EventId, EventId) = default;
};

class EventQueue {
 public:
  EventQueue() = default;
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  // Schedules cb at time t. Returns a handle valid until the event runs or is cancelled.
  template <class F>
  EventId insert(SimTime t, F&& cb) {
    const std::uint32_t slot = alloc_slot();
    Slot& s = slot_ref(slot);
    ::new (&s.cb) Callback(std::forward<F>(cb));
    const std::uint64_t seq = next_seq_++;
    s.seq = seq;
    push_key(Key{t, seq, slot});
    ++live_;
    return EventId{seq, slot};
  }

  // Cancels a pending event. Returns false when it already ran, was cancelled, or is not valid.
  bool cancel(EventId id) {
    if (!id.valid() || id.slot >= capacity_) return false;
    Slot& s = slot_ref(id.slot);
    if (s.seq != id.seq) return false;
    release_slot(id.slot);
    --live_;
    return true;
  }

  // True when no live (uncancelled) event is pending.
  [[nodiscard]] bool empty() const { return live_ == 0; }
  // Number of live pending events.
  [[nodiscard]] std::size_t size() const { return live_; }

  // Time of the earliest live event. Precondition: !empty().
  [[nodiscard]] SimTime peek_time() {
    drop_stale_top();
    return heap_.front().time;
  }

  // Removes the earliest live event; returns its time and slot for invoke_and_free().
  // Precondition: !empty().
  std::pair<SimTime, std::uint32_t> pop() {
    drop_stale_top();
    const Key k = heap_.front();
    pop_key();
    slot_ref(k.slot).seq = 0;  // from now on cancel() of this event returns false
    --live_;
    return {k.time, k.slot};
  }

  // Runs the callback of a popped slot, then frees the slot. The callback may insert and cancel.
  void invoke_and_free(std::uint32_t slot) {
    slot_ref(slot).cb();
    release_slot(slot);
  }

  ~EventQueue() {
    for (const Key& k : heap_) {
      if (slot_ref(k.slot).seq == k.seq) slot_ref(k.slot).cb.~Callback();
    }
  }

 private:
  struct Key {
    SimTime time;
    std::uint64_t seq;
    std::uint32_t slot;
  };
  struct Slot {
    union {
      Callback cb;  // constructed while the slot is in use
    };
    std::uint64_t seq = 0;  // sequence of the live event here, 0 when free, running or cancelled
    Slot() {}
    ~Slot() {}
  };
  static constexpr unsigned kChunkBits = 10;
  static constexpr std::uint32_t kChunkSize = 1u << kChunkBits;

  static bool before(const Key& a, const Key& b) {
    return a.time < b.time || (a.time == b.time && a.seq < b.seq);
  }

  Slot& slot_ref(std::uint32_t i) { return chunks_[i >> kChunkBits][i & (kChunkSize - 1)]; }

  std::uint32_t alloc_slot() {
    if (free_.empty()) {
      chunks_.push_back(std::make_unique<Slot[]>(kChunkSize));
      for (std::uint32_t i = kChunkSize; i-- > 0;) free_.push_back(capacity_ + i);
      capacity_ += kChunkSize;
    }
    const std::uint32_t slot = free_.back();
    free_.pop_back();
    return slot;
  }

  void release_slot(std::uint32_t i) {
    Slot& s = slot_ref(i);
    s.cb.~Callback();
    s.seq = 0;
    free_.push_back(i);
  }

  void drop_stale_top() {
    assert(live_ > 0 && "EventQueue: peek/pop on an empty queue");
    while (slot_ref(heap_.front().slot).seq != heap_.front().seq) pop_key();
  }

  void push_key(Key k) {
    heap_.push_back(k);
    std::size_t i = heap_.size() - 1;
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!before(k, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = k;
  }

  void pop_key() {
    const Key last = heap_.back();
    heap_.pop_back();
    const std::size_t n = heap_.size();
    if (n == 0) return;
    std::size_t i = 0;
    for (;;) {
      std::size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
      if (!before(heap_[child], last)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = last;
  }

  std::vector<Key> heap_;
  std::vector<std::unique_ptr<Slot[]>> chunks_;
  std::vector<std::uint32_t> free_;
  std::uint32_t capacity_ = 0;
  std::uint64_t next_seq_ = 1;
  std::size_t live_ = 0;
};

}  // namespace gp::sim
