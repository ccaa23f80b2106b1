// The single-convolution builder and `calibrate convs` (calibrate/conv_check.hpp): operator shapes checked by
// hand, the probe file's input handling, and the model against the probe's measured convolutions.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <utility>

#include "calibrate/conv_check.hpp"
#include "tests/support/run_gpuplan.hpp"
#include "calibrate/profile_io.hpp"

using namespace gp;
using namespace gp::calibrate;

namespace {

StepConfig bf16_step(int batch, bool channels_last) {
  StepConfig s;
  s.micro_batch = batch;
  s.precision = Precision::bf16;
  s.channels_last = channels_last;
  s.model.family = ModelFamily::cnn;
  return s;
}

const Op* find(const StepOps& ops, const std::string& name) {
  for (const Op& op : ops.micro)
    if (op.name == name) return &op;
  return nullptr;
}

// The H200 profile's device model and the default constants.
std::pair<DeviceModel, FitConstants> h200() {
  std::vector<std::string> errors;
  auto profile = load_profile("calibrate/profiles/h200.json", errors);
  auto constants = load_constants("calibrate/profiles/fit-h200.json", errors);
  REQUIRE(errors.empty());
  return {make_device_model(*profile), *constants};
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = "build/" + name;
  std::ofstream(path) << text;
  return path;
}

// One probe line: a convolution `shape` (its JSON fields), batch 128, in `dtype`, channels-last time `ms`.
std::string probe_line(const std::string& shape, const char* dtype, double ms) {
  return R"({"model": "m", "batch": 128, )" + shape + R"(, "bias": false, "first": false, "dtype": ")" + dtype +
         R"(", "nhwc": {"conv": [)" + std::to_string(ms) + ", 3.0]}}\n";
}

}  // namespace

TEST_CASE("build_conv_layer_ops: a 3x3 convolution's passes, by hand", "[conv_check]") {
  // ResNet-50's 64 -> 64 3x3 at 56x56, batch 32, padding 1: 32 x 56 x 56 = 100,352 output pixels.
  ConvLayer l;
  l.c_in = 64; l.h = 56; l.w = 56; l.c_out = 64; l.kh = l.kw = 3; l.pad_h = l.pad_w = 1;
  const StepOps ops = build_conv_layer_ops(bf16_step(32, true), l);
  const Op* f = find(ops, "conv.fwd");
  const Op* d = find(ops, "conv.dgrad");
  const Op* w = find(ops, "conv.wgrad");
  REQUIRE(f);
  REQUIRE(d);
  REQUIRE(w);
  const double pixels = 32.0 * 56 * 56;
  CHECK(f->flops.value() == Approx(2 * pixels * 64 * 9 * 64));
  CHECK(d->flops.value() == Approx(f->flops.value()));
  CHECK(w->flops.value() == Approx(f->flops.value()));
  // Input gradient: C_in outputs per pixel, reduced over C_out x 3 x 3.
  CHECK(d->shape.m == Approx(pixels));
  CHECK(d->shape.n == Approx(64));
  CHECK(d->shape.k == Approx(64 * 9));
  // Each pass moves input, output and filter once, in bf16: (in + out + filter) x 2 bytes.
  CHECK(f->bytes.value() == Approx(2 * (pixels * 64 + pixels * 64 + 64 * 64 * 9)));
  CHECK(!find(ops, "image.cast"));  // one layer, not a network
  CHECK(!find(ops, "conv.bias_add"));
}

TEST_CASE("build_conv_layer_ops: the first convolution has no input gradient, stride and bias", "[conv_check]") {
  ConvLayer l;
  l.c_in = 3; l.h = 224; l.w = 224; l.c_out = 64; l.kh = l.kw = 7; l.stride_h = l.stride_w = 2;
  l.pad_h = l.pad_w = 3; l.first = true; l.bias = true;
  const StepOps ops = build_conv_layer_ops(bf16_step(8, true), l);
  REQUIRE(find(ops, "conv.fwd"));
  CHECK(find(ops, "conv.fwd")->stem);
  CHECK(!find(ops, "conv.dgrad"));
  REQUIRE(find(ops, "conv.bias_add"));
  // (224 + 6 - 7) / 2 + 1 = 112: 8 x 112 x 112 output pixels.
  CHECK(find(ops, "conv.fwd")->shape.m == Approx(8.0 * 112 * 112));
}

