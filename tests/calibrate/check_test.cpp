// Checks of the calibrated model against the measured H200 reference runs (CI gate of issue 3), and of
// the check's input handling. Runs with the project root as working directory.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <type_traits>

#include "calibrate/check.hpp"
#include "calibrate/fit.hpp"
#include "calibrate/profile_io.hpp"
#include "calibrate/reference_runs.hpp"

using namespace gp;
using namespace gp::calibrate;

namespace {

const char* kProfile = "calibrate/profiles/h200.json";
const char* kConstants = "calibrate/profiles/fit-h200.json";
const char* kRuns = "calibrate/measured/h200-2026-12.jsonl";

struct Inputs {
  GpuProfile profile;
  FitConstants constants;
  std::vector<RunRecord> runs;
};

Inputs load_inputs() {
  std::vector<std::string> errors;
  auto p = load_profile(kProfile, errors);
  auto c = load_constants(kConstants, errors);
  auto r = load_runs(kRuns, errors);
  INFO((errors.empty() ? std::string() : errors.front()));
  REQUIRE(errors.empty());
  REQUIRE(p);
  REQUIRE(c);
  return {*p, *c, r};
}

std::vector<std::string> read_lines(const char* path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

// Appends one JSON line per value of `field`: the record's inputs with that value, id "ID@<tag><value>".
template <class T>
void add_variants(std::vector<std::string>& lines, const RunRecord& r, const char* field, const std::vector<T>& values,
                  const std::string& tag) {
  for (const auto& v : values) {
    nlohmann::json x = r.input;
    x[field] = v;
    if constexpr (std::is_same_v<T, std::string>) {
      x["id"] = r.id + "@" + tag + v;
    } else {
      x["id"] = r.id + "@" + tag + std::to_string(v);
    }
    lines.push_back(x.dump());
  }
}

// Records given as JSON lines (a sweep made from the reference's inputs), checked with the reference's inputs.
// The report points into `runs`, so both travel together.
struct Checked {
  std::vector<RunRecord> runs;
  CheckReport report;
};

Checked check_lines(const Inputs& in, const std::vector<std::string>& lines) {
  Checked c;
  std::vector<std::string> errors;
  c.runs = parse_runs(lines, "sweep", errors);
  REQUIRE(errors.empty());
  c.report = run_check(c.runs, in.profile, in.constants, 10.0);
  REQUIRE(c.report.records.size() == lines.size());
  return c;
}

}  // namespace

TEST_CASE("calibrate::check: H200 reference runs within tolerance", "[calibrate]") {
  const Inputs in = load_inputs();
  const CheckReport rep = run_check(in.runs, in.profile, in.constants, 10.0);
  const CheckSummary& s = rep.summary;
  REQUIRE(s.gpu_bound >= 30);
  CHECK(s.mape_pct <= 10.0);
  CHECK(s.pass);
  CHECK(s.oom_agree == s.oom_records);
  CHECK(s.mem_mape_pct <= 15.0);
  CHECK(s.not_expressible == 0);
  int in_mape = 0;
  for (const auto& r : rep.records) {
    if (!r.in_mape) continue;
    ++in_mape;
    INFO(r.record->id);
    CHECK(std::abs(*r.step_err_pct) <= 25.0);
  }
  CHECK(in_mape == s.gpu_bound - 1);  // every GPU-bound record but the OOM one is predicted
}

TEST_CASE("calibrate::check: the MAPE splits by predicted bottleneck", "[calibrate]") {
  const Inputs in = load_inputs();
  const CheckReport rep = run_check(in.runs, in.profile, in.constants, 10.0);
  const CheckSummary& s = rep.summary;
  // Conservation: the two parts hold every MAPE record once and average back to the MAPE.
  CHECK(s.mape_gpu_records + s.mape_launch_records == s.mape_records);
  REQUIRE(s.mape_records > 0);
  CHECK((s.mape_gpu_pct * s.mape_gpu_records + s.mape_launch_pct * s.mape_launch_records) / s.mape_records ==
        Approx(s.mape_pct).epsilon(1e-12));
  int launch = 0;
  for (const auto& r : rep.records)
    if (r.in_mape && r.prediction.step.bottleneck == Bottleneck::launch_bound) ++launch;
  CHECK(launch == s.mape_launch_records);
  // Where the GPU's work sets the step the model is much closer than where the host's kernel issue does
  // (measured on the reference: docs/calibration.md, "MAPE by bottleneck").
  CHECK(s.mape_gpu_records >= 30);
  CHECK(s.mape_gpu_pct <= 5.0);
}

TEST_CASE("calibrate::check: the eighth held-out set, which no fit has seen, on the GPU side", "[calibrate][holdout]") {
  // calibrate/probes/results/h200-holdout8-2026-12-03.jsonl: 23 steps measured on a lent H200 after the ConvNeXt
  // and bias-gradient changes (docs/calibration.md, "Bias gradients, grouped convolutions, rolls and an eighth
  // held-out set"). Where the GPU's work sets the step the model must stay within 10% on average (7.6% measured
  // with the constants of 2026-12-03), every GPT within 5%, and the grouped-convolution network within 15%.
  Inputs in = load_inputs();
  std::vector<std::string> errors;
  in.runs = load_runs("calibrate/probes/results/h200-holdout8-2026-12-03.jsonl", errors);
  REQUIRE(errors.empty());
  const CheckReport rep = run_check(in.runs, in.profile, in.constants, 10.0);
  CHECK(rep.summary.mape_records == 23);
  CHECK(rep.summary.mape_gpu_records >= 15);
  CHECK(rep.summary.mape_gpu_pct <= 10.0);
  CHECK(rep.summary.oom_agree == rep.summary.oom_records);
  int gpts = 0;
  for (const auto& r : rep.records) {
    if (!r.step_err_pct) continue;
    INFO(r.record->id);
    if (r.record->id.find("/gpt-") != std::string::npos) {
      ++gpts;
      CHECK(std::abs(*r.step_err_pct) <= 5.0);
    }
    if (r.record->id.find("regnet_y_8gf") != std::string::npos) CHECK(std::abs(*r.step_err_pct) <= 15.0);
  }
  CHECK(gpts == 6);
}

TEST_CASE("calibrate::check: TF32 ConvNeXt steps of the tenth and eleventh held-out sets", "[calibrate][holdout]") {
  // calibrate/probes/results/h200-holdout1{0,1}-*.jsonl: ConvNeXt-T/S/B trained in TF32, measured on lent H200s.
  // cuDNN's 7x7 depthwise weight gradient in TF32 is an implicit GEMM near 1 TFLOP/s; before the fp32-tensor
  // depthwise law the model had these steps at -43% to -53% (docs/calibration.md, "Convolutions in TF32 and fp32").
  // Set 11 was measured after that law was fitted: with it the four are within 10% (+9.0%, +1.3%, -4.5%, -1.2%).
  Inputs in = load_inputs();
  std::vector<std::string> errors;
  auto runs = load_runs("calibrate/probes/results/h200-holdout10-2026-12-03.jsonl", errors);
  const auto more = load_runs("calibrate/probes/results/h200-holdout11-2026-12-04.jsonl", errors);
  REQUIRE(errors.empty());
  runs.insert(runs.end(), more.begin(), more.end());
  const CheckReport rep = run_check(runs, in.profile, in.constants, 10.0);
  int convnexts = 0;
  for (const auto& r : rep.records) {
    const std::string& id = r.record->id;
    if (!r.step_err_pct || id.find("convnext") == std::string::npos || id.find("-tf32") == std::string::npos)
      continue;
    INFO(id);
    ++convnexts;
    CHECK(std::abs(*r.step_err_pct) <= 12.0);
  }
  CHECK(convnexts == 4);
}

TEST_CASE("calibrate::check: checkpointed GPT steps of seven sessions, with checkpointing's CPU cost",
          "[calibrate][holdout]") {
  // Every measured checkpointed step: the paired measurement and sets 13 and 2 (which cpu_per_recompute_eager is
  // fitted to), and the GPU-bound ones of the reference, held-out 1, 9 and 10 (which it must leave alone). Without
  // the cost the 22 averaged 19.7% (the small-batch ones -18% to -49%: the host's issue time doubles under
  // checkpointing's saved-tensor hooks; docs/calibration.md, "Activation checkpointing's CPU cost").
  Inputs in = load_inputs();
  std::vector<std::string> errors;
  std::vector<RunRecord> runs;
  for (const char* f : {"calibrate/probes/results/ckpt-cpu-2026-12-04.jsonl",
                        "calibrate/probes/results/h200-holdout13-2026-12-04.jsonl",
                        "calibrate/probes/results/h200-holdout2-2026-12-02.jsonl",
                        "calibrate/measured/h200-2026-12.jsonl",
                        "calibrate/measured/h200-holdout-2026-12-02.jsonl",
                        "calibrate/probes/results/h200-holdout9-2026-12-03.jsonl",
                        "calibrate/probes/results/h200-holdout10-2026-12-03.jsonl"}) {
    const auto r = load_runs(f, errors);
    runs.insert(runs.end(), r.begin(), r.end());
  }
  REQUIRE(errors.empty());
  const CheckReport rep = run_check(runs, in.profile, in.constants, 10.0);
  int n = 0, gpu_bound = 0;
  double sum = 0;
  for (const auto& r : rep.records) {
    if (!r.step_err_pct || !r.record->step.activation_checkpointing) continue;
    INFO(r.record->id);
    ++n;
    sum += std::abs(*r.step_err_pct);
    // Where the GPU sets the pace the added CPU must not show.
    if (r.prediction.step.bottleneck != Bottleneck::launch_bound) {
      ++gpu_bound;
      CHECK(std::abs(*r.step_err_pct) <= 5.0);
    }
  }
  CHECK(n == 22);
  CHECK(gpu_bound == 8);
  CHECK(sum / n <= 12.0);
}

TEST_CASE("calibrate::check: the fourteenth held-out set, blind: checkpointed GPT steps nothing was fitted to",
          "[calibrate][holdout]") {
  // calibrate/probes/results/h200-holdout14-2026-12-04.jsonl, defined in a commit before it was measured, after
  // checkpointing's CPU cost was fitted: 11 checkpointed GPT steps of other sizes, sequences, dtypes and an
  // accumulated one, on another host. Without that cost they were -10% to -51% (MAPE 31.9%, 4 of 13 within 25%).
  Inputs in = load_inputs();
  std::vector<std::string> errors;
  const auto runs = load_runs("calibrate/probes/results/h200-holdout14-2026-12-04.jsonl", errors);
  REQUIRE(errors.empty());
  const CheckReport rep = run_check(runs, in.profile, in.constants, 10.0);
  int checkpointed = 0;
  for (const auto& r : rep.records) {
    if (!r.step_err_pct || !r.record->step.activation_checkpointing) continue;
    INFO(r.record->id);
    ++checkpointed;
    CHECK(std::abs(*r.step_err_pct) <= 20.0);
  }
  CHECK(checkpointed == 11);
  CHECK(rep.summary.mape_pct <= 10.0);
  CHECK(rep.summary.within_25 == rep.summary.mape_records);
}

TEST_CASE("calibrate::check: the twelfth held-out set, blind: GPU-bound steps and a 116 GiB step that fits",
          "[calibrate][holdout]") {
  // calibrate/probes/results/h200-holdout12-2026-12-04.jsonl, defined in a commit before it was measured and not
  // fitted on. Its launch-bound steps follow that host's CPU (ResNet-50 b32 17.7 ms there, 33.9 ms on the reference
  // host); the GPU-bound ones are the model's to get right: 1.5% on average, the largest 4.8% (the plain-SGD GPT).
  Inputs in = load_inputs();
  std::vector<std::string> errors;
  const auto runs = load_runs("calibrate/probes/results/h200-holdout12-2026-12-04.jsonl", errors);
  REQUIRE(errors.empty());
  const CheckReport rep = run_check(runs, in.profile, in.constants, 10.0);
  int n = 0;
  double sum = 0;
  for (const auto& r : rep.records) {
    if (!r.step_err_pct || r.prediction.step.bottleneck == Bottleneck::launch_bound) continue;
    INFO(r.record->id);
    ++n;
    sum += std::abs(*r.step_err_pct);
    CHECK(std::abs(*r.step_err_pct) <= 6.0);
    if (r.record->id == "holdout12/gpt-2.7b-b24-s1024-bf16") {
      // 116.46 GiB measured: fits, and the predicted peak within 5%.
      CHECK_FALSE(r.prediction.oom);
      REQUIRE(r.mem_err_pct);
      CHECK(std::abs(*r.mem_err_pct) <= 5.0);
    }
  }
  CHECK(n == 8);
  CHECK(sum / n <= 3.0);
  CHECK(rep.summary.oom_agree == rep.summary.oom_records);
}

TEST_CASE("calibrate::check: predictions never read measured fields", "[calibrate]") {
  const Inputs in = load_inputs();
  std::vector<std::string> stripped;
  for (const auto& line : read_lines(kRuns)) {
    auto j = nlohmann::json::parse(line);
    for (const auto& f : measured_fields()) j.erase(f);
    stripped.push_back(j.dump());
  }
  std::vector<std::string> errors;
  const auto bare = parse_runs(stripped, "stripped", errors);
  REQUIRE(errors.empty());
  const auto a = run_check(in.runs, in.profile, in.constants, 10.0);
  const auto b = run_check(bare, in.profile, in.constants, 10.0);
  REQUIRE(a.records.size() == b.records.size());
  for (std::size_t i = 0; i < a.records.size(); ++i) {
    const auto& pa = a.records[i].prediction;
    const auto& pb = b.records[i].prediction;
    INFO(a.records[i].record->id);
    CHECK(pa.step_ms == pb.step_ms);
    CHECK(pa.peak_mem_gib == pb.peak_mem_gib);
    CHECK(pa.oom == pb.oom);
    // Without an outcome there is nothing to agree with: no verdict, and none counted.
    CHECK_FALSE(b.records[i].oom_agrees.has_value());
  }
  CHECK(a.summary.oom_records > 0);
  CHECK(b.summary.oom_records == 0);
  CHECK(b.summary.oom_agree == 0);
}

TEST_CASE("calibrate::check: CPU data-pipeline records stay out of the GPU-bound MAPE", "[calibrate]") {
  const Inputs in = load_inputs();
  // A pipeline predictor that cannot predict: those records say so and are counted apart.
  const auto rep = run_check(in.runs, in.profile, in.constants, 10.0,
                             [](const RunRecord&, const RecordPrediction&) { return std::optional<double>(); });
  int loader = 0;
  for (const auto& r : rep.records)
    if (r.record->data == "cpu-jpeg-pipeline") {
      ++loader;
      CHECK_FALSE(r.prediction.step_ms);
      CHECK_FALSE(r.prediction.reason.empty());
      CHECK_FALSE(r.in_mape);
    }
  CHECK(loader > 0);
  // With a predictor, they get a step time, still outside the GPU-bound MAPE.
  const auto rep2 = run_check(in.runs, in.profile, in.constants, 10.0,
                              [](const RunRecord&, const RecordPrediction& p) { return p.step.total.ms() * 3; });
  for (const auto& r : rep2.records)
    if (r.record->data == "cpu-jpeg-pipeline") {
      CHECK(r.prediction.step_ms);
      CHECK_FALSE(r.in_mape);
    }
  CHECK(rep2.summary.mape_pct == Approx(rep.summary.mape_pct));
}

TEST_CASE("calibrate::check: the summary does not depend on the order of the records", "[calibrate]") {
  // Summed in file order, the reversed reference file's MAPE was one bit away from the file's: a --tolerance set to
  // the printed full-precision MAPE passed for one order and failed for the other. Every figure must be equal, not
  // approximately: the gate compares them exactly.
  const Inputs in = load_inputs();
  std::vector<RunRecord> reversed(in.runs.rbegin(), in.runs.rend());
  std::vector<RunRecord> rotated(in.runs.begin() + 17, in.runs.end());
  rotated.insert(rotated.end(), in.runs.begin(), in.runs.begin() + 17);
  const CheckSummary a = run_check(in.runs, in.profile, in.constants, 10.0).summary;
  for (const auto* runs : {&reversed, &rotated}) {
    const CheckSummary b = run_check(*runs, in.profile, in.constants, 10.0).summary;
    CHECK(b.mape_pct == a.mape_pct);
    CHECK(b.mape_gpu_pct == a.mape_gpu_pct);
    CHECK(b.mape_launch_pct == a.mape_launch_pct);
    CHECK(b.mem_mape_pct == a.mem_mape_pct);
    CHECK(b.max_abs_err_pct == a.max_abs_err_pct);
    CHECK(b.max_err_id == a.max_err_id);
    CHECK(b.host_cpu_scale_suggested == a.host_cpu_scale_suggested);
  }
}

TEST_CASE("calibrate::check: JSON and SVG renderings", "[calibrate]") {
  const Inputs in = load_inputs();
  const auto rep = run_check(in.runs, in.profile, in.constants, 10.0);
  const auto j = render_json(rep);
  REQUIRE(j["records"].size() == rep.records.size());
  for (const char* k : {"id", "predicted_step_ms", "predicted_peak_mem_gib", "predicted_oom"})
    CHECK(j["records"][0].contains(k));
  CHECK(j["summary"]["mape_pct"].get<double>() == Approx(rep.summary.mape_pct));
  const std::string svg = render_svg(rep);
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  // One circle per timed record, and a legend that counts each kind: the reference set's 44 GPU-bound records
  // split by the model's bottleneck (the same split as the summary's), its CPU pipeline records apart.
  int timed = 0;
  for (const auto& rr : rep.records) timed += rr.prediction.step_ms && rr.record->measured.step_ms ? 1 : 0;
  int circles = 0;
  for (std::size_t at = svg.find("<circle cx"); at != std::string::npos; at = svg.find("<circle cx", at + 1)) ++circles;
  const int legend = 3;  // each kind present in the reference set has a legend dot
  CHECK(circles == timed + legend);
  CHECK(svg.find("GPU-bound, the GPU sets the pace (" + std::to_string(rep.summary.mape_gpu_records) + ")") !=
        std::string::npos);
  CHECK(svg.find("launch-bound in the model (host CPU) (" + std::to_string(rep.summary.mape_launch_records) + ")") !=
        std::string::npos);
  CHECK(svg.find("over " + std::to_string(rep.summary.mape_records) + " GPU-bound records") != std::string::npos);
  // A record id is user input: markup in it is escaped, so the SVG stays well formed.
  std::vector<std::string> errors;
  const auto odd = parse_runs({R"({"id":"a<b>&c","kind":"train","model":"resnet50","batch":64,"precision":"bf16",)"
                               R"("data":"synthetic-on-gpu","step_ms":30})"},
                              "odd.jsonl", errors);
  REQUIRE(errors.empty());
  const std::string odd_svg = render_svg(run_check(odd, in.profile, in.constants, 10.0));
  CHECK(odd_svg.find("<title>a&lt;b&gt;&amp;c: measured") != std::string::npos);
  CHECK(odd_svg.find("a<b>") == std::string::npos);
}

TEST_CASE("calibrate::check: with a step spread, each GPU-bound record gets its range, drawn as a bar", "[calibrate]") {
  const Inputs in = load_inputs();
  const auto rep = run_check(in.runs, in.profile, in.constants, 10.0, {}, StepSpread{0.28, 0.031});
  int ranged = 0, inside = 0;
  for (const auto& rr : rep.records) {
    const auto& p = rr.prediction;
    if (!p.step_ms_p10) continue;
    INFO(rr.record->id);
    REQUIRE(p.step_ms_p90);
    CHECK(*p.step_ms_p10 < *p.step_ms);   // the point lies inside its own range
    CHECK(*p.step_ms < *p.step_ms_p90);
    CHECK(rr.in_mape);                    // GPU-bound records only (no CPU data-pipeline record)
    ++ranged;
    const double m = *rr.record->measured.step_ms;
    inside += m >= *p.step_ms_p10 && m <= *p.step_ms_p90 ? 1 : 0;
  }
  CHECK(ranged == rep.summary.mape_records);
  CHECK(rep.summary.range_records == ranged);
  CHECK(rep.summary.range_within == inside);
  const std::string svg = render_svg(rep);
  int bars = 0;
  for (std::size_t at = svg.find("stroke-opacity"); at != std::string::npos; at = svg.find("stroke-opacity", at + 1))
    ++bars;
  CHECK(bars == ranged);
  CHECK(svg.find("bar: predicted 80% range (" + std::to_string(inside) + " of " + std::to_string(ranged)) !=
        std::string::npos);
  // Without a spread: no ranges, no bars.
  const auto bare = run_check(in.runs, in.profile, in.constants, 10.0);
  CHECK(bare.summary.range_records == 0);
  CHECK(render_svg(bare).find("stroke-opacity") == std::string::npos);
}

TEST_CASE("calibrate::reference_runs: bad lines name file, line and JSON path", "[calibrate]") {
  std::vector<std::string> errors;
  const auto r = parse_runs({R"({"id":"a","kind":"train","data":"synthetic-on-gpu","model":"gpt","batch":-4})",
                             "not json", R"({"id":"b","kind":"micro"})", R"([{"id":"c"}])"},
                            "runs.jsonl", errors);
  REQUIRE(errors.size() == 3);
  CHECK(errors[0] == "runs.jsonl:1:/batch: must be an integer in [1, 10000000], got -4");
  // Line and column of the first bad character, as for a scenario's syntax error.
  CHECK(errors[1].rfind("runs.jsonl:2:2: not valid JSON (expected one JSON object per line): syntax error", 0) == 0);
  CHECK(errors[2] == "runs.jsonl:4:/: expected one JSON object per line, got array");
  CHECK(r.size() == 1);
}

TEST_CASE("calibrate::reference_runs: corrupted input fields are named with their range, not overflowed or thrown",
          "[calibrate]") {
  // Each line is a reference loader record with one field corrupted (found by fuzzing `calibrate check`: before,
  // num_workers -1 crashed the data-loader simulation, 1e9 exhausted memory, pin_memory 0 threw).
  const std::string loader = R"("kind":"train","model":"resnet50","data":"cpu-jpeg-pipeline","precision":"bf16",)"
                             R"("host":{"cpu_cores":16},"sample_cpu_ms_1thread":3.159,"image_hw":[224,224])";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"("batch":256,"num_workers":-1)", "/num_workers: must be an integer in [0, 1024], got -1"},
      {R"("batch":256,"num_workers":1e9)", "/num_workers: must be an integer in [0, 1024], got 1000000000.0"},
      {R"("batch":256,"num_workers":8,"pin_memory":0)", "/pin_memory: expected true or false, got 0"},
      {R"("batch":1e308,"num_workers":8)", "/batch: must be an integer in [1, 10000000], got 1e+308"},
      {R"("batch":2.5,"num_workers":8)", "/batch: must be an integer in [1, 10000000], got 2.5"},
      {R"("batch":256,"num_workers":8,"prefetch_factor":-3)",
       "/prefetch_factor: must be an integer in [1, 1024], got -3"},
      {R"("batch":256,"num_workers":8,"host":{"cpu_cores":1e12})",
       "/host/cpu_cores: must be an integer in [1, 100000], got 1000000000000.0"},
      {R"("batch":256,"num_workers":8,"sample_cpu_ms_1thread":1e300)",
       "/sample_cpu_ms_1thread: must be a number in (0, 100000], got 1e+300"},
      {R"("batch":256,"num_workers":8,"image_hw":[-5,3])",
       "/image_hw: must be [height, width], two integers in [1, 100000], got [-5,3]"},
      // Found by a review (2026-12-07): a measured step of 1e308 ms made an infinite error and MAPE; a DDP
      // record's gpus "8" read as one GPU; a bucket of 1e-300 MiB made millions of buckets.
      {R"("batch":256,"num_workers":8,"step_ms":1e308)", "/step_ms: must be a number in [0.001, 86400000], got 1e+308"},
      {R"("batch":256,"num_workers":8,"params":1e308)", "/params: must be a number in (0, 100000000000000], got 1e+308"},
      {R"("batch":256,"num_workers":8,"gpus":"8")", "/gpus: expected a number, got \"8\""},
      {R"("batch":256,"num_workers":8,"bucket_cap_mb":1e-300)", "/bucket_cap_mb: must be at least 0.01 MiB, got 1e-300"},
  };
  for (const auto& [fields, expected] : cases) {
    std::vector<std::string> errors;
    // Each case's fields replace the defaults (a key given twice in one line is an error of its own).
    auto record = nlohmann::json::parse("{\"id\":\"x\"," + loader + "}");
    record.update(nlohmann::json::parse("{" + fields + "}"));
    const auto r = parse_runs({record.dump()}, "runs.jsonl", errors);
    CHECK(r.empty());
    REQUIRE(errors.size() == 1);
    CHECK(errors[0] == "runs.jsonl:1:" + expected);
  }
  // A GPT record's heads that do not divide its width cannot be expressed, and it says so (a record, not an error).
  std::vector<std::string> errors;
  const auto g = parse_runs({R"({"id":"g","kind":"train","data":"synthetic-on-gpu","model":"gpt","batch":2,)"
                             R"("layers":2,"d_model":768,"heads":7,"seq":128})"},
                            "runs.jsonl", errors);
  CHECK(errors.empty());
  REQUIRE(g.size() == 1);
  CHECK_FALSE(g[0].expressible);
  CHECK(g[0].reason == "gpt needs heads that divide d_model");
  // Fuzzing found two more (2026-12-06): a `data` that is neither kind went to the loader simulation, and with
  // host cpu_cores 1e-300 beside it that simulation never ended. Now cpu_cores is checked wherever it appears, and
  // an unknown `data` is a record that says why it is not predicted.
  const std::string gpu = R"("kind":"train","model":"resnet50","precision":"bf16","batch":64,)";
  std::vector<std::string> e2;
  CHECK(parse_runs({"{\"id\":\"c\"," + gpu + R"("data":"","host":{"cpu_cores":1e-300}})"}, "runs.jsonl", e2).empty());
  REQUIRE(e2.size() == 1);
  CHECK(e2[0] == "runs.jsonl:1:/host/cpu_cores: must be an integer in [1, 100000], got 1e-300");
  e2.clear();
  const auto u = parse_runs({"{\"id\":\"u\"," + gpu + R"("data":"tfrecord-on-s3"})"}, "runs.jsonl", e2);
  CHECK(e2.empty());
  REQUIRE(u.size() == 1);
  CHECK_FALSE(u[0].expressible);
  CHECK(u[0].reason == "unknown `data` \"tfrecord-on-s3\" (expected synthetic-on-gpu or cpu-jpeg-pipeline)");
}

