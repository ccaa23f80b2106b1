#include "sim/capacity_resource.hpp"

namespace gp::sim {

CapacityResource::CapacityResource(Simulator& sim, int servers)
    : sim_(sim), servers_(servers), created_(sim.now()), last_change_(sim.now()) {
  assert(servers >= 1 && "CapacityResource: needs at least one server");
}

void CapacityResource::request(HolderId holder, SimTime service_time, Callback on_done) {
  assert(service_time >= 0 && "CapacityResource::request: negative service time");
  Waiter w{holder, service_time, sim_.now(), std::move(on_done)};
  if (busy_ < servers_) {
    grant(std::move(w));
  } else {
    waiting_.push_back(std::move(w));
    if (waiting_.size() > max_queue_) max_queue_ = waiting_.size();
  }
}

void CapacityResource::acquire(HolderId holder, Callback on_granted) {
  Waiter w{holder, kUntilReleased, sim_.now(), std::move(on_granted)};
  if (busy_ < servers_) {
    grant(std::move(w));
  } else {
    waiting_.push_back(std::move(w));
    if (waiting_.size() > max_queue_) max_queue_ = waiting_.size();
  }
}

void CapacityResource::grant(Waiter w) {
  account();
  ++busy_;
  holder_change(w.holder, +1);
  ++granted_;
  total_wait_ += sim_.now() - w.enqueued;
  if (w.service == kUntilReleased) {
    sim_.schedule_in(SimTime{0}, std::move(w.cb));
    return;
  }
  std::uint32_t slot;
  if (free_done_.empty()) {
    slot = static_cast<std::uint32_t>(done_.size());
    done_.emplace_back();
  } else {
    slot = free_done_.back();
    free_done_.pop_back();
  }
  done_[slot] = std::move(w.cb);
  const HolderId holder = w.holder;
  sim_.schedule_in(w.service, [this, slot, holder] { finish_service(slot, holder); });
}

void CapacityResource::finish_service(std::uint32_t done_slot, HolderId holder) {
  Callback cb = std::move(done_[done_slot]);
  free_done_.push_back(done_slot);
  release(holder);  // the next waiter is served before on_done can queue again: FIFO
  if (cb) cb();
}

void CapacityResource::release(HolderId holder) {
  assert(busy_ > 0 && holder < holders_.size() && holders_[holder].held > 0 &&
         "CapacityResource::release: holder holds no server");
  account();
  --busy_;
  holder_change(holder, -1);
  ++completed_;
  if (!waiting_.empty()) {
    Waiter w = std::move(waiting_.front());
    waiting_.pop_front();
    grant(std::move(w));
  }
}

void CapacityResource::account() {
  busy_integral_ += static_cast<SimTime>(busy_) * (sim_.now() - last_change_);
  last_change_ = sim_.now();
}

void CapacityResource::holder_change(HolderId holder, int delta) {
  if (holder >= holders_.size()) holders_.resize(holder + 1);
  HolderUse& u = holders_[holder];
  u.integral += static_cast<SimTime>(u.held) * (sim_.now() - u.since);
  u.since = sim_.now();
  u.held = static_cast<std::uint32_t>(static_cast<int>(u.held) + delta);
}

CapacityStats CapacityResource::stats() const {
  CapacityStats s;
  const SimTime busy = busy_integral_ + static_cast<SimTime>(busy_) * (sim_.now() - last_change_);
  const SimTime elapsed = sim_.now() - created_;
  s.busy_server_time = to_seconds(busy);
  s.elapsed = to_seconds(elapsed);
  s.utilisation = elapsed > 0 ? static_cast<double>(busy) / (static_cast<double>(servers_) * elapsed) : 0.0;
  s.granted = granted_;
  s.completed = completed_;
  s.total_wait = to_seconds(total_wait_);
  s.max_queue_length = max_queue_;
  return s;
}

Seconds CapacityResource::busy_time_of(HolderId holder) const {
  if (holder >= holders_.size()) return Seconds(0.0);
  const HolderUse& u = holders_[holder];
  return to_seconds(u.integral + static_cast<SimTime>(u.held) * (sim_.now() - u.since));
}

}  // namespace gp::sim
