// A measured (or derived) performance profile of one GPU type, produced by gpuplan-probe
// (calibrate/probes) and read by calibrate/profile_io. Drives the compute and memory models.
#pragma once

#include <string>
#include <vector>

#include "models/hardware.hpp"
#include "models/units.hpp"

namespace gp {

// One timed GEMM: C[m,n] = A[m,k] * B[k,n] in `dtype`; rate = 2mnk / median time.
struct GemmSample {
  Dtype dtype = Dtype::bf16;
  long m = 0, n = 0, k = 0;
  FlopRate rate;
};

struct GpuProfile {
  std::string device_name;     // e.g. "NVIDIA H200"
  std::string gpu_id;          // catalog GpuSpec id this profile describes
  int sm_count = 0;
  double sm_clock_mhz = 0;
  double mem_clock_mhz = 0;
  std::string driver;
  bool derived = false;        // true: scaled from datasheet figures, not measured
  std::string derived_from;    // profile it was scaled from, when derived
  std::string measured_on;     // date
  Bytes memory_total;          // device memory as reported by the runtime

  std::vector<GemmSample> gemm;
  ByteRate hbm_copy_bw;        // device-to-device copy, counting read + write
  ByteRate hbm_read_bw;        // read-only streaming kernel
  ByteRate hbm_write_bw;       // write-only streaming kernel
  ByteRate l2_bw;              // working set resident in L2
  ByteRate h2d_pinned, d2h_pinned, h2d_pageable, d2h_pageable;
  Seconds launch_eager;        // per tiny kernel launched one by one
  Seconds launch_graph;        // per kernel replayed from a CUDA graph
  Seconds context_create;      // CUDA context creation
  // Added for the memory model and provenance (issue 3).
  Bytes context_memory;        // device memory taken by the CUDA context (0 = unknown)
  Bytes l2;                    // L2 cache size
  std::string cc;              // compute capability, e.g. "9.0"
  std::string cuda_runtime;    // runtime version used by the probe
  std::string command;         // exact probe command that produced the profile
};

}  // namespace gp