TEST_CASE("calibrate::reference_runs: a record's logits_kept reaches the step, kept unless it says false",
          "[calibrate]") {
  std::vector<std::string> errors;
  const std::string gpt = R"("kind":"train","data":"synthetic-on-gpu","model":"gpt","batch":2,"layers":2,)"
                          R"("d_model":128,"heads":2,"seq":64)";
  const auto r = parse_runs({"{\"id\":\"a\"," + gpt + "}", "{\"id\":\"b\"," + gpt + ",\"logits_kept\":false}"},
                            "runs.jsonl", errors);
  REQUIRE(errors.empty());
  REQUIRE(r.size() == 2);
  CHECK(r[0].step.logits_kept);
  CHECK_FALSE(r[1].step.logits_kept);
}

TEST_CASE("calibrate::reference_runs: unknown models become generic, or say why not", "[calibrate]") {
  std::vector<std::string> errors;
  const auto r = parse_runs(
      {R"({"id":"x","kind":"train","data":"synthetic-on-gpu","model":"coatnet_0","batch":8,"params":2.8e7,"fwd_flops_per_sample":8e8})",
       R"({"id":"y","kind":"train","data":"synthetic-on-gpu","model":"mystery","batch":8})"},
      "runs.jsonl", errors);
  REQUIRE(errors.empty());
  REQUIRE(r.size() == 2);
  CHECK(r[0].expressible);
  CHECK(r[0].step.model.family == ModelFamily::generic);
  CHECK_FALSE(r[1].expressible);
  CHECK(r[1].reason.find("mystery") != std::string::npos);
}

