#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <tuple>
#include <utility>

#include "calibrate/fit.hpp"
#include "calibrate/profile_io.hpp"
#include "tests/support/run_gpuplan.hpp"

using namespace gp;
using namespace gp::calibrate;

namespace {

// The reference runs with every measured step time replaced by the model's prediction with `truth` (at most
// `limit` timed train records), and the H200 device they were predicted on.
std::pair<std::vector<RunRecord>, DeviceModel> generated_runs(const ComputeConstants& truth, std::size_t limit) {
  std::vector<std::string> errors;
  auto profile = load_profile("calibrate/profiles/h200.json", errors);
  auto runs = load_runs("calibrate/measured/h200-2026-12.jsonl", errors);
  REQUIRE(errors.empty());
  const DeviceModel dev = make_device_model(*profile);
  std::vector<RunRecord> out;
  for (auto& r : runs) {
    if (!r.measured.step_ms || !r.expressible) continue;
    if (limit > 0 && (r.data != "synthetic-on-gpu" || out.size() == limit)) continue;
    r.measured.step_ms = predict_step(r.step, dev, truth).total.ms();
    out.push_back(r);
  }
  return {out, dev};
}

}  // namespace

TEST_CASE("calibrate::fit: recovers constants from runs generated with known constants", "[calibrate]") {
  ComputeConstants truth;
  truth.gemm_efficiency = 0.9;
  truth.conv_efficiency = 0.8;
  truth.attention_efficiency = 0.5;
  truth.memory_efficiency = 0.75;
  truth.gpu_per_kernel = Seconds::us(2);
  truth.cpu_per_kernel_eager = Seconds::us(25);
  truth.cpu_per_bwd_kernel_eager = truth.cpu_per_kernel_eager;
  truth.cpu_per_conv_eager = Seconds::us(10);
  truth.cpu_per_step_eager = Seconds::ms(1);
  const auto [runs, dev] = generated_runs(truth, 0);
  const FitResult res = fit_compute_constants(runs, dev, ComputeConstants{}, false);
  CHECK(res.mape_pct < 0.5);
  CHECK(res.constants.memory_efficiency == Approx(truth.memory_efficiency).epsilon(0.05));
  CHECK(res.constants.gemm_efficiency == Approx(truth.gemm_efficiency).epsilon(0.05));
}

TEST_CASE("calibrate::fit: leave-one-out on runs the model generated reports each refit and predicts every record",
          "[calibrate]") {
  ComputeConstants truth;
  truth.gemm_efficiency = 0.9;
  truth.memory_efficiency = 0.75;
  truth.cpu_per_conv_eager = Seconds::us(10);
  // One refit per record: sixteen timed train records keep the test quick.
  const auto [runs, dev] = generated_runs(truth, 16);
  std::vector<std::pair<std::size_t, std::size_t>> calls;
  const auto record = [&](std::size_t done, std::size_t total) { calls.emplace_back(done, total); };
  const FitResult res = fit_compute_constants(runs, dev, ComputeConstants{}, true, {}, record);
  REQUIRE(res.records.size() == 16);
  // One call per left-out record, counting up to the total: what `calibrate fit --loo` draws its bar from.
  REQUIRE(calls.size() == res.records.size());
  for (std::size_t i = 0; i < calls.size(); ++i) {
    CHECK(calls[i].first == i + 1);
    CHECK(calls[i].second == res.records.size());
  }
  // Data the model itself generated: refitting without any one record still predicts it.
  CHECK(res.loo_mape_pct < 1.0);
  // Without leave-one-out there are no refits to report.
  calls.clear();
  fit_compute_constants(runs, dev, ComputeConstants{}, false, {}, record);
  CHECK(calls.empty());
}

