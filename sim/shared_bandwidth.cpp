#include "sim/shared_bandwidth.hpp"

#include <algorithm>
#include <cmath>

namespace gp::sim {

namespace {
// Nanoseconds to move `bytes` at `rate` bytes/s: rounded up, or to the nearest ns when within 1e-6 ns
// of it, so that exact cases (1 GB at 0.5 GB/s) land on exact times despite floating-point noise.
// Saturates at `limit` (the time left before kTimeMax) instead of overflowing.
SimTime ns_to_move(double bytes, double rate, SimTime limit) {
  const double ns = bytes / rate * 1e9;
  if (!(ns < static_cast<double>(limit))) return limit;
  const double nearest = std::round(ns);
  if (std::abs(ns - nearest) <= 1e-6) return static_cast<SimTime>(nearest);
  return static_cast<SimTime>(std::ceil(ns));
}
}  // namespace

SharedBandwidth::SharedBandwidth(Simulator& sim, ByteRate capacity)
    : sim_(sim), capacity_(capacity.value()), created_(sim.now()), last_(sim.now()) {
  assert(capacity_ > 0.0 && "SharedBandwidth: capacity must be positive");
}

void SharedBandwidth::start(Bytes bytes, Callback on_done, ByteRate max_rate) {
  assert(bytes.value() >= 0.0 && max_rate.value() > 0.0 && "SharedBandwidth::start: bad transfer");
  advance();
  active_.push_back(Transfer{next_id_++, bytes.value(), max_rate.value(), 0.0, std::move(on_done)});
  reshare();
}

void SharedBandwidth::advance() {
  const SimTime dt = sim_.now() - last_;
  last_ = sim_.now();
  if (dt <= 0 || active_.empty()) return;
  busy_ += dt;
  const double secs = static_cast<double>(dt) * 1e-9;
  for (Transfer& t : active_) {
    const double moved = std::min(t.rate * secs, t.remaining);
    t.remaining -= moved;
    delivered_ += moved;
  }
}

void SharedBandwidth::reshare() {
  sim_.cancel(next_);
  next_ = EventId{};
  if (active_.empty()) return;
  // Equal shares unless some cap binds (the common case: no caps), else water-filling: serve transfers
  // in increasing cap order, each taking min(cap, equal share of what is left).
  double min_cap = active_.front().cap;
  for (const Transfer& t : active_) min_cap = std::min(min_cap, t.cap);
  const double equal = capacity_ / static_cast<double>(active_.size());
  if (min_cap >= equal) {
    for (Transfer& t : active_) t.rate = equal;
  } else {
    water_fill();
  }
  SimTime soonest = kTimeMax;
  const SimTime limit = kTimeMax - sim_.now();
  for (const Transfer& t : active_) soonest = std::min(soonest, ns_to_move(t.remaining, t.rate, limit));
  next_ = sim_.schedule_in(soonest, [this] { on_completion(); });
}

void SharedBandwidth::water_fill() {
  order_.resize(active_.size());
  for (std::size_t i = 0; i < order_.size(); ++i) order_[i] = i;
  std::sort(order_.begin(), order_.end(), [this](std::size_t a, std::size_t b) {
    return active_[a].cap < active_[b].cap || (active_[a].cap == active_[b].cap && a < b);
  });
  double left = capacity_;
  std::size_t n = order_.size();
  for (std::size_t i : order_) {
    Transfer& t = active_[i];
    t.rate = std::min(t.cap, left / static_cast<double>(n));
    left -= t.rate;
    --n;
  }
}

void SharedBandwidth::on_completion() {
  next_ = EventId{};
  advance();
  // Done: less than one nanosecond's worth of bytes left (covers rounding of the finish time).
  std::vector<Callback> done;
  done.swap(done_scratch_);  // reuse its capacity: no allocation per completion
  for (Transfer& t : active_) {
    if (t.remaining <= t.rate * 1e-9) {
      delivered_ += t.remaining;  // the sub-nanosecond remainder
      t.remaining = 0.0;
      t.finished = true;
      done.push_back(std::move(t.on_done));
    }
  }
  // active_ is kept in start order, so `done` is too: simultaneous completions run in start order.
  std::erase_if(active_, [](const Transfer& t) { return t.finished; });
  completed_ += done.size();
  reshare();
  for (Callback& cb : done) {
    if (cb) cb();
  }
  done.clear();
  done_scratch_.swap(done);
}

BandwidthStats SharedBandwidth::stats() const {
  BandwidthStats s;
  const SimTime since = sim_.now() - last_;
  double delivered = delivered_;
  for (const Transfer& t : active_) delivered += std::min(t.rate * since * 1e-9, t.remaining);
  const SimTime elapsed = sim_.now() - created_;
  s.delivered = Bytes(delivered);
  s.busy_time = to_seconds(busy_ + (active_.empty() ? 0 : since));
  s.elapsed = to_seconds(elapsed);
  s.utilisation = elapsed > 0 ? delivered / (capacity_ * static_cast<double>(elapsed) * 1e-9) : 0.0;
  s.started = next_id_;
  s.completed = completed_;
  return s;
}

}  // namespace gp::sim