TEST_CASE("calibrate::check: a record whose step the model cannot build is not expressible and has no OOM verdict",
          "[calibrate]") {
  // swin_t is a known model, so the inputs parse, but its operators refuse activation checkpointing (torchvision's
  // Swin has none). It was counted "not expressible 0" and its OOM verdict as agreeing (measured ran, and the
  // default `oom = false` of a prediction that never ran), so the check reported 1/1 agreement on nothing.
  Inputs in = load_inputs();
  std::vector<std::string> errors;
  const auto runs = parse_runs(
      {R"({"id":"s","kind":"train","model":"swin_t","batch":64,"precision":"tf32","data":"synthetic-on-gpu",)"
       R"("activation_checkpointing":true,"step_ms":60.0,"peak_mem_gib":6.73})"},
      "swin-ckpt.jsonl", errors);
  REQUIRE(errors.empty());
  REQUIRE(runs.size() == 1);
  REQUIRE(runs[0].expressible);  // the inputs are fine: only the operators refuse it
  const CheckReport rep = run_check(runs, in.profile, in.constants, 10.0);
  const RecordResult& r = rep.records.at(0);
  CHECK(r.prediction.reason.find("activation checkpointing") != std::string::npos);
  CHECK_FALSE(r.oom_agrees.has_value());
  // One train record, and it is the one not expressible: nothing agrees or disagrees, nothing is compared.
  CHECK(rep.summary.train_records == 1);
  CHECK(rep.summary.not_expressible == 1);
  CHECK(rep.summary.oom_records == 0);
  CHECK(rep.summary.oom_agree == 0);
  CHECK(rep.summary.mape_records == 0);
  CHECK(render_table(rep).find("not expressible 1") != std::string::npos);
}