TEST_CASE("build_conv_layer_ops: a grouped convolution's passes carry their group width and stride", "[conv_check]") {
  // ResNeXt-50 32x4d's first grouped 3x3: 128 channels in 32 groups of 4, 56x56, stride 1; then strided.
  ConvLayer l;
  l.c_in = 128; l.h = 56; l.w = 56; l.c_out = 128; l.kh = l.kw = 3; l.pad_h = l.pad_w = 1; l.groups = 32;
  StepOps ops = build_conv_layer_ops(bf16_step(128, true), l);
  int passes = 0;
  for (const Op& op : ops.micro) {
    if (!op.conv) continue;
    ++passes;
    CHECK(op.group_width == 4);
    CHECK_FALSE(op.group_strided);
    CHECK(op.flops.value() == Approx(2.0 * 128 * 56 * 56 * 4 * 9 * 128));  // per-group reduction 4 x 9
  }
  CHECK(passes == 3);
  l.stride_h = l.stride_w = 2;
  ops = build_conv_layer_ops(bf16_step(128, true), l);
  for (const Op& op : ops.micro)
    if (op.conv) CHECK(op.group_strided);
  // An ordinary convolution is not grouped.
  l.groups = 1;
  ops = build_conv_layer_ops(bf16_step(128, true), l);
  for (const Op& op : ops.micro)
    if (op.conv) CHECK(op.group_width == 0);
}

