#include "calibrate/fit.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "calibrate/ddp_check.hpp"
#include "calibrate/json_fields.hpp"

namespace gp::calibrate {
namespace {

// Fitted: the efficiencies, GPU per-kernel time and the eager CPU costs. The backward CPU cost per kernel
// is tied to the forward one: fitting it separately moved the CPU cost of convolutions to zero and pushed
// ResNet-101 past 25% (the reference set cannot separate them), so the split stays a model feature only.
// The ninth is the CPU cost per framework call (docs/calibration.md, "Fitted global constants").
// With sessions on several hosts (`host_cpu_scale`), each session after the first also gets a factor on all
// its CPU costs (a nuisance parameter: that host's CPU speed relative to the first's), appended to the nine.
constexpr int kParams = 9;
using Vec = Eigen::VectorXd;

Vec to_vec(const ComputeConstants& c, int sessions) {
  Vec v = Vec::Zero(kParams + std::max(0, sessions - 1));
  v.head<kParams>() << std::log(c.gemm_efficiency), std::log(c.conv_efficiency), std::log(c.attention_efficiency),
      std::log(c.memory_efficiency), std::log(c.gpu_per_kernel.us()), std::log(c.cpu_per_kernel_eager.us()),
      std::log(c.cpu_per_conv_eager.us()), std::log(c.cpu_per_step_eager.us()), std::log(std::max(1.0, c.cpu_per_op_eager.us()));
  return v;
}

ComputeConstants from_vec(const Vec& v, ComputeConstants c) {
  c.gemm_efficiency = std::exp(v[0]);
  c.conv_efficiency = std::exp(v[1]);
  c.attention_efficiency = std::exp(v[2]);
  c.memory_efficiency = std::exp(v[3]);
  c.gpu_per_kernel = Seconds::us(std::exp(v[4]));
  c.cpu_per_kernel_eager = Seconds::us(std::exp(v[5]));
  c.cpu_per_conv_eager = Seconds::us(std::exp(v[6]));
  c.cpu_per_step_eager = Seconds::us(std::exp(v[7]));
  c.cpu_per_bwd_kernel_eager = c.cpu_per_kernel_eager;
  c.cpu_per_op_eager = Seconds::us(std::exp(v[8]));
  return c;
}

struct Prepared {
  const RunRecord* rec;
  StepOps ops;
  double measured_s;
  int session = 0;
};

// The constants of `session`'s host: the first host's CPU costs times exp(x[kParams + session - 1]).
ComputeConstants for_session(const ComputeConstants& c, const Vec& x, int session) {
  if (session <= 0 || kParams + session - 1 >= x.size()) return c;
  const double f = std::exp(x[kParams + session - 1]);
  ComputeConstants s = c;
  s.cpu_per_kernel_eager = c.cpu_per_kernel_eager * f;
  s.cpu_per_bwd_kernel_eager = c.cpu_per_bwd_kernel_eager * f;
  s.cpu_per_conv_eager = c.cpu_per_conv_eager * f;
  s.cpu_per_step_eager = c.cpu_per_step_eager * f;
  s.cpu_per_op_eager = c.cpu_per_op_eager * f;
  return s;
}

Eigen::VectorXd residuals(const std::vector<const Prepared*>& set, const DeviceModel& dev, const Vec& x,
                          const ComputeConstants& start) {
  const ComputeConstants c = from_vec(x, start);
  Eigen::VectorXd r(static_cast<Eigen::Index>(set.size()));
  for (std::size_t i = 0; i < set.size(); ++i) {
    const auto p = predict_step_from_ops(set[i]->ops, set[i]->rec->step, dev, for_session(c, x, set[i]->session));
    r[static_cast<Eigen::Index>(i)] = std::log(p.total.value() / set[i]->measured_s);
  }
  return r;
}

// Fits the nine constants (and, with `sessions` > 1, one CPU factor per further session) to `set`; returns the
// parameter vector (from_vec gives the first session's constants, for_session another's).
Vec levenberg_marquardt(const std::vector<const Prepared*>& set, const DeviceModel& dev,
                        const ComputeConstants& start, int* iterations, int sessions = 1) {
  Vec x = to_vec(start, sessions);
  const int n = static_cast<int>(x.size());
  Eigen::VectorXd r = residuals(set, dev, x, start);
  double cost = r.squaredNorm();
  double lambda = 1e-2;
  int it = 0;
  for (; it < 200; ++it) {
    Eigen::MatrixXd J(r.size(), n);
    for (int k = 0; k < n; ++k) {
      Vec xk = x;
      xk[k] += 1e-4;
      J.col(k) = (residuals(set, dev, xk, start) - r) / 1e-4;
    }
    const Eigen::MatrixXd A = J.transpose() * J;
    const Eigen::VectorXd g = J.transpose() * r;
    bool improved = false;
    for (int tries = 0; tries < 10 && !improved; ++tries) {
      Eigen::MatrixXd Ad = A;
      for (int k = 0; k < n; ++k) Ad(k, k) += lambda * (A(k, k) + 1e-9);
      const Vec step = Ad.ldlt().solve(-g);
      const Vec xn = x + step;
      const Eigen::VectorXd rn = residuals(set, dev, xn, start);
      const double cn = rn.squaredNorm();
      if (cn < cost) {
        const double gain = cost - cn;
        x = xn; r = rn; cost = cn;
        lambda = std::max(lambda / 3, 1e-9);
        improved = true;
        if (gain < 1e-12) it = 1000;
      } else {
        lambda *= 4;
      }
    }
    if (!improved) break;
  }
  *iterations = std::min(it, 200);
  return x;
}

double pct(double pred, double meas) { return 100.0 * (pred - meas) / meas; }

}  // namespace

bool is_fit_record(const RunRecord& r) {
  return gpu_bound(r) && r.expressible && r.measured.step_ms && !r.measured.oom;
}

std::vector<const RunRecord*> fit_records(const std::vector<RunRecord>& runs) {
  std::vector<const RunRecord*> out;
  for (const auto& r : runs)
    if (is_fit_record(r)) out.push_back(&r);
  return out;
}

FitResult fit_compute_constants(const std::vector<RunRecord>& runs, const DeviceModel& dev,
                                const ComputeConstants& start, bool leave_one_out,
                                const std::vector<int>& session_of_run,
                                const std::function<void(std::size_t, std::size_t)>& progress) {
  std::vector<Prepared> prep;
  int sessions = 1;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunRecord& r = runs[i];
    if (!is_fit_record(r)) continue;
    const int s = i < session_of_run.size() ? std::max(0, session_of_run[i]) : 0;
    sessions = std::max(sessions, s + 1);
    prep.push_back({&r, build_step_ops(r.step), *r.measured.step_ms * 1e-3, s});
  }
  std::vector<const Prepared*> all;
  for (const auto& p : prep) all.push_back(&p);
  FitResult res;
  const Vec x_all = levenberg_marquardt(all, dev, start, &res.iterations, sessions);
  res.constants = from_vec(x_all, start);
  res.session_cpu_scale.assign(1, 1.0);
  for (int s = 1; s < sessions; ++s) res.session_cpu_scale.push_back(std::exp(x_all[kParams + s - 1]));
  double sum = 0, loo_sum = 0;
  for (std::size_t i = 0; i < prep.size(); ++i) {
    FitRecordError e;
    e.id = prep[i].rec->id;
    e.measured_ms = prep[i].measured_s * 1e3;
    e.fitted_ms =
        predict_step_from_ops(prep[i].ops, prep[i].rec->step, dev, for_session(res.constants, x_all, prep[i].session))
            .total.ms();
    sum += std::abs(pct(e.fitted_ms, e.measured_ms));
    if (leave_one_out) {
      std::vector<const Prepared*> rest;
      for (std::size_t j = 0; j < prep.size(); ++j)
        if (j != i) rest.push_back(&prep[j]);
      int iters = 0;
      const Vec x = levenberg_marquardt(rest, dev, res.constants, &iters, sessions);
      const ComputeConstants c = for_session(from_vec(x, res.constants), x, prep[i].session);
      e.loo_ms = predict_step_from_ops(prep[i].ops, prep[i].rec->step, dev, c).total.ms();
      const double err = std::abs(pct(e.loo_ms, e.measured_ms));
      loo_sum += err;
      res.loo_max_pct = std::max(res.loo_max_pct, err);
      if (progress) progress(i + 1, prep.size());
    }
    res.records.push_back(e);
  }
  if (!prep.empty()) {
    res.mape_pct = sum / static_cast<double>(prep.size());
    res.loo_mape_pct = loo_sum / static_cast<double>(prep.size());
  }
  return res;
}

