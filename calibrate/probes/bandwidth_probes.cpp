#include "bandwidth_probes.hpp"

#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "kernels.hpp"
#include "probe_util.hpp"

namespace gp::probe {
namespace {

// Median milliseconds of `reps` event-timed runs of `work` on `s`, after `warm` untimed runs.
double median_ms(cudaStream_t s, int warm, int reps, const std::function<void()>& work) {
  for (int i = 0; i < warm; ++i) work();
  PROBE_CUDA(cudaStreamSynchronize(s));
  EventTimer ev;
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    ev.start(s);
    work();
    ms.push_back(ev.stop_ms(s));
  }
  return median(ms);
}

double gbps(double bytes, double ms) { return bytes / (ms * 1e-3) / 1e9; }

struct Stream {
  cudaStream_t s{};
  Stream() { PROBE_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s); }
};

struct PinnedBuffer {
  void* p = nullptr;
  explicit PinnedBuffer(size_t n) { PROBE_CUDA(cudaHostAlloc(&p, n, cudaHostAllocDefault)); }
  ~PinnedBuffer() { cudaFreeHost(p); }
};

// Median seconds of a synchronous copy, timed with the host clock (pageable copies block the host anyway).
double median_copy_s(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, int reps) {
  PROBE_CUDA(cudaMemcpy(dst, src, bytes, kind));  // warm-up
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const double t0 = wall_s();
    PROBE_CUDA(cudaMemcpy(dst, src, bytes, kind));
    PROBE_CUDA(cudaDeviceSynchronize());
    t.push_back(wall_s() - t0);
  }
  return median(t);
}

}  // namespace

MemoryFigures run_memory_probe(int sm_count, size_t l2_bytes, size_t hbm_bytes) {
  Stream st;
  const cudaStream_t s = st.s;
  MemoryFigures f;
  f.hbm_bytes = hbm_bytes;
  DeviceBuffer src(hbm_bytes), dst(hbm_bytes), sink(64);
  fill_random(src.get(), hbm_bytes / 4, FillType::f32, 7, s);
  auto* snk = static_cast<unsigned*>(sink.get());
  const int blocks = sm_count * 4;  // 512 threads each: enough 16-byte loads in flight to fill HBM
  const double b = static_cast<double>(hbm_bytes);
  f.hbm_memcpy_GBps = gbps(2 * b, median_ms(s, 2, 10, [&] {
                           PROBE_CUDA(cudaMemcpyAsync(dst.get(), src.get(), hbm_bytes, cudaMemcpyDeviceToDevice, s));
                         }));
  f.hbm_copy_kernel_GBps =
      gbps(2 * b, median_ms(s, 2, 10, [&] { copy_kernel(dst.get(), src.get(), hbm_bytes, blocks, s); }));
  f.hbm_read_GBps = gbps(b, median_ms(s, 2, 10, [&] { read_kernel(src.get(), hbm_bytes, snk, blocks, s); }));
  f.hbm_write_GBps = gbps(b, median_ms(s, 2, 10, [&] { write_kernel(dst.get(), hbm_bytes, blocks, s); }));
  // L2: a quarter of the L2 read many times in one launch, so launch cost and HBM stay out of the figure.
  const size_t ws = std::max<size_t>(1 << 20, l2_bytes / 4) / 16 * 16;
  const int passes = 200;
  f.l2_working_set_bytes = ws;
  f.l2_GBps = gbps(double(ws) * passes,
                   median_ms(s, 2, 10, [&] { l2_read_kernel(src.get(), ws, passes, snk, blocks, s); }));
  return f;
}

HostLinkFigures run_host_link_probe(size_t bytes) {
  HostLinkFigures f;
  f.bytes = bytes;
  DeviceBuffer dev(bytes);
  PinnedBuffer pinned(bytes);
  std::unique_ptr<char[]> pageable(new char[bytes]);
  std::memset(pageable.get(), 1, bytes);  // touch every page: no first-touch faults in the timing
  std::memset(pinned.p, 1, bytes);
  const int reps = 5;
  const double b = static_cast<double>(bytes);
  f.h2d_pinned_GBps = b / median_copy_s(dev.get(), pinned.p, bytes, cudaMemcpyHostToDevice, reps) / 1e9;
  f.d2h_pinned_GBps = b / median_copy_s(pinned.p, dev.get(), bytes, cudaMemcpyDeviceToHost, reps) / 1e9;
  f.h2d_pageable_GBps = b / median_copy_s(dev.get(), pageable.get(), bytes, cudaMemcpyHostToDevice, reps) / 1e9;
  f.d2h_pageable_GBps = b / median_copy_s(pageable.get(), dev.get(), bytes, cudaMemcpyDeviceToHost, reps) / 1e9;
  return f;
}

LaunchFigures run_launch_probe() {
  Stream st;
  const cudaStream_t s = st.s;
  LaunchFigures f;
  const int n = 2000;
  f.kernels = n;
  for (int i = 0; i < 200; ++i) empty_kernel(s);
  PROBE_CUDA(cudaStreamSynchronize(s));
  std::vector<double> host, gpu;
  EventTimer ev;
  for (int r = 0; r < 7; ++r) {
    const double t0 = wall_s();
    ev.start(s);
    for (int i = 0; i < n; ++i) empty_kernel(s);
    gpu.push_back(ev.stop_ms(s) * 1e3 / n);  // stop_ms synchronizes
    host.push_back((wall_s() - t0) * 1e6 / n);
  }
  f.eager_us = median(host);
  f.eager_gpu_us = median(gpu);

  cudaGraph_t graph{};
  PROBE_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < n; ++i) empty_kernel(s);
  PROBE_CUDA(cudaStreamEndCapture(s, &graph));
  cudaGraphExec_t exec{};
  const cudaError_t inst = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  PROBE_CUDA(inst);
  f.graph_us = median_ms(s, 3, 7, [&] { PROBE_CUDA(cudaGraphLaunch(exec, s)); }) * 1e3 / n;
  cudaGraphExecDestroy(exec);
  return f;
}

}  // namespace gp::probe
