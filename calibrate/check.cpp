#include "calibrate/check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <utility>

#include "calibrate/ddp_check.hpp"  // record_gpus
#include "calibrate/json_text.hpp"
#include "calibrate/loader_check.hpp"  // sim engineer: data-loader simulation for cpu-jpeg-pipeline records
#include "sim/step_sim.hpp"

namespace gp::calibrate {

RecordPrediction predict_train_record(const RunRecord& rec, const DeviceModel& dev, const GpuProfile& profile,
                                      const FitConstants& constants, const PipelinePredictor& pipeline,
                                      double host_cpu_scale) {
  RecordPrediction p;
  if (!rec.expressible) {
    p.expressible = false;
    p.reason = rec.reason;
    return p;
  }
  const StepOps ops = build_step_ops(rec.step);
  if (!ops.not_expressible.empty()) {
    p.expressible = false;
    p.reason = ops.not_expressible;
    return p;
  }
  p.step = predict_step_from_ops(ops, rec.step, dev, constants.compute);
  if (host_cpu_scale > 0) apply_host_cpu_scale(p.step, host_cpu_scale);
  p.memory = predict_memory_from_ops(ops, rec.step, ParallelConfig{}, profile.memory_total, profile.context_memory,
                                     constants.memory);
  p.peak_mem_gib = p.memory.peak_allocated.gib();
  p.oom = !p.memory.fits;
  if (p.oom) {
    p.reason = "predicted out of memory";
    return p;
  }
  p.bottleneck = to_string(p.step.bottleneck);
  p.gpu_busy_frac = p.step.gpu_busy_frac;
  if (rec.data == "synthetic-on-gpu") {
    p.step_ms = p.step.total.ms();
  } else if (pipeline) {
    p.step_ms = pipeline(rec, p);
    if (!p.step_ms) {
      p.reason = "the data-loader simulation could not predict it";
    } else {
      if (*p.step_ms - p.step.total.ms() >= sim::kBottleneckWaitShare * *p.step_ms) p.bottleneck = "dataloader";
      p.gpu_busy_frac = std::min(1.0, p.step.gpu_busy.ms() / *p.step_ms);
    }
  } else {
    p.reason = "needs the data-loader simulation";
  }
  return p;
}

namespace {

double err_pct(double pred, double meas) { return 100.0 * (pred - meas) / meas; }

// The mean of `v` summed in ascending order: floating-point addition is not associative, and summed in file order
// the MAPE of the same records came out one bit apart when the file was reordered (reversed: 4.659687821628569
// against 4.6596878216285695), enough to flip a gate whose tolerance sits on it.
double mean_sorted(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

}  // namespace

CheckReport run_check(const std::vector<RunRecord>& runs, const GpuProfile& profile, const FitConstants& constants,
                      double tolerance_pct, const PipelinePredictor& pipeline, const StepSpread& spread,
                      double host_cpu_scale) {
  CheckReport rep;
  CheckSummary& s = rep.summary;
  s.tolerance_pct = tolerance_pct;
  s.spread = spread;
  s.host_cpu_scale = host_cpu_scale;
  std::vector<double> host_ratios;
  const bool ranged = spread.cpu_log_sd > 0 || spread.gpu_log_sd > 0;
  const DeviceModel dev = make_device_model(profile);
  const PipelinePredictor loader = loader_pipeline(profile);  // sim engineer
  std::vector<double> errs, gpu_errs, launch_errs, mem_errs;  // absolute errors, %
  for (const auto& rec : runs) {
    if (rec.kind != "train") continue;
    ++s.train_records;
    if (gpu_bound(rec)) ++s.gpu_bound;
    RecordResult rr;
    rr.record = &rec;
    // A step measured on several GPUs includes its collectives: predicted as one GPU's it passed against a
    // measurement of something else. `calibrate ddp` simulates it with its all-reduce.
    if (const int gpus = record_gpus(rec); gpus > 1) {
      rr.prediction.expressible = false;
      rr.prediction.reason = std::to_string(gpus) + " GPUs: a data-parallel step includes its collectives; "
                             "`gpuplan calibrate ddp` predicts such records";
    } else {
      // --- sim engineer: without an explicit predictor, CPU-pipeline records go through the loader simulation.
      rr.prediction =
          predict_train_record(rec, dev, profile, constants, pipeline ? pipeline : loader, host_cpu_scale);
      // --- end sim engineer
    }
    if (ranged && rr.prediction.step_ms && rec.data == "synthetic-on-gpu") {
      rr.prediction.step_ms_p10 = step_time_quantile(rr.prediction.step, spread, 0.1).ms();
      rr.prediction.step_ms_p90 = step_time_quantile(rr.prediction.step, spread, 0.9).ms();
    }
    const auto& p = rr.prediction;
    // Either the inputs or the step's operators may be beyond the model: both are "not expressible" (the second
    // was counted as expressible, with an out-of-memory verdict "agreeing" that nothing had predicted).
    if (!p.expressible) {
      ++s.not_expressible;
    } else {
      // A record that carries no outcome (no step time, no peak, no out-of-memory flag: a blind prediction file)
      // has nothing to agree with, so it is not counted.
      const bool outcome = rec.measured.oom || rec.measured.step_ms || rec.measured.peak_mem_gib;
      if (outcome) {
        ++s.oom_records;
        rr.oom_agrees = p.oom == rec.measured.oom;
        if (*rr.oom_agrees) ++s.oom_agree;
      }
      if (p.reason == "needs the data-loader simulation") ++s.needs_pipeline;
    }
    if (p.step_ms && rec.measured.step_ms) {
      rr.step_err_pct = err_pct(*p.step_ms, *rec.measured.step_ms);
      ++s.predicted;
      if (gpu_bound(rec)) {
        rr.in_mape = true;
        const double e = std::abs(*rr.step_err_pct);
        errs.push_back(e);
        if (p.step.bottleneck == Bottleneck::launch_bound) {
          launch_errs.push_back(e);
          ++s.mape_launch_records;
        } else {
          gpu_errs.push_back(e);
          ++s.mape_gpu_records;
        }
        if (e <= 25.0) ++s.within_25;
        if (p.step.cpu_issue.value() >= 1.5 * p.step.gpu_busy.value())
          host_ratios.push_back(*rec.measured.step_ms / *p.step_ms);
        if (p.step_ms_p10 && p.step_ms_p90) {
          ++s.range_records;
          const double m = *rec.measured.step_ms;
          if (m >= *p.step_ms_p10 && m <= *p.step_ms_p90) ++s.range_within;
        }
        if (e > s.max_abs_err_pct || (e == s.max_abs_err_pct && !s.max_err_id.empty() && rec.id < s.max_err_id)) {
          s.max_abs_err_pct = e;
          s.max_err_id = rec.id;
        }
      }
    }
    if (p.peak_mem_gib && rec.measured.peak_mem_gib && p.expressible) {
      rr.mem_err_pct = err_pct(*p.peak_mem_gib, *rec.measured.peak_mem_gib);
      mem_errs.push_back(std::abs(*rr.mem_err_pct));
      ++s.mem_records;
    }
    rep.records.push_back(std::move(rr));
  }
  for (const auto& r : rep.records) s.mape_records += r.in_mape ? 1 : 0;
  s.mape_pct = mean_sorted(errs);
  s.mape_gpu_pct = mean_sorted(gpu_errs);
  s.mape_launch_pct = mean_sorted(launch_errs);
  s.mem_mape_pct = mean_sorted(mem_errs);
  s.pass = s.mape_records > 0 && s.mape_pct <= tolerance_pct;
  s.host_bound_records = static_cast<int>(host_ratios.size());
  if (host_ratios.size() >= 3) {
    const std::size_t n = host_ratios.size(), mid = n / 2;
    std::sort(host_ratios.begin(), host_ratios.end());
    const double median = n % 2 ? host_ratios[mid] : 0.5 * (host_ratios[mid - 1] + host_ratios[mid]);
    s.host_cpu_scale_suggested = median * (host_cpu_scale > 0 ? host_cpu_scale : 1.0);
  }
  return rep;
}

std::string gpu_model_token(const std::string& device_name) {
  std::string word;
  auto done = [&word] { return std::any_of(word.begin(), word.end(), [](char c) { return c >= '0' && c <= '9'; }); };
  for (const char c : device_name + " ") {
    if (c == ' ' || c == '-' || c == ',' || c == '(' || c == ')' || c == '_' || c == '\t') {
      if (done()) return word;
      word.clear();
    } else {
      word += (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
    }
  }
  return {};
}

std::vector<std::string> device_mismatches(const std::vector<RunRecord>& runs, const GpuProfile& profile,
                                           const std::string& file, const std::string& remedy) {
  const std::string want = gpu_model_token(profile.device_name);
  if (want.empty()) return {};
  struct Seen { std::string device; int line = 0, count = 0; };
  std::vector<std::pair<std::string, Seen>> other;  // by model token, in file order
  int train = 0;
  for (const RunRecord& r : runs) {
    if (r.kind != "train") continue;
    ++train;
    const auto it = r.input.find("device");
    if (it == r.input.end() || !it->is_string()) continue;
    const std::string got = gpu_model_token(it->get<std::string>());
    if (got.empty() || got == want) continue;
    auto at = std::find_if(other.begin(), other.end(), [&](const auto& o) { return o.first == got; });
    if (at == other.end()) at = other.insert(other.end(), {got, Seen{it->get<std::string>(), r.line, 0}});
    ++at->second.count;
  }
  std::vector<std::string> lines;
  for (const auto& [token, seen] : other)
    lines.push_back(file + ":" + std::to_string(seen.line) + ":/device: measured on \"" + seen.device +
                    "\", but the profile is of \"" + profile.device_name + "\" (" + std::to_string(seen.count) +
                    " of " + std::to_string(train) + " train records): " + remedy);
  return lines;
}

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string opt_fmt(const char* f, const std::optional<double>& v) { return v ? fmt(f, *v) : std::string("-"); }

std::string pad(std::string s, std::size_t w, bool right = false) {
  if (s.size() > w) s = s.substr(0, w - 1) + "~";
  const std::string sp(w - s.size(), ' ');
  return right ? sp + s : s + sp;
}

}  // namespace

std::string xml_escape(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    // XML 1.0 has no way to write C0 controls other than tab, LF and CR, nor U+FFFE / U+FFFF (UTF-8 EF BF BE/BF):
    // a scenario name holding one made the SVG unreadable. Each becomes U+FFFD.
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') {
      out += "\xEF\xBF\xBD";
      continue;
    }
    if (c == '\xEF' && i + 2 < s.size() && s[i + 1] == '\xBF' && (s[i + 2] == '\xBE' || s[i + 2] == '\xBF')) {
      out += "\xEF\xBF\xBD";
      i += 2;
      continue;
    }
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string render_table(const CheckReport& r) {
  std::ostringstream o;
  o << pad("record", 38) << pad("meas ms", 9, true) << pad("pred ms", 9, true) << pad("err%", 7, true)
    << pad("meas GiB", 9, true) << pad("pred GiB", 9, true) << pad("err%", 7, true) << pad("80%", 5, true)
    << "  OOM m/p\n";
  for (const auto& rr : r.records) {
    const auto& rec = *rr.record;
    const auto& p = rr.prediction;
    o << pad(rec.id, 38) << pad(opt_fmt("%.1f", rec.measured.step_ms), 9, true)
      << pad(opt_fmt("%.1f", p.step_ms), 9, true) << pad(opt_fmt("%+.1f", rr.step_err_pct), 7, true)
      << pad(opt_fmt("%.2f", rec.measured.peak_mem_gib), 9, true) << pad(opt_fmt("%.2f", p.peak_mem_gib), 9, true)
      << pad(opt_fmt("%+.1f", rr.mem_err_pct), 7, true)
      // Whether the measured step lies inside the predicted 80% range ("-": no range, or no measured step).
      << pad(!p.step_ms_p10 || !rec.measured.step_ms ? "-"
             : *rec.measured.step_ms >= *p.step_ms_p10 && *rec.measured.step_ms <= *p.step_ms_p90 ? "in"
                                                                                                 : "out",
             5, true)
      << "  " << (!rr.oom_agrees ? "-" : rec.measured.oom ? "y" : "n") << "/"
      << (!p.expressible ? "-" : p.oom ? "y" : "n") << (rr.oom_agrees.value_or(true) ? "" : " !") << "\n";
    if (!p.step_ms && !p.reason.empty() && !p.oom) o << "    not predicted: " << p.reason << "\n";
  }
  const auto& s = r.summary;
  if (s.gpu_bound == 0)  // only CPU data-pipeline records, say: reported below, but the gate has nothing to average
    o << "\nstep-time MAPE over GPU-bound train records: none in this file (no train record with \"data\": "
         "\"synthetic-on-gpu\"), nothing for --tolerance to check\n";
  else if (s.mape_records == 0)
    o << "\nstep-time MAPE over GPU-bound train records: none with a measured and a predicted step time, nothing "
         "to check: FAIL\n";
  else {
    const auto [mape, tol] = verdict_figures(s.mape_pct, s.tolerance_pct, s.mape_pct <= s.tolerance_pct, 2, 1);
    o << "\nstep-time MAPE over GPU-bound train records: " << mape << "% (tolerance " << tol << "%) "
      << (s.pass ? "PASS" : "FAIL") << "\n";
  }
  o << "largest error: " << (s.mape_records == 0 ? std::string("-") : fmt("%.1f", s.max_abs_err_pct) + "% (" + s.max_err_id + ")")
    << "; within 25%: " << s.within_25 << " of " << s.mape_records << "\n"
    << "by predicted bottleneck: GPU " << fmt("%.2f", s.mape_gpu_pct) << "% over " << s.mape_gpu_records
    << ", launch-bound (host CPU) " << fmt("%.2f", s.mape_launch_pct) << "% over " << s.mape_launch_records << "\n";
  if (s.range_records > 0)
    o << "inside the predicted 80% range (host CPU log sd " << fmt("%.3f", s.spread.cpu_log_sd) << ", GPU "
      << fmt("%.3f", s.spread.gpu_log_sd) << "): " << s.range_within << " of " << s.range_records << "\n";
  if (s.host_cpu_scale_suggested > 0)
    o << "host CPU factor these runs suggest (median measured / predicted of " << s.host_bound_records
      << " steps the host sets, x the factor applied " << fmt("%.2f", s.host_cpu_scale > 0 ? s.host_cpu_scale : 1.0)
      << "): " << fmt("%.2f", s.host_cpu_scale_suggested) << " (scenario cluster.host_cpu_scale)\n";
  o
    << "OOM agreement: " << s.oom_agree << "/" << s.oom_records << "; peak-memory mean abs error: "
    << fmt("%.1f", s.mem_mape_pct) << "% over " << s.mem_records << " records\n"
    << "train records: " << s.train_records << " (GPU-bound " << s.gpu_bound << "), step times compared " << s.predicted
    << ", not expressible " << s.not_expressible << ", needing the data-loader simulation " << s.needs_pipeline
    << "\n";
  const LoaderCheckSummary L = summarize_loader(r);
  if (!L.records.empty()) {
    o << "\nCPU data-pipeline records through the data-loader simulation (samples/s):\n"
      << pad("record", 38) << pad("measured", 10, true) << pad("predicted", 10, true) << pad("err%", 7, true) << "\n";
    for (const auto& e : L.records) {
      o << pad(e.id, 38) << pad(fmt("%.0f", e.measured_samples_per_s), 10, true)
        << pad(fmt("%.0f", e.predicted_samples_per_s), 10, true) << pad(fmt("%+.1f", e.err_pct), 7, true) << "\n";
    }
    o << "within 20%: " << L.within_20 << " of " << L.records.size() << "; mean abs error "
      << fmt("%.1f", L.mean_abs_err_pct) << "%\n";
  }
  return o.str();
}

std::string render_ops(const RunRecord& rec, const DeviceModel& dev, const FitConstants& constants) {
  if (!rec.expressible) return {};
  const StepOps ops = build_step_ops(rec.step);
  if (!ops.not_expressible.empty()) return {};
  struct Row { std::string name; const char* phase; double kernels = 0; double ms = 0, gflop = 0, gb = 0, mrows = 0, melems = 0; };
  std::vector<Row> rows;
  const double accum = std::max(1, rec.step.grad_accum);
  auto add = [&](const Op& op, const char* phase, double times) {
    const double n = op_count(op, constants.compute) * times;
    const double ms = op_gpu_time(op, dev, constants.compute).ms() * n;
    for (Row& r : rows) {
      if (r.name == op.name && r.phase == phase) {
        r.kernels += op.kernels * n;
        r.ms += ms;
        r.gflop += op.flops.value() * n / 1e9;
        r.gb += op.bytes.value() * n / 1e9;
        r.mrows += op.rows * n / 1e6;
        r.melems += op.bn_elements * n / 1e6;
        return;
      }
    }
    rows.push_back({op.name, phase, op.kernels * n, ms, op.flops.value() * n / 1e9, op.bytes.value() * n / 1e9,
                    op.rows * n / 1e6, op.bn_elements * n / 1e6});
  };
  for (const Op& op : ops.micro) {
    add(op, op.phase == Phase::forward ? "forward" : "backward", accum);
    if (rec.step.activation_checkpointing && op.recompute && op.phase == Phase::forward) add(op, "recompute", accum);
  }
  for (const Op& op : ops.optimizer) add(op, "optimizer", 1);
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.ms > b.ms; });
  const StepPrediction p = predict_step_from_ops(ops, rec.step, dev, constants.compute);
  std::ostringstream o;
  o << rec.id << ": GPU " << fmt("%.2f", p.gpu_busy.ms()) << " ms, CPU issue " << fmt("%.2f", p.cpu_issue.ms())
    << " ms, " << fmt("%.0f", p.kernels) << " kernels and " << fmt("%.0f", p.calls) << " framework calls per step\n"
    << pad("operator", 28) << pad("phase", 10) << pad("kernels", 9, true) << pad("GPU ms", 9, true)
    << pad("GFLOP", 10, true) << pad("GB", 9, true) << pad("Mrows", 8, true) << pad("Melems", 9, true) << "\n";
  for (const Row& r : rows) {
    o << pad(r.name, 28) << pad(r.phase, 10) << pad(fmt("%.0f", r.kernels), 9, true) << pad(fmt("%.3f", r.ms), 9, true)
      << pad(fmt("%.2f", r.gflop), 10, true) << pad(fmt("%.3f", r.gb), 9, true) << pad(fmt("%.2f", r.mrows), 8, true)
      << pad(fmt("%.1f", r.melems), 9, true) << "\n";
  }
  return o.str();
}