TEST_CASE("calibrate::check: a step measured on several GPUs is not predicted as one GPU's", "[calibrate]") {
  // The reference GPT-350M b8 step, and the same line as rank 0 of 8 (tools/measure_ddp.py's `gpus`): its time
  // includes the gradient all-reduce, which a one-GPU prediction leaves out. It used to be compared all the same
  // (+0.4%, "PASS").
  Inputs in = load_inputs();
  const std::string one =
      R"({"id":"one","kind":"train","model":"gpt","layers":24,"d_model":1024,"heads":16,"vocab":50304,)"
      R"("seq":1024,"batch":8,"precision":"bf16","optimizer":"adamw-fused","data":"synthetic-on-gpu",)"
      R"("tied_embeddings":true,"step_ms":57.96,"peak_mem_gib":16.87})";
  std::string eight = one;
  eight.replace(eight.find(R"("id":"one")"), 10, R"("id":"eight","gpus":8)");
  std::vector<std::string> errors;
  const auto runs = parse_runs({one, eight}, "ddp.jsonl", errors);
  REQUIRE(errors.empty());
  REQUIRE(runs.size() == 2);
  const CheckReport rep = run_check(runs, in.profile, in.constants, 10.0);
  const RecordPrediction& p1 = rep.records.at(0).prediction;
  const RecordPrediction& p8 = rep.records.at(1).prediction;
  INFO(p1.reason);
  REQUIRE(p1.step_ms);
  CHECK_FALSE(p8.step_ms);
  CHECK_FALSE(p8.expressible);
  CHECK(p8.reason.find("8 GPUs") != std::string::npos);
  CHECK(p8.reason.find("calibrate ddp") != std::string::npos);
  CHECK(rep.summary.not_expressible == 1);
  CHECK(rep.summary.mape_records == 1);
  CHECK_FALSE(rep.records.at(1).oom_agrees.has_value());
}

