#include "sim/engine.hpp"

namespace gp::sim {

Simulator::~Simulator() {
  // Destroying a frame runs its promise's destructor, which unlinks it from the list.
  while (processes_ != nullptr) processes_->destroy_frame();
}

void Simulator::run_until(SimTime t) {
  assert(t >= now_ && "Simulator::run_until: time in the past");
  stopped_ = false;
  while (!stopped_ && !queue_.empty() && queue_.peek_time() <= t) {
    const auto [time, slot] = queue_.pop();
    now_ = time;
    ++executed_;
    queue_.invoke_and_free(slot);
  }
  if (!stopped_ && t != kTimeMax) now_ = t;
  if (process_error_) std::rethrow_exception(std::exchange(process_error_, nullptr));
}

ProcessPromiseBase::ProcessPromiseBase(Simulator& sim) : sim_(&sim), next_(sim.processes_) {
  if (next_ != nullptr) next_->prev_ = this;
  sim.processes_ = this;
  ++sim.live_processes_;
}

ProcessPromiseBase::~ProcessPromiseBase() {
  if (prev_ != nullptr) {
    prev_->next_ = next_;
  } else {
    sim_->processes_ = next_;
  }
  if (next_ != nullptr) next_->prev_ = prev_;
  --sim_->live_processes_;
}

void ProcessPromiseBase::unhandled_exception() noexcept {
  if (!sim_->process_error_) sim_->process_error_ = std::current_exception();
  sim_->stop();
}

}  // namespace gp::sim