nlohmann::json render_json(const CheckReport& r) {
  nlohmann::json recs = nlohmann::json::array();
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  for (const auto& rr : r.records) {
    const auto& rec = *rr.record;
    const auto& p = rr.prediction;
    nlohmann::json j = {{"id", rec.id},
                        {"line", rec.line},
                        {"data", rec.data},
                        {"predicted_step_ms", opt(p.step_ms)},
                        {"predicted_peak_mem_gib", opt(p.peak_mem_gib)},
                        // A record the model cannot express has no out-of-memory verdict either.
                        {"predicted_oom", p.expressible ? nlohmann::json(p.oom) : nlohmann::json()},
                        {"measured_step_ms", opt(rec.measured.step_ms)},
                        {"measured_peak_mem_gib", opt(rec.measured.peak_mem_gib)},
                        {"measured_oom", rec.measured.oom},
                        {"step_err_pct", opt(rr.step_err_pct)},
                        {"peak_mem_err_pct", opt(rr.mem_err_pct)},
                        {"oom_agrees", rr.oom_agrees ? nlohmann::json(*rr.oom_agrees) : nlohmann::json()},
                        {"in_gpu_bound_mape", rr.in_mape}};
    if (!p.reason.empty()) j["reason"] = p.reason;
    if (p.step_ms) {
      j["breakdown_ms"] = {{"gpu_forward", p.step.gpu_forward.ms()},  {"gpu_backward", p.step.gpu_backward.ms()},
                           {"gpu_optimizer", p.step.gpu_optimizer.ms()}, {"cpu_issue", p.step.cpu_issue.ms()}};
      j["kernels"] = p.step.kernels;
      j["calls"] = {{"forward", p.step.calls_forward},
                    {"backward_and_optimizer", p.step.calls - p.step.calls_forward},
                    {"conv", p.step.conv_calls}};
      j["gpu_busy_frac"] = p.gpu_busy_frac;
      j["bottleneck"] = p.bottleneck;
    }
    if (p.step_ms_p10 && p.step_ms_p90) {
      j["predicted_step_ms_p10"] = *p.step_ms_p10;
      j["predicted_step_ms_p90"] = *p.step_ms_p90;
    }
    recs.push_back(j);
  }
  const auto& s = r.summary;
  nlohmann::json sum = {{"mape_pct", s.mape_pct},
                        {"tolerance_pct", s.tolerance_pct},
                        {"pass", s.pass},
                        {"max_abs_err_pct", s.max_abs_err_pct},
                        {"max_err_id", s.max_err_id},
                        {"within_25_pct", s.within_25},
                        {"mape_records", s.mape_records},
                        {"mape_by_bottleneck",
                         {{"gpu", {{"mape_pct", s.mape_gpu_pct}, {"records", s.mape_gpu_records}}},
                          {"launch_bound", {{"mape_pct", s.mape_launch_pct}, {"records", s.mape_launch_records}}}}},
                        {"oom_agree", s.oom_agree},
                        {"oom_records", s.oom_records},
                        {"peak_mem_mape_pct", s.mem_mape_pct},
                        {"peak_mem_records", s.mem_records},
                        {"train_records", s.train_records},
                        {"gpu_bound_records", s.gpu_bound},
                        {"predicted", s.predicted},
                        {"not_expressible", s.not_expressible},
                        {"needs_data_loader_simulation", s.needs_pipeline}};
  if (s.range_records > 0)
    sum["step_range_80"] = {{"records", s.range_records},
                            {"within", s.range_within},
                            {"host_cpu_log_sd", s.spread.cpu_log_sd},
                            {"gpu_log_sd", s.spread.gpu_log_sd}};
  sum["host_cpu_scale"] = s.host_cpu_scale > 0 ? nlohmann::json(s.host_cpu_scale) : nlohmann::json(nullptr);
  sum["host_bound_records"] = s.host_bound_records;
  sum["host_cpu_scale_suggested"] =
      s.host_cpu_scale_suggested > 0 ? nlohmann::json(s.host_cpu_scale_suggested) : nlohmann::json(nullptr);
  nlohmann::json out = {{"records", recs}, {"summary", sum}};
  const LoaderCheckSummary L = summarize_loader(r);
  if (!L.records.empty()) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& e : L.records) {
      rows.push_back({{"id", e.id},
                      {"measured_samples_per_s", e.measured_samples_per_s},
                      {"predicted_samples_per_s", e.predicted_samples_per_s},
                      {"err_pct", e.err_pct}});
    }
    out["data_loader"] = {{"records", rows},
                          {"within_20_pct", L.within_20},
                          {"mean_abs_err_pct", L.mean_abs_err_pct}};
  }
  return out;
}

