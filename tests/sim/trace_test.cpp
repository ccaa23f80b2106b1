#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "sim/trace.hpp"

using gp::sim::chrome_trace_json;
using gp::sim::kMicrosecond;
using gp::sim::TraceLane;
using gp::sim::TraceSpan;

namespace {

TraceSpan span(const char* name, int node, int rank, TraceLane lane, double start_us, double dur_us) {
  return TraceSpan{name, node, rank, lane, static_cast<gp::sim::SimTime>(start_us * kMicrosecond),
                   static_cast<gp::sim::SimTime>(dur_us * kMicrosecond), 0};
}

}  // namespace

TEST_CASE("sim::trace: spans that run at once in one lane go to separate threads, which Perfetto keeps") {
  // Two DataLoader workers of rank 1 build batches at the same time (0-10 us and 5-15 us), a third starts at
  // 12 us once the first is done; a pipeline send (20-30 us) overlaps a gradient collective (25-27 us) and one
  // that outlasts it (28-35 us). The JSON trace format requires the "X" events of one thread to nest, and
  // Perfetto drops those that overlap without nesting; before, all of them shared tid rank x 4 + lane.
  // Expected by hand: cpu lane tid 1 x 4 + 3 = 7; the overlapping worker batch on a second track, tid 7 + 2^24.
  // comm lane tid 1 x 4 + 2 = 6: the send on it, the 25-27 us collective on 6 + 2^24, the 28-35 us one too
  // (that track is free again at 27 us). GPU spans one after another stay on one thread, tid 4.
  const std::vector<TraceSpan> spans = {
      span("worker batch", 0, 1, TraceLane::cpu, 0, 10),
      span("worker batch", 0, 1, TraceLane::cpu, 5, 10),
      span("worker batch", 0, 1, TraceLane::cpu, 12, 8),
      span("pipeline send/recv", 0, 1, TraceLane::comm, 20, 10),
      span("gradient collective", 0, 1, TraceLane::comm, 25, 2),
      span("gradient collective", 0, 1, TraceLane::comm, 28, 7),
      span("forward", 0, 1, TraceLane::gpu, 0, 10),
      span("backward", 0, 1, TraceLane::gpu, 10, 20),
  };
  const auto doc = nlohmann::json::parse(chrome_trace_json(spans));
  const long long stride = 1LL << 24;
  std::vector<long long> tids;
  std::map<long long, std::string> thread_names;
  for (const auto& e : doc.at("traceEvents")) {
    if (e.at("ph") == "X") tids.push_back(e.at("tid").get<long long>());
    if (e.at("ph") == "M" && e.at("name") == "thread_name")
      thread_names[e.at("tid").get<long long>()] = e.at("args").at("name").get<std::string>();
  }
  CHECK(tids == std::vector<long long>{7, 7 + stride, 7, 6, 6 + stride, 6 + stride, 4, 4});
  CHECK(thread_names.at(7) == "rank 1 cpu");
  CHECK(thread_names.at(7 + stride) == "rank 1 cpu 2");
  CHECK(thread_names.at(6) == "rank 1 comm");
  CHECK(thread_names.at(6 + stride) == "rank 1 comm 2");
  CHECK(thread_names.at(4) == "rank 1 gpu");
  CHECK(thread_names.at(5) == "rank 1 input");  // every lane is named, with spans or not
  CHECK(thread_names.size() == 6);

  // No two complete events of one thread overlap.
  std::map<std::pair<long long, long long>, std::vector<std::pair<double, double>>> by_thread;
  for (const auto& e : doc.at("traceEvents"))
    if (e.at("ph") == "X")
      by_thread[{e.at("pid").get<long long>(), e.at("tid").get<long long>()}].emplace_back(
          e.at("ts").get<double>(), e.at("ts").get<double>() + e.at("dur").get<double>());
  for (auto& [thread, events] : by_thread) {
    std::sort(events.begin(), events.end());
    for (std::size_t i = 1; i < events.size(); ++i) CHECK(events[i].first >= events[i - 1].second);
  }
}