std::vector<SessionError> leave_one_session_out(const std::vector<std::vector<RunRecord>>& sessions,
                                                const std::vector<std::string>& names, const DeviceModel& dev,
                                                const ComputeConstants& start) {
  std::vector<SessionError> out;
  for (std::size_t s = 0; s < sessions.size(); ++s) {
    std::vector<RunRecord> rest;
    for (std::size_t o = 0; o < sessions.size(); ++o)
      if (o != s) rest.insert(rest.end(), sessions[o].begin(), sessions[o].end());
    const ComputeConstants c = fit_compute_constants(rest, dev, start, false).constants;
    SessionError e;
    e.name = s < names.size() ? names[s] : std::to_string(s);
    double sum = 0;
    for (const RunRecord* r : fit_records(sessions[s])) {
      const double pred = predict_step(r->step, dev, c).total.ms();
      const double err = std::abs(pct(pred, *r->measured.step_ms));
      sum += err;
      e.max_pct = std::max(e.max_pct, err);
      ++e.records;
    }
    if (e.records > 0) e.mape_pct = sum / static_cast<double>(e.records);
    out.push_back(e);
  }
  return out;
}

void read_kernel_classes(FieldReader& r, ComputeConstants& c, bool required = false);
void read_nchw_classes(FieldReader& r, ComputeConstants& c, bool required = false);
void read_probe_classes(FieldReader& r, ComputeConstants& c, bool required = false);

std::optional<FitConstants> parse_constants(const nlohmann::json& doc, const std::string& file,
                                            std::vector<std::string>& errors) {
  const std::size_t before = errors.size();
  if (!doc.is_object()) {
    errors.push_back(file + ":: expected a JSON object (a gpuplan-fit/1 document)");
    return std::nullopt;
  }
  FieldReader top(doc, file, "", errors);
  FitConstants fc;
  if (auto s = top.string("schema", true); s && *s != "gpuplan-fit/1")
    top.error("schema", "expected \"gpuplan-fit/1\", got \"" + *s + "\"");
  fc.compute.source = top.string("source", true).value_or("");
  fc.compute.as_of = top.string("as_of", true).value_or("");
  fc.profile = top.string("profile", false).value_or("");
  fc.runs = top.string("runs", false).value_or("");
  if (auto c = top.object("constants", true)) {
    fc.compute.gemm_efficiency = c->number("gemm_efficiency", true, true).value_or(0);
    fc.compute.conv_efficiency = c->number("conv_efficiency", true, true).value_or(0);
    fc.compute.conv_16bit_efficiency = c->non_negative("conv_16bit_efficiency", false).value_or(0);
    fc.compute.conv_fp16_efficiency = c->non_negative("conv_fp16_efficiency", false).value_or(0);
    fc.compute.conv_tf32_efficiency = c->non_negative("conv_tf32_efficiency", false).value_or(0);
    fc.compute.conv_fp32_efficiency = c->non_negative("conv_fp32_efficiency", false).value_or(0);
    fc.compute.dwconv_f32_flop_efficiency = c->non_negative("dwconv_f32_flop_efficiency", false).value_or(0);
    fc.compute.dwconv_f32_memory_efficiency = c->non_negative("dwconv_f32_memory_efficiency", false).value_or(0);
    fc.compute.dwconv_tf32_k7_flop_efficiency = c->non_negative("dwconv_tf32_k7_flop_efficiency", false).value_or(0);
    fc.compute.dwconv_fp32_k7_flop_efficiency = c->non_negative("dwconv_fp32_k7_flop_efficiency", false).value_or(0);
    fc.compute.reference_copy_bw = c->non_negative("reference_copy_GBps", false).value_or(0) * 1e9;
    fc.compute.reference_bf16_rate = c->non_negative("reference_bf16_tflops", false).value_or(0) * 1e12;
    fc.compute.reference_fp32_rate = c->non_negative("reference_fp32_tflops", false).value_or(0) * 1e12;
    fc.compute.attention_efficiency = c->number("attention_efficiency", true, true).value_or(0);
    fc.compute.memory_efficiency = c->number("memory_efficiency", true, true).value_or(0);
    fc.compute.gpu_per_kernel = Seconds::us(c->number("gpu_per_kernel_us", true, true).value_or(0));
    // The fit may drive any of the CPU costs to zero (another of them takes the cost over).
    fc.compute.cpu_per_kernel_eager = Seconds::us(c->non_negative("cpu_per_kernel_eager_us", true).value_or(0));
    fc.compute.cpu_per_conv_eager = Seconds::us(c->non_negative("cpu_per_conv_eager_us", true).value_or(0));
    fc.compute.cpu_per_bwd_kernel_eager = Seconds::us(c->non_negative("cpu_per_bwd_kernel_eager_us", true).value_or(0));
    fc.compute.cpu_per_step_eager = Seconds::us(c->non_negative("cpu_per_step_eager_us", true).value_or(0));
    fc.compute.cpu_per_op_eager = Seconds::us(c->number("cpu_per_op_eager_us", false).value_or(0));
    fc.compute.cpu_per_recompute_eager = Seconds::us(c->non_negative("cpu_per_recompute_eager_us", false).value_or(0));
    read_kernel_classes(*c, fc.compute);
    read_nchw_classes(*c, fc.compute);
    read_probe_classes(*c, fc.compute);
  }
  if (auto m = top.object("memory", false)) {
    fc.memory.largest_block_share =
        m->non_negative("largest_block_share", false).value_or(fc.memory.largest_block_share);
    if (auto r = m->number("reserve_gib", false)) fc.memory.reserve = Bytes::gib(*r);
    if (m->has("fit")) fc.memory_fit = m->json()["fit"];
    if (auto g = m->number("context_default_gib", false)) fc.memory.context_default = Bytes::gib(*g);
    if (auto w = m->number("workspace_mib", false)) fc.memory.workspace = Bytes::mib(*w);
  }
  if (doc.contains("fit")) fc.stats = doc["fit"];
  if (errors.size() != before) return std::nullopt;
  return fc;
}

