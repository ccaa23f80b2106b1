#include "calibrate/conv_check.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>
#include <utility>

#include "calibrate/json_fields.hpp"
#include "calibrate/json_text.hpp"
#include "calibrate/reference_runs.hpp"

namespace gp::calibrate {
namespace {

// [ms, kernels] of one kernel class in one layout; absent: 0 (the probe saw no kernel of that class). Present, the
// time must be in (0, 100000] ms, else one problem line (a negative, zero, text or 1e300 time was dropped or used).
double class_ms(const nlohmann::json& layout, const char* cls, const std::string& at, std::vector<std::string>& errors) {
  if (!layout.contains(cls)) return 0;
  const auto& v = layout[cls];
  if (!v.is_array() || v.empty() || !v[0].is_number() || !(v[0].get<double>() > 0 && v[0].get<double>() <= 1e5)) {
    errors.push_back(at + "/" + cls + ": must be [ms, kernels] with ms in (0, 100000], got " + v.dump());
    return 0;
  }
  return v[0].get<double>();
}

std::string kind_of(const ConvLayer& l) {
  if (l.first) return "first";
  if (l.groups > 1 && l.groups == l.c_in) return "depthwise";
  if (l.groups > 1) return "grouped";
  return l.kh * l.kw == 1 ? "pointwise" : "spatial";
}

// The model's convolution time (and NCHW transform time) of one probed row with constants `c`.
void predict_row(ConvCheckRow& row, const DeviceModel& dev, const ComputeConstants& c) {
  StepConfig step;
  step.micro_batch = row.batch;
  step.precision = row.dtype;
  step.channels_last = !row.nchw;
  step.model.family = ModelFamily::cnn;
  const StepOps ops = build_conv_layer_ops(step, row.layer);
  row.predicted_ms = row.predicted_transform_ms = 0;
  for (const Op& op : ops.micro) {
    const double ms = op_gpu_time(op, dev, c).ms() * op_count(op, c);
    if ((op.kind == OpKind::gemm && op.conv) || op.kind == OpKind::simt)
      row.predicted_ms += ms;
    else if (op.nchw_band >= 0)
      row.predicted_transform_ms += ms;
  }
}

}  // namespace

std::vector<ConvCheckRow> check_convs(const std::string& path, const DeviceModel& dev, const FitConstants& constants,
                                      const std::string& layouts, std::vector<std::string>& errors_out) {
  std::vector<ConvCheckRow> out;
  std::string all, error;
  if (!read_input_file(path, all, error)) {
    errors_out.push_back(path + ": " + error + " (the convolution probe file)");
    return out;
  }
  if (auto problem = document_not_json_lines(all, path, "calibrate/probes/results/conv-layout-2026-12-03.jsonl")) {
    errors_out.push_back(*problem);
    return out;
  }
  std::vector<std::string> errors;  // at most 20 of them reach errors_out
  std::istringstream in(all);
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(line);
    JsonTextError perr;
    const auto parsed = parse_json_text(text, false, perr);
    if (!parsed) {
      errors.push_back(where + ":" + std::to_string(perr.col) + ": not valid JSON: " + perr.what);
      continue;
    }
    const nlohmann::json& j = *parsed;
    if (!j.is_object()) {
      errors.push_back(where + ": expected one JSON object per line");
      continue;
    }
    if (!j.contains("model") && j.contains("torch")) continue;  // the probe's trailing software line
    const std::size_t before = errors.size();
    FieldReader r(j, where, "", errors);
    ConvLayer l;
    const std::string model = r.string("model", true).value_or("");
    const int batch = static_cast<int>(r.integer("batch", true, 1, 1e7).value_or(0));
    l.c_in = static_cast<int>(r.integer("c_in", true, 1, 1e6).value_or(0));
    l.h = static_cast<int>(r.integer("h", true, 1, 1e5).value_or(0));
    l.w = static_cast<int>(r.integer("w", true, 1, 1e5).value_or(0));
    l.c_out = static_cast<int>(r.integer("c_out", true, 1, 1e6).value_or(0));
    l.groups = static_cast<int>(r.integer("groups", true, 1, 1e6).value_or(1));
    if (l.groups > 0 && l.c_in > 0 && l.c_out > 0 && (l.c_in % l.groups != 0 || l.c_out % l.groups != 0))
      r.error("groups", "must divide c_in and c_out, got " + j["groups"].dump());
    l.bias = r.boolean("bias", true).value_or(false);
    l.first = r.boolean("first", true).value_or(false);
    constexpr int kSide = 100000;
    std::tie(l.kh, l.kw) = r.integer_pair("k", true, 1, kSide, "[h, w]").value_or(std::pair{l.kh, l.kw});
    std::tie(l.stride_h, l.stride_w) =
        r.integer_pair("stride", true, 1, kSide, "[h, w]").value_or(std::pair{l.stride_h, l.stride_w});
    std::tie(l.pad_h, l.pad_w) = r.integer_pair("pad", true, 0, kSide, "[h, w]").value_or(std::pair{l.pad_h, l.pad_w});
    // nn.Conv2d refuses a kernel larger than its padded input ("Kernel size can't be greater than actual input
    // size"); the model took the negative output size, squared it and printed a time (300x300 on 224x224: 53.9 ms).
    if (errors.size() == before && (l.kh > l.h + 2 * l.pad_h || l.kw > l.w + 2 * l.pad_w))
      r.error("k", "must fit the padded input (h + 2 pad by w + 2 pad = " + std::to_string(l.h + 2 * l.pad_h) + " x " +
                       std::to_string(l.w + 2 * l.pad_w) + "), got " + j["k"].dump());
    // Each range alone is generous; together they allowed tensors no GPU holds (1e7 x 1e6 x 1e5 x 1e5 elements) and
    // printed times of 1e18 ms. A probed convolution's input and output fit in a GPU: at most 2^40 elements each.
    const double elements = double(batch) * std::max(l.c_in, l.c_out) * double(l.h) * double(l.w);
    if (errors.size() == before && elements > 1099511627776.0) {
      char text[32];
      std::snprintf(text, sizeof text, "%.3g", elements);
      r.error("batch", std::string("with c_in, c_out, h and w gives a tensor of ") + text +
                           " elements, beyond any GPU's memory (expected at most 2^40, a probed convolution)");
    }
    const std::string dtype = r.string("dtype", false).value_or("bf16");
    const std::optional<Precision> precision = parse_precision(dtype);
    if (!precision) errors.push_back(where + ":/dtype: expected \"bf16\", \"fp16\", \"tf32\" or \"fp32\"");
    if (errors.size() != before) continue;
    for (const bool nchw : {false, true}) {
      const std::string name = nchw ? "nchw" : "nhwc";
      if (layouts != "both" && layouts != name) continue;
      if (!j.contains(name)) continue;
      ConvCheckRow row;
      row.model = model;
      row.batch = batch;
      row.layer = l;
      row.nchw = nchw;
      row.dtype = *precision;
      row.kind = kind_of(l);
      if (!j[name].is_object()) {
        errors.push_back(where + ":/" + name + ": expected an object of kernel classes, got " + j[name].dump());
        continue;
      }
      const std::size_t before_times = errors.size();
      row.measured_ms = class_ms(j[name], "conv", where + ":/" + name, errors);
      row.measured_transform_ms = class_ms(j[name], "to_nhwc", where + ":/" + name, errors) +
                                  class_ms(j[name], "to_nchw", where + ":/" + name, errors);
      if (errors.size() != before_times) continue;
      predict_row(row, dev, constants.compute);
      if (row.measured_ms > 0 && row.predicted_ms > 0) out.push_back(row);
    }
  }
  append_first_problems(errors_out, errors, path);
  return out;
}

