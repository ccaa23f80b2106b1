#include "calibrate/loader_check.hpp"

#include <cmath>

#include "models/job.hpp"
#include "sim/job_inputs.hpp"
#include "sim/pipeline_run.hpp"

namespace gp::calibrate {

namespace {

std::optional<double> number(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

}  // namespace

PipelinePredictor loader_pipeline(const GpuProfile& profile, double all_core_slowdown) {
  const ByteRate copy = sim::host_copy_rate(profile);
  const ByteRate h2d = profile.h2d_pinned;
  return [copy, h2d, all_core_slowdown](const RunRecord& rec, const RecordPrediction& pred) -> std::optional<double> {
    const nlohmann::json& in = rec.input;
    const auto cpu_ms = number(in, "sample_cpu_ms_1thread");
    const auto batch = number(in, "batch");
    const auto workers = number(in, "num_workers");
    std::optional<double> cores;
    if (in.contains("host") && in["host"].is_object()) cores = number(in["host"], "cpu_cores");
    if (!cpu_ms || !batch || !workers || !cores || *cores < 1 || *batch < 1 || h2d.value() <= 0) return std::nullopt;
    sim::PipelineRun run;
    run.sample_cpu = Seconds::ms(*cpu_ms);
    run.sample_cpu_cv = DataLoaderConfig{}.sample_cpu_cv;  // the scenario default; a batch averages it out
    run.host_cores = *cores;
    run.batch = static_cast<int>(*batch);
    run.num_workers = static_cast<int>(*workers);
    run.pin_memory = !in.contains("pin_memory") || !in["pin_memory"].is_boolean() || in["pin_memory"].get<bool>();
    run.prefetch_factor = static_cast<int>(number(in, "prefetch_factor").value_or(2));
    // The decoded sample as fed to the GPU: a float32 tensor of 3 x H x W (the record's image_hw).
    double hw = 224.0 * 224.0;
    if (in.contains("image_hw") && in["image_hw"].is_array() && in["image_hw"].size() == 2 &&
        in["image_hw"][0].is_number() && in["image_hw"][1].is_number()) {
      hw = in["image_hw"][0].get<double>() * in["image_hw"][1].get<double>();
    }
    run.sample_bytes = Bytes(3.0 * hw * 4.0);
    run.h2d_pinned = h2d;
    run.host_copy = copy;
    run.gpu = pred.step;
    run.all_core_slowdown = all_core_slowdown;
    return sim::simulate_pipeline_run(run).step_time.ms();
  };
}

LoaderCheckSummary summarize_loader(const CheckReport& rep) {
  LoaderCheckSummary s;
  double sum = 0;
  for (const RecordResult& r : rep.records) {
    if (!r.record || r.record->data != "cpu-jpeg-pipeline" || !r.prediction.step_ms || !r.record->measured.step_ms) continue;
    const auto batch = number(r.record->input, "batch");
    if (!batch) continue;
    LoaderRecordError e;
    e.id = r.record->id;
    e.measured_samples_per_s = *batch * 1000.0 / *r.record->measured.step_ms;
    e.predicted_samples_per_s = *batch * 1000.0 / *r.prediction.step_ms;
    e.err_pct = 100.0 * (e.predicted_samples_per_s - e.measured_samples_per_s) / e.measured_samples_per_s;
    if (std::abs(e.err_pct) <= 20.0) ++s.within_20;
    sum += std::abs(e.err_pct);
    s.records.push_back(e);
  }
  if (!s.records.empty()) s.mean_abs_err_pct = sum / static_cast<double>(s.records.size());
  return s;
}

}  // namespace gp::calibrate