TEST_CASE("calibrate convs: reads the probe, one row per layout, one clear line for a bad record", "[conv_check]") {
  const auto [dev, constants] = h200();
  std::vector<std::string> errors;
  const std::string good =
      R"({"model": "m", "batch": 64, "c_in": 128, "h": 28, "w": 28, "c_out": 128, "k": [3, 3], "stride": [1, 1], )"
      R"("pad": [1, 1], "groups": 1, "bias": false, "first": false, "nchw": {"conv": [0.5, 5.0], )"
      R"("to_nhwc": [0.2, 6.0], "to_nchw": [0.1, 3.0]}, "nhwc": {"conv": [0.4, 5.0]}})";
  const std::string path = write_temp("conv_check_good.jsonl", good + "\n{\"torch\": \"2.11\"}\n");
  auto rows = check_convs(path, dev, constants, "both", errors);
  REQUIRE(errors.empty());
  REQUIRE(rows.size() == 2);
  CHECK_FALSE(rows[0].nchw);
  CHECK(rows[0].measured_ms == Approx(0.4));
  CHECK(rows[1].nchw);
  CHECK(rows[1].measured_transform_ms == Approx(0.3));
  CHECK(rows[1].predicted_transform_ms > 0);  // a 3x3 convolution in NCHW pays its layout transforms
  CHECK(rows[0].predicted_transform_ms == 0);
  CHECK(rows[0].kind == "spatial");

  const std::string bad = write_temp("conv_check_bad.jsonl", R"({"model": "m", "batch": 64, "c_in": 128})" "\n");
  check_convs(bad, dev, constants, "nhwc", errors);
  REQUIRE(!errors.empty());
  CHECK(errors.front().find("conv_check_bad.jsonl:1:/h") != std::string::npos);

  // Hostile lines: nesting past json_text's 64 levels and a number past a double's range are one line each.
  const std::string deep(100000, '[');
  const std::string hostile = write_temp("conv_check_hostile.jsonl", deep + "\n" + R"({"batch": 1e400})" "\n");
  errors.clear();
  CHECK(check_convs(hostile, dev, constants, "nhwc", errors).empty());
  REQUIRE(errors.size() == 2);
  CHECK(errors[0] == hostile + ":1:65: not valid JSON: arrays and objects nest more than 64 deep");
  CHECK(errors[1] == hostile + ":2:11: not valid JSON: number 1e400 is beyond the range of a double");

  // Measured times that were dropped without a word (negative, zero, text) or used (1e300 pinned the fitted
  // efficiency to its search bound): one line each, naming the layout and class.
  const std::vector<std::pair<std::string, std::string>> times = {
      {R"("nhwc": {"conv": [-0.4, 5.0]})", ":/nhwc/conv: must be [ms, kernels] with ms in (0, 100000], got [-0.4,5.0]"},
      {R"("nhwc": {"conv": [0, 0]})", ":/nhwc/conv: must be [ms, kernels] with ms in (0, 100000], got [0,0]"},
      {R"("nhwc": {"conv": "x"})", ":/nhwc/conv: must be [ms, kernels] with ms in (0, 100000], got \"x\""},
      {R"("nhwc": {"conv": [1e300, 1]})", ":/nhwc/conv: must be [ms, kernels] with ms in (0, 100000], got [1e+300,1]"},
      {R"("nhwc": [1, 2])", ":/nhwc: expected an object of kernel classes, got [1,2]"}};
  // The good record with `field` replacing its own (a key given twice is an error of its own): no row, one line.
  auto one_bad_field = [&](const std::string& field, const std::string& message) {
    auto record = nlohmann::json::parse(good);
    record.update(nlohmann::json::parse("{" + field + "}"));
    errors.clear();
    const std::string file = write_temp("conv_check_field.jsonl", record.dump() + "\n");
    INFO(field);
    CHECK(check_convs(file, dev, constants, "nhwc", errors).empty());
    REQUIRE(errors.size() == 1);
    CHECK(errors[0] == file + ":1" + message);
  };
  for (const auto& [field, message] : times) one_bad_field(field, message);
  // A pretty-printed JSON document (the H200 profile) is one line, not one per line (it was 18,406).
  errors.clear();
  CHECK(check_convs("calibrate/profiles/h200.json", dev, constants, "nhwc", errors).empty());
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].rfind("calibrate/profiles/h200.json: is one JSON document over ", 0) == 0);
  // 30 bad lines: the first 20, then how many more.
  std::string many;
  for (int i = 0; i < 30; ++i) many += "bad\n";
  const std::string many_file = write_temp("conv_check_many.jsonl", many);
  errors.clear();
  check_convs(many_file, dev, constants, "nhwc", errors);
  REQUIRE(errors.size() == 21);
  CHECK(errors[20] == many_file + ": 10 more problems not shown");

  // Fields that divided by zero or overflowed before (fuzzing, 2026-12-05: groups 1e-300 crashed with SIGFPE).
  const std::vector<std::pair<std::string, std::string>> corrupt = {
      {R"("groups": 1e-300)", ":/groups: must be an integer in [1, 1000000], got 1e-300"},
      {R"("groups": 3)", ":/groups: must divide c_in and c_out, got 3"},
      {R"("stride": [0, 1])", ":/stride: must be [h, w], two integers in [1, 100000], got [0,1]"},
      {R"("k": [3, 1099511627776])", ":/k: must be [h, w], two integers in [1, 100000], got [3,1099511627776]"},
      {R"("c_in": 2.5)", ":/c_in: must be an integer in [1, 1000000], got 2.5"}};
  for (const auto& [field, message] : corrupt) one_bad_field(field, message);

  // A kernel larger than the padded input: nn.Conv2d refuses it; the model squared the negative output size and
  // printed a time. The good record's input is 28 x 28 with padding 1: 30 x 30 padded.
  one_bad_field(R"("k": [31, 3])", ":/k: must fit the padded input (h + 2 pad by w + 2 pad = 30 x 30), got [31,3]");
  one_bad_field(R"("k": [3, 3], "pad": [0, 0], "h": 2)",
                ":/k: must fit the padded input (h + 2 pad by w + 2 pad = 2 x 28), got [3,3]");
  auto record = nlohmann::json::parse(good);
  record["k"] = {30, 30};  // exactly the padded input: one output pixel, (28 + 2 - 30) / 1 + 1
  errors.clear();
  CHECK(check_convs(write_temp("conv_check_k30.jsonl", record.dump() + "\n"), dev, constants, "nhwc", errors).size() == 1);
  CHECK(errors.empty());
}