std::optional<double> match_conv_efficiency(const std::string& path, const DeviceModel& dev,
                                            const FitConstants& constants, std::vector<std::string>& errors,
                                            int* rows, Precision dtype) {
  // The probe is read once; each step of the bisection re-predicts its rows.
  std::vector<ConvCheckRow> matched;
  const std::size_t before = errors.size();
  for (const auto& r : check_convs(path, dev, constants, "nhwc", errors))
    if ((r.kind == "pointwise" || r.kind == "spatial") && r.dtype == dtype) matched.push_back(r);
  if (errors.size() != before) return std::nullopt;
  if (matched.empty()) {
    errors.push_back(path + ": no channels-last pointwise or spatial " + to_string(dtype) + " convolution to match");
    return std::nullopt;
  }
  ComputeConstants c = constants.compute;
  double& e = conv_efficiency_of(c, gemm_dtype(dtype));
  // Total predicted / measured time over the matched convolutions at the current e.
  auto ratio = [&] {
    double pred = 0, meas = 0;
    for (auto& r : matched) {
      predict_row(r, dev, c);
      pred += r.predicted_ms;
      meas += r.measured_ms;
    }
    return pred / meas;
  };
  constexpr double kLo = 0.2, kHi = 3.0;  // the predicted time falls as the efficiency rises
  // Outside the bracket the bisection ended on its bound and that bound was written as the "matched" efficiency
  // (convolutions timed 100x faster than any GPU runs them gave 3, 300% of the GEMM surface).
  for (const double bound : {kLo, kHi}) {
    e = bound;
    const double r = ratio();
    if ((bound == kLo && r < 1.0) || (bound == kHi && r > 1.0)) {
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    ": no %s convolution efficiency in [%g, %g] matches: at %g the model's time is %.3g x the "
                    "measured one over %zu convolutions",
                    to_string(dtype), kLo, kHi, bound, r, matched.size());
      errors.push_back(path + buf + " (expected convolutions timed alone, as tools/probe_conv_layout.py does)");
      return std::nullopt;
    }
  }
  double lo = kLo, hi = kHi;
  for (int i = 0; i < 50; ++i) {
    e = 0.5 * (lo + hi);
    (ratio() > 1.0 ? lo : hi) = e;
  }
  if (rows) *rows = static_cast<int>(matched.size());
  return 0.5 * (lo + hi);
}