std::string render_svg(const CheckReport& r) {
  // Three kinds of point: GPU-bound records the model times by the GPU, those it finds launch-bound (the host's
  // CPU sets their pace, so they follow the host), and CPU data-pipeline records (not in the MAPE).
  enum Kind { gpu, launch, pipeline };
  struct Pt { double m, p; Kind kind; std::string id; double p10 = 0, p90 = 0; };  // p10 = p90 = 0: no range
  std::vector<Pt> pts;
  for (const auto& rr : r.records)
    if (rr.prediction.step_ms && rr.record->measured.step_ms)
      pts.push_back({*rr.record->measured.step_ms, *rr.prediction.step_ms,
                     !rr.in_mape                                                  ? pipeline
                     : rr.prediction.step.bottleneck == Bottleneck::launch_bound ? launch
                                                                                 : gpu,
                     rr.record->id, rr.prediction.step_ms_p10.value_or(0), rr.prediction.step_ms_p90.value_or(0)});
  const char* colour[] = {"#1f77b4", "#d62728", "#ff7f0e"};
  const char* label[] = {"GPU-bound, the GPU sets the pace", "GPU-bound, launch-bound in the model (host CPU)",
                         "CPU data pipeline (not in the MAPE)"};
  double lo = 1, hi = 1000;
  for (const auto& p : pts) {
    lo = std::min({lo, p.m, p.p});
    hi = std::max({hi, p.m, p.p});
    if (p.p90 > 0) {
      lo = std::min(lo, p.p10);
      hi = std::max(hi, p.p90);
    }
  }
  lo = std::pow(10, std::floor(std::log10(lo)));
  hi = std::pow(10, std::ceil(std::log10(hi)));
  const double W = 640, H = 640, m0 = 70, span = W - m0 - 30;
  auto X = [&](double v) { return m0 + span * (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)); };
  auto Y = [&](double v) { return H - m0 - span * (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)); };
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  // +-10% band and y = x
  o << "<polygon fill=\"#dfe9f5\" points=\"" << X(lo) << "," << Y(lo * 1.1) << " " << X(hi / 1.1) << "," << Y(hi)
    << " " << X(hi) << "," << Y(hi) << " " << X(hi) << "," << Y(hi * 0.9) << " " << X(lo) << "," << Y(lo * 0.9)
    << "\"/>\n";
  o << "<line x1=\"" << X(lo) << "\" y1=\"" << Y(lo) << "\" x2=\"" << X(hi) << "\" y2=\"" << Y(hi)
    << "\" stroke=\"#555\" stroke-dasharray=\"4 3\"/>\n";
  for (double d = lo; d <= hi * 1.0001; d *= 10) {
    o << "<line x1=\"" << X(d) << "\" y1=\"" << Y(lo) << "\" x2=\"" << X(d) << "\" y2=\"" << Y(lo) + 5
      << "\" stroke=\"black\"/><text x=\"" << X(d) << "\" y=\"" << Y(lo) + 20 << "\" text-anchor=\"middle\">" << d
      << "</text>\n";
    o << "<line x1=\"" << X(lo) - 5 << "\" y1=\"" << Y(d) << "\" x2=\"" << X(lo) << "\" y2=\"" << Y(d)
      << "\" stroke=\"black\"/><text x=\"" << X(lo) - 8 << "\" y=\"" << Y(d) + 4 << "\" text-anchor=\"end\">" << d
      << "</text>\n";
  }
  o << "<rect x=\"" << X(lo) << "\" y=\"" << Y(hi) << "\" width=\"" << span << "\" height=\"" << span
    << "\" fill=\"none\" stroke=\"black\"/>\n";
  // The predicted 80% range as a bar at the measured time: a bar crossing y = x holds its measurement.
  for (const auto& p : pts)
    if (p.p90 > 0)
      o << "<line x1=\"" << X(p.m) << "\" y1=\"" << Y(p.p10) << "\" x2=\"" << X(p.m) << "\" y2=\"" << Y(p.p90)
        << "\" stroke=\"" << colour[p.kind] << "\" stroke-opacity=\"0.45\" stroke-width=\"2\"/>\n";
  for (const auto& p : pts)
    o << "<circle cx=\"" << X(p.m) << "\" cy=\"" << Y(p.p) << "\" r=\"4\" fill=\"" << colour[p.kind]
      << "\" fill-opacity=\"0.8\"><title>" << xml_escape(p.id) << ": measured " << p.m << " ms, predicted " << p.p
      << " ms</title></circle>\n";
  // Legend, top left inside the frame: only the kinds present.
  double ly = Y(hi) + 18;
  for (int k = gpu; k <= pipeline; ++k) {
    int n = 0;
    for (const auto& p : pts) n += p.kind == k;
    if (n == 0) continue;
    o << "<circle cx=\"" << X(lo) + 14 << "\" cy=\"" << ly - 4 << "\" r=\"4\" fill=\"" << colour[k]
      << "\"/><text x=\"" << X(lo) + 24 << "\" y=\"" << ly << "\">" << label[k] << " (" << n << ")</text>\n";
    ly += 18;
  }
  if (r.summary.range_records > 0)
    o << "<line x1=\"" << X(lo) + 14 << "\" y1=\"" << ly - 10 << "\" x2=\"" << X(lo) + 14 << "\" y2=\"" << ly + 2
      << "\" stroke=\"#555\" stroke-width=\"2\"/><text x=\"" << X(lo) + 24 << "\" y=\"" << ly
      << "\">bar: predicted 80% range (" << r.summary.range_within << " of " << r.summary.range_records
      << " measured steps inside)</text>\n";
  o << "<text x=\"" << W / 2 << "\" y=\"" << H - 25 << "\" text-anchor=\"middle\">measured step time (ms)</text>\n"
    << "<text x=\"18\" y=\"" << H / 2 << "\" text-anchor=\"middle\" transform=\"rotate(-90 18 " << H / 2
    << ")\">predicted step time (ms)</text>\n"
    << "<text x=\"" << W / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">gpuplan calibrate check: MAPE "
    << fmt("%.1f", r.summary.mape_pct) << "% over " << r.summary.mape_records
    << " GPU-bound records (band: +-10%)</text>\n";
  o << "</svg>\n";
  return o.str();
}