TEST_CASE("calibrate convs: a probe with no convolution is bad input, not a perfect match", "[conv_check][cli]") {
  // An empty file printed "0 convolutions: RMS ln(predicted/measured) 0.000", exit 0.
  const std::string empty = write_temp("conv_check_empty.jsonl", "");
  auto r = gp::test::run_gpuplan("calibrate convs --profile calibrate/profiles/h200.json --probe " + empty);
  CHECK(r.code == 2);
  CHECK(r.out == empty + ": no convolution with a measured conv time in layout nhwc (expected lines as "
                         "tools/probe_conv_layout.py writes, with \"nhwc\": {\"conv\": [ms, kernels]})\n");
  // A channels-last-only probe asked for NCHW has none either.
  const std::string nhwc_only = write_temp(
      "conv_check_nhwc_only.jsonl",
      R"({"model": "m", "batch": 64, "c_in": 128, "h": 28, "w": 28, "c_out": 128, "k": [3, 3], "stride": [1, 1], )"
      R"("pad": [1, 1], "groups": 1, "bias": false, "first": false, "nhwc": {"conv": [0.4, 5.0]}})" "\n");
  r = gp::test::run_gpuplan("calibrate convs --profile calibrate/profiles/h200.json --layout nchw --probe " + nhwc_only);
  CHECK(r.code == 2);
  r = gp::test::run_gpuplan("calibrate convs --profile calibrate/profiles/h200.json --probe " + nhwc_only);
  CHECK(r.code == 0);
}

TEST_CASE("calibrate convs: the model against 300+ measured convolutions (H200 probe)", "[conv_check]") {
  const auto [dev, constants] = h200();
  std::vector<std::string> errors;
  const auto rows = check_convs("calibrate/probes/results/conv-layout-2026-12-03.jsonl", dev, constants, "nhwc", errors);
  REQUIRE(errors.empty());
  const ConvCheckSummary s = summarize_convs(rows);
  CHECK(s.rows > 300);
  // Convolutions of 16 networks, each timed alone: the summed time within 15%, the per-shape spread (RMS of
  // ln(predicted / measured)) under 0.40 (0.354 with the constants of 2026-12-03; docs/calibration.md).
  CHECK(std::abs(s.total_predicted_ms / s.total_measured_ms - 1) < 0.15);
  CHECK(s.rms_log_error < 0.40);
}

TEST_CASE("calibrate fit --conv-probe: the bf16 convolution efficiency is recovered from convolutions timed at it",
          "[conv_check]") {
  auto [dev, constants] = h200();
  std::vector<std::string> errors;
  // Two channels-last convolutions (a 1x1 and a 3x3) whose "measured" times are the model's own at efficiency
  // 0.8; a depthwise one, which the match leaves out, measured at ten times its model time.
  const std::string shapes[] = {
      R"("c_in": 256, "h": 56, "w": 56, "c_out": 128, "k": [1, 1], "stride": [1, 1], "pad": [0, 0], "groups": 1)",
      R"("c_in": 128, "h": 28, "w": 28, "c_out": 128, "k": [3, 3], "stride": [1, 1], "pad": [1, 1], "groups": 1)",
      R"("c_in": 96, "h": 56, "w": 56, "c_out": 96, "k": [7, 7], "stride": [1, 1], "pad": [3, 3], "groups": 96)"};
  auto line = [](const std::string& shape, double ms) { return probe_line(shape, "bf16", ms); };
  std::string draft;
  for (const auto& s : shapes) draft += line(s, 1.0);
  FitConstants at = constants;
  at.compute.conv_16bit_efficiency = 0.8;
  const auto model = check_convs(write_temp("conv_match_draft.jsonl", draft), dev, at, "nhwc", errors);
  REQUIRE(model.size() == 3);
  std::string probe;
  for (std::size_t i = 0; i < 3; ++i) probe += line(shapes[i], model[i].predicted_ms * (i == 2 ? 10.0 : 1.0));
  int rows = 0;
  const auto e = match_conv_efficiency(write_temp("conv_match.jsonl", probe), dev, constants, errors, &rows);
  REQUIRE(errors.empty());
  REQUIRE(e);
  CHECK(rows == 2);
  CHECK(*e == Approx(0.8).epsilon(1e-3));
  // A file with nothing to match says so.
  const auto none = match_conv_efficiency(write_temp("conv_match_none.jsonl", line(shapes[2], 1.0)), dev,
                                          constants, errors, &rows);
  CHECK_FALSE(none);
  REQUIRE_FALSE(errors.empty());
  CHECK(errors.back().find("no channels-last pointwise or spatial bf16 convolution") != std::string::npos);
}