namespace {

// A constants file written by one of the tools (a flat JSON object): `read` fills the constants from it and the
// `source` field (or the path) lands in `source_of(c)`.
template <class Read, class Source>
std::optional<ComputeConstants> load_class_file(const std::string& path, const char* what, const char* tool,
                                                std::vector<std::string>& errors, Read read, Source source_of) {
  auto doc = read_json_file(path, what, errors);
  if (!doc) return std::nullopt;
  if (!doc->is_object()) {
    errors.push_back(path + ":: expected a JSON object (" + tool + " output)");
    return std::nullopt;
  }
  const std::size_t before = errors.size();
  FieldReader top(*doc, path, "", errors);
  ComputeConstants c;
  read(top, c);
  source_of(c) = top.string("source", false).value_or(path);
  if (errors.size() != before) return std::nullopt;
  return c;
}

}  // namespace

std::optional<ComputeConstants> load_kernel_classes(const std::string& path, std::vector<std::string>& errors) {
  return load_class_file(
      path, "kernel-class constants", "tools/fit_kernel_classes.py", errors,
      [](FieldReader& r, ComputeConstants& c) { read_kernel_classes(r, c, true); },
      [](ComputeConstants& c) -> std::string& { return c.kernel_classes_source; });
}

std::optional<ComputeConstants> load_nchw_classes(const std::string& path, std::vector<std::string>& errors) {
  return load_class_file(
      path, "NCHW kernel-class constants", "tools/fit_nchw_classes.py", errors,
      [](FieldReader& r, ComputeConstants& c) { read_nchw_classes(r, c, true); },
      [](ComputeConstants& c) -> std::string& { return c.nchw_classes_source; });
}

std::optional<ComputeConstants> load_probe_classes(const std::string& path, std::vector<std::string>& errors) {
  return load_class_file(
      path, "probe-class constants", "tools/fit_probe_classes.py", errors,
      [](FieldReader& r, ComputeConstants& c) { read_probe_classes(r, c, true); },
      [](ComputeConstants& c) -> std::string& { return c.probe_classes_source; });
}

void copy_probe_classes(const ComputeConstants& from, ComputeConstants& to) {
  to.pool_rate = from.pool_rate;
  to.conv_stem_flop_efficiency = from.conv_stem_flop_efficiency;
  to.grouped_conv = from.grouped_conv;
  to.roll_rate = from.roll_rate;
  to.channel_cat_bw = from.channel_cat_bw;
  to.channel_shuffle_bw = from.channel_shuffle_bw;
  to.channel_split_bw = from.channel_split_bw;
  to.elementwise_unrolled_bw = from.elementwise_unrolled_bw;
  to.elementwise_broadcast_bw = from.elementwise_broadcast_bw;
  to.elementwise_gelu_bw = from.elementwise_gelu_bw;
  to.bmm_aligned_rate = from.bmm_aligned_rate;
  to.bmm_unaligned_rate = from.bmm_unaligned_rate;
  to.wide_bn_fwd_rate = from.wide_bn_fwd_rate;
  to.wide_bn_bwd_rate = from.wide_bn_bwd_rate;
  to.wide_max_pool_fwd_rate = from.wide_max_pool_fwd_rate;
  to.wide_dwconv_fwd_rate = from.wide_dwconv_fwd_rate;
  to.wide_dwconv_bwd_rate = from.wide_dwconv_bwd_rate;
  to.wide_dwconv_fwd_elem_rate = from.wide_dwconv_fwd_elem_rate;
  to.wide_dwconv_bwd_elem_rate = from.wide_dwconv_bwd_elem_rate;
  to.channel_sum = from.channel_sum;
  to.bn_nhwc_fwd = from.bn_nhwc_fwd;
  to.bn_nhwc_bwd = from.bn_nhwc_bwd;
  to.bn_nhwc_fp16_fwd = from.bn_nhwc_fp16_fwd;
  to.bn_nhwc_fp16_bwd = from.bn_nhwc_fp16_bwd;
  to.bn_nhwc_fp32_fwd = from.bn_nhwc_fp32_fwd;
  to.bn_nhwc_fp32_bwd = from.bn_nhwc_fp32_bwd;
  to.ln_fwd = from.ln_fwd;
  to.ln_bwd = from.ln_bwd;
  to.probe_classes_source = from.probe_classes_source;
}