TEST_CASE("calibrate::profile_io: missing fields are reported with their JSON path", "[calibrate]") {
  std::vector<std::string> errors;
  auto doc = nlohmann::json::parse(R"({"schema":"gpuplan-profile/1","gpu_id":"x","device":{"sm_count":132},
      "gemm":[{"dtype":"bf17","m":1,"n":1,"k":1,"tflops":1}],"memory":{},"launch":{"eager_us":4,"graph_us":1}})");
  CHECK_FALSE(parse_profile(doc, "p.json", errors));
  CHECK(std::find(errors.begin(), errors.end(),
                  "p.json:/device/memory_total_bytes: expected a number, got nothing") != errors.end());
  CHECK(std::find(errors.begin(), errors.end(),
                  "p.json:/gemm/0/dtype: expected one of bf16, fp16, tf32, fp32, fp8, got \"bf17\"") != errors.end());
  CHECK(std::find(errors.begin(), errors.end(), "p.json:/memory/hbm_copy_GBps: expected a number, got nothing") !=
        errors.end());
}

TEST_CASE("calibrate::profile_io: a profile survives a write and re-read", "[calibrate]") {
  std::vector<std::string> errors;
  auto p = load_profile(kProfile, errors);
  REQUIRE(p);
  auto q = parse_profile(profile_to_json(*p), "roundtrip", errors);
  REQUIRE(q);
  CHECK(q->gemm.size() == p->gemm.size());
  CHECK(q->hbm_copy_bw.value() == Approx(p->hbm_copy_bw.value()));
  CHECK(q->memory_total.value() == p->memory_total.value());
  CHECK(q->context_memory.value() == p->context_memory.value());
}