TEST_CASE("calibrate fit --conv-probe-fp16 / -tf32 / -fp32: each dtype's efficiency from its own rows alone",
          "[conv_check]") {
  auto [dev, constants] = h200();
  constants.compute.conv_16bit_efficiency = 0.9;
  std::vector<std::string> errors;
  const std::string shape =
      R"("c_in": 256, "h": 56, "w": 56, "c_out": 128, "k": [1, 1], "stride": [1, 1], "pad": [0, 0], "groups": 1)";
  auto line = [&](const char* dtype, double ms) { return probe_line(shape, dtype, ms); };
  for (const Precision p : {Precision::fp16, Precision::tf32, Precision::fp32}) {
    CAPTURE(to_string(p));
    // The row's "measured" time is the model's own at efficiency 1.2 for its dtype; a bf16 row, measured at ten
    // times its model time, must not move it.
    FitConstants at = constants;
    conv_efficiency_of(at.compute, gemm_dtype(p)) = 1.2;
    const auto model = check_convs(write_temp("conv_dt_draft.jsonl", line(to_string(p), 1.0)), dev, at, "nhwc", errors);
    REQUIRE(model.size() == 1);
    CHECK(model[0].dtype == p);
    const std::string probe = line(to_string(p), model[0].predicted_ms) + line("bf16", 10 * model[0].predicted_ms);
    int rows = 0;
    const auto e = match_conv_efficiency(write_temp("conv_dt.jsonl", probe), dev, constants, errors, &rows, p);
    REQUIRE(errors.empty());
    REQUIRE(e);
    CHECK(rows == 1);
    CHECK(*e == Approx(1.2).epsilon(1e-3));
  }
  // TF32 and strict fp32 run the same FLOPs at the GEMM surface's tf32 and fp32 rates: at one efficiency the fp32
  // convolution is predicted slower (the fp32 surface is CUDA-core bound).
  FitConstants same = constants;
  same.compute.conv_tf32_efficiency = same.compute.conv_fp32_efficiency = 1.0;
  const auto tf = check_convs(write_temp("conv_tf.jsonl", line("tf32", 1.0)), dev, same, "nhwc", errors);
  const auto f32 = check_convs(write_temp("conv_f32.jsonl", line("fp32", 1.0)), dev, same, "nhwc", errors);
  REQUIRE(tf.size() == 1);
  REQUIRE(f32.size() == 1);
  CHECK(f32[0].predicted_ms > 2 * tf[0].predicted_ms);
  // A dtype the probe does not write is one clear line naming file, line and field.
  check_convs(write_temp("conv16_bad.jsonl", line("fp8", 1.0)), dev, constants, "nhwc", errors);
  REQUIRE_FALSE(errors.empty());
  CHECK(errors.back().find("conv16_bad.jsonl:1:/dtype: expected \"bf16\", \"fp16\", \"tf32\" or \"fp32\"") !=
        std::string::npos);
}

