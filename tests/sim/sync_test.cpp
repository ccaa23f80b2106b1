#include <catch2/catch.hpp>

#include <vector>

#include "sim/sync.hpp"

using gp::Seconds;
using gp::sim::BoundedBuffer;
using gp::sim::kMillisecond;
using gp::sim::Latch;
using gp::sim::Process;
using gp::sim::SimTime;
using gp::sim::Simulator;

TEST_CASE("sim::sync: a latch opens when the last of its tasks is done") {
  Simulator sim;
  Latch step_done(sim, 3);
  for (SimTime d : {2, 5, 3}) sim.schedule_in(d * kMillisecond, [&] { step_done.count_down(); });
  SimTime opened = -1;
  step_done.wait([&] { opened = sim.now(); });
  sim.run();
  CHECK(opened == 5 * kMillisecond);
  CHECK(step_done.remaining() == 0);
  // Waiting on an open latch continues at once (at the current time).
  SimTime again = -1;
  step_done.wait([&] { again = sim.now(); });
  sim.run();
  CHECK(again == 5 * kMillisecond);
}

namespace {
Process producer(Simulator& sim, BoundedBuffer& buf, int n, SimTime every) {
  for (int i = 0; i < n; ++i) {
    co_await sim.delay(every);
    co_await buf.put();
  }
}
Process consumer(Simulator& sim, BoundedBuffer& buf, int n, SimTime work, std::vector<SimTime>& got) {
  for (int i = 0; i < n; ++i) {
    co_await buf.get();
    got.push_back(sim.now());
    co_await sim.delay(work);
  }
}
}  // namespace

TEST_CASE("sim::sync: a slow producer makes the consumer stall (hand-computed)") {
  // Items at 3, 6, 9 ms; the consumer works 1 ms per item, so it waits 3 + 2 + 2 ms.
  Simulator sim;
  BoundedBuffer buf(sim, 2);
  std::vector<SimTime> got;
  consumer(sim, buf, 3, kMillisecond, got);
  producer(sim, buf, 3, 3 * kMillisecond);
  sim.run();
  CHECK(got == std::vector<SimTime>{3 * kMillisecond, 6 * kMillisecond, 9 * kMillisecond});
  CHECK(buf.stats().get_wait.ms() == Approx(7.0));
  CHECK(buf.stats().put_wait.ms() == Approx(0.0));
}

TEST_CASE("sim::sync: a full buffer blocks the producer (hand-computed)") {
  // Producer: an item every 1 ms (5 items); consumer: 5 ms per item; capacity 2.
  // Gets at 1, 6, 11, 16, 21 ms. The 4th put (ready at 4) waits until 6, the 5th (ready at 7)
  // until 11: put wait 2 + 4 ms. Occupancy: 1 item during [2,3), 2 during [3,16), 1 during [16,21)
  // -> 1 + 26 + 5 = 32 item-ms over 26 ms.
  Simulator sim;
  BoundedBuffer buf(sim, 2);
  std::vector<SimTime> got;
  consumer(sim, buf, 5, 5 * kMillisecond, got);
  producer(sim, buf, 5, kMillisecond);
  sim.run();
  const SimTime ms = kMillisecond;
  CHECK(got == std::vector<SimTime>{1 * ms, 6 * ms, 11 * ms, 16 * ms, 21 * ms});
  CHECK(sim.now() == 26 * ms);
  const auto s = buf.stats();
  CHECK(s.puts == 5);
  CHECK(s.gets == 5);
  CHECK(s.get_wait.ms() == Approx(1.0));
  CHECK(s.put_wait.ms() == Approx(6.0));
  CHECK(s.mean_occupancy == Approx(32.0 / 26.0));
  CHECK(buf.size() == 0);
}