TEST_CASE("calibrate::check: a file with no GPU-bound step to compare does not pass and says so", "[calibrate]") {
  // Only a CPU-pipeline record (no GPU-bound train record): a check that compared nothing must not pass.
  Inputs in = load_inputs();
  std::vector<std::string> errors;
  const auto runs = parse_runs(
      {R"({"id":"l","kind":"train","model":"resnet50","batch":256,"precision":"bf16","data":"cpu-jpeg-pipeline",)"
       R"("num_workers":4,"pin_memory":true,"sample_cpu_ms_1thread":3.2,"host":{"cpu_cores":16},"step_ms":262.1})"},
      "loader-only.jsonl", errors);
  REQUIRE(errors.empty());
  const CheckReport rep = run_check(runs, in.profile, in.constants, 10.0);
  CHECK(rep.summary.mape_records == 0);
  CHECK_FALSE(rep.summary.pass);
  // The table says there was nothing for the gate (`calibrate check` then exits 2, tested in app::cli).
  CHECK(render_table(rep).find("none in this file (no train record with \"data\": \"synthetic-on-gpu\"), nothing for "
                               "--tolerance to check") != std::string::npos);
  CHECK(render_table(rep).find("PASS") == std::string::npos);
}

TEST_CASE("calibrate::check: every reference step predicted over a batch sweep keeps the invariants of batch size", "[calibrate]") {
  // Each GPU-bound reference configuration, its measurements removed, at 18 micro-batch sizes from 1 to 512.
  // Whatever the shape effects, more samples of the same step never take less time or memory; fixed costs (launch
  // overhead, weights, optimizer) amortise, so the time and the peak per sample do not grow with the batch beyond
  // a few percent of tile rounding (tensors over 2^31 elements, which do, start beyond these batches or do not
  // fit); and a batch that does not fit is followed by none that does.
  const Inputs in = load_inputs();
  const std::vector<int> batches{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512};
  std::vector<std::string> lines;
  int configs = 0;
  for (const auto& r : in.runs) {
    if (r.kind != "train" || !gpu_bound(r)) continue;
    ++configs;
    add_variants(lines, r, "batch", batches, "");
  }
  REQUIRE(configs >= 40);
  const Checked sweep = check_lines(in, lines);
  const CheckReport& rep = sweep.report;
  int pairs = 0, fit_pairs = 0;
  for (size_t i = 0; i + 1 < rep.records.size(); ++i) {
    if (i % batches.size() == batches.size() - 1) continue;  // the next record is another configuration
    const auto& a = rep.records[i].prediction;
    const auto& b = rep.records[i + 1].prediction;
    const double ba = batches[i % batches.size()], bb = batches[i % batches.size() + 1];
    INFO(rep.records[i + 1].record->id);
    REQUIRE(a.peak_mem_gib);
    REQUIRE(b.peak_mem_gib);
    CHECK(*b.peak_mem_gib >= *a.peak_mem_gib);
    CHECK(*b.peak_mem_gib / bb <= *a.peak_mem_gib / ba * 1.001);
    if (a.oom) CHECK(b.oom);
    ++pairs;
    if (a.oom || b.oom) continue;
    REQUIRE(a.step_ms);
    REQUIRE(b.step_ms);
    CHECK(*b.step_ms >= *a.step_ms);
    CHECK(*b.step_ms / bb <= *a.step_ms / ba * 1.03);
    ++fit_pairs;
  }
  CHECK(pairs == configs * static_cast<int>(batches.size() - 1));
  CHECK(fit_pairs > pairs / 2);
}

TEST_CASE("calibrate::check: GPT reference steps over sequence length and gradient accumulation keep their invariants", "[calibrate]") {
  // Sequence length: more tokens per sample never take less time or memory (launch-bound steps take the same time:
  // the host issues the same kernels). Gradient accumulation: a micro-batches take a times
  // the work of one plus one optimizer update, so the step grows with a and the time per micro-batch stays within a
  // few percent (the accumulation adds into existing gradients); the peak is that of one micro-batch with the
  // gradients held across, the same from two micro-batches on.
  const Inputs in = load_inputs();
  const std::vector<int> seqs{64, 128, 256, 512, 1024, 2048, 4096};
  const std::vector<int> accums{1, 2, 4, 8};
  std::vector<std::string> lines;
  int gpts = 0, configs = 0;
  for (const auto& r : in.runs) {
    if (r.kind != "train" || !gpu_bound(r)) continue;
    ++configs;
    add_variants(lines, r, "grad_accum", accums, "a");
    if (r.input.value("model", "") != "gpt") continue;
    ++gpts;
    add_variants(lines, r, "seq", seqs, "s");
  }
  REQUIRE(gpts >= 20);
  const Checked sweep = check_lines(in, lines);
  const CheckReport& rep = sweep.report;
  auto key = [](const RecordResult& r) { return r.record->id.substr(0, r.record->id.rfind('@') + 2); };
  auto value = [](const RecordResult& r) { return std::stod(r.record->id.substr(r.record->id.rfind('@') + 2)); };
  int seq_pairs = 0, accum_pairs = 0;
  for (size_t i = 0; i + 1 < rep.records.size(); ++i) {
    const auto& ra = rep.records[i];
    const auto& rb = rep.records[i + 1];
    if (key(ra) != key(rb)) continue;
    const auto& a = ra.prediction;
    const auto& b = rb.prediction;
    const double xa = value(ra), xb = value(rb);
    INFO(rb.record->id);
    REQUIRE(a.peak_mem_gib);
    REQUIRE(b.peak_mem_gib);
    CHECK(*b.peak_mem_gib >= *a.peak_mem_gib * 0.999);
    if (a.oom) CHECK(b.oom);
    if (a.oom || b.oom) continue;
    REQUIRE(a.step_ms);
    REQUIRE(b.step_ms);
    if (key(ra).back() == 's') {
      CHECK(*b.step_ms >= *a.step_ms);  // equal where the host's launches set the step
      ++seq_pairs;
    } else {
      CHECK(*b.step_ms > *a.step_ms);
      CHECK(*b.step_ms / xb <= *a.step_ms / xa * 1.03);
      CHECK(*b.step_ms / xb >= *a.step_ms / xa * 0.8);
      if (xa >= 2) CHECK(*b.peak_mem_gib == Approx(*a.peak_mem_gib).epsilon(0.01));
      ++accum_pairs;
    }
  }
  CHECK(accum_pairs >= configs * 3 / 2);
  CHECK(seq_pairs >= gpts * 3);
}