TEST_CASE("build_conv_layer_ops: a strided depthwise convolution in TF32 counts its input positions", "[conv_check]") {
  // EfficientNet-B0's 96-channel 3x3 stride-2 depthwise at 112x112, batch 128: 56x56 outputs.
  ConvLayer l;
  l.c_in = l.c_out = l.groups = 96; l.h = l.w = 112; l.kh = l.kw = 3; l.stride_h = l.stride_w = 2;
  l.pad_h = l.pad_w = 1;
  StepConfig step = bf16_step(128, true);
  step.precision = Precision::tf32;
  const StepOps ops = build_conv_layer_ops(step, l);
  const Op* f = find(ops, "dwconv");
  const Op* b = find(ops, "dwconv.bwd");
  REQUIRE(f);
  REQUIRE(b);
  CHECK(f->kind == OpKind::simt);
  CHECK(f->dtype == Dtype::tf32);
  CHECK(f->dw_kernel == 3);
  CHECK(f->flops.value() == Approx(2.0 * 128 * 56 * 56 * 96 * 9));          // the output's multiply-adds
  CHECK(f->dw_input_flops.value() == Approx(2.0 * 128 * 112 * 112 * 96 * 9));  // every input position
  CHECK(f->bytes.value() == Approx(4.0 * (128 * 96 * (112.0 * 112 + 56 * 56))));  // fp32 tensors in and out
  CHECK(b->count == 2);  // input and weight gradients
  CHECK(b->dw_input_flops.value() == Approx(f->dw_input_flops.value()));
}

TEST_CASE("calibrate fit --conv-probe-tf32 / --depthwise-probe: the fp32-tensor depthwise law is recovered",
          "[conv_check]") {
  auto [dev, constants] = h200();
  std::vector<std::string> errors;
  // Three k < 7 shapes (stride 1 and 2, FLOP- and byte-bound) and one 7x7, in tf32 in one file and in fp32 in
  // another, "measured" at the model's own times with e_f = 0.2, e_m = 0.5, e_7 = 0.03 (tf32) and 0.01 (fp32); a
  // bf16 depthwise row at ten times its time must not move them.
  const std::string shapes[] = {
      R"("c_in": 32, "h": 112, "w": 112, "c_out": 32, "k": [3, 3], "stride": [1, 1], "pad": [1, 1], "groups": 32)",
      R"("c_in": 144, "h": 56, "w": 56, "c_out": 144, "k": [5, 5], "stride": [2, 2], "pad": [2, 2], "groups": 144)",
      R"("c_in": 480, "h": 14, "w": 14, "c_out": 480, "k": [3, 3], "stride": [1, 1], "pad": [1, 1], "groups": 480)",
      R"("c_in": 96, "h": 56, "w": 56, "c_out": 96, "k": [7, 7], "stride": [1, 1], "pad": [3, 3], "groups": 96)"};
  const auto& line = probe_line;
  FitConstants at = constants;
  at.compute.dwconv_f32_flop_efficiency = 0.2;
  at.compute.dwconv_f32_memory_efficiency = 0.5;
  at.compute.dwconv_tf32_k7_flop_efficiency = 0.03;
  at.compute.dwconv_fp32_k7_flop_efficiency = 0.01;
  std::vector<std::string> files;
  for (const char* dtype : {"tf32", "fp32"}) {
    std::string draft;
    for (const auto& s : shapes) draft += line(s, dtype, 1.0);
    const auto model = check_convs(write_temp("dw_draft.jsonl", draft), dev, at, "nhwc", errors);
    REQUIRE(model.size() == 4);
    std::string probe;
    for (std::size_t i = 0; i < 4; ++i) probe += line(shapes[i], dtype, model[i].predicted_ms);
    probe += line(shapes[0], "bf16", 10 * model[0].predicted_ms);
    files.push_back(write_temp(std::string("dw_") + dtype + ".jsonl", probe));
  }
  const auto f = fit_f32_depthwise(files, dev, constants, errors);
  REQUIRE(errors.empty());
  REQUIRE(f);
  CHECK(f->rows == 6);
  CHECK(f->tf32_k7_rows == 1);
  CHECK(f->fp32_k7_rows == 1);
  CHECK(f->flop_efficiency == Approx(0.2).epsilon(0.01));
  CHECK(f->memory_efficiency == Approx(0.5).epsilon(0.01));
  CHECK(f->tf32_k7_flop_efficiency == Approx(0.03).epsilon(0.01));
  CHECK(f->fp32_k7_flop_efficiency == Approx(0.01).epsilon(0.01));
  CHECK(f->rms_log_error < 0.01);
  // A probe without fp32-tensor depthwise rows says so.
  CHECK_FALSE(fit_f32_depthwise({write_temp("dw_none.jsonl", line(shapes[0], "bf16", 1.0))}, dev, constants, errors));
  REQUIRE_FALSE(errors.empty());
  CHECK(errors.back().find("dw_none.jsonl: no channels-last tf32 or fp32 depthwise convolution with k < 7 to fit") !=
        std::string::npos);
}