void copy_nchw_classes(const ComputeConstants& from, ComputeConstants& to) {
  to.bn_nchw_fwd_rate_per_channel = from.bn_nchw_fwd_rate_per_channel;
  to.bn_nchw_fwd_max_rate = from.bn_nchw_fwd_max_rate;
  to.bn_nchw_fwd_plane_cost = from.bn_nchw_fwd_plane_cost;
  to.bn_nchw_bwd_rate_per_channel = from.bn_nchw_bwd_rate_per_channel;
  to.bn_nchw_bwd_max_rate = from.bn_nchw_bwd_max_rate;
  to.bn_nchw_bwd_plane_cost = from.bn_nchw_bwd_plane_cost;
  to.dwconv_nchw_fwd_flop_efficiency = from.dwconv_nchw_fwd_flop_efficiency;
  to.dwconv_nchw_bwd_flop_efficiency = from.dwconv_nchw_bwd_flop_efficiency;
  to.nchw_transform_efficiency = from.nchw_transform_efficiency;
  to.nchw_transform_first_efficiency = from.nchw_transform_first_efficiency;
  to.nchw_transform_passes = from.nchw_transform_passes;
  to.nchw_conv_factor = from.nchw_conv_factor;
  to.nchw_classes_source = from.nchw_classes_source;
}

std::string default_constants_path(const std::string& profile_path) {
  const std::filesystem::path p(profile_path);
  return (p.parent_path() / ("fit-" + p.stem().string() + ".json")).string();
}

std::optional<FitConstants> load_constants_for(const std::string& profile_path, bool profile_read,
                                               const std::string& given, std::vector<std::string>& errors) {
  if (!given.empty()) return load_constants(given, errors);
  if (!profile_read) return std::nullopt;
  return load_constants(default_constants_path(profile_path), errors);
}

std::optional<FitConstants> load_constants(const std::string& path, std::vector<std::string>& errors) {
  auto doc = read_json_file(path, "fitted-constants", errors);
  if (!doc) return std::nullopt;
  return parse_constants(*doc, path, errors);
}

// One constant of a kernel-class file: positive when `required` (the class file itself), otherwise (a fit file)
// zero or absent means "not set" and only a negative value is wrong.
double class_value(FieldReader& r, const char* key, bool required) {
  return (required ? r.number(key, true, true) : r.non_negative(key, false)).value_or(0);
}

void read_kernel_classes(FieldReader& r, ComputeConstants& c, bool required) {
  // In a kernel-classes file each constant must be positive; in a fit file 0 means "not set" (the general
  // constant applies) and only negatives are wrong.
  auto value = [&](const char* key) { return class_value(r, key, required); };
  c.bn_element_rate = value("bn_gelements_per_s") * 1e9;
  c.norm_row_cost = Seconds::ns(value("norm_row_cost_ns"));
  c.transpose_efficiency = value("transpose_efficiency");
  c.dwconv_flop_efficiency = value("dwconv_flop_efficiency");
  c.dwconv_memory_efficiency = value("dwconv_memory_efficiency");
  if (!required) c.kernel_classes_source = r.string("kernel_classes_source", false).value_or("");
}

// JSON names of ComputeConstants::pool_rate (G elements per second), in pool_rate_index() order.
constexpr std::array<const char*, 8> kPoolRateKeys{
    "max_pool_fwd_nhwc_gelements_per_s", "max_pool_fwd_nchw_gelements_per_s",
    "max_pool_bwd_nhwc_gelements_per_s", "max_pool_bwd_nchw_gelements_per_s",
    "avg_pool_fwd_nhwc_gelements_per_s", "avg_pool_fwd_nchw_gelements_per_s",
    "avg_pool_bwd_nhwc_gelements_per_s", "avg_pool_bwd_nchw_gelements_per_s"};