TEST_CASE("calibrate::fit: constants file round trip and errors", "[calibrate]") {
  FitConstants fc;
  fc.compute.source = "test";
  fc.compute.as_of = "2026-12-02";
  fc.compute.gemm_efficiency = 0.93;
  std::vector<std::string> errors;
  auto back = parse_constants(constants_to_json(fc), "f.json", errors);
  REQUIRE(back);
  CHECK(back->compute.gemm_efficiency == Approx(0.93));
  auto bad = constants_to_json(fc);
  bad["constants"].erase("memory_efficiency");
  CHECK_FALSE(parse_constants(bad, "f.json", errors));
  CHECK(errors.back() == "f.json:/constants/memory_efficiency: expected a number, got nothing");
  // The fit may drive any CPU cost to zero (a fit over eight sessions gave cpu_per_conv_eager_us 0.0): its own
  // output must load, and only a negative cost is wrong.
  auto zero = constants_to_json(fc);
  for (const char* k : {"cpu_per_conv_eager_us", "cpu_per_step_eager_us", "cpu_per_kernel_eager_us"})
    zero["constants"][k] = 0.0;
  errors.clear();
  CHECK(parse_constants(zero, "f.json", errors));
  CHECK(errors.empty());
  zero["constants"]["cpu_per_step_eager_us"] = -1.0;
  CHECK_FALSE(parse_constants(zero, "f.json", errors));
  // The grouped-convolution law and the roll rate survive a write and re-read.
  fc.compute.grouped_conv = {1.5e15, 200, 4.5, 2.2, Seconds::us(55)};
  fc.compute.roll_rate = 109e9;
  errors.clear();
  auto g = parse_constants(constants_to_json(fc), "f.json", errors);
  REQUIRE(g);
  CHECK(g->compute.grouped_conv.rate == Approx(1.5e15));
  CHECK(g->compute.grouped_conv.w0 == Approx(200));
  CHECK(g->compute.grouped_conv.odd_factor == Approx(4.5));
  CHECK(g->compute.grouped_conv.stride_factor == Approx(2.2));
  CHECK(g->compute.grouped_conv.pass_cost.us() == Approx(55));
  CHECK(g->compute.roll_rate == Approx(109e9));
  // So do the per-dtype convolution efficiencies and the fp32-tensor depthwise law.
  fc.compute.conv_tf32_efficiency = 0.817;
  fc.compute.conv_fp32_efficiency = 1.54;
  fc.compute.dwconv_f32_flop_efficiency = 0.126;
  fc.compute.dwconv_f32_memory_efficiency = 0.679;
  fc.compute.dwconv_tf32_k7_flop_efficiency = 0.02;
  fc.compute.dwconv_fp32_k7_flop_efficiency = 0.0143;
  errors.clear();
  auto d = parse_constants(constants_to_json(fc), "f.json", errors);
  REQUIRE(d);
  CHECK(d->compute.conv_tf32_efficiency == Approx(0.817));
  CHECK(d->compute.conv_fp32_efficiency == Approx(1.54));
  CHECK(d->compute.dwconv_f32_flop_efficiency == Approx(0.126));
  CHECK(d->compute.dwconv_f32_memory_efficiency == Approx(0.679));
  CHECK(d->compute.dwconv_tf32_k7_flop_efficiency == Approx(0.02));
  CHECK(d->compute.dwconv_fp32_k7_flop_efficiency == Approx(0.0143));
  // So do the elementwise paths' rates (GB/s in the file).
  fc.compute.elementwise_unrolled_bw = 2530e9;
  fc.compute.elementwise_broadcast_bw = 1571e9;
  fc.compute.elementwise_gelu_bw = 3322e9;
  fc.compute.bmm_aligned_rate = 58.6e12;
  fc.compute.bmm_unaligned_rate = 18e12;
  fc.compute.conv_16bit_efficiency = 0.99;
  fc.compute.reference_copy_bw = 3873.6e9;
  fc.compute.reference_bf16_rate = 712.5e12;
  fc.compute.nchw_conv_factor[nchw_pointwise_mid] = 2.149;
  fc.compute.bn_nhwc_fwd = {{401408, 256, false, 240e9}};
  fc.compute.bn_nhwc_bwd = {{401408, 256, false, 300e9}};
  fc.compute.ln_fwd = {{65536, 96, false, 61e9}};
  fc.compute.ln_bwd = {{65536, 96, false, 20e9}};
  auto e = parse_constants(constants_to_json(fc), "f.json", errors);
  REQUIRE(e);
  CHECK(e->compute.elementwise_unrolled_bw == Approx(2530e9));
  CHECK(e->compute.elementwise_broadcast_bw == Approx(1571e9));
  CHECK(e->compute.elementwise_gelu_bw == Approx(3322e9));
  CHECK(e->compute.bmm_aligned_rate == Approx(58.6e12));
  CHECK(e->compute.bmm_unaligned_rate == Approx(18e12));
  CHECK(e->compute.conv_16bit_efficiency == Approx(0.99));
  CHECK(e->compute.reference_copy_bw == Approx(3873.6e9));
  CHECK(e->compute.reference_bf16_rate == Approx(712.5e12));
  CHECK(e->compute.nchw_conv_factor[nchw_pointwise_mid] == Approx(2.149));
  CHECK(e->compute.nchw_conv_factor[nchw_pointwise_large] == 0);
  REQUIRE(e->compute.bn_nhwc_fwd.size() == 1);
  REQUIRE(e->compute.bn_nhwc_bwd.size() == 1);
  CHECK(e->compute.bn_nhwc_fwd[0].rows == Approx(401408));
  CHECK(e->compute.bn_nhwc_fwd[0].rate == Approx(240e9));
  CHECK(e->compute.bn_nhwc_bwd[0].rate == Approx(300e9));
  REQUIRE(e->compute.ln_fwd.size() == 1);
  REQUIRE(e->compute.ln_bwd.size() == 1);
  CHECK(e->compute.ln_fwd[0].channels == Approx(96));
  CHECK(e->compute.ln_bwd[0].rate == Approx(20e9));
  // A BatchNorm sample without its backward rate is named, with what was expected.
  auto bad_bn = constants_to_json(fc);
  bad_bn["constants"]["bn_nhwc"][0].erase("bwd_gelements_per_s");
  errors.clear();
  CHECK_FALSE(parse_constants(bad_bn, "f.json", errors));
  REQUIRE_FALSE(errors.empty());
  CHECK(errors.back().find("f.json:/constants/bn_nhwc/0: expected {\"rows\": > 0") == 0);
}