TEST_CASE("calibrate fit --conv-probe: times no efficiency in [0.2, 3] explains are refused, not matched to a bound",
          "[conv_check]") {
  // The bisection ended on its bound and returned it: convolutions timed as if at efficiency 5 "matched" 3 (300% of
  // the GEMM surface), those at 0.1 matched 0.2, and the fit wrote it into the constants.
  auto [dev, constants] = h200();
  std::vector<std::string> errors;
  // A 3x3 convolution of 512 channels: compute-bound at every efficiency tried (its bytes never set its time).
  const std::string shape =
      R"("c_in": 512, "h": 28, "w": 28, "c_out": 512, "k": [3, 3], "stride": [1, 1], "pad": [1, 1], "groups": 1)";
  for (const double truth : {5.0, 0.1, 0.8}) {
    FitConstants at = constants;
    at.compute.conv_16bit_efficiency = truth;
    const auto timed = check_convs(write_temp("conv_bound_draft.jsonl", probe_line(shape, "bf16", 1.0)), dev, at,
                                   "nhwc", errors);
    REQUIRE(timed.size() == 1);
    const std::string file = write_temp("conv_bound.jsonl", probe_line(shape, "bf16", timed[0].predicted_ms));
    errors.clear();
    const auto e = match_conv_efficiency(file, dev, constants, errors);
    INFO(truth);
    if (truth == 0.8) {  // inside: recovered
      REQUIRE(e);
      CHECK(*e == Approx(0.8).epsilon(1e-3));
      continue;
    }
    CHECK_FALSE(e);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].rfind(file + ": no bf16 convolution efficiency in [0.2, 3] matches: at " +
                              (truth > 1 ? "3" : "0.2") + " the model's time is ",
                          0) == 0);
  }
}

TEST_CASE("calibrate convs: the table shows both strides when they differ", "[conv_check]") {
  // "kxk/s" printed the vertical stride alone: a (2, 1) stride read as 2.
  ConvCheckRow square, tall;
  square.model = tall.model = "m";
  square.batch = tall.batch = 8;
  square.measured_ms = square.predicted_ms = tall.measured_ms = tall.predicted_ms = 1.0;
  square.layer = ConvLayer{};
  square.layer.c_in = 64, square.layer.h = square.layer.w = 56, square.layer.c_out = 128;
  square.layer.kh = square.layer.kw = 3, square.layer.stride_h = square.layer.stride_w = 2;
  tall.layer = square.layer;
  tall.layer.stride_w = 1;
  const std::string t = render_conv_table({square, tall}, summarize_convs({square, tall}));
  INFO(t);
  CHECK(t.find("64 56x56->128 3x3/2 g1 ") != std::string::npos);
  CHECK(t.find("64 56x56->128 3x3/2x1 g1 ") != std::string::npos);
}

TEST_CASE("calibrate convs: a shape whose tensor no GPU holds is one line, not a time of 1e18 ms", "[conv_check]") {
  const auto [dev, constants] = h200();
  std::vector<std::string> errors;
  // 4,096 x 65,536 channels x 2,048 x 2,048 = 1.13e15 elements (each range alone is accepted).
  const std::string huge =
      R"({"model": "m", "batch": 4096, "c_in": 65536, "h": 2048, "w": 2048, "c_out": 64, "k": [3, 3], )"
      R"("stride": [1, 1], "pad": [1, 1], "groups": 1, "bias": false, "first": false, "nhwc": {"conv": [1.0, 5.0]}})";
  const std::string path = write_temp("conv_check_huge.jsonl", huge + "\n");
  const auto rows = check_convs(path, dev, constants, "nhwc", errors);
  CHECK(rows.empty());
  REQUIRE(errors.size() == 1);
  CHECK(errors[0] == path + ":1:/batch: with c_in, c_out, h and w gives a tensor of 1.13e+15 elements, beyond any "
                            "GPU's memory (expected at most 2^40, a probed convolution)");
}
