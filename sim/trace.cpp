#include "sim/trace.hpp"

#include <cstdio>
#include <set>
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
  std::set<std::pair<int, int>> threads;  // (node, tid)
  std::set<int> nodes;
  for (const TraceSpan& s : spans) {
    sep();
    out += "{\"name\":\"";
    append_escaped(out, s.name);
    out += "\",\"cat\":\"";
    out += lane_name(s.lane);
    out += "\",\"ph\":\"X\",\"pid\":" + std::to_string(s.node) + ",\"tid\":" + std::to_string(tid_of(s)) + ",\"ts\":";
    append_us(out, s.start);
    out += ",\"dur\":";
    append_us(out, s.duration);
    out += ",\"args\":{\"step\":" + std::to_string(s.step) + "}}";
    threads.insert({s.node, s.rank});
    nodes.insert(s.node);
  }
  for (int n : nodes) {
    sep();
    out += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + std::to_string(n) +
           ",\"args\":{\"name\":\"node " + std::to_string(n) + "\"}}";
  }
  for (auto [node, rank] : threads) {
    for (TraceLane l : {TraceLane::gpu, TraceLane::input, TraceLane::comm, TraceLane::cpu}) {
      sep();
      TraceSpan probe;
      probe.rank = rank;
      probe.lane = l;
      out += "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + std::to_string(node) +
             ",\"tid\":" + std::to_string(tid_of(probe)) + ",\"args\":{\"name\":\"rank " + std::to_string(rank) +
             " " + lane_name(l) + "\"}}";
    }
  }
  out += "\n]}\n";
  return out;
}

}  // namespace gp::sim