std::optional<DepthwiseF32Fit> fit_f32_depthwise(const std::vector<std::string>& paths, const DeviceModel& dev,
                                                 const FitConstants& constants, std::vector<std::string>& errors) {
  std::vector<ConvCheckRow> small, large_tf32, large_fp32;
  for (const auto& path : paths)
    for (const auto& r : check_convs(path, dev, constants, "nhwc", errors)) {
      if (r.kind != "depthwise" || (r.dtype != Precision::tf32 && r.dtype != Precision::fp32)) continue;
      if (std::max(r.layer.kh, r.layer.kw) < 7)
        small.push_back(r);
      else
        (r.dtype == Precision::tf32 ? large_tf32 : large_fp32).push_back(r);
    }
  if (small.empty()) {
    errors.push_back(join_paths(paths) + ": no channels-last tf32 or fp32 depthwise convolution with k < 7 to fit");
    return std::nullopt;
  }
  ComputeConstants c = constants.compute;
  // Sum of squared ln(predicted / measured) over `rows` with c.
  auto cost = [&](std::vector<ConvCheckRow>& rows) {
    double sq = 0;
    for (auto& r : rows) {
      predict_row(r, dev, c);
      const double e = std::log(r.predicted_ms / r.measured_ms);
      sq += e * e;
    }
    return sq;
  };
  // Coarse grid over ln e in steps of 0.05, then a finer one (0.005) around the best; the efficiencies are small
  // fractions of the fp32 rate and of the copy bandwidth (1e-3 .. 3).
  auto search = [&](std::initializer_list<double*> params, std::vector<ConvCheckRow>& rows) {
    std::vector<double*> ps(params);
    std::vector<double> best(ps.size(), std::log(0.1));
    double best_cost = 1e300;
    for (const double step : {0.05, 0.005}) {
      const std::vector<double> centre = best;
      const double half = step == 0.05 ? 3.5 : 0.05;  // ln 1e-3 .. ln 3 around ln 0.1 first
      const int n = static_cast<int>(std::lround(2 * half / step));
      std::vector<int> idx(ps.size(), 0);
      while (true) {
        for (std::size_t i = 0; i < ps.size(); ++i) *ps[i] = std::exp(centre[i] - half + idx[i] * step);
        const double v = cost(rows);
        if (v < best_cost) {
          best_cost = v;
          for (std::size_t i = 0; i < ps.size(); ++i) best[i] = std::log(*ps[i]);
        }
        std::size_t i = 0;
        while (i < idx.size() && ++idx[i] > n) idx[i++] = 0;
        if (i == idx.size()) break;
      }
    }
    for (std::size_t i = 0; i < ps.size(); ++i) *ps[i] = std::exp(best[i]);
    return std::sqrt(cost(rows) / static_cast<double>(rows.size()));
  };
  DepthwiseF32Fit f;
  f.rms_log_error = search({&c.dwconv_f32_flop_efficiency, &c.dwconv_f32_memory_efficiency}, small);
  f.rows = static_cast<int>(small.size());
  if (!large_tf32.empty()) {
    f.tf32_k7_rms_log_error = search({&c.dwconv_tf32_k7_flop_efficiency}, large_tf32);
    f.tf32_k7_rows = static_cast<int>(large_tf32.size());
  }
  if (!large_fp32.empty()) {
    f.fp32_k7_rms_log_error = search({&c.dwconv_fp32_k7_flop_efficiency}, large_fp32);
    f.fp32_k7_rows = static_cast<int>(large_fp32.size());
  }
  f.flop_efficiency = c.dwconv_f32_flop_efficiency;
  f.memory_efficiency = c.dwconv_f32_memory_efficiency;
  f.tf32_k7_flop_efficiency = c.dwconv_tf32_k7_flop_efficiency;
  f.fp32_k7_flop_efficiency = c.dwconv_fp32_k7_flop_efficiency;
  return f;
}

