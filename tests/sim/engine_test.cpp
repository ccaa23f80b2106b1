#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/engine.hpp"
#include "sim/random.hpp"

using gp::Seconds;
using gp::sim::EventId;
using gp::sim::kMillisecond;
using gp::sim::kSecond;
using gp::sim::Process;
using gp::sim::SimTime;
using gp::sim::Simulator;

TEST_CASE("sim::engine: time conversions round to the nanosecond") {
  CHECK(gp::sim::to_sim_time(Seconds(1.5)) == 1'500'000'000);
  CHECK(gp::sim::to_sim_time(Seconds::us(2.0004)) == 2'000);
  CHECK(gp::sim::to_sim_time(Seconds::ns(0.6)) == 1);
  CHECK(gp::sim::to_sim_time(Seconds(-2.0)) == -2 * kSecond);
  CHECK(gp::sim::to_seconds(250 * kMillisecond).value() == Approx(0.25));
  // 292 years fit: the range promised in sim/time.hpp.
  CHECK(gp::sim::to_sim_time(Seconds::hours(24.0 * 365.25 * 292)) > 0);
}

TEST_CASE("sim::engine: events run in time order, equal-time events FIFO") {
  Simulator sim;
  std::vector<int> order;
  sim.schedule_at(30, [&] { order.push_back(3); });
  for (int i = 0; i < 5; ++i) sim.schedule_at(10, [&order, i] { order.push_back(10 + i); });
  sim.schedule_at(5, [&] { order.push_back(0); });
  sim.run();
  CHECK(order == std::vector<int>{0, 10, 11, 12, 13, 14, 3});
  CHECK(sim.now() == 30);
  CHECK(sim.events_executed() == 7);
}

TEST_CASE("sim::engine: an event scheduled for now runs after those already due now") {
  Simulator sim;
  std::vector<std::string> order;
  sim.schedule_at(10, [&] {
    order.push_back("a");
    sim.schedule_in(SimTime{0}, [&] { order.push_back("c"); });
  });
  sim.schedule_at(10, [&] { order.push_back("b"); });
  sim.run();
  CHECK(order == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("sim::engine: cancelled events do not run and handles go stale") {
  Simulator sim;
  int ran = 0;
  EventId a = sim.schedule_at(10, [&] { ran += 1; });
  EventId b = sim.schedule_at(20, [&] { ran += 10; });
  CHECK(sim.pending() == 2);
  CHECK(sim.cancel(a));
  CHECK_FALSE(sim.cancel(a));  // twice
  CHECK(sim.pending() == 1);
  // The freed slot is reused; the stale handle must not cancel the new event.
  EventId c = sim.schedule_at(15, [&] { ran += 100; });
  CHECK_FALSE(sim.cancel(a));
  sim.run();
  CHECK(ran == 110);
  CHECK_FALSE(sim.cancel(b));  // already ran
  CHECK_FALSE(sim.cancel(c));
  CHECK_FALSE(sim.cancel(EventId{}));
  CHECK(sim.events_executed() == 2);
}

TEST_CASE("sim::engine: run_until stops at the right time and advances the clock") {
  Simulator sim;
  std::vector<SimTime> seen;
  for (SimTime t : {5, 10, 10, 11, 40}) sim.schedule_at(t, [&] { seen.push_back(sim.now()); });
  sim.run_until(10);  // events at exactly 10 run
  CHECK(seen == std::vector<SimTime>{5, 10, 10});
  CHECK(sim.now() == 10);
  sim.run_until(Seconds::ns(20));
  CHECK(seen.size() == 4);
  CHECK(sim.now() == 20);  // the clock moves to the horizon even without an event there
  CHECK(sim.pending() == 1);
  sim.run();
  CHECK(seen.back() == 40);
}

TEST_CASE("sim::engine: stop() returns after the current event and the run can resume") {
  Simulator sim;
  int count = 0;
  for (int i = 1; i <= 5; ++i) {
    sim.schedule_at(i, [&] {
      if (++count == 2) sim.stop();
    });
  }
  sim.run();
  CHECK(count == 2);
  CHECK(sim.now() == 2);
  sim.run();
  CHECK(count == 5);
}

namespace {
// A small PHOLD-like run that records its trace (time, lp) of every event.
std::vector<std::pair<SimTime, int>> phold_trace(std::uint64_t seed) {
  Simulator sim;
  gp::sim::Rng rng(seed);
  std::vector<std::pair<SimTime, int>> trace;
  struct Ctx {
    Simulator* sim;
    gp::sim::Rng* rng;
    std::vector<std::pair<SimTime, int>>* trace;
  } ctx{&sim, &rng, &trace};
  struct Hop {
    Ctx* c;
    int lp;
    void operator()() const {
      c->trace->emplace_back(c->sim->now(), lp);
      if (c->trace->size() >= 2000) return;
      // Delays are coarse so that many events tie in time: ties must also be reproducible.
      const SimTime dt = static_cast<SimTime>(c->rng->below(4)) * 100;
      c->sim->schedule_in(dt, Hop{c, static_cast<int>(c->rng->below(50))});
    }
  };
  for (int lp = 0; lp < 50; ++lp) sim.schedule_at(0, Hop{&ctx, lp});
  sim.run();
  return trace;
}
}  // namespace

TEST_CASE("sim::engine: identical inputs and seed give an identical event trace") {
  const auto a = phold_trace(42);
  const auto b = phold_trace(42);
  const auto c = phold_trace(43);
  REQUIRE(a.size() >= 2000);
  CHECK(a == b);
  CHECK(a != c);
  for (std::size_t i = 1; i < a.size(); ++i) REQUIRE(a[i - 1].first <= a[i].first);  // never back in time
}

TEST_CASE("sim::engine: callbacks with non-trivial captures are destroyed exactly once") {
  auto token = std::make_shared<int>(7);
  {
    Simulator sim;
    int sum = 0;
    sim.schedule_at(1, [token, &sum] { sum += *token; });
    EventId dropped = sim.schedule_at(2, [token, &sum] { sum += 100; });
    sim.schedule_at(3, [token] {});  // never runs: the simulator is destroyed first
    CHECK(token.use_count() == 4);
    sim.cancel(dropped);
    CHECK(token.use_count() == 3);
    sim.run_until(1);
    CHECK(sum == 7);
    CHECK(token.use_count() == 2);
  }
  CHECK(token.use_count() == 1);
}

TEST_CASE("sim::engine: many interleaved inserts and cancels run in (time, insertion) order") {
  // Reference: the surviving events, stably sorted by time (std::stable_sort keeps insertion order).
  Simulator sim;
  gp::sim::Rng rng(1);
  struct Ev {
    SimTime t;
    int index;
    EventId id;
    bool cancelled = false;
  };
  std::vector<Ev> evs;
  std::vector<int> ran;
  for (int i = 0; i < 5000; ++i) {
    const SimTime t = static_cast<SimTime>(rng.below(300));  // many ties
    evs.push_back(Ev{t, i, sim.schedule_at(t, [&ran, i] { ran.push_back(i); })});
    if (rng.below(3) == 0) {
      Ev& victim = evs[rng.below(evs.size())];
      if (sim.cancel(victim.id)) victim.cancelled = true;
    }
  }
  std::vector<Ev> expected;
  for (const Ev& e : evs) {
    if (!e.cancelled) expected.push_back(e);
  }
  std::stable_sort(expected.begin(), expected.end(), [](const Ev& a, const Ev& b) { return a.t < b.t; });
  std::vector<int> expected_order;
  for (const Ev& e : expected) expected_order.push_back(e.index);
  sim.run();
  CHECK(ran == expected_order);
}

namespace {
Process sleeper(Simulator& sim, std::vector<SimTime>& log, SimTime step, int n) {
  for (int i = 0; i < n; ++i) {
    co_await sim.delay(step);
    log.push_back(sim.now());
  }
}
Process thrower(Simulator& sim) {
  co_await sim.delay(Seconds::ms(1));
  throw std::runtime_error("boom");
}
}  // namespace

TEST_CASE("sim::engine: processes delay in simulated time") {
  Simulator sim;
  std::vector<SimTime> log;
  sleeper(sim, log, 3, 3);
  sleeper(sim, log, 4, 2);
  CHECK(sim.live_processes() == 2);
  sim.run();
  CHECK(log == std::vector<SimTime>{3, 4, 6, 8, 9});
  CHECK(sim.live_processes() == 0);
}

TEST_CASE("sim::engine: suspended processes are destroyed with the simulator") {
  auto token = std::make_shared<int>(0);
  {
    Simulator sim;
    auto holder = [](Simulator& s, std::shared_ptr<int> t) -> Process {
      co_await s.delay(kSecond);
      *t += 1;
    };
    holder(sim, token);
    CHECK(token.use_count() == 2);  // the frame holds a copy
    sim.run_until(kSecond / 2);
    CHECK(sim.live_processes() == 1);
  }
  CHECK(token.use_count() == 1);
  CHECK(*token == 0);
}

TEST_CASE("sim::engine: an exception in a process stops the run and is rethrown") {
  Simulator sim;
  int later = 0;
  thrower(sim);
  sim.schedule_in(Seconds::ms(2), [&] { later = 1; });
  CHECK_THROWS_WITH(sim.run(), "boom");
  CHECK(sim.now() == kMillisecond);
  CHECK(later == 0);
  sim.run();
  CHECK(later == 1);
}

TEST_CASE("sim::random: reproducible streams with the expected moments") {
  gp::sim::Rng a(123);
  gp::sim::Rng b(123);
  for (int i = 0; i < 100; ++i) REQUIRE(a.next_u64() == b.next_u64());
  // Reference value from the splitmix64 paper's generator for seed 0 (first output).
  gp::sim::SplitMix64 sm(0);
  CHECK(sm.next() == 0xe220a8397b1dcdafULL);
  gp::sim::Rng r(7);
  const int n = 200000;
  double sum_u = 0, sum_e = 0, sum_n = 0, sum_n2 = 0, sum_l = 0;
  for (int i = 0; i < n; ++i) {
    sum_u += r.uniform();
    sum_e += r.exponential(2.0);
    const double x = r.normal(1.0, 3.0);
    sum_n += x;
    sum_n2 += x * x;
    sum_l += r.lognormal_mean_cv(5.0, 0.3);
  }
  CHECK(sum_u / n == Approx(0.5).margin(0.005));
  CHECK(sum_e / n == Approx(2.0).margin(0.02));
  CHECK(sum_n / n == Approx(1.0).margin(0.03));
  CHECK(std::sqrt(sum_n2 / n - (sum_n / n) * (sum_n / n)) == Approx(3.0).margin(0.03));
  CHECK(sum_l / n == Approx(5.0).margin(0.02));
  for (int i = 0; i < 1000; ++i) REQUIRE(r.below(10) < 10);
}
