// NCCL collectives across all visible GPUs of this host, one process (ncclCommInitAll), like nccl-tests.
// libnccl.so.2 is loaded at run time, so the probe builds and runs where NCCL is absent (then --nccl fails cleanly).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace gp::probe {

// One message size of one collective. bytes follows nccl-tests: the all-reduce/broadcast buffer, the all-gather
// output, the reduce-scatter input, the all-to-all buffer per rank. algbw = bytes / time;
// busbw = algbw x factor (all-reduce 2(n-1)/n; all-gather, reduce-scatter, all-to-all (n-1)/n; broadcast 1).
struct NcclRow {
  size_t bytes = 0;
  double time_us = 0;
  double algbw_GBps = 0;
  double busbw_GBps = 0;
};

struct NcclFigures {
  int gpus = 0;
  std::string nccl_version;
  std::map<std::string, std::vector<NcclRow>> ops;  // all_reduce, all_gather, reduce_scatter, all_to_all, broadcast
  std::vector<std::string> check_failures;           // empty: every checked result was exact
  int checks = 0;
};

// Sizes double from min_bytes to max_bytes (8 B .. 4 GiB by default). Sets NCCL_NVLS_ENABLE=0 (and the other
// multicast switches) before NCCL starts. Throws ProbeError when NCCL is missing or a call fails.
NcclFigures run_nccl_probe(size_t min_bytes, size_t max_bytes, bool verbose);

}  // namespace gp::probe
