// Shared helpers of gpuplan-probe: error checking that names the failing call, medians and timers.
// Probe code throws ProbeError on any CUDA/cuBLAS/NCCL failure; only main() turns it into an exit code.
#pragma once

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime.h>

namespace gp::probe {

// A failed CUDA, cuBLAS or NCCL call (or a failed self-check), with the call and location in what().
class ProbeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_cuda(cudaError_t err, const char* call, const char* file, int line);
[[noreturn]] void throw_status(const std::string& lib, int status, const std::string& what, const char* call,
                               const char* file, int line);

// Median of a non-empty sample (copies; the samples are small).
inline double median(std::vector<double> v) {
  if (v.empty()) throw ProbeError("median of an empty sample");
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// Monotonic wall clock in seconds.
inline double wall_s() {
  using clk = std::chrono::steady_clock;
  return std::chrono::duration<double>(clk::now().time_since_epoch()).count();
}

}  // namespace gp::probe

#define PROBE_CUDA(call)                                                          \
  do {                                                                            \
    cudaError_t probe_err_ = (call);                                              \
    if (probe_err_ != cudaSuccess) ::gp::probe::throw_cuda(probe_err_, #call, __FILE__, __LINE__); \
  } while (0)

// Checks the last launch error (kernel launches return nothing).
#define PROBE_LAUNCHED() PROBE_CUDA(cudaGetLastError())

namespace gp::probe {

// A pair of CUDA events timing work on one stream; elapsed in milliseconds.
class EventTimer {
 public:
  EventTimer();
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start(cudaStream_t s);
  // Records the stop event, waits for it and returns the elapsed milliseconds.
  double stop_ms(cudaStream_t s);

 private:
  cudaEvent_t a_{}, b_{};
};

// A device allocation freed on scope exit.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return p_; }
  size_t bytes() const { return n_; }

 private:
  void* p_ = nullptr;
  size_t n_ = 0;
};

}  // namespace gp::probe
