// Memory, host-link and launch probes. Bandwidths in GB/s (1e9 bytes/s); times in microseconds.
#pragma once

#include <cstddef>

namespace gp::probe {

// Device memory. Copy figures count bytes read plus bytes written.
struct MemoryFigures {
  double hbm_memcpy_GBps = 0;       // cudaMemcpy device-to-device
  double hbm_copy_kernel_GBps = 0;  // unrolled 16-byte copy kernel
  double hbm_read_GBps = 0;         // read-only kernel
  double hbm_write_GBps = 0;        // write-only kernel
  double l2_GBps = 0;               // read-only kernel over a working set of l2_working_set_bytes
  size_t hbm_bytes = 0;             // buffer size of the HBM probes
  size_t l2_working_set_bytes = 0;
};

// Host <-> device, `bytes` per transfer (1 GiB by default), pinned (cudaHostAlloc) and pageable (malloc).
struct HostLinkFigures {
  double h2d_pinned_GBps = 0, d2h_pinned_GBps = 0, h2d_pageable_GBps = 0, d2h_pageable_GBps = 0;
  size_t bytes = 0;
};

// Kernel launch: eager = wall time per empty kernel launched back to back from the host (what the CPU pays);
// graph = GPU time per kernel replayed from a captured CUDA graph.
struct LaunchFigures {
  double eager_us = 0;
  double eager_gpu_us = 0;  // GPU-side time per kernel in the eager sequence (events)
  double graph_us = 0;
  int kernels = 0;
};

// Each probe takes the median of several repetitions after warm-up; throws ProbeError on any failure.
MemoryFigures run_memory_probe(int sm_count, size_t l2_bytes, size_t hbm_bytes);
HostLinkFigures run_host_link_probe(size_t bytes);
LaunchFigures run_launch_probe();

}  // namespace gp::probe
