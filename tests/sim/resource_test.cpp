#include <catch2/catch.hpp>

#include <vector>

#include "sim/capacity_resource.hpp"
#include "sim/random.hpp"
#include "sim/shared_bandwidth.hpp"

using gp::ByteRate;
using gp::Bytes;
using gp::Seconds;
using gp::sim::CapacityResource;
using gp::sim::kMillisecond;
using gp::sim::kSecond;
using gp::sim::Process;
using gp::sim::SharedBandwidth;
using gp::sim::SimTime;
using gp::sim::Simulator;

TEST_CASE("sim::capacity: 2 servers, 5 jobs of 1 ms at t=0 finish at 1,1,2,2,3 ms") {
  Simulator sim;
  CapacityResource cores(sim, 2);
  std::vector<std::pair<int, SimTime>> done;
  for (int j = 0; j < 5; ++j) {
    cores.request(static_cast<gp::sim::HolderId>(j), kMillisecond, [&, j] { done.emplace_back(j, sim.now()); });
  }
  CHECK(cores.busy() == 2);
  CHECK(cores.queue_length() == 3);
  sim.run();
  const std::vector<std::pair<int, SimTime>> expected{
      {0, 1 * kMillisecond}, {1, 1 * kMillisecond}, {2, 2 * kMillisecond}, {3, 2 * kMillisecond}, {4, 3 * kMillisecond}};
  CHECK(done == expected);
  const auto s = cores.stats();
  // Busy: 2 servers for 2 ms + 1 server for 1 ms = 5 server-ms over 2 servers x 3 ms.
  CHECK(s.busy_server_time.ms() == Approx(5.0));
  CHECK(s.utilisation == Approx(5.0 / 6.0));
  // Waits: jobs 2,3 wait 1 ms, job 4 waits 2 ms.
  CHECK(s.total_wait.ms() == Approx(4.0));
  CHECK(s.granted == 5);
  CHECK(s.completed == 5);
  CHECK(s.max_queue_length == 3);
  CHECK(cores.busy_time_of(4).ms() == Approx(1.0));
}

TEST_CASE("sim::capacity: staggered arrivals queue FIFO (hand-computed M/D/1 trace)") {
  // One server, service 3 ms; arrivals at 0, 1, 2, 10 ms -> starts 0, 3, 6, 10; ends 3, 6, 9, 13.
  Simulator sim;
  CapacityResource disk(sim, 1);
  std::vector<SimTime> ends;
  for (SimTime a : {0, 1, 2, 10}) {
    sim.schedule_at(a * kMillisecond, [&] { disk.request(0, Seconds::ms(3), [&] { ends.push_back(sim.now()); }); });
  }
  sim.run_until(20 * kMillisecond);
  CHECK(ends == std::vector<SimTime>{3 * kMillisecond, 6 * kMillisecond, 9 * kMillisecond, 13 * kMillisecond});
  CHECK(disk.stats().utilisation == Approx(12.0 / 20.0));
  CHECK(disk.stats().total_wait.ms() == Approx(2.0 + 4.0));
}

TEST_CASE("sim::capacity: acquire/release holds a server until released") {
  Simulator sim;
  CapacityResource engine(sim, 1);
  std::vector<std::pair<int, SimTime>> granted;
  engine.acquire(1, [&] {
    granted.emplace_back(1, sim.now());
    sim.schedule_in(5 * kMillisecond, [&] { engine.release(1); });
  });
  engine.acquire(2, [&] {
    granted.emplace_back(2, sim.now());
    engine.release(2);
  });
  sim.run();
  CHECK(granted == std::vector<std::pair<int, SimTime>>{{1, 0}, {2, 5 * kMillisecond}});
  CHECK(engine.busy() == 0);
  CHECK(engine.busy_time_of(1).ms() == Approx(5.0));
  CHECK(engine.busy_time_of(2).ms() == Approx(0.0));
}

namespace {
Process worker(Simulator& sim, CapacityResource& cores, int id, std::vector<std::pair<int, SimTime>>& log) {
  for (int i = 0; i < 2; ++i) {
    co_await cores.use(static_cast<gp::sim::HolderId>(id), Seconds::ms(2));
    log.emplace_back(id, sim.now());
  }
}
}  // namespace

TEST_CASE("sim::capacity: coroutine workers share cores") {
  // 3 workers x 2 jobs of 2 ms on 2 cores. t=0: w0, w1 served, w2 queued. t=2: w0 done -> w2 starts,
  // w0 queues again; w1 done -> w0 starts, w1 queues. t=4: w2 done -> w1 starts, w2 queues; w0 done
  // -> w2 starts. t=6: w1, w2 done. The cores never idle: utilisation 1.
  Simulator sim;
  CapacityResource cores(sim, 2);
  std::vector<std::pair<int, SimTime>> log;
  for (int w = 0; w < 3; ++w) worker(sim, cores, w, log);
  sim.run();
  const SimTime ms = kMillisecond;
  CHECK(log == std::vector<std::pair<int, SimTime>>{{0, 2 * ms}, {1, 2 * ms}, {2, 4 * ms}, {0, 4 * ms},
                                                     {1, 6 * ms}, {2, 6 * ms}});
  CHECK(cores.stats().utilisation == Approx(1.0));
}