void read_probe_classes(FieldReader& r, ComputeConstants& c, bool required) {
  // Positive in a probe-classes file; 0 / absent = "not set" in a fit file.
  auto value = [&](const char* key) { return class_value(r, key, required); };
  for (std::size_t i = 0; i < c.pool_rate.size(); ++i) c.pool_rate[i] = value(kPoolRateKeys[i]) * 1e9;
  c.conv_stem_flop_efficiency = value("conv_stem_flop_efficiency");
  // The grouped-convolution class: optional in both files (older probe-class files lack it).
  c.grouped_conv.rate = r.non_negative("grouped_conv_tflops", false).value_or(0) * 1e12;
  c.grouped_conv.w0 = r.non_negative("grouped_conv_w0", false).value_or(0);
  c.grouped_conv.odd_factor = r.non_negative("grouped_conv_odd_factor", false).value_or(1);
  c.grouped_conv.stride_factor = r.non_negative("grouped_conv_stride_factor", false).value_or(1);
  c.grouped_conv.pass_cost = Seconds::us(r.non_negative("grouped_conv_pass_us", false).value_or(0));
  c.roll_rate = r.non_negative("roll_gelements_per_s", false).value_or(0) * 1e9;
  c.channel_cat_bw = r.non_negative("channel_cat_GBps", false).value_or(0) * 1e9;
  c.channel_shuffle_bw = r.non_negative("channel_shuffle_GBps", false).value_or(0) * 1e9;
  c.channel_split_bw = r.non_negative("channel_split_GBps", false).value_or(0) * 1e9;
  c.elementwise_unrolled_bw = r.non_negative("elementwise_unrolled_GBps", false).value_or(0) * 1e9;
  c.elementwise_broadcast_bw = r.non_negative("elementwise_broadcast_GBps", false).value_or(0) * 1e9;
  c.elementwise_gelu_bw = r.non_negative("elementwise_gelu_GBps", false).value_or(0) * 1e9;
  c.bmm_aligned_rate = r.non_negative("bmm_aligned_tflops", false).value_or(0) * 1e12;
  c.bmm_unaligned_rate = r.non_negative("bmm_unaligned_tflops", false).value_or(0) * 1e12;
  c.wide_bn_fwd_rate = r.non_negative("wide_bn_fwd_gelements_per_s", false).value_or(0) * 1e9;
  c.wide_bn_bwd_rate = r.non_negative("wide_bn_bwd_gelements_per_s", false).value_or(0) * 1e9;
  c.wide_max_pool_fwd_rate = r.non_negative("wide_max_pool_fwd_gelements_per_s", false).value_or(0) * 1e9;
  c.wide_dwconv_fwd_rate = r.non_negative("wide_dwconv_fwd_input_gflops", false).value_or(0) * 1e9;
  c.wide_dwconv_bwd_rate = r.non_negative("wide_dwconv_bwd_input_gflops", false).value_or(0) * 1e9;
  c.wide_dwconv_fwd_elem_rate = r.non_negative("wide_dwconv_fwd_gelements_per_s", false).value_or(0) * 1e9;
  c.wide_dwconv_bwd_elem_rate = r.non_negative("wide_dwconv_bwd_gelements_per_s", false).value_or(0) * 1e9;
  // The per-channel sum samples: [{"rows", "channels", "layout": "nhwc" | "nchw", "gelements_per_s"}, ...].
  const nlohmann::json& j = r.json();
  if (j.is_object() && j.contains("channel_sum")) {
    const nlohmann::json& arr = j["channel_sum"];
    if (!arr.is_array()) {
      r.error("channel_sum", "expected an array of {rows, channels, layout, gelements_per_s}");
    } else {
      for (std::size_t i = 0; i < arr.size(); ++i) {
        const nlohmann::json& e = arr[i];
        const std::string key = "channel_sum/" + std::to_string(i);
        if (!e.is_object() || !e.contains("rows") || !e.contains("channels") || !e.contains("layout") ||
            !e.contains("gelements_per_s") || !e["rows"].is_number() || !e["channels"].is_number() ||
            !e["gelements_per_s"].is_number() || !e["layout"].is_string() ||
            (e["layout"] != "nhwc" && e["layout"] != "nchw") || e["rows"].get<double>() <= 0 ||
            e["channels"].get<double>() <= 0 || e["gelements_per_s"].get<double>() <= 0) {
          r.error(key, "expected {\"rows\": > 0, \"channels\": > 0, \"layout\": \"nhwc\" or \"nchw\", "
                       "\"gelements_per_s\": > 0}");
          continue;
        }
        c.channel_sum.push_back({e["rows"].get<double>(), e["channels"].get<double>(), e["layout"] == "nchw",
                                 e["gelements_per_s"].get<double>() * 1e9});
      }
    }
  } else if (required) {
    r.error("channel_sum", "expected an array of {rows, channels, layout, gelements_per_s}, got nothing");
  }
  // Shape-dependent samples with a forward and a backward rate (optional): [{"rows", "channels",
  // "fwd_gelements_per_s", "bwd_gelements_per_s"}, ...]: channels-last BatchNorm (bn_nhwc) and LayerNorm (ln).
  auto fwd_bwd_samples = [&](const char* key, std::vector<ComputeConstants::ChannelSumSample>& fwd,
                             std::vector<ComputeConstants::ChannelSumSample>& bwd) {
    if (!j.is_object() || !j.contains(key)) return;
    const nlohmann::json& arr = j[key];
    const char* expect = "expected {\"rows\": > 0, \"channels\": > 0, \"fwd_gelements_per_s\": > 0, "
                         "\"bwd_gelements_per_s\": > 0}";
    if (!arr.is_array()) r.error(key, std::string("expected an array of ") + expect);
    for (std::size_t i = 0; arr.is_array() && i < arr.size(); ++i) {
      const nlohmann::json& e = arr[i];
      auto positive = [&](const char* k) {
        return e.is_object() && e.contains(k) && e[k].is_number() && e[k].get<double>() > 0;
      };
      if (!positive("rows") || !positive("channels") || !positive("fwd_gelements_per_s") ||
          !positive("bwd_gelements_per_s")) {
        r.error(std::string(key) + "/" + std::to_string(i), expect);
        continue;
      }
      const double rows = e["rows"].get<double>(), ch = e["channels"].get<double>();
      fwd.push_back({rows, ch, false, e["fwd_gelements_per_s"].get<double>() * 1e9});
      bwd.push_back({rows, ch, false, e["bwd_gelements_per_s"].get<double>() * 1e9});
    }
  };
  fwd_bwd_samples("bn_nhwc", c.bn_nhwc_fwd, c.bn_nhwc_bwd);
  fwd_bwd_samples("bn_nhwc_fp16", c.bn_nhwc_fp16_fwd, c.bn_nhwc_fp16_bwd);
  fwd_bwd_samples("bn_nhwc_fp32", c.bn_nhwc_fp32_fwd, c.bn_nhwc_fp32_bwd);
  fwd_bwd_samples("ln", c.ln_fwd, c.ln_bwd);
  if (!required) c.probe_classes_source = r.string("probe_classes_source", false).value_or("");
}

// JSON names of ComputeConstants::nchw_transform_passes, in NchwBand order.
constexpr std::array<const char*, nchw_band_count> kNchwPassKeys{
    "nchw_transform_passes_spatial",        "nchw_transform_passes_spatial_first",
    "nchw_transform_passes_pointwise_strided", "nchw_transform_passes_pointwise_small",
    "nchw_transform_passes_pointwise_mid",  "nchw_transform_passes_pointwise_large"};
// JSON names of ComputeConstants::nchw_conv_factor, in NchwBand order (the 1x1 bands only have one).
constexpr std::array<const char*, nchw_band_count> kNchwConvFactorKeys{
    nullptr, nullptr, "nchw_conv_factor_pointwise_strided", "nchw_conv_factor_pointwise_small",
    "nchw_conv_factor_pointwise_mid", "nchw_conv_factor_pointwise_large"};