namespace {

// The reference and held-out sessions' records on the H200 profile (their inputs; times replaced by tests).
std::tuple<DeviceModel, std::vector<RunRecord>, std::vector<RunRecord>> two_sessions() {
  std::vector<std::string> errors;
  auto profile = load_profile("calibrate/profiles/h200.json", errors);
  auto a = load_runs("calibrate/measured/h200-2026-12.jsonl", errors);
  auto b = load_runs("calibrate/measured/h200-holdout-2026-12-02.jsonl", errors);
  REQUIRE(errors.empty());
  REQUIRE(profile);
  return {make_device_model(*profile), a, b};
}

// Replaces each measured step time by the model's prediction with `c`: data whose true constants are known.
void synthesize(std::vector<RunRecord>& runs, const DeviceModel& dev, const ComputeConstants& c) {
  for (auto& r : runs)
    if (r.measured.step_ms && r.expressible) r.measured.step_ms = predict_step(r.step, dev, c).total.ms();
}

}  // namespace

TEST_CASE("calibrate::fit: leave-one-session-out predicts a session generated with the same constants", "[calibrate]") {
  auto [dev, a, b] = two_sessions();
  ComputeConstants truth;
  truth.gpu_per_kernel = Seconds::us(2);
  truth.cpu_per_bwd_kernel_eager = truth.cpu_per_kernel_eager;
  synthesize(a, dev, truth);
  synthesize(b, dev, truth);
  // Session b's measured times made 1.5x slower: a fit on a alone must then miss b by about 33%.
  auto slow = b;
  for (auto& r : slow)
    if (r.measured.step_ms) *r.measured.step_ms *= 1.5;
  const auto same = leave_one_session_out({a, b}, {"a", "b"}, dev, ComputeConstants{});
  const auto off = leave_one_session_out({a, slow}, {"a", "slow"}, dev, ComputeConstants{});
  REQUIRE(same.size() == 2);
  CHECK(same[1].name == "b");
  CHECK(same[1].records == fit_records(b).size());
  CHECK(same[1].mape_pct < 1.0);
  CHECK(off[1].mape_pct == Approx(100.0 / 3).epsilon(0.03));
}

TEST_CASE("calibrate::fit: a second host's CPU speed is fitted as its own factor, the constants stay the first's",
          "[calibrate]") {
  auto [dev, a, b] = two_sessions();
  ComputeConstants truth;
  truth.gpu_per_kernel = Seconds::us(2);
  truth.cpu_per_bwd_kernel_eager = truth.cpu_per_kernel_eager;
  truth.cpu_per_op_eager = Seconds::us(30);
  // Host b runs every CPU cost at 0.6x host a's (a faster CPU); GPU costs are the same.
  ComputeConstants fast = truth;
  for (Seconds* t : {&fast.cpu_per_kernel_eager, &fast.cpu_per_bwd_kernel_eager, &fast.cpu_per_conv_eager,
                     &fast.cpu_per_step_eager, &fast.cpu_per_op_eager})
    *t = *t * 0.6;
  synthesize(a, dev, truth);
  synthesize(b, dev, fast);
  std::vector<RunRecord> runs = a;
  runs.insert(runs.end(), b.begin(), b.end());
  std::vector<int> session(a.size(), 0);
  session.insert(session.end(), b.size(), 1);
  const FitResult hs = fit_compute_constants(runs, dev, ComputeConstants{}, false, session);
  REQUIRE(hs.session_cpu_scale.size() == 2);
  CHECK(hs.session_cpu_scale[0] == 1.0);
  CHECK(hs.session_cpu_scale[1] == Approx(0.6).epsilon(0.02));
  CHECK(hs.mape_pct < 1.0);
  CHECK(hs.constants.cpu_per_op_eager.us() == Approx(30).epsilon(0.05));
  // Without the factor one set of CPU costs must serve both hosts: it cannot fit both.
  const FitResult one = fit_compute_constants(runs, dev, ComputeConstants{}, false);
  CHECK(one.session_cpu_scale.size() == 1);
  CHECK(one.mape_pct > 3 * hs.mape_pct);
}

