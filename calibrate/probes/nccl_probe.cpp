#include "nccl_probe.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>

#include <nccl.h>

#include "kernels.hpp"
#include "probe_util.hpp"

namespace gp::probe {
namespace {

// The NCCL entry points the probe uses, resolved from libnccl.so.2 at run time.
struct NcclApi {
  void* lib = nullptr;
  decltype(&ncclGetVersion) get_version = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
  decltype(&ncclCommInitAll) init_all = nullptr;
  decltype(&ncclCommDestroy) destroy = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclAllGather) all_gather = nullptr;
  decltype(&ncclReduceScatter) reduce_scatter = nullptr;
  decltype(&ncclBroadcast) broadcast = nullptr;
  decltype(&ncclSend) send = nullptr;
  decltype(&ncclRecv) recv = nullptr;

  NcclApi() {
    lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!lib) throw ProbeError(std::string("cannot load libnccl.so.2: ") + dlerror());
    load(get_version, "ncclGetVersion");
    load(error_string, "ncclGetErrorString");
    load(init_all, "ncclCommInitAll");
    load(destroy, "ncclCommDestroy");
    load(group_start, "ncclGroupStart");
    load(group_end, "ncclGroupEnd");
    load(all_reduce, "ncclAllReduce");
    load(all_gather, "ncclAllGather");
    load(reduce_scatter, "ncclReduceScatter");
    load(broadcast, "ncclBroadcast");
    load(send, "ncclSend");
    load(recv, "ncclRecv");
  }
  template <class F>
  void load(F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(lib, name));
    if (!f) throw ProbeError(std::string("libnccl.so.2 lacks ") + name);
  }
  void check(ncclResult_t r, const char* call, int line) const {
    if (r != ncclSuccess) throw_status("NCCL", r, error_string(r), call, __FILE__, line);
  }
};

#define PROBE_NCCL(api, call) (api).check((call), #call, __LINE__)

enum class Op { all_reduce, all_gather, reduce_scatter, all_to_all, broadcast };

const char* op_name(Op op) {
  switch (op) {
    case Op::all_reduce: return "all_reduce";
    case Op::all_gather: return "all_gather";
    case Op::reduce_scatter: return "reduce_scatter";
    case Op::all_to_all: return "all_to_all";
    case Op::broadcast: return "broadcast";
  }
  return "?";
}

double bus_factor(Op op, int n) {
  switch (op) {
    case Op::all_reduce: return 2.0 * (n - 1) / n;
    case Op::broadcast: return 1.0;
    default: return double(n - 1) / n;
  }
}

// Per rank: a send and a receive buffer of max_bytes and a stream on that rank's device.
struct Rank {
  int dev = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream{};
  void* send = nullptr;
  void* recv = nullptr;
};