void read_nchw_classes(FieldReader& r, ComputeConstants& c, bool required) {
  // As read_kernel_classes: positive in an NCHW-classes file, 0 = "as NHWC" in a fit file.
  auto value = [&](const char* key) { return class_value(r, key, required); };
  c.bn_nchw_fwd_rate_per_channel = value("bn_nchw_fwd_gelements_per_s_per_channel") * 1e9;
  c.bn_nchw_fwd_max_rate = value("bn_nchw_fwd_max_gelements_per_s") * 1e9;
  c.bn_nchw_fwd_plane_cost = Seconds::ns(required ? r.non_negative("bn_nchw_fwd_plane_ns", true).value_or(0)
                                                  : value("bn_nchw_fwd_plane_ns"));
  c.bn_nchw_bwd_rate_per_channel = value("bn_nchw_bwd_gelements_per_s_per_channel") * 1e9;
  c.bn_nchw_bwd_max_rate = value("bn_nchw_bwd_max_gelements_per_s") * 1e9;
  c.bn_nchw_bwd_plane_cost = Seconds::ns(required ? r.non_negative("bn_nchw_bwd_plane_ns", true).value_or(0)
                                                  : value("bn_nchw_bwd_plane_ns"));
  c.dwconv_nchw_fwd_flop_efficiency = value("dwconv_nchw_fwd_flop_efficiency");
  c.dwconv_nchw_bwd_flop_efficiency = value("dwconv_nchw_bwd_flop_efficiency");
  c.nchw_transform_efficiency = value("nchw_transform_efficiency");
  c.nchw_transform_first_efficiency = r.non_negative("nchw_transform_first_efficiency", false).value_or(0);
  // Measured transformed passes per band: required in an NCHW-classes file (0 is a measurement there), absent
  // = not set in a fit file.
  for (std::size_t b = 0; b < c.nchw_transform_passes.size(); ++b) {
    auto v = r.non_negative(kNchwPassKeys[b], required);
    if (v && *v > 3) {
      r.error(kNchwPassKeys[b], "expected at most 3 passes (forward, input gradient, weight gradient)");
      v.reset();
    }
    c.nchw_transform_passes[b] = v.value_or(-1);
  }
  // 1x1 convolutions' NCHW kernel-time factors: optional (older files lack them; absent = 1).
  for (std::size_t b = 0; b < c.nchw_conv_factor.size(); ++b)
    if (kNchwConvFactorKeys[b]) c.nchw_conv_factor[b] = r.non_negative(kNchwConvFactorKeys[b], false).value_or(0);
  if (!required) c.nchw_classes_source = r.string("nchw_classes_source", false).value_or("");
}

