// Spans recorded by the training-job simulation for `gpuplan run --trace FILE`, and their rendering as
// Chrome trace JSON (the "traceEvents" format that chrome://tracing and https://ui.perfetto.dev open).
// One process per node, one thread per rank lane (GPU compute, data loader, communication).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/time.hpp"

namespace gp::sim {

enum class TraceLane { gpu, input, comm, cpu };

// One complete ("ph":"X") event.
struct TraceSpan {
  std::string name;     // e.g. "forward", "backward", "wait batch", "all-reduce bucket 3"
  int node = 0;         // pid
  int rank = 0;         // global rank
  TraceLane lane = TraceLane::gpu;
  SimTime start = 0;    // ns
  SimTime duration = 0; // ns
  int step = 0;
};

// Renders spans as a Chrome trace JSON document (timestamps in microseconds). Thread names say
// "rank R gpu" etc. O(spans).
std::string chrome_trace_json(const std::vector<TraceSpan>& spans);

}  // namespace gp::sim
