// EventQueue: pending events ordered by (time, sequence number), with cancellation by handle.
//
// Ties in time run first-in first-out because every insertion takes the next sequence number and the
// heap orders on (time, sequence); the order of a run therefore depends only on what was scheduled, in
// which order, never on the heap's internals, and two runs of the same inputs are identical.
//
// Layout: a 4-ary min-heap of 24-byte keys {time, sequence, slot}; the callbacks live in a slab of
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
// The interface follows ns-3's Scheduler: Insert = insert, IsEmpty = empty, PeekNext = peek_time,
// RemoveNext = pop (+ invoke_and_free), Remove = cancel.
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

  // (time, seq) lexicographic order as one 128-bit comparison: branch-free, so the child selection
  // in pop_key() compiles to conditional moves instead of unpredictable branches.
  static bool before(const Key& a, const Key& b) {
    __extension__ using U128 = unsigned __int128;
    constexpr std::uint64_t kBias = std::uint64_t{1} << 63;  // maps signed time order onto unsigned
    const U128 ka = (U128{static_cast<std::uint64_t>(a.time) ^ kBias} << 64) | a.seq;
    const U128 kb = (U128{static_cast<std::uint64_t>(b.time) ^ kBias} << 64) | b.seq;
    return ka < kb;
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

  // 4-ary heap: half the depth of a binary heap, and a node's four children share a cache line or two.
  // Measured on PHOLD with 1,000 pending events: 16 M events/s against 11-12 M with kArity = 2
  // (docs/performance.md); at 100,000 pending events the two are within noise.
  static constexpr std::size_t kArity = 4;

  void push_key(Key k) {
    heap_.push_back(k);
    std::size_t i = heap_.size() - 1;
    while (i > 0) {
      const std::size_t parent = (i - 1) / kArity;
      if (!before(k, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = k;
  }

  // Removes the root. Bottom-up: the hole walks down along the smaller children to a leaf, then the
  // last key climbs back from there; it usually belongs near the bottom, so this saves the comparison
  // with it at every level of the way down.
  void pop_key() {
    const Key last = heap_.back();
    heap_.pop_back();
    const std::size_t n = heap_.size();
    if (n == 0) return;
    Key* h = heap_.data();
    std::size_t hole = 0;
    for (;;) {
      const std::size_t first = kArity * hole + 1;
      std::size_t best;
      if (kArity == 4 && first + kArity <= n) {
        // Index arithmetic on the comparison results (not ?:) keeps GCC from emitting branches,
        // which mispredict half the time here.
        const std::size_t a = first + static_cast<std::size_t>(before(h[first + 1], h[first]));
        const std::size_t b = first + 2 + static_cast<std::size_t>(before(h[first + 3], h[first + 2]));
        best = a + (b - a) * static_cast<std::size_t>(before(h[b], h[a]));
      } else if (first < n) {
        best = first;
        const std::size_t end = first + kArity < n ? first + kArity : n;
        for (std::size_t c = first + 1; c < end; ++c) best = before(h[c], h[best]) ? c : best;
      } else {
        break;
      }
      h[hole] = h[best];
      hole = best;
    }
    while (hole > 0) {
      const std::size_t parent = (hole - 1) / kArity;
      if (!before(last, h[parent])) break;
      h[hole] = h[parent];
      hole = parent;
    }
    h[hole] = last;
  }

  std::vector<Key> heap_;
  std::vector<std::unique_ptr<Slot[]>> chunks_;
  std::vector<std::uint32_t> free_;
  std::uint32_t capacity_ = 0;
  std::uint64_t next_seq_ = 1;
  std::size_t live_ = 0;
};

}  // namespace gp::sim