nlohmann::json constants_to_json(const FitConstants& fc) {
  const ComputeConstants& c = fc.compute;
  nlohmann::json j;
  j["schema"] = "gpuplan-fit/1";
  j["source"] = c.source;
  j["as_of"] = c.as_of;
  j["profile"] = fc.profile;
  j["runs"] = fc.runs;
  j["constants"] = {{"gemm_efficiency", c.gemm_efficiency},
                    {"conv_efficiency", c.conv_efficiency},
                    {"attention_efficiency", c.attention_efficiency},
                    {"memory_efficiency", c.memory_efficiency},
                    {"gpu_per_kernel_us", c.gpu_per_kernel.us()},
                    {"cpu_per_kernel_eager_us", c.cpu_per_kernel_eager.us()},
                    {"cpu_per_conv_eager_us", c.cpu_per_conv_eager.us()},
                    {"cpu_per_bwd_kernel_eager_us", c.cpu_per_bwd_kernel_eager.us()},
                    {"cpu_per_step_eager_us", c.cpu_per_step_eager.us()},
                    {"cpu_per_op_eager_us", c.cpu_per_op_eager.us()},
                    {"cpu_per_recompute_eager_us", c.cpu_per_recompute_eager.us()},
                    {"bn_gelements_per_s", c.bn_element_rate / 1e9},
                    {"norm_row_cost_ns", c.norm_row_cost.value() * 1e9},
                    {"transpose_efficiency", c.transpose_efficiency},
                    {"dwconv_flop_efficiency", c.dwconv_flop_efficiency},
                    {"dwconv_memory_efficiency", c.dwconv_memory_efficiency},
                    {"kernel_classes_source", c.kernel_classes_source},
                    {"bn_nchw_fwd_gelements_per_s_per_channel", c.bn_nchw_fwd_rate_per_channel / 1e9},
                    {"bn_nchw_fwd_max_gelements_per_s", c.bn_nchw_fwd_max_rate / 1e9},
                    {"bn_nchw_fwd_plane_ns", c.bn_nchw_fwd_plane_cost.value() * 1e9},
                    {"bn_nchw_bwd_gelements_per_s_per_channel", c.bn_nchw_bwd_rate_per_channel / 1e9},
                    {"bn_nchw_bwd_max_gelements_per_s", c.bn_nchw_bwd_max_rate / 1e9},
                    {"bn_nchw_bwd_plane_ns", c.bn_nchw_bwd_plane_cost.value() * 1e9},
                    {"dwconv_nchw_fwd_flop_efficiency", c.dwconv_nchw_fwd_flop_efficiency},
                    {"dwconv_nchw_bwd_flop_efficiency", c.dwconv_nchw_bwd_flop_efficiency},
                    {"nchw_transform_efficiency", c.nchw_transform_efficiency},
                    {"nchw_transform_first_efficiency", c.nchw_transform_first_efficiency},
                    {"nchw_classes_source", c.nchw_classes_source}};
  for (std::size_t b = 0; b < c.nchw_transform_passes.size(); ++b)
    if (c.nchw_transform_passes[b] >= 0) j["constants"][kNchwPassKeys[b]] = c.nchw_transform_passes[b];
  for (std::size_t b = 0; b < c.nchw_conv_factor.size(); ++b)
    if (kNchwConvFactorKeys[b] && c.nchw_conv_factor[b] > 0)
      j["constants"][kNchwConvFactorKeys[b]] = c.nchw_conv_factor[b];
  for (std::size_t i = 0; i < c.pool_rate.size(); ++i) j["constants"][kPoolRateKeys[i]] = c.pool_rate[i] / 1e9;
  j["constants"]["conv_stem_flop_efficiency"] = c.conv_stem_flop_efficiency;
  if (c.grouped_conv.rate > 0) {
    j["constants"]["grouped_conv_tflops"] = c.grouped_conv.rate / 1e12;
    j["constants"]["grouped_conv_w0"] = c.grouped_conv.w0;
    j["constants"]["grouped_conv_odd_factor"] = c.grouped_conv.odd_factor;
    j["constants"]["grouped_conv_stride_factor"] = c.grouped_conv.stride_factor;
    j["constants"]["grouped_conv_pass_us"] = c.grouped_conv.pass_cost.us();
  }
  if (c.conv_16bit_efficiency > 0) j["constants"]["conv_16bit_efficiency"] = c.conv_16bit_efficiency;
  if (c.conv_fp16_efficiency > 0) j["constants"]["conv_fp16_efficiency"] = c.conv_fp16_efficiency;
  if (c.conv_tf32_efficiency > 0) j["constants"]["conv_tf32_efficiency"] = c.conv_tf32_efficiency;
  if (c.conv_fp32_efficiency > 0) j["constants"]["conv_fp32_efficiency"] = c.conv_fp32_efficiency;
  if (c.dwconv_f32_flop_efficiency > 0) {
    j["constants"]["dwconv_f32_flop_efficiency"] = c.dwconv_f32_flop_efficiency;
    j["constants"]["dwconv_f32_memory_efficiency"] = c.dwconv_f32_memory_efficiency;
    j["constants"]["dwconv_tf32_k7_flop_efficiency"] = c.dwconv_tf32_k7_flop_efficiency;
    j["constants"]["dwconv_fp32_k7_flop_efficiency"] = c.dwconv_fp32_k7_flop_efficiency;
  }
  if (c.reference_copy_bw > 0) j["constants"]["reference_copy_GBps"] = c.reference_copy_bw / 1e9;
  if (c.reference_bf16_rate > 0) j["constants"]["reference_bf16_tflops"] = c.reference_bf16_rate / 1e12;
  if (c.reference_fp32_rate > 0) j["constants"]["reference_fp32_tflops"] = c.reference_fp32_rate / 1e12;
  if (c.roll_rate > 0) j["constants"]["roll_gelements_per_s"] = c.roll_rate / 1e9;
  if (c.channel_cat_bw > 0) j["constants"]["channel_cat_GBps"] = c.channel_cat_bw / 1e9;
  if (c.channel_shuffle_bw > 0) j["constants"]["channel_shuffle_GBps"] = c.channel_shuffle_bw / 1e9;
  if (c.channel_split_bw > 0) j["constants"]["channel_split_GBps"] = c.channel_split_bw / 1e9;
  if (c.elementwise_unrolled_bw > 0) j["constants"]["elementwise_unrolled_GBps"] = c.elementwise_unrolled_bw / 1e9;
  if (c.elementwise_broadcast_bw > 0) j["constants"]["elementwise_broadcast_GBps"] = c.elementwise_broadcast_bw / 1e9;
  if (c.elementwise_gelu_bw > 0) j["constants"]["elementwise_gelu_GBps"] = c.elementwise_gelu_bw / 1e9;
  if (c.bmm_aligned_rate > 0) j["constants"]["bmm_aligned_tflops"] = c.bmm_aligned_rate / 1e12;
  if (c.bmm_unaligned_rate > 0) j["constants"]["bmm_unaligned_tflops"] = c.bmm_unaligned_rate / 1e12;
  if (c.wide_bn_fwd_rate > 0) j["constants"]["wide_bn_fwd_gelements_per_s"] = c.wide_bn_fwd_rate / 1e9;
  if (c.wide_bn_bwd_rate > 0) j["constants"]["wide_bn_bwd_gelements_per_s"] = c.wide_bn_bwd_rate / 1e9;
  if (c.wide_max_pool_fwd_rate > 0)
    j["constants"]["wide_max_pool_fwd_gelements_per_s"] = c.wide_max_pool_fwd_rate / 1e9;
  if (c.wide_dwconv_fwd_rate > 0) j["constants"]["wide_dwconv_fwd_input_gflops"] = c.wide_dwconv_fwd_rate / 1e9;
  if (c.wide_dwconv_bwd_rate > 0) j["constants"]["wide_dwconv_bwd_input_gflops"] = c.wide_dwconv_bwd_rate / 1e9;
  if (c.wide_dwconv_fwd_elem_rate > 0)
    j["constants"]["wide_dwconv_fwd_gelements_per_s"] = c.wide_dwconv_fwd_elem_rate / 1e9;
  if (c.wide_dwconv_bwd_elem_rate > 0)
    j["constants"]["wide_dwconv_bwd_gelements_per_s"] = c.wide_dwconv_bwd_elem_rate / 1e9;
  nlohmann::json sums = nlohmann::json::array();
  for (const auto& s : c.channel_sum)
    sums.push_back({{"rows", s.rows}, {"channels", s.channels}, {"layout", s.nchw ? "nchw" : "nhwc"},
                    {"gelements_per_s", s.rate / 1e9}});
  if (!sums.empty()) j["constants"]["channel_sum"] = sums;
  auto write_fwd_bwd = [&](const char* key, const std::vector<ComputeConstants::ChannelSumSample>& fwd,
                           const std::vector<ComputeConstants::ChannelSumSample>& bwd) {
    nlohmann::json arr = nlohmann::json::array();
    for (std::size_t i = 0; i < fwd.size() && i < bwd.size(); ++i)
      arr.push_back({{"rows", fwd[i].rows}, {"channels", fwd[i].channels}, {"fwd_gelements_per_s", fwd[i].rate / 1e9},
                     {"bwd_gelements_per_s", bwd[i].rate / 1e9}});
    if (!arr.empty()) j["constants"][key] = arr;
  };
  write_fwd_bwd("bn_nhwc", c.bn_nhwc_fwd, c.bn_nhwc_bwd);
  write_fwd_bwd("bn_nhwc_fp16", c.bn_nhwc_fp16_fwd, c.bn_nhwc_fp16_bwd);
  write_fwd_bwd("bn_nhwc_fp32", c.bn_nhwc_fp32_fwd, c.bn_nhwc_fp32_bwd);
  write_fwd_bwd("ln", c.ln_fwd, c.ln_bwd);
  j["constants"]["probe_classes_source"] = c.probe_classes_source;
  j["memory"] = {{"largest_block_share", fc.memory.largest_block_share},
                 {"reserve_gib", fc.memory.reserve.gib()},
                 {"context_default_gib", fc.memory.context_default.gib()},
                 {"workspace_mib", fc.memory.workspace.mib()},
                 {"source", fc.memory_fit.is_null()
                                ? "largest_block_share and reserve_gib: the defaults in models/memory_model.hpp; "
                                  "32 MiB cuBLAS workspace as PyTorch gives cuBLAS on Hopper (docs/calibration.md)"
                                : "largest_block_share and reserve_gib fitted by gpuplan calibrate fit to measured "
                                  "out-of-memory verdicts (memory.fit; docs/calibration.md section 5); 32 MiB cuBLAS "
                                  "workspace as PyTorch gives cuBLAS on Hopper"}};
  if (!fc.memory_fit.is_null()) j["memory"]["fit"] = fc.memory_fit;
  if (!fc.stats.is_null()) j["fit"] = fc.stats;
  return j;
}