ConvCheckSummary summarize_convs(const std::vector<ConvCheckRow>& rows) {
  // RMS and mean of ln(predicted / measured) over some rows.
  auto log_errors = [](const std::vector<double>& e, double& rms, double& mean) {
    double sq = 0, sum = 0;
    for (double x : e) {
      sq += x * x;
      sum += x;
    }
    rms = e.empty() ? 0 : std::sqrt(sq / e.size());
    mean = e.empty() ? 0 : sum / e.size();
  };
  ConvCheckSummary s;
  std::vector<double> all;
  std::map<std::string, std::vector<double>> parts;
  for (const auto& r : rows) {
    all.push_back(std::log(r.predicted_ms / r.measured_ms));
    parts[r.kind].push_back(all.back());
    s.total_measured_ms += r.measured_ms;
    s.total_predicted_ms += r.predicted_ms;
  }
  s.rows = static_cast<int>(rows.size());
  log_errors(all, s.rms_log_error, s.mean_log_error);
  for (const auto& [kind, e] : parts) {
    ConvCheckSummary::Part part;
    part.kind = kind;
    part.rows = static_cast<int>(e.size());
    log_errors(e, part.rms_log_error, part.mean_log_error);
    s.by_kind.push_back(part);
  }
  return s;
}

std::string render_conv_table(const std::vector<ConvCheckRow>& rows, const ConvCheckSummary& s) {
  std::string out;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-18s %4s %-28s %-4s %9s %9s %7s\n", "model", "N", "conv (Cin HxW -> Cout kxk/s g)",
                "lay", "meas ms", "pred ms", "err%");
  out += buf;
  for (const auto& r : rows) {
    char shape[64], stride[24];
    // One stride when both are equal (as torchvision's layers), both when not: "/2" showed a (2, 1) stride as 2.
    if (r.layer.stride_h == r.layer.stride_w)
      std::snprintf(stride, sizeof stride, "%d", r.layer.stride_h);
    else
      std::snprintf(stride, sizeof stride, "%dx%d", r.layer.stride_h, r.layer.stride_w);
    std::snprintf(shape, sizeof shape, "%d %dx%d->%d %dx%d/%s g%d", r.layer.c_in, r.layer.h, r.layer.w, r.layer.c_out,
                  r.layer.kh, r.layer.kw, stride, r.layer.groups);
    std::snprintf(buf, sizeof buf, "%-18.18s %4d %-28.28s %-4s %9.3f %9.3f %+7.1f\n", r.model.c_str(), r.batch, shape,
                  r.nchw ? "nchw" : "nhwc", r.measured_ms, r.predicted_ms,
                  100.0 * (r.predicted_ms / r.measured_ms - 1));
    out += buf;
  }
  std::snprintf(buf, sizeof buf,
                "\n%d convolutions: RMS ln(predicted/measured) %.3f, mean %+.3f; total %.1f ms measured, %.1f ms "
                "predicted\n",
                s.rows, s.rms_log_error, s.mean_log_error, s.total_measured_ms, s.total_predicted_ms);
  out += buf;
  for (const auto& p : s.by_kind) {
    std::snprintf(buf, sizeof buf, "  %-10s %4d  RMS %.3f  mean %+.3f\n", p.kind.c_str(), p.rows, p.rms_log_error,
                  p.mean_log_error);
    out += buf;
  }
  return out;
}

nlohmann::json render_conv_json(const std::vector<ConvCheckRow>& rows, const ConvCheckSummary& s) {
  nlohmann::json j;
  j["rows"] = nlohmann::json::array();
  for (const auto& r : rows) {
    const ConvLayer& l = r.layer;
    j["rows"].push_back({{"model", r.model}, {"batch", r.batch}, {"c_in", l.c_in}, {"h", l.h}, {"w", l.w},
                         {"c_out", l.c_out}, {"k", {l.kh, l.kw}}, {"stride", {l.stride_h, l.stride_w}},
                         {"pad", {l.pad_h, l.pad_w}}, {"groups", l.groups}, {"bias", l.bias}, {"first", l.first},
                         {"layout", r.nchw ? "nchw" : "nhwc"}, {"kind", r.kind}, {"measured_ms", r.measured_ms},
                         {"predicted_ms", r.predicted_ms}, {"measured_transform_ms", r.measured_transform_ms},
                         {"predicted_transform_ms", r.predicted_transform_ms}});
  }
  nlohmann::json parts = nlohmann::json::array();
  for (const auto& p : s.by_kind)
    parts.push_back({{"kind", p.kind}, {"rows", p.rows}, {"rms_log_error", p.rms_log_error},
                     {"mean_log_error", p.mean_log_error}});
  j["summary"] = {{"rows", s.rows},
                  {"rms_log_error", s.rms_log_error},
                  {"mean_log_error", s.mean_log_error},
                  {"total_measured_ms", s.total_measured_ms},
                  {"total_predicted_ms", s.total_predicted_ms},
                  {"by_kind", parts}};
  return j;
}

}  // namespace gp::calibrate
