// Device kernels of gpuplan-probe behind plain host functions, so the rest of the probe is ordinary C++.
// Every function launches asynchronously on `s` and checks the launch.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace gp::probe {

// Element types the random fill knows.
enum class FillType { f32, bf16, f16, fp8_e4m3 };

// Fills n elements with reproducible pseudo-random values uniform in [-1, 1) (never all zeros).
void fill_random(void* p, size_t n, FillType t, uint64_t seed, cudaStream_t s);
// Converts n elements of type t to float (for host-side checks).
void to_float(const void* src, FillType t, float* dst, size_t n, cudaStream_t s);
// Fills n floats with `value`.
void fill_value(float* p, size_t n, float value, cudaStream_t s);

// Streaming kernels over 16-byte words; `bytes` must be a multiple of 16.
void copy_kernel(void* dst, const void* src, size_t bytes, int blocks, cudaStream_t s);
void read_kernel(const void* src, size_t bytes, unsigned* sink, int blocks, cudaStream_t s);
void write_kernel(void* dst, size_t bytes, int blocks, cudaStream_t s);
// Reads `bytes` (L2-resident) `passes` times in one launch.
void l2_read_kernel(const void* src, size_t bytes, int passes, unsigned* sink, int blocks, cudaStream_t s);

// An empty kernel, for launch latency.
void empty_kernel(cudaStream_t s);

}  // namespace gp::probe