std::optional<RecomputeCpuFit> fit_recompute_cpu(const std::vector<std::string>& paths, const DeviceModel& dev,
                                                 const ComputeConstants& constants, std::vector<std::string>& errors) {
  const std::size_t before = errors.size();
  std::vector<RunRecord> runs;
  for (const auto& path : paths) {
    auto r = load_runs(path, errors);
    if (const auto problem = multi_gpu_problem(r, path)) errors.push_back(*problem);
    runs.insert(runs.end(), std::make_move_iterator(r.begin()), std::make_move_iterator(r.end()));
  }
  if (errors.size() != before) return std::nullopt;
  ComputeConstants c = constants;
  c.cpu_per_recompute_eager = Seconds::us(0);
  // With t_rc = 0 each record's prediction splits into its CPU issue, GPU busy time and recomputed calls; the
  // step is max(CPU + t_rc x n_rc, GPU), so every candidate t_rc is timed without rebuilding the step.
  struct Row {
    double cpu, gpu, n_rc, measured;
  };
  std::vector<Row> rows;
  for (const RunRecord* r : fit_records(runs)) {
    if (!r->step.activation_checkpointing || r->step.cuda_graphs) continue;
    const StepPrediction p = predict_step(r->step, dev, c);
    if (p.recompute_calls <= 0) continue;
    rows.push_back({p.cpu_issue.value(), p.gpu_busy.value(), p.recompute_calls, *r->measured.step_ms * 1e-3});
  }
  if (rows.empty()) {
    errors.push_back(join_paths(paths) +
                     ": no checkpointed train record with a measured step time (expected records with "
                     "activation_checkpointing true and step_ms, as tools/measure_ckpt_cpu.py writes)");
    return std::nullopt;
  }
  auto sse = [&](double t) {
    double s = 0;
    for (const Row& w : rows) {
      const double e = std::log(std::max(w.cpu + t * w.n_rc, w.gpu) / w.measured);
      s += e * e;
    }
    return s;
  };
  // Grid over 0..2 ms per call in 0.5 us steps: the sum of squares is piecewise smooth in t (the max switches),
  // so a grid finds the global minimum where a local search might stop at a kink.
  RecomputeCpuFit f;
  f.records = static_cast<int>(rows.size());
  double best = sse(0);
  f.rms_log_before = std::sqrt(best / static_cast<double>(rows.size()));
  for (int i = 1; i <= 4000; ++i) {
    const double t = i * 0.5e-6, v = sse(t);
    if (v < best) {
      best = v;
      f.seconds = t;
    }
  }
  f.rms_log_after = std::sqrt(best / static_cast<double>(rows.size()));
  return f;
}

std::optional<OomFit> fit_oom_rule(const std::vector<OomRow>& rows) {
  OomFit f;
  for (const OomRow& r : rows) {
    ++f.records;
    if (r.oom) ++f.oom_records;
  }
  if (f.oom_records == 0 || f.oom_records == f.records) return std::nullopt;  // nothing to separate
  // For each share: sort x = peak + share x largest - capacity (a step fits when x <= -reserve) and take the cut
  // between neighbours with the fewest wrong verdicts, then the widest gap; over the shares the same order, then
  // the smaller share.
  int best_err = std::numeric_limits<int>::max();
  double best_gap = -std::numeric_limits<double>::infinity();
  std::vector<std::pair<double, bool>> xs(rows.size());
  for (int i = 0; i <= 200; ++i) {
    const double k = i * 0.01;
    for (std::size_t j = 0; j < rows.size(); ++j)
      xs[j] = {rows[j].peak + k * rows[j].largest - rows[j].capacity, rows[j].oom};
    std::sort(xs.begin(), xs.end());
    // A cut after position c (0 = before the first): the first c predicted to fit.
    int err = f.records - f.oom_records;  // cut before the first: every step predicted out of memory
    for (std::size_t c = 0; c <= xs.size(); ++c) {
      if (c > 0) err += xs[c - 1].second ? 1 : -1;  // moving one step to the fits side
      if (c == 0 || c == xs.size()) continue;        // a cut must have a step on each side
      const double gap = xs[c].first - xs[c - 1].first;
      if (err < best_err || (err == best_err && gap > best_gap)) {
        best_err = err;
        best_gap = gap;
        f.largest_block_share = k;
        f.reserve = -(xs[c - 1].first + xs[c].first) / 2;
      }
    }
  }
  f.misclassified = best_err;
  // The margin: the gap between the closest steps on either side of the rule (negative when it errs).
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
  for (const OomRow& r : rows) {
    const double x = r.peak + f.largest_block_share * r.largest - r.capacity;
    if (r.oom) hi = std::min(hi, x);
    else lo = std::max(lo, x);
  }
  f.margin = hi - lo;
  return f;
}

std::vector<OomRow> oom_rows(const std::vector<RunRecord>& runs, const GpuProfile& profile,
                             const FitConstants& constants) {
  std::vector<OomRow> rows;
  for (const RunRecord& r : runs) {
    if (r.kind != "train" || !r.expressible) continue;
    if (!r.measured.oom && !r.measured.peak_mem_gib) continue;  // no verdict
    const StepOps ops = build_step_ops(r.step);
    if (!ops.not_expressible.empty()) continue;
    const MemoryPrediction m = predict_memory_from_ops(ops, r.step, ParallelConfig{}, profile.memory_total,
                                                       profile.context_memory, constants.memory);
    rows.push_back({m.peak_device.value(), m.largest_tensor.value(), m.capacity.value(), r.measured.oom});
  }
  return rows;
}

}  // namespace gp::calibrate