std::string render_junit(const CheckReport& r, double record_tolerance_pct) {
  const CheckSummary& s = r.summary;
  struct Case {
    std::string name, failure, out;
  };
  std::vector<Case> cases;
  const auto [mape, tol] = verdict_figures(s.mape_pct, s.tolerance_pct, s.mape_pct <= s.tolerance_pct, 2, 1);
  cases.push_back({"step-time MAPE over GPU-bound train records",
                   s.pass ? std::string()
                          : (s.mape_records == 0 ? std::string("no GPU-bound record with a measured and a predicted step")
                                                 : "MAPE " + mape + "% over " + std::to_string(s.mape_records) +
                                                       " records exceeds the tolerance " + tol + "%"),
                   "MAPE " + mape + "%, largest error " + fmt("%.1f%%", s.max_abs_err_pct) + " (" +
                       s.max_err_id + "), within 25%: " + std::to_string(s.within_25) + " of " +
                       std::to_string(s.mape_records)});
  for (const auto& rr : r.records) {
    const std::string& id = rr.record->id;
    if (rr.oom_agrees && !*rr.oom_agrees)
      cases.push_back({id + " out-of-memory verdict",
                       std::string("measured ") + (rr.record->measured.oom ? "out of memory" : "ran") + ", predicted " +
                           (rr.prediction.oom ? "out of memory" : "to fit"),
                       ""});
    if (!rr.step_err_pct || !rr.in_mape) continue;  // the GPU-bound records the gate averages
    const double e = *rr.step_err_pct;
    const bool within = std::abs(e) <= record_tolerance_pct;
    const auto [err, limit] = verdict_figures(std::abs(e), record_tolerance_pct, within, 1, 0);
    const std::string line = "measured " + fmt("%.2f", *rr.record->measured.step_ms) + " ms, predicted " +
                             fmt("%.2f", *rr.prediction.step_ms) + " ms (" + (e < 0 ? "-" : "+") + err + "%)";
    cases.push_back({id + " step time", within ? std::string() : line + ", beyond " + limit + "%", line});
  }
  int failures = 0;
  for (const auto& c : cases) failures += !c.failure.empty();
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n<testsuite name=\"gpuplan calibrate check\" tests=\""
    << cases.size() << "\" failures=\"" << failures << "\" errors=\"0\" skipped=\"0\">\n";
  for (const auto& c : cases) {
    o << "  <testcase classname=\"gpuplan.calibrate.check\" name=\"" << xml_escape(c.name) << "\">";
    if (!c.failure.empty()) o << "<failure message=\"" << xml_escape(c.failure) << "\"/>";
    if (!c.out.empty()) o << "<system-out>" << xml_escape(c.out) << "</system-out>";
    o << "</testcase>\n";
  }
  o << "</testsuite>\n</testsuites>\n";
  return o.str();
}

}  // namespace gp::calibrate
