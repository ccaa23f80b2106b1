// GEMM throughput probe: C[m,n] = A[m,k] * B[k,n] through cuBLAS (bf16, fp16, tf32, fp32) and cuBLASLt (fp8 e4m3).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <cuda_runtime.h>

namespace gp::probe {

enum class GemmDtype { bf16, fp16, tf32, fp32, fp8 };

const char* dtype_name(GemmDtype d);

// One shape of the grid; `tag` says why it is there (square, gpt-d768-t2048-qkv-fwd, ref-micro, ...).
struct GemmShape {
  GemmDtype dtype = GemmDtype::bf16;
  long m = 0, n = 0, k = 0;
  std::string tag;
};

// One measured shape. ms: median GPU time per call of back-to-back calls (launch gaps hidden);
// ms_single: median of one call between two events on an idle stream (what a lone call sees).
struct GemmResult {
  GemmShape shape;
  std::string op;     // operand layout in cuBLAS terms: "NN" (torch.matmul) or "TN" (fp8, nn.Linear)
  double ms = 0;
  double ms_single = 0;
  double tflops = 0;  // 2mnk / ms
  double sm_clock_mhz = -1;  // SM clock read right after the timed calls (NVML); -1 when unknown
};

// How the GEMM probe runs. rotate: cycle through distinct operand sets (>= 4x L2 in all) so that small shapes
// read their inputs from HBM as in training, where each GEMM sees fresh activations.
struct GemmOptions {
  size_t l2_bytes = 0;
  bool rotate = true;
  bool verbose = false;
  int gap_ms = 0;  // idle time before each shape: keeps the average power under the board limit ("burst" clocks)
  std::function<double()> sm_clock_mhz;  // optional: current SM clock in MHz, or < 0 when unknown
};

// Relative error ||C - ref|| / ||ref|| of one small non-square GEMM against a float64 host reference.
struct GemmCheck {
  GemmDtype dtype = GemmDtype::bf16;
  double rel_err = 0;
  double limit = 0;
  bool ok() const { return rel_err <= limit; }
};

// The shape grid: squares, transformer GEMMs of GPT blocks (forward and both backward products) for several
// widths and token counts, a token sweep, and the shapes of the reference runs' micro records.
// `quick` keeps a handful per dtype (smoke tests). fp8 is included only when `with_fp8`.
std::vector<GemmShape> gemm_grid(bool quick, bool with_fp8);

// Times every shape (median of repetitions after warm-up, inputs random and rotated so that small shapes do not
// run from L2, unless opts.rotate is false). Throws ProbeError on any failure.
std::vector<GemmResult> run_gemm_probe(const std::vector<GemmShape>& grid, const GemmOptions& opts);

// Checks numerical agreement for each dtype present in `dtypes`.
std::vector<GemmCheck> check_gemms(const std::vector<GemmDtype>& dtypes);

}  // namespace gp::probe