TEST_CASE("calibrate::check: reference steps over precision order strict fp32 above TF32 above 16-bit autocast where the GPU sets the pace", "[calibrate]") {
  // Same step, same batch: TF32 matmuls outrun strict fp32 ones, and 16-bit autocast halves the bytes and doubles
  // the tensor-core rate, so on the GPU bf16 and fp16 <= tf32 <= fp32. (Where the host's launches set the step,
  // autocast's cast kernels make 16-bit slower, as measured: reference ResNet-50 b32 bf16 33.9 ms.) Peak memory in
  // TF32 and strict fp32 is the same: the same fp32 tensors.
  const Inputs in = load_inputs();
  const std::vector<std::string> precisions{"bf16", "fp16", "tf32", "fp32"};
  std::vector<std::string> lines;
  for (const auto& r : in.runs) {
    if (r.kind != "train" || !gpu_bound(r)) continue;
    add_variants(lines, r, "precision", precisions, "");
  }
  const Checked sweep = check_lines(in, lines);
  const CheckReport& rep = sweep.report;
  int compared = 0;
  for (size_t i = 0; i < rep.records.size(); i += precisions.size()) {
    const auto& bf16 = rep.records[i].prediction;
    const auto& fp16 = rep.records[i + 1].prediction;
    const auto& tf32 = rep.records[i + 2].prediction;
    const auto& fp32 = rep.records[i + 3].prediction;
    INFO(rep.records[i].record->id);
    CHECK(*tf32.peak_mem_gib == Approx(*fp32.peak_mem_gib));
    bool host = false;
    for (const auto* p : {&bf16, &fp16, &tf32, &fp32})
      host = host || p->oom || p->step.bottleneck == Bottleneck::launch_bound;
    // A replayed CUDA graph of a tiny model runs at the per-kernel floor, where autocast's extra cast kernels cost
    // more than its faster math saves (misc/graphs-tiny-b8-s128-graph: 2.29 ms in bf16, 2.06 in TF32).
    if (host || rep.records[i].record->input.value("cuda_graphs", false)) continue;
    CHECK(*bf16.step_ms <= *tf32.step_ms);
    CHECK(*fp16.step_ms <= *tf32.step_ms);
    CHECK(*tf32.step_ms <= *fp32.step_ms);
    ++compared;
  }
  CHECK(compared >= 25);
}

TEST_CASE("calibrate::check: the JUnit report fails the MAPE case exactly when the check fails and each step beyond the record tolerance", "[calibrate]") {
  Inputs in = load_inputs();
  std::vector<std::string> errors;
  const auto held = load_runs("calibrate/probes/results/h200-holdout12-2026-12-04.jsonl", errors);
  REQUIRE(errors.empty());
  auto count = [](const std::string& s, const std::string& what) {
    int n = 0;
    for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
  };
  for (const std::vector<RunRecord>* runs : {static_cast<const std::vector<RunRecord>*>(&in.runs), &held}) {
    const CheckReport rep = run_check(*runs, in.profile, in.constants, 10.0);
    for (double tol : {25.0, 10.0}) {
      const std::string xml = render_junit(rep, tol);
      int beyond = 0, steps = 0, oom_wrong = 0;
      for (const auto& r : rep.records) {
        if (r.oom_agrees && !*r.oom_agrees) ++oom_wrong;
        if (!r.step_err_pct || !r.in_mape) continue;
        ++steps;
        const bool fails = std::abs(*r.step_err_pct) > tol;
        beyond += fails;
        // This record's case carries a failure element exactly when it is beyond the tolerance.
        const auto at = xml.find("name=\"" + r.record->id + " step time\">");
        REQUIRE(at != std::string::npos);
        const auto end = xml.find("</testcase>", at);
        CHECK((xml.substr(at, end - at).find("<failure") != std::string::npos) == fails);
      }
      CHECK(count(xml, "<testcase ") == 1 + steps + oom_wrong);
      CHECK(count(xml, "<failure ") == beyond + oom_wrong + (rep.summary.pass ? 0 : 1));
      const auto gate = xml.find("name=\"step-time MAPE over GPU-bound train records\">");
      REQUIRE(gate != std::string::npos);
      CHECK((xml.substr(gate, xml.find("</testcase>", gate) - gate).find("<failure") != std::string::npos) ==
            !rep.summary.pass);
    }
  }
  // The reference passes and (issue 3) has every step within 25%: a clean report. Held-out set 12 fails its MAPE.
  const std::string ref = render_junit(run_check(in.runs, in.profile, in.constants, 10.0), 25.0);
  CHECK(count(ref, "<failure ") == 0);
  CHECK(render_junit(run_check(held, in.profile, in.constants, 10.0), 25.0).find("exceeds the tolerance 10.0%") !=
        std::string::npos);
  // Record ids are user input: markup in one is escaped.
  std::vector<RunRecord> odd;
  for (const auto& r : in.runs)
    if (odd.empty() && r.kind == "train" && gpu_bound(r) && r.measured.step_ms) odd.push_back(r);
  REQUIRE(odd.size() == 1);
  odd[0].id = "a<b&\"c\"";
  const std::string x = render_junit(run_check(odd, in.profile, in.constants, 10.0), 25.0);
  CHECK(x.find("name=\"a&lt;b&amp;&quot;c&quot; step time\"") != std::string::npos);
}

