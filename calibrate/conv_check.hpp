// `gpuplan calibrate convs`: the compute model's time for single convolutions against the times
// tools/probe_conv_layout.py measured for them alone on the GPU (forward and backward, bf16 autocast,
// cudnn.benchmark, NCHW and channels-last; calibrate/probes/results/conv-layout-*.jsonl). It checks the
// convolution part of the model (implicit GEMMs on the GEMM surface, depthwise convolutions, NCHW layout
// transforms) shape by shape, where a whole training step only checks the sum.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibrate/fit.hpp"
#include "models/compute_model.hpp"
#include "models/vision_ops.hpp"

namespace gp::calibrate {

struct ConvCheckRow {
  std::string model;       // the network the shape came from
  int batch = 0;
  ConvLayer layer;
  bool nchw = false;       // layout of this row (each probed shape gives one row per layout)
  Precision dtype = Precision::bf16;  // the probe's `dtype`: bf16 (absent), fp16, tf32 or fp32
  double measured_ms = 0;  // cuDNN / CUTLASS convolution kernels per iteration (forward + backward)
  double predicted_ms = 0; // the model's convolution passes (implicit GEMMs or depthwise), kernel overhead included
  double measured_transform_ms = 0, predicted_transform_ms = 0;  // NCHW only: nchwToNhwc + nhwcToNchw
  std::string kind;        // first | pointwise | spatial | grouped | depthwise
};

struct ConvCheckSummary {
  int rows = 0;
  double rms_log_error = 0;    // sqrt(mean ln(predicted / measured)^2) over the convolution times
  double mean_log_error = 0;   // mean ln(predicted / measured): > 0 the model is slow
  double total_measured_ms = 0, total_predicted_ms = 0;
  struct Part { std::string kind; int rows = 0; double rms_log_error = 0, mean_log_error = 0; };
  std::vector<Part> by_kind;
};

// Reads the probe's JSON lines from `path` (errors as `FILE:LINE:/pointer: expectation`) and predicts each
// shape in the layouts asked for (nhwc, nchw or both).
std::vector<ConvCheckRow> check_convs(const std::string& path, const DeviceModel& dev, const FitConstants& constants,
                                      const std::string& layouts, std::vector<std::string>& errors);
ConvCheckSummary summarize_convs(const std::vector<ConvCheckRow>& rows);

// The convolution efficiency of `dtype` (ComputeConstants::conv_16bit_efficiency for bf16, conv_fp16_efficiency,
// conv_tf32_efficiency, conv_fp32_efficiency) at which the model's total time over the probe's channels-last
// pointwise and spatial convolutions of that dtype (not the first, grouped or depthwise ones, which have classes
// of their own) equals the measured total, the other constants as given; by bisection on [0.2, 3]. `rows` gets the number of convolutions matched. nullopt
// when the file yields none, or when no efficiency in [0.2, 3] matches (errors say why).
std::optional<double> match_conv_efficiency(const std::string& path, const DeviceModel& dev,
                                            const FitConstants& constants, std::vector<std::string>& errors,
                                            int* rows = nullptr, Precision dtype = Precision::bf16);

// The fp32-tensor depthwise law (ComputeConstants::dwconv_f32_*, dwconv_tf32_k7_*, dwconv_fp32_k7_*), fitted to
// the channels-last tf32 and fp32 depthwise rows of the probe files by least squares of ln(predicted / measured)
// over a grid (0.05 then 0.005 in ln e): flop and memory efficiency over the k < 7 rows of both dtypes, each dtype's k >= 7 flop efficiency over
// its own k >= 7 rows (0 when there are none). nullopt when the files have no k < 7 row (errors say why).
struct DepthwiseF32Fit {
  double flop_efficiency = 0, memory_efficiency = 0, tf32_k7_flop_efficiency = 0, fp32_k7_flop_efficiency = 0;
  int rows = 0, tf32_k7_rows = 0, fp32_k7_rows = 0;
  double rms_log_error = 0, tf32_k7_rms_log_error = 0, fp32_k7_rms_log_error = 0;
};
std::optional<DepthwiseF32Fit> fit_f32_depthwise(const std::vector<std::string>& paths, const DeviceModel& dev,
                                                 const FitConstants& constants, std::vector<std::string>& errors);

std::string render_conv_table(const std::vector<ConvCheckRow>& rows, const ConvCheckSummary& s);
nlohmann::json render_conv_json(const std::vector<ConvCheckRow>& rows, const ConvCheckSummary& s);

}  // namespace gp::calibrate