TEST_CASE("sim::bandwidth: two 1 GB transfers starting together on 1 GB/s finish at 2 s") {
  Simulator sim;
  SharedBandwidth link(sim, ByteRate::gbps(1));
  std::vector<SimTime> done;
  link.start(Bytes::gb(1), [&] { done.push_back(sim.now()); });
  link.start(Bytes::gb(1), [&] { done.push_back(sim.now()); });
  CHECK(link.active() == 2);
  sim.run();
  CHECK(done == std::vector<SimTime>{2 * kSecond, 2 * kSecond});
  const auto s = link.stats();
  CHECK(s.delivered.gb() == Approx(2.0));
  CHECK(s.busy_time.value() == Approx(2.0));
  CHECK(s.utilisation == Approx(1.0));
}

TEST_CASE("sim::bandwidth: a transfer joining at 0.5 s slows the first (hand-computed)") {
  // A alone 0-0.5 s at 1 GB/s: 0.5 GB moved. Then each 0.5 GB/s: A's last 0.5 GB takes 1 s -> 1.5 s.
  // B moved 0.5 GB by 1.5 s, then alone at 1 GB/s for its last 0.5 GB -> 2.0 s.
  Simulator sim;
  SharedBandwidth link(sim, ByteRate::gbps(1));
  SimTime a_done = -1, b_done = -1;
  link.start(Bytes::gb(1), [&] { a_done = sim.now(); });
  sim.schedule_at(kSecond / 2, [&] { link.start(Bytes::gb(1), [&] { b_done = sim.now(); }); });
  sim.run();
  CHECK(a_done == 1'500'000'000);
  CHECK(b_done == 2'000'000'000);
}

TEST_CASE("sim::bandwidth: per-transfer caps give max-min fair shares") {
  // 10 GB/s link; A capped at 2 GB/s, B and C uncapped: A 2, B 4, C 4 GB/s.
  // A: 4 GB -> 2 s. B: 8 GB -> 2 s. C: 20 GB: 8 GB by 2 s, then alone 10 GB/s for 12 GB -> 3.2 s.
  Simulator sim;
  SharedBandwidth link(sim, ByteRate::gbps(10));
  SimTime a = -1, b = -1, c = -1;
  link.start(Bytes::gb(4), [&] { a = sim.now(); }, ByteRate::gbps(2));
  link.start(Bytes::gb(8), [&] { b = sim.now(); });
  link.start(Bytes::gb(20), [&] { c = sim.now(); });
  sim.run();
  CHECK(a == 2 * kSecond);
  CHECK(b == 2 * kSecond);
  CHECK(c == 3'200'000'000);
  // A capped transfer alone runs at its cap, not the link's capacity: 1 GB at 2 GB/s = 0.5 s.
  SimTime d = -1;
  const SimTime t0 = sim.now();
  link.start(Bytes::gb(1), [&] { d = sim.now() - t0; }, ByteRate::gbps(2));
  sim.run();
  CHECK(d == kSecond / 2);
}

TEST_CASE("sim::bandwidth: zero-byte transfers complete at once, in start order") {
  Simulator sim;
  SharedBandwidth link(sim, ByteRate::gbps(1));
  std::vector<int> order;
  link.start(Bytes(0.0), [&] { order.push_back(1); });
  link.start(Bytes(0.0), [&] { order.push_back(2); });
  sim.run();
  CHECK(order == std::vector<int>{1, 2});
  CHECK(sim.now() == 0);
}

TEST_CASE("sim::bandwidth: random transfers conserve bytes and never exceed capacity") {
  Simulator sim;
  const ByteRate cap = ByteRate::gbps(25);
  SharedBandwidth nic(sim, cap);
  gp::sim::Rng rng(99);
  double requested = 0.0;
  int completed = 0;
  const int n = 300;
  for (int i = 0; i < n; ++i) {
    const double bytes = 1e6 + rng.uniform() * 1e9;
    requested += bytes;
    const SimTime at = static_cast<SimTime>(rng.exponential(0.02) * 1e9) * (i % 7);
    const ByteRate limit = rng.below(2) == 0 ? SharedBandwidth::kUncapped : ByteRate::gbps(3);
    sim.schedule_at(at, [&, bytes, limit] { nic.start(Bytes(bytes), [&] { ++completed; }, limit); });
  }
  sim.run();
  const auto s = nic.stats();
  CHECK(completed == n);
  CHECK(s.completed == static_cast<std::uint64_t>(n));
  CHECK(s.delivered.value() == Approx(requested).epsilon(1e-9));
  // Work conservation bound: a link never moves more than capacity x busy time.
  CHECK(s.delivered.value() <= cap.value() * s.busy_time.value() * (1 + 1e-9));
  CHECK(nic.active() == 0);
}

namespace {
Process copier(Simulator& sim, SharedBandwidth& pcie, std::vector<SimTime>& log) {
  co_await pcie.transfer(Bytes::gb(2));
  log.push_back(sim.now());
}
}  // namespace

TEST_CASE("sim::bandwidth: coroutine transfers share the link") {
  // Four 2 GB copies on a 8 GB/s link starting together: each 2 GB/s -> all done at 1 s.
  Simulator sim;
  SharedBandwidth pcie(sim, ByteRate::gbps(8));
  std::vector<SimTime> log;
  for (int i = 0; i < 4; ++i) copier(sim, pcie, log);
  sim.run();
  CHECK(log == std::vector<SimTime>(4, kSecond));
}