TEST_CASE("calibrate::fit: the CPU cost per recomputed call is recovered from checkpointed runs made with it",
          "[calibrate]") {
  std::vector<std::string> errors;
  auto profile = load_profile("calibrate/profiles/h200.json", errors);
  auto fc = load_constants("calibrate/profiles/fit-h200.json", errors);
  REQUIRE(errors.empty());
  const DeviceModel dev = make_device_model(*profile);
  // The paired measurements' records, their step times replaced by the model's with 85 us per recomputed call.
  ComputeConstants truth = fc->compute;
  truth.cpu_per_recompute_eager = Seconds::us(85);
  std::ifstream in("calibrate/probes/results/ckpt-cpu-2026-12-04.jsonl");
  const std::string path = "build/test-ckpt-cpu-synthetic.jsonl";
  std::ofstream out(path);
  std::string line;
  int checkpointed = 0;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    if (j.value("kind", "") == "train") {
      StepConfig step;
      REQUIRE_FALSE(step_from_input(j, step));
      j["step_ms"] = predict_step(step, dev, truth).total.ms();
      checkpointed += step.activation_checkpointing;
    }
    out << j.dump() << "\n";
  }
  out.close();
  REQUIRE(checkpointed == 10);
  const auto f = fit_recompute_cpu({path}, dev, fc->compute, errors);
  REQUIRE(f);
  CHECK(f->records == 10);
  CHECK(f->seconds * 1e6 == Approx(85).margin(0.5));
  CHECK(f->rms_log_after < 1e-3);
  CHECK(f->rms_log_before > 0.1);
  // A file without checkpointed steps is refused with one line.
  errors.clear();
  CHECK_FALSE(
      fit_recompute_cpu({"calibrate/probes/results/h200-holdout12-2026-12-04.jsonl"}, dev, fc->compute, errors));
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].find("no checkpointed train record") != std::string::npos);
}

TEST_CASE("app::calibrate fit: an empty --conv-probe-fp16/-tf32/-fp32 is refused like every other file option",
          "[cli][calibrate]") {
  // An empty value (a shell variable never set) was taken as "not given": the fit ran without the probe, exit 0.
  for (const char* dtype : {"fp16", "tf32", "fp32"}) {
    const auto r = gp::test::run_gpuplan(std::string("calibrate fit -q --profile calibrate/profiles/h200.json --runs "
                                                     "calibrate/measured/h200-2026-12.jsonl --conv-probe-") +
                                         dtype + " ''");
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(r.out == std::string("gpuplan: --conv-probe-") + dtype + ": expected a value, got an empty string (see --help)\n");
  }
}

TEST_CASE("app::calibrate fit: --loso with one --runs file is refused", "[cli][calibrate]") {
  // Leave-one-session-out needs two sessions; with one the flag was ignored and the fit written, exit 0.
  const auto r = gp::test::run_gpuplan(
      "calibrate fit -q --loso --profile calibrate/profiles/h200.json --runs calibrate/measured/h200-2026-12.jsonl");
  CHECK(r.code == 2);
  CHECK(r.out == "gpuplan: --loso: expected two or more --runs files (sessions), got 1\n");
}

TEST_CASE("app::calibrate fit: a runs file given twice, or an --oom-runs file with no train record, is refused",
          "[cli][calibrate]") {
  // The same file given twice was fitted twice (its records weighed double; --loso left it out against itself), and
  // an empty --oom-runs file added nothing while the rule was written as fitted over it; both exit 0.
  const auto dir = std::filesystem::temp_directory_path() / ("gpuplan-fit-twice-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "fit.json").string(), empty = (dir / "empty.jsonl").string();
  std::ofstream(empty) << "";
  const std::string base = "calibrate fit -q --profile calibrate/profiles/h200.json --out " + out +
                           " --runs calibrate/measured/h200-2026-12.jsonl";
  auto r = gp::test::run_gpuplan(base + " --runs ./calibrate/measured/h200-2026-12.jsonl --loso");
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out == "gpuplan: ./calibrate/measured/h200-2026-12.jsonl: given twice (as "
                 "calibrate/measured/h200-2026-12.jsonl): each runs file is one session, fitted once\n");
  r = gp::test::run_gpuplan(base + " --oom-runs " + empty);
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find(empty + ": no train record for the out-of-memory rule") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
  std::filesystem::remove_all(dir);
}