TEST_CASE("calibrate::check: records measured on another GPU model than the profile's are named", "[calibrate]") {
  // Device names as torch.cuda.get_device_name and the GPU catalog write them.
  CHECK(gpu_model_token("NVIDIA H200") == "H200");
  CHECK(gpu_model_token("NVIDIA H100 80GB HBM3") == "H100");
  CHECK(gpu_model_token("NVIDIA H100 SXM5 80GB") == "H100");  // catalog name of h100-sxm: the same model
  CHECK(gpu_model_token("NVIDIA A100-SXM4-80GB") == "A100");
  CHECK(gpu_model_token("Tesla V100-SXM2-16GB") == "V100");
  CHECK(gpu_model_token("NVIDIA GH200 480GB") == "GH200");    // not an H200
  CHECK(gpu_model_token("AMD Instinct MI300X") == "MI300X");
  CHECK(gpu_model_token("nvidia h200") == "H200");
  CHECK(gpu_model_token("NVIDIA") == "");
  CHECK(gpu_model_token("") == "");
  GpuProfile prof;
  prof.device_name = "NVIDIA H200";
  std::vector<std::string> errors;
  const auto runs = parse_runs(
      {R"({"id":"a","kind":"train","model":"resnet50","batch":8,"data":"synthetic-on-gpu","device":"NVIDIA H200"})",
       R"({"id":"b","kind":"train","model":"resnet50","batch":8,"data":"synthetic-on-gpu"})",
       R"({"id":"c","kind":"train","model":"resnet50","batch":8,"data":"synthetic-on-gpu","device":"NVIDIA A100-SXM4-80GB"})",
       R"({"id":"d","kind":"micro","device":"NVIDIA B200"})",
       R"({"id":"e","kind":"train","model":"resnet50","batch":8,"data":"synthetic-on-gpu","device":"NVIDIA A100-SXM4-40GB"})",
       R"({"id":"f","kind":"train","model":"resnet50","batch":8,"data":"synthetic-on-gpu","device":"NVIDIA GH200 480GB"})"},
      "r.jsonl", errors);
  REQUIRE(errors.empty());
  // Train records: a, b, c, e, f (5). a matches, b says nothing, the micro record d is not checked; the two A100s
  // (first on line 3) and the GH200 (line 6) are named, in file order.
  const auto lines = device_mismatches(runs, prof, "r.jsonl");
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].rfind("r.jsonl:3:/device: measured on \"NVIDIA A100-SXM4-80GB\", but the profile is of \"NVIDIA H200\" "
                       "(2 of 5 train records)", 0) == 0);
  CHECK(lines[1].rfind("r.jsonl:6:/device: measured on \"NVIDIA GH200 480GB\", but the profile is of \"NVIDIA H200\" "
                       "(1 of 5 train records)", 0) == 0);
  // The reference file is the profile's GPU throughout.
  const Inputs in = load_inputs();
  CHECK(device_mismatches(in.runs, in.profile, kRuns).empty());
}

TEST_CASE("calibrate::check: the printed MAPE and tolerance agree with the verdict at any tolerance", "[calibrate]") {
  // A CI user's tolerance has as many decimals as they like; with %.2f and %.1f the gate printed
  // "4.66% (tolerance 4.7%) FAIL" (4.6596 > 4.65) and "... PASS" (4.6596 <= 4.6599) alike.
  CheckReport rep;
  CheckSummary& s = rep.summary;
  s.gpu_bound = 44;
  s.mape_records = 44;
  s.mape_pct = 4.6596;
  auto gate = [&](double tol) {
    s.tolerance_pct = tol;
    s.pass = s.mape_pct <= tol;
    const std::string t = render_table(rep);
    const auto at = t.find("step-time MAPE");
    return t.substr(at, t.find('\n', at) - at);
  };
  // 4.6596 > 4.65: two decimals each show it (4.66 > 4.65).
  CHECK(gate(4.65) == "step-time MAPE over GPU-bound train records: 4.66% (tolerance 4.65%) FAIL");
  // 4.6596 <= 4.6599: at two decimals 4.66 > 4.6599 would contradict PASS; at four, 4.6596 <= 4.6599.
  CHECK(gate(4.6599) == "step-time MAPE over GPU-bound train records: 4.6596% (tolerance 4.6599%) PASS");
  // 4.6596 > 4.6591: 4.66 > 4.6591 already agrees with FAIL.
  CHECK(gate(4.6591) == "step-time MAPE over GPU-bound train records: 4.66% (tolerance 4.6591%) FAIL");
  // Equal: passes (the gate is "exceeds"), and reads equal at four decimals (4.66 > 4.6596 would not).
  CHECK(gate(4.6596) == "step-time MAPE over GPU-bound train records: 4.6596% (tolerance 4.6596%) PASS");
  // The default tolerance reads as before (docs/calibration.md).
  CHECK(gate(10.0) == "step-time MAPE over GPU-bound train records: 4.66% (tolerance 10.0%) PASS");
  // The JUnit gate's failure message says the same.
  gate(4.6591);
  CHECK(render_junit(rep, 25.0).find("message=\"MAPE 4.66% over 44 records exceeds the tolerance 4.6591%\"") !=
        std::string::npos);
  // A record 25.004% off fails the default record tolerance of 25%; "(-25.0%), beyond 25%" read as if it did not.
  // measured 100 ms, predicted 74.996 ms: (74.996 - 100) / 100 = -25.004%.
  RunRecord rec;
  rec.id = "r";
  rec.kind = "train";
  rec.data = "synthetic-on-gpu";
  rec.measured.step_ms = 100.0;
  RecordResult rr;
  rr.record = &rec;
  rr.prediction.step_ms = 74.996;
  rr.step_err_pct = -25.004;
  rr.in_mape = true;
  rep.records.push_back(rr);
  const std::string x = render_junit(rep, 25.0);
  CHECK(x.find("(-25.004%), beyond 25%") != std::string::npos);
  // Within the tolerance a record's line keeps one decimal: 74.996 against 25.004 off is not beyond 30%.
  CHECK(render_junit(rep, 30.0).find("<system-out>measured 100.00 ms, predicted 75.00 ms (-25.0%)</system-out>") !=
        std::string::npos);
}

TEST_CASE("calibrate::xml_escape: markup escaped, characters XML 1.0 cannot hold replaced", "[calibrate]") {
  using gp::calibrate::xml_escape;
  CHECK(xml_escape(R"(a<b & "c">)") == "a&lt;b &amp; &quot;c&quot;&gt;");
  CHECK(xml_escape("tab\tnl\ncr\r") == "tab\tnl\ncr\r");  // the three C0 characters XML allows
  // BEL and NUL (a scenario name made the --plot SVG unreadable), U+FFFF and U+FFFE: each becomes U+FFFD.
  CHECK(xml_escape(std::string("a\x07") + '\0' + "b") == "a\xEF\xBF\xBD\xEF\xBF\xBD" "b");
  CHECK(xml_escape("x\xEF\xBF\xBFy\xEF\xBF\xBEz") == "x\xEF\xBF\xBDy\xEF\xBF\xBDz");
  CHECK(xml_escape("\xC3\xA9 \xF0\x9F\x98\x80") == "\xC3\xA9 \xF0\x9F\x98\x80");  // other UTF-8 unchanged
}
