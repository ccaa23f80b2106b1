#include "sim/trace.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <numeric>
#include <set>
#include <tuple>
#include <utility>

namespace gp::sim {

namespace {

const char* lane_name(TraceLane l) {
  switch (l) {
    case TraceLane::gpu: return "gpu";
    case TraceLane::input: return "input";
    case TraceLane::comm: return "comm";
    case TraceLane::cpu: return "cpu";
  }
  return "?";
}

int tid_of(const TraceSpan& s) { return s.rank * 4 + static_cast<int>(s.lane); }

// Extra tracks of a lane get tid + track x this stride: above any rank's own tids (rank x 4 + lane, ranks below
// 2^20, collective::check's bound).
constexpr std::int64_t kTrackStride = std::int64_t{1} << 24;

// The track of each span within its (node, rank, lane): the first whose last span has ended (interval
// partitioning, first fit in start order). Spans that run at once in one lane (a rank's DataLoader workers, a
// pipeline send beside a gradient collective) would otherwise overlap on one thread: the JSON trace format
// requires the complete events of a thread to nest, and Perfetto drops those that do not (google/perfetto#4280).
// O(spans log spans + spans x tracks).
std::vector<int> assign_tracks(const std::vector<TraceSpan>& spans) {
  std::vector<std::size_t> order(spans.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  const auto key = [&](std::size_t i) {
    const TraceSpan& s = spans[i];
    return std::make_tuple(s.node, s.rank, static_cast<int>(s.lane), s.start, i);
  };
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  std::vector<int> track(spans.size(), 0);
  std::map<std::tuple<int, int, int>, std::vector<SimTime>> ends;  // per lane: each track's last end
  for (std::size_t i : order) {
    const TraceSpan& s = spans[i];
    auto& lane_ends = ends[{s.node, s.rank, static_cast<int>(s.lane)}];
    std::size_t k = 0;
    while (k < lane_ends.size() && lane_ends[k] > s.start) ++k;
    if (k == lane_ends.size()) lane_ends.push_back(0);
    lane_ends[k] = s.start + s.duration;
    track[i] = static_cast<int>(k);
  }
  return track;
}

void append_escaped(std::string& out, const std::string& s) {
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
}

void append_us(std::string& out, SimTime ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(ns) * 1e-3);
  out += buf;
}

}  // namespace

std::string chrome_trace_json(const std::vector<TraceSpan>& spans) {
  std::string out = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&] {
    if (!first) out += ",\n";
    first = false;
  };
  const std::vector<int> track = assign_tracks(spans);
  std::set<std::pair<int, int>> threads;                   // (node, rank)
  std::map<std::tuple<int, int, int>, int> extra_tracks;  // (node, rank, lane) -> tracks beyond the first
  std::set<int> nodes;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const TraceSpan& s = spans[i];
    sep();
    out += "{\"name\":\"";
    append_escaped(out, s.name);
    out += "\",\"cat\":\"";
    out += lane_name(s.lane);
    out += "\",\"ph\":\"X\",\"pid\":" + std::to_string(s.node) +
           ",\"tid\":" + std::to_string(tid_of(s) + track[i] * kTrackStride) + ",\"ts\":";
    append_us(out, s.start);
    out += ",\"dur\":";
    append_us(out, s.duration);
    out += ",\"args\":{\"step\":" + std::to_string(s.step) + "}}";
    threads.insert({s.node, s.rank});
    nodes.insert(s.node);
    int& extra = extra_tracks[{s.node, s.rank, static_cast<int>(s.lane)}];
    extra = std::max(extra, track[i]);
  }
  for (int n : nodes) {
    sep();
    out += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + std::to_string(n) +
           ",\"args\":{\"name\":\"node " + std::to_string(n) + "\"}}";
  }
  for (auto [node, rank] : threads) {
    for (TraceLane l : {TraceLane::gpu, TraceLane::input, TraceLane::comm, TraceLane::cpu}) {
      TraceSpan probe;
      probe.rank = rank;
      probe.lane = l;
      const auto it = extra_tracks.find({node, rank, static_cast<int>(l)});
      const int tracks = 1 + (it == extra_tracks.end() ? 0 : it->second);
      for (int k = 0; k < tracks; ++k) {
        sep();
        // "rank 3 cpu", then "rank 3 cpu 2", "rank 3 cpu 3" for the spans that ran at the same time.
        out += "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + std::to_string(node) +
               ",\"tid\":" + std::to_string(tid_of(probe) + k * kTrackStride) + ",\"args\":{\"name\":\"rank " +
               std::to_string(rank) + " " + lane_name(l) + (k ? " " + std::to_string(k + 1) : std::string()) + "\"}}";
      }
    }
  }
  out += "\n]}\n";
  return out;
}

}  // namespace gp::sim
