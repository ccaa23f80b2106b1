#include "probe_util.hpp"

#include <sstream>

namespace gp::probe {

void throw_cuda(cudaError_t err, const char* call, const char* file, int line) {
  std::ostringstream os;
  os << file << ":" << line << ": " << call << " failed: " << cudaGetErrorName(err) << " ("
     << cudaGetErrorString(err) << ")";
  throw ProbeError(os.str());
}

void throw_status(const std::string& lib, int status, const std::string& what, const char* call, const char* file,
                  int line) {
  std::ostringstream os;
  os << file << ":" << line << ": " << call << " failed: " << lib << " status " << status;
  if (!what.empty()) os << " (" << what << ")";
  throw ProbeError(os.str());
}

EventTimer::EventTimer() {
  PROBE_CUDA(cudaEventCreate(&a_));
  PROBE_CUDA(cudaEventCreate(&b_));
}

EventTimer::~EventTimer() {
  cudaEventDestroy(a_);
  cudaEventDestroy(b_);
}

void EventTimer::start(cudaStream_t s) { PROBE_CUDA(cudaEventRecord(a_, s)); }

double EventTimer::stop_ms(cudaStream_t s) {
  PROBE_CUDA(cudaEventRecord(b_, s));
  PROBE_CUDA(cudaEventSynchronize(b_));
  float ms = 0;
  PROBE_CUDA(cudaEventElapsedTime(&ms, a_, b_));
  return ms;
}

DeviceBuffer::DeviceBuffer(size_t bytes) : n_(bytes) { PROBE_CUDA(cudaMalloc(&p_, bytes)); }

DeviceBuffer::~DeviceBuffer() { cudaFree(p_); }

}  // namespace gp::probe
