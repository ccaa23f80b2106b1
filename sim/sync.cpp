#include "sim/sync.hpp"

namespace gp::sim {

void Latch::count_down(std::size_t n) {
  assert(n <= remaining_ && "Latch::count_down: below zero");
  remaining_ -= n;
  if (remaining_ != 0) return;
  for (Callback& cb : waiters_) sim_.schedule_in(SimTime{0}, std::move(cb));
  waiters_.clear();
}

void Latch::wait(Callback on_open) {
  if (remaining_ == 0) {
    sim_.schedule_in(SimTime{0}, std::move(on_open));
  } else {
    waiters_.push_back(std::move(on_open));
  }
}

BoundedBuffer::BoundedBuffer(Simulator& sim, std::size_t capacity, std::size_t initial)
    : sim_(sim), capacity_(capacity), items_(initial), created_(sim.now()), last_(sim.now()) {
  assert(capacity >= 1 && initial <= capacity && "BoundedBuffer: bad capacity");
}

void BoundedBuffer::put(Callback on_stored) {
  putters_.push_back(Waiter{sim_.now(), std::move(on_stored)});
  settle();
}

void BoundedBuffer::get(Callback on_taken) {
  getters_.push_back(Waiter{sim_.now(), std::move(on_taken)});
  settle();
}

void BoundedBuffer::settle() {
  account();
  for (bool progress = true; progress;) {
    progress = false;
    if (!putters_.empty() && items_ < capacity_) {
      Waiter w = std::move(putters_.front());
      putters_.pop_front();
      ++items_;
      ++puts_;
      put_wait_ += sim_.now() - w.since;
      sim_.schedule_in(SimTime{0}, std::move(w.cb));
      progress = true;
    }
    if (!getters_.empty() && items_ > 0) {
      Waiter w = std::move(getters_.front());
      getters_.pop_front();
      --items_;
      ++gets_;
      get_wait_ += sim_.now() - w.since;
      sim_.schedule_in(SimTime{0}, std::move(w.cb));
      progress = true;
    }
  }
}

void BoundedBuffer::account() {
  occupancy_integral_ += static_cast<double>(items_) * static_cast<double>(sim_.now() - last_);
  last_ = sim_.now();
}

BufferStats BoundedBuffer::stats() const {
  BufferStats s;
  s.puts = puts_;
  s.gets = gets_;
  s.put_wait = to_seconds(put_wait_);
  s.get_wait = to_seconds(get_wait_);
  const SimTime elapsed = sim_.now() - created_;
  const double integral = occupancy_integral_ + static_cast<double>(items_) * static_cast<double>(sim_.now() - last_);
  s.mean_occupancy = elapsed > 0 ? integral / static_cast<double>(elapsed) : 0.0;
  return s;
}

}  // namespace gp::sim