class Harness {
 public:
  Harness(const NcclApi& api, size_t max_bytes) : api_(api) {
    int n = 0;
    PROBE_CUDA(cudaGetDeviceCount(&n));
    ranks_.resize(n);
    std::vector<ncclComm_t> comms(n);
    std::vector<int> devs(n);
    for (int i = 0; i < n; ++i) devs[i] = i;
    PROBE_NCCL(api_, api_.init_all(comms.data(), n, devs.data()));
    for (int i = 0; i < n; ++i) {
      Rank& r = ranks_[i];
      r.dev = i;
      r.comm = comms[i];
      PROBE_CUDA(cudaSetDevice(i));
      PROBE_CUDA(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking));
      PROBE_CUDA(cudaMalloc(&r.send, max_bytes));
      PROBE_CUDA(cudaMalloc(&r.recv, max_bytes));
      fill_value(static_cast<float*>(r.send), max_bytes / 4, float(i + 1), r.stream);  // rank i sends i+1
    }
    sync();
  }
  ~Harness() {
    for (Rank& r : ranks_) {
      cudaSetDevice(r.dev);
      cudaFree(r.send);
      cudaFree(r.recv);
      cudaStreamDestroy(r.stream);
      if (r.comm) api_.destroy(r.comm);
    }
  }
  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;

  int size() const { return static_cast<int>(ranks_.size()); }

  // Floats per rank-chunk for a message of `bytes` (see NcclRow); at least one.
  size_t chunk(Op op, size_t bytes) const {
    const size_t floats = bytes / 4;
    const bool split = op == Op::all_gather || op == Op::reduce_scatter || op == Op::all_to_all;
    return std::max<size_t>(1, split ? floats / size() : floats);
  }
  size_t effective_bytes(Op op, size_t bytes) const {
    const bool split = op == Op::all_gather || op == Op::reduce_scatter || op == Op::all_to_all;
    return chunk(op, bytes) * 4 * (split ? size() : 1);
  }

  void launch(Op op, size_t c) {
    PROBE_NCCL(api_, api_.group_start());
    for (Rank& r : ranks_) {
      switch (op) {
        case Op::all_reduce:
          PROBE_NCCL(api_, api_.all_reduce(r.send, r.recv, c, ncclFloat, ncclSum, r.comm, r.stream));
          break;
        case Op::all_gather:
          PROBE_NCCL(api_, api_.all_gather(r.send, r.recv, c, ncclFloat, r.comm, r.stream));
          break;
        case Op::reduce_scatter:
          PROBE_NCCL(api_, api_.reduce_scatter(r.send, r.recv, c, ncclFloat, ncclSum, r.comm, r.stream));
          break;
        case Op::broadcast:
          PROBE_NCCL(api_, api_.broadcast(r.send, r.recv, c, ncclFloat, 0, r.comm, r.stream));
          break;
        case Op::all_to_all:
          for (int p = 0; p < size(); ++p) {
            PROBE_NCCL(api_, api_.send(static_cast<float*>(r.send) + p * c, c, ncclFloat, p, r.comm, r.stream));
            PROBE_NCCL(api_, api_.recv(static_cast<float*>(r.recv) + p * c, c, ncclFloat, p, r.comm, r.stream));
          }
          break;
      }
    }
    PROBE_NCCL(api_, api_.group_end());
  }

  void sync() {
    for (Rank& r : ranks_) PROBE_CUDA(cudaStreamSynchronize(r.stream));
  }

  // Mean seconds per operation over `iters` after `warm`, host clock with all streams synchronized (nccl-tests).
  double time(Op op, size_t c, int warm, int iters) {
    for (int i = 0; i < warm; ++i) launch(op, c);
    sync();
    const double t0 = wall_s();
    for (int i = 0; i < iters; ++i) launch(op, c);
    sync();
    return (wall_s() - t0) / iters;
  }

  // Runs once on poisoned receive buffers and compares the first and last float of every chunk with the exact
  // expected value. Returns an empty string when right.
  std::string check(Op op, size_t c) {
    const bool whole = op == Op::all_gather || op == Op::all_to_all;  // receive n chunks
    const size_t recv_bytes = c * 4 * (whole ? size() : 1);
    for (Rank& r : ranks_) {
      PROBE_CUDA(cudaSetDevice(r.dev));
      PROBE_CUDA(cudaMemsetAsync(r.recv, 0xff, recv_bytes, r.stream));  // NaN: unwritten floats cannot match
    }
    sync();
    launch(op, c);
    sync();
    const int n = size();
    const float sum = float(n) * float(n + 1) / 2;
    const int chunks = whole ? n : 1;
    for (Rank& r : ranks_) {
      for (int j = 0; j < chunks; ++j) {
        float expect = sum;
        if (op == Op::all_gather || op == Op::all_to_all) expect = float(j + 1);
        if (op == Op::broadcast) expect = 1.0f;
        for (size_t idx : {j * c, j * c + c - 1}) {
          float got = 0;
          PROBE_CUDA(cudaMemcpy(&got, static_cast<float*>(r.recv) + idx, 4, cudaMemcpyDeviceToHost));
          if (got != expect) {
            char msg[200];
            std::snprintf(msg, sizeof msg, "%s count %zu rank %d element %zu: got %g, expected %g", op_name(op), c,
                          r.dev, idx, double(got), double(expect));
            return msg;
          }
        }
      }
    }
    return "";
  }

 private:
  const NcclApi& api_;
  std::vector<Rank> ranks_;
};

}  // namespace

NcclFigures run_nccl_probe(size_t min_bytes, size_t max_bytes, bool verbose) {
  // Never NVLink multicast (NVLS): it can take a shared host's GPUs out of service.
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  setenv("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1", 1);
  setenv("NVSHMEM_DISABLE_NVLS", "1", 1);
  NcclApi api;
  NcclFigures f;
  int v = 0;
  PROBE_NCCL(api, api.get_version(&v));
  f.nccl_version = std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
  Harness h(api, max_bytes);
  f.gpus = h.size();
  const Op ops[] = {Op::all_reduce, Op::all_gather, Op::reduce_scatter, Op::all_to_all, Op::broadcast};
  for (Op op : ops) {
    auto& rows = f.ops[op_name(op)];
    for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
      const size_t c = h.chunk(op, bytes);
      const size_t eff = h.effective_bytes(op, bytes);
      if (!rows.empty() && rows.back().bytes == eff) continue;  // below n floats the sizes collapse
      if (bytes == min_bytes || bytes == max_bytes || bytes == (1u << 20)) {
        ++f.checks;
        const std::string bad = h.check(op, c);
        if (!bad.empty()) f.check_failures.push_back(bad);
      }
      const int iters = bytes <= (64u << 20) ? 20 : 5;
      const double t = h.time(op, c, bytes <= (64u << 20) ? 5 : 2, iters);
      NcclRow row;
      row.bytes = eff;
      row.time_us = t * 1e6;
      row.algbw_GBps = eff / t / 1e9;
      row.busbw_GBps = row.algbw_GBps * bus_factor(op, f.gpus);
      rows.push_back(row);
      if (verbose)
        std::fprintf(stderr, "nccl %-14s n=%d %12zu B  %10.2f us  algbw %8.2f  busbw %8.2f GB/s\n", op_name(op),
                     f.gpus, eff, row.time_us, row.algbw_GBps, row.busbw_GBps);
    }
  }
  return f;
}

}  // namespace gp::probe
