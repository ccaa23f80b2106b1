// `gpuplan calibrate check` and `gpuplan calibrate fit`: compare the calibrated compute and memory model
// with measured runs, and fit its global constants. The work is done by calibrate/ (check.hpp, fit.hpp).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <iostream>
#include <tuple>
#include <utility>
#include <vector>

#include "app/cli.hpp"
#include "app/catalog_io.hpp"
#include "app/cmd_calibrate_comm.hpp"  // issue 5: `calibrate comm`
#include "app/output_file.hpp"
#include "app/profile_cache.hpp"
#include "app/progress.hpp"
#include "calibrate/check.hpp"
#include "calibrate/conv_check.hpp"
#include "calibrate/ddp_check.hpp"
#include "calibrate/fit.hpp"
#include "calibrate/json_text.hpp"
#include "calibrate/loader_check.hpp"
#include "calibrate/profile_io.hpp"
#include "calibrate/reference_runs.hpp"
#include "models/profile_derive.hpp"

namespace gp::app {
namespace {

struct CalibrateOptions {
  std::string profile;
  std::string runs;
  std::string constants;  // default: fit-<profile stem>.json beside the profile
  double tolerance = 10.0;
  std::string format = "table";
  std::string plot;
  std::string junit;
  double record_tolerance = 25.0;
  std::string ops;  // check: print the operator breakdown of this record id
  std::string sim_constants;  // check: sim-constants.json for the loader simulation (default: beside the profile)
  std::string gpu;            // check: catalog GPU the runs were measured on, its profile derived from --profile
  double check_host_cpu_scale = 0;  // check: a host factor measured on the runs' host (0: none)
  std::string out;
  bool loo = false;
  bool gemm_loo = false;
  bool loso = false;                  // fit: leave-one-session-out over the runs files
  bool quiet = false;                 // fit: no progress bar
  std::vector<std::string> fit_runs;  // fit: one or more runs files (sessions), fitted together
  std::string kernel_classes;         // fit: kernel-class constants held fixed (tools/fit_kernel_classes.py)
  std::string nchw_classes;           // fit: NCHW kernel-class constants carried along (tools/fit_nchw_classes.py)
  std::string probe_classes;          // fit: probe-class constants held fixed (tools/fit_probe_classes.py)
  std::string conv_probe;             // fit: single convolutions (tools/probe_conv_layout.py) for the bf16 conv efficiency
  std::string conv_probe_fp16;        // fit: the same probe in fp16 (--fp16) for the fp16 conv efficiency
  std::string conv_probe_tf32;        // fit: ... in TF32 (--tf32) for the TF32 conv efficiency
  std::string conv_probe_fp32;        // fit: ... in strict fp32 (--fp32) for the fp32 conv efficiency
  std::vector<std::string> depthwise_probes;  // fit: more depthwise rows (--depthwise-only) for the fp32-tensor law
  std::vector<std::string> ckpt_cpu;  // fit: paired checkpointed / plain steps (tools/measure_ckpt_cpu.py)
  std::vector<std::string> oom_runs;  // fit: runs near the memory limit, for the out-of-memory rule
  bool host_cpu_scale = false;        // fit: one CPU speed factor per runs file after the first
  std::string probe;                  // convs: tools/probe_conv_layout.py output
  std::string layout = "nhwc";        // convs: nhwc, nchw or both
};

bool report(const std::vector<std::string>& errors) {
  for (const auto& e : errors) std::cerr << e << "\n";
  return errors.empty();
}

// One line and false when an output path cannot be written or would overwrite an input; checked before the work.
bool outputs_ok(const std::vector<std::pair<std::string, std::string>>& outputs, const std::vector<std::string>& inputs) {
  const auto problem = first_output_problem(outputs, inputs);
  if (problem) std::cerr << *problem << "\n";
  return !problem;
}

int run_check_command(const CalibrateOptions& o, const CliContext& ctx) {
  std::vector<std::string> inputs = catalog_input_files(ctx);  // --gpu reads the catalogs
  for (const auto* f : {&o.profile, &o.runs, &o.constants, &o.sim_constants}) inputs.push_back(*f);
  // ... and the files read by default: the profile folder's constants and sim constants, the project's.
  for (const auto& dir : {std::filesystem::path(o.profile).parent_path().string(), default_profiles_dir()})
    for (auto& f : json_files_in(dir)) inputs.push_back(std::move(f));
  for (const auto& problem : {extension_problem("--plot", o.plot, "svg", "the plot", "an SVG image"),
                               extension_problem("--junit", o.junit, "xml", "the JUnit report", "XML")}) {
    if (problem) {
      std::cerr << *problem << "\n";
      return kExitBadInput;
    }
  }
  if (!outputs_ok({{o.plot, "the plot"}, {o.junit, "the JUnit report"}}, inputs))
    return kExitBadInput;
  std::vector<std::string> errors;
  auto profile = calibrate::load_profile(o.profile, errors);
  auto constants = calibrate::load_constants_for(o.profile, profile.has_value(), o.constants, errors);
  auto runs = calibrate::load_runs(o.runs, errors);
  if (!report(errors) || !profile || !constants) return kExitBadInput;
  // A file with nothing to check (empty, or only micro / checkpoint records) is the wrong file, as for `calibrate
  // fit`: it printed an empty table, "FAIL" and exit 1, and --junit wrote a failing case, as if the model had drifted.
  if (!calibrate::has_train_record(runs)) {
    std::cerr << o.runs << ": no train record to check (expected lines with \"kind\": \"train\", as "
              << "calibrate/measured/h200-2026-12.jsonl)\n";
    return kExitBadInput;
  }
  if (!o.gpu.empty() && o.gpu != profile->gpu_id) {
    // Runs measured on another GPU: its profile derived from this one by datasheet ratios, as `run` does.
    const auto cat = load_catalogs_or_report(ctx);
    if (!cat) return kExitBadInput;
    const GpuSpec* target = Catalog::find(cat->gpus, o.gpu);
    const GpuSpec* base = Catalog::find(cat->gpus, profile->gpu_id);
    if (!target || !base) {
      std::cerr << "--gpu " << o.gpu << ": " << (target ? "the profile's GPU \"" + profile->gpu_id + "\"" : "this GPU")
                << " is not in catalogs/gpus.json (expected a catalog GPU id such as h100-sxm)\n";
      return kExitBadInput;
    }
    profile = derive_profile(*profile, *base, *target);
    std::cerr << "GPU profile of " << o.gpu << ": derived by datasheet ratios from " << o.profile << "\n";
  }
  // Runs of another GPU checked against this one's profile passed or failed on a comparison of two GPUs. --gpu
  // states the runs' GPU and wins: it also predicts one GPU's configurations on another (tests/app/cli_test.cpp).
  if (o.gpu.empty() && !report(calibrate::device_mismatches(runs, *profile, o.runs))) return kExitBadInput;
  if (!o.ops.empty()) {
    for (const auto& rec : runs) {
      if (rec.id != o.ops) continue;
      const std::string t = calibrate::render_ops(rec, make_device_model(*profile), *constants);
      if (t.empty()) {
        std::cerr << o.runs << ": record \"" << o.ops << "\" cannot be expressed: "
                  << (rec.reason.empty() ? "it is not a one-GPU train step (kind \"" + rec.kind + "\")"
                                         : rec.reason)
                  << "\n";
        return kExitBadInput;
      }
      std::cout << t;
      return kExitOk;
    }
    std::cerr << o.runs << ": no train record with id \"" << o.ops << "\"\n";
    return kExitBadInput;
  }
  // The loader simulation's constants: --sim-constants, else sim-constants.json beside the profile, else the
  // project's (calibrate/profiles).
  std::string spath = o.sim_constants;
  if (spath.empty()) {
    spath = (std::filesystem::path(o.profile).parent_path() / "sim-constants.json").string();
    if (!std::filesystem::exists(spath)) spath = default_profiles_dir() + "/sim-constants.json";
  }
  if (!o.sim_constants.empty() && !std::filesystem::is_regular_file(spath)) {
    std::cerr << spath << ": cannot read (expected a sim-constants JSON file, as calibrate/profiles/sim-constants.json)\n";
    return kExitBadInput;
  }
  std::vector<std::string> sim_notes;
  const sim::SimConstants k = read_sim_constants(spath, sim_notes);
  // Given, or found beside the profile and broken: bad input (a broken default was ignored without a word).
  if ((!o.sim_constants.empty() || std::filesystem::exists(spath)) && !report(sim_notes)) return kExitBadInput;
  const StepSpread spread = sim::step_spread_for(k, profile->derived, o.check_host_cpu_scale > 0);  // as `run`
  const auto rep = calibrate::run_check(runs, *profile, *constants, o.tolerance,
                                        calibrate::loader_pipeline(*profile, k.cpu_all_core_slowdown), spread,
                                        o.check_host_cpu_scale);
  if (o.format == "json")
    std::cout << calibrate::dump_json(calibrate::render_json(rep), 2) << "\n";
  else
    std::cout << calibrate::render_table(rep);
  if (!o.plot.empty()) {
    if (const auto problem = write_output_file(o.plot, calibrate::render_svg(rep), "the plot")) {
      std::cerr << *problem << "\n";
      return kExitBadInput;
    }
  }
  // Train records, but none that the gate averages (a file of CPU data-pipeline runs): their comparison is printed,
  // and the verdict is "nothing checked", not FAIL and exit 1 as if the model had drifted.
  if (rep.summary.gpu_bound == 0) {
    std::cerr << o.runs << ": no GPU-bound train record (\"data\": \"synthetic-on-gpu\") for --tolerance to check; "
              << "the " << rep.summary.train_records << " train records above are reported, not checked\n";
    return kExitBadInput;
  }
  if (!o.junit.empty()) {
    if (const auto problem = write_output_file(o.junit, calibrate::render_junit(rep, o.record_tolerance), "the JUnit report")) {
      std::cerr << *problem << "\n";
      return kExitBadInput;
    }
  }
  return rep.summary.pass ? kExitOk : kExitCheckFailed;
}

int run_convs_command(const CalibrateOptions& o) {
  std::vector<std::string> errors;
  auto profile = calibrate::load_profile(o.profile, errors);
  auto constants = calibrate::load_constants_for(o.profile, profile.has_value(), o.constants, errors);
  if (!report(errors) || !profile || !constants) return kExitBadInput;
  const auto rows = calibrate::check_convs(o.probe, make_device_model(*profile), *constants, o.layout, errors);
  if (!report(errors)) return kExitBadInput;
  // An empty file (or none in this layout) printed "0 convolutions: RMS 0.000", exit 0, as if the model matched.
  if (rows.empty()) {
    std::cerr << o.probe << ": no convolution with a measured conv time in layout " << o.layout
              << " (expected lines as tools/probe_conv_layout.py writes, with \"" << (o.layout == "nchw" ? "nchw" : "nhwc")
              << "\": {\"conv\": [ms, kernels]})\n";
    return kExitBadInput;
  }
  const auto summary = calibrate::summarize_convs(rows);
  if (o.format == "json")
    std::cout << calibrate::dump_json(calibrate::render_conv_json(rows, summary), 2) << "\n";
  else
    std::cout << calibrate::render_conv_table(rows, summary);
  return kExitOk;
}

int run_fit_command(const CalibrateOptions& o) {
  // Every file the fit reads (a --ckpt-cpu or --conv-probe file given again as --out was overwritten).
  std::vector<std::string> inputs = o.fit_runs;
  for (const auto& p : {o.profile, o.kernel_classes, o.nchw_classes, o.probe_classes, o.conv_probe, o.conv_probe_fp16,
                        o.conv_probe_tf32, o.conv_probe_fp32})
    inputs.push_back(p);
  for (const auto* list : {&o.depthwise_probes, &o.ckpt_cpu, &o.oom_runs}) inputs.insert(inputs.end(), list->begin(), list->end());
  if (!outputs_ok({{o.out, "the constants"}}, inputs)) return kExitBadInput;
  // A file given twice was fitted twice (its records weighed double, and --loso left it out against itself).
  {
    std::map<std::string, std::string> seen;  // canonical path -> as given
    for (const auto* list : {&o.fit_runs, &o.oom_runs})
      for (const auto& f : *list) {
        std::error_code ec;
        const auto key = std::filesystem::weakly_canonical(f, ec).string();
        const auto [at, fresh] = seen.emplace(ec ? f : key, f);
        if (!fresh) {
          std::cerr << "gpuplan: " << f << ": given twice (as " << at->second
                    << "): each runs file is one session, fitted once\n";
          return kExitBadInput;
        }
      }
  }
  // With one --runs file there is no session to leave out: the flag was ignored without a word, exit 0.
  if (o.loso && o.fit_runs.size() < 2) {
    std::cerr << "gpuplan: --loso: expected two or more --runs files (sessions), got " << o.fit_runs.size() << "\n";
    return kExitBadInput;
  }
  std::vector<std::string> errors;
  auto profile = calibrate::load_profile(o.profile, errors);
  std::vector<std::vector<calibrate::RunRecord>> sessions;
  std::vector<calibrate::RunRecord> runs;
  std::vector<int> session_of_run;
  for (const auto& f : o.fit_runs) {
    sessions.push_back(calibrate::load_runs(f, errors));
    if (const auto problem = calibrate::multi_gpu_problem(sessions.back(), f)) errors.push_back(*problem);
    runs.insert(runs.end(), sessions.back().begin(), sessions.back().end());
    session_of_run.insert(session_of_run.end(), sessions.back().size(),
                          o.host_cpu_scale ? static_cast<int>(sessions.size()) - 1 : 0);
  }
  if (!report(errors) || !profile) return kExitBadInput;
  const std::string runs_names = calibrate::join_paths(o.fit_runs, " + ");
  // Constants "fitted" on nothing would be the starting values, written as if they were a fit.
  const auto usable = std::count_if(runs.begin(), runs.end(), [](const calibrate::RunRecord& r) {
    return r.kind == "train" && r.expressible && r.measured.step_ms.has_value();
  });
  if (usable == 0) {
    std::cerr << runs_names << ": no train record with a measured step_ms to fit on\n";
    return kExitBadInput;
  }
  const DeviceModel dev = make_device_model(*profile);
  nlohmann::json gemm_stats;
  if (o.gemm_loo) {
    std::map<Dtype, double> par;
    const GemmSurface s = fit_gemm_surface_with_loo(profile->gemm, profile->sm_count, &par, true);
    for (const auto& [d, f] : s.fits)
      gemm_stats[to_string(d)] = {{"points", f.points},         {"rate_tflops", f.rate.tflops()},
                                  {"k0", f.k0},                 {"t0_us", f.t0.us()},
                                  {"rms_log_error", f.rms_log_error}, {"loo_rms_log_parametric", par[d]},
                                  {"loo_rms_log_corrected", f.loo_rms_log_error}};
  }
  ComputeConstants start;
  if (!o.kernel_classes.empty()) {
    std::vector<std::string> kerr;
    auto kc = calibrate::load_kernel_classes(o.kernel_classes, kerr);
    if (!report(kerr) || !kc) return kExitBadInput;
    start = *kc;
  }
  if (!o.nchw_classes.empty()) {
    std::vector<std::string> nerr;
    auto nc = calibrate::load_nchw_classes(o.nchw_classes, nerr);
    if (!report(nerr) || !nc) return kExitBadInput;
    calibrate::copy_nchw_classes(*nc, start);
  }
  if (!o.probe_classes.empty()) {
    std::vector<std::string> perr;
    auto pc = calibrate::load_probe_classes(o.probe_classes, perr);
    if (!report(perr) || !pc) return kExitBadInput;
    calibrate::copy_probe_classes(*pc, start);
  }
  // With a convolution probe: fit, match the bf16 convolution efficiency to the probe with the fitted constants,
  // and again, until the efficiency settles (it moves the fitted constants little, and they move it little).
  nlohmann::json conv_stats;
  if (!o.conv_probe.empty()) {
    int rows = 0, rounds = 0;
    bool settled = false;
    double e = 1.0;
    start.conv_16bit_efficiency = e;
    while (!settled && rounds < 20) {
      ++rounds;
      calibrate::FitConstants probe_fc;
      probe_fc.compute = calibrate::fit_compute_constants(runs, dev, start, false, session_of_run).constants;
      std::vector<std::string> cerr;
      const auto m = calibrate::match_conv_efficiency(o.conv_probe, dev, probe_fc, cerr, &rows);
      if (!report(cerr) || !m) return kExitBadInput;
      settled = std::abs(*m - e) < 1e-4;
      e = *m;
      start.conv_16bit_efficiency = e;
    }
    conv_stats = {{"probe", o.conv_probe}, {"convolutions", rows}, {"conv_16bit_efficiency", e}, {"rounds", rounds},
                  {"settled", settled}};
    std::cerr << "bf16 convolution efficiency matched to " << rows << " probed convolutions: " << e << " (" << rounds
              << " rounds" << (settled ? "" : ", not settled") << ")\n";
  }
  const auto res = calibrate::fit_compute_constants(runs, dev, start, o.loo, session_of_run,
                                                    progress_bar(!o.quiet, "leave-one-out refits"));
  calibrate::FitConstants fc;
  fc.compute = res.constants;
  // fp16, TF32 and fp32 convolutions: matched once each, to their probe, with the fitted constants. The fit itself
  // times TF32 / fp32 convolutions with its own conv_efficiency (alternating these with the fit as bf16's does
  // moved the GEMM / attention split of the transformer records: reference MAPE 4.8% -> 5.9%, so they stay out).
  const struct {
    const std::string& path;
    Precision dtype;
    const char* key;
  } after[] = {{o.conv_probe_fp16, Precision::fp16, "conv_fp16_efficiency"},
               {o.conv_probe_tf32, Precision::tf32, "conv_tf32_efficiency"},
               {o.conv_probe_fp32, Precision::fp32, "conv_fp32_efficiency"}};
  for (const auto& a : after) {
    if (a.path.empty()) continue;
    int rows = 0;
    std::vector<std::string> cerr;
    const auto m = calibrate::match_conv_efficiency(a.path, dev, fc, cerr, &rows, a.dtype);
    if (!report(cerr) || !m) return kExitBadInput;
    conv_efficiency_of(fc.compute, gemm_dtype(a.dtype)) = *m;
    conv_stats[to_string(a.dtype)] = {{"probe", a.path}, {"convolutions", rows}, {a.key, *m}};
    std::cerr << to_string(a.dtype) << " convolution efficiency matched to " << rows << " probed convolutions: " << *m
              << "\n";
  }
  // The depthwise convolutions in fp32 tensors (the TF32 probe's, and those of --depthwise-probe files) fit their
  // own law: CUDA-core kernels for k < 7, per-dtype weight-gradient kernels for k >= 7.
  if (!o.conv_probe_tf32.empty() || !o.depthwise_probes.empty()) {
    std::vector<std::string> files = o.depthwise_probes;
    if (!o.conv_probe_tf32.empty()) files.insert(files.begin(), o.conv_probe_tf32);
    std::vector<std::string> cerr;
    const auto d = calibrate::fit_f32_depthwise(files, dev, fc, cerr);
    if (!report(cerr) || !d) return kExitBadInput;
    fc.compute.dwconv_f32_flop_efficiency = d->flop_efficiency;
    fc.compute.dwconv_f32_memory_efficiency = d->memory_efficiency;
    fc.compute.dwconv_tf32_k7_flop_efficiency = d->tf32_k7_flop_efficiency;
    fc.compute.dwconv_fp32_k7_flop_efficiency = d->fp32_k7_flop_efficiency;
    conv_stats["depthwise_f32"] = {{"probes", files},
                                   {"convolutions", d->rows},
                                   {"flop_efficiency", d->flop_efficiency},
                                   {"memory_efficiency", d->memory_efficiency},
                                   {"rms_log_error", d->rms_log_error},
                                   {"tf32_k7_convolutions", d->tf32_k7_rows},
                                   {"tf32_k7_flop_efficiency", d->tf32_k7_flop_efficiency},
                                   {"tf32_k7_rms_log_error", d->tf32_k7_rms_log_error},
                                   {"fp32_k7_convolutions", d->fp32_k7_rows},
                                   {"fp32_k7_flop_efficiency", d->fp32_k7_flop_efficiency},
                                   {"fp32_k7_rms_log_error", d->fp32_k7_rms_log_error}};
    std::cerr << "fp32-tensor depthwise law fitted to " << d->rows << " probed convolutions with k < 7: flop "
              << d->flop_efficiency << ", memory " << d->memory_efficiency << ", RMS ln error " << d->rms_log_error
              << "; k >= 7: tf32 " << d->tf32_k7_flop_efficiency << " over " << d->tf32_k7_rows << " (RMS "
              << d->tf32_k7_rms_log_error << "), fp32 " << d->fp32_k7_flop_efficiency << " over " << d->fp32_k7_rows
              << " (RMS " << d->fp32_k7_rms_log_error << ")\n";
  }
  // Activation checkpointing's CPU cost per recomputed call, fitted to paired measurements with everything else held.
  nlohmann::json ckpt_stats;
  if (!o.ckpt_cpu.empty()) {
    std::vector<std::string> cerr;
    const auto r = calibrate::fit_recompute_cpu(o.ckpt_cpu, dev, fc.compute, cerr);
    if (!report(cerr) || !r) return kExitBadInput;
    fc.compute.cpu_per_recompute_eager = Seconds(r->seconds);
    ckpt_stats = {{"runs", calibrate::join_paths(o.ckpt_cpu, " + ")},
                  {"records", r->records},
                  {"cpu_per_recompute_eager_us", r->seconds * 1e6},
                  {"rms_log_error_before", r->rms_log_before},
                  {"rms_log_error_after", r->rms_log_after}};
    std::cerr << "activation checkpointing: " << r->seconds * 1e6 << " us of CPU per recomputed call, fitted to "
              << r->records << " checkpointed steps (RMS ln error " << r->rms_log_before << " -> " << r->rms_log_after
              << ")\n";
  }
  // The out-of-memory rule (MemoryConstants::largest_block_share, reserve), fitted to the measured verdicts of the
  // fit's runs and of --oom-runs; only when asked: far from the limit, verdicts leave the rule unconstrained.
  if (!o.oom_runs.empty()) {
    std::vector<std::string> oerr;
    std::vector<calibrate::RunRecord> verdicts = runs;
    for (const auto& f : o.oom_runs) {
      auto r = calibrate::load_runs(f, oerr);
      if (const auto problem = calibrate::multi_gpu_problem(r, f)) oerr.push_back(*problem);
      // An empty file (or one without train records) added nothing, and the rule was fitted as if it had.
      if (!calibrate::has_train_record(r) && oerr.empty())
        oerr.push_back(f + ": no train record for the out-of-memory rule (expected train records near the memory "
                           "limit, some with \"oom\": true)");
      verdicts.insert(verdicts.end(), r.begin(), r.end());
    }
    if (!report(oerr)) return kExitBadInput;
    const auto of = calibrate::fit_oom_rule(calibrate::oom_rows(verdicts, *profile, fc));
    if (!of) {
      std::cerr << "gpuplan: " << calibrate::join_paths(o.oom_runs)
                << ": no out-of-memory rule fitted (expected train records that ran and others with \"oom\": true)\n";
      return kExitBadInput;
    }
    fc.memory.largest_block_share = of->largest_block_share;
    fc.memory.reserve = Bytes(of->reserve);
    fc.memory_fit = {{"runs", runs_names + " + " + calibrate::join_paths(o.oom_runs, " + ")},
                     {"records", of->records},
                     {"oom_records", of->oom_records},
                     {"margin_gib", Bytes(of->margin).gib()},
                     {"misclassified", of->misclassified},
                     {"method", "peak + share x largest tensor + reserve <= capacity: over shares 0..2 in steps of "
                                "0.01 the cut with the fewest wrong verdicts, then the widest gap, the reserve in its "
                                "middle (calibrate/fit.hpp fit_oom_rule)"}};
    std::cerr << "out-of-memory rule: share of the largest tensor " << of->largest_block_share << ", reserve "
              << Bytes(of->reserve).gib() << " GiB, from " << of->records << " verdicts (" << of->oom_records
              << " out of memory); margin " << Bytes(of->margin).gib() << " GiB, "
              << of->misclassified << " misclassified\n";
  }
  fc.compute.source =
      "gpuplan calibrate fit: Levenberg-Marquardt least squares of ln(predicted/measured) step time over the "
      "GPU-bound train records of " + runs_names + " with profile " + o.profile + " (docs/calibration.md#method)";
  fc.compute.as_of = profile->measured_on;
  // The probed classes' absolute rates are this GPU's: another GPU scales them by its own (compute_model's
  // rate_scales).
  fc.compute.reference_copy_bw = dev.copy_bw.value();
  if (dev.surface.has(Dtype::bf16)) fc.compute.reference_bf16_rate = dev.surface.fits.at(Dtype::bf16).rate.value();
  if (dev.surface.has(Dtype::fp32)) fc.compute.reference_fp32_rate = dev.surface.fits.at(Dtype::fp32).rate.value();
  fc.profile = o.profile;
  fc.runs = runs_names;
  fc.stats = {{"records", res.records.size()}, {"mape_pct", res.mape_pct}, {"iterations", res.iterations}};
  // The statistics above are the least-squares fit's; the fp16 / TF32 / fp32 matching after it changes some
  // predictions, so the fitted runs' MAPE with the final constants too (what `calibrate check` prints).
  if (!conv_stats.is_null()) {
    const auto final_check = calibrate::run_check(runs, *profile, fc, 10);
    fc.stats["final_mape_pct"] = final_check.summary.mape_pct;
    fc.stats["final_mape_records"] = final_check.summary.mape_records;
  }
  if (!gemm_stats.is_null()) fc.stats["gemm_surface"] = gemm_stats;
  if (!conv_stats.is_null()) fc.stats["conv_probes"] = conv_stats;
  if (!ckpt_stats.is_null()) fc.stats["ckpt_cpu"] = ckpt_stats;
  if (o.host_cpu_scale) {
    nlohmann::json scales = nlohmann::json::array();
    for (std::size_t s = 0; s < o.fit_runs.size(); ++s)
      scales.push_back({{"runs", o.fit_runs[s]},
                        {"cpu_scale", s < res.session_cpu_scale.size() ? res.session_cpu_scale[s] : 1.0}});
    fc.stats["session_cpu_scale"] = scales;
    fc.compute.source += "; CPU costs are the first runs file's host's, each other file's host fitted with its own "
                         "CPU speed factor (fit.session_cpu_scale)";
  }
  if (o.loo) {
    fc.stats["loo_mape_pct"] = res.loo_mape_pct;
    fc.stats["loo_max_abs_err_pct"] = res.loo_max_pct;
  }
  if (o.loso && sessions.size() >= 2) {
    nlohmann::json loso = nlohmann::json::array();
    for (const auto& e : calibrate::leave_one_session_out(sessions, o.fit_runs, dev, start)) {
      loso.push_back({{"held_out", e.name}, {"records", e.records}, {"mape_pct", e.mape_pct},
                      {"max_abs_err_pct", e.max_pct}});
      std::cerr << "leave-one-session-out: " << e.name << "  records " << e.records << "  MAPE " << e.mape_pct
                << "%  largest " << e.max_pct << "%\n";
    }
    fc.stats["leave_one_session_out"] = loso;
  }
  for (const auto& r : res.records)
    std::cerr << r.id << "  measured " << r.measured_ms << "  fitted " << r.fitted_ms
              << (o.loo ? "  loo " + std::to_string(r.loo_ms) : "") << "\n";
  const auto j = calibrate::dump_json(calibrate::constants_to_json(fc), 2);
  if (o.out.empty()) {
    std::cout << j << "\n";
  } else {
    if (const auto problem = write_output_file(o.out, j + "\n", "the constants")) {
      std::cout << j << "\n";  // nothing lost: the fit goes to standard output instead
      std::cerr << *problem << " (printed on standard output instead)\n";
      return kExitBadInput;
    }
  }
  return kExitOk;
}

}  // namespace

void add_calibrate_command(CLI::App& root, CliContext& ctx) {
  auto* cal = root.add_subcommand("calibrate", "Check the calibrated model against measured runs; fit its constants");
  cal->require_subcommand(1);
  auto opts = std::make_shared<CalibrateOptions>();

  auto* check = cal->add_subcommand("check", "Predict every train record of a runs file and compare");
  check->add_option("--profile", opts->profile, "GPU profile JSON (gpuplan-profile/1)")->check(non_empty())->required();
  check->add_option("--runs", opts->runs, "measured runs, JSON lines")->check(non_empty())->required();
  check->add_option("--constants", opts->constants, "fitted constants (default: fit-<profile>.json beside it)")->check(non_empty());
  check->add_option("--tolerance", opts->tolerance, "step-time MAPE tolerance in percent (default 10)")
      ->check(finite_range(0.001, 1e6));
  check->add_option("--format", opts->format, "table or json")->check(CLI::IsMember({"table", "json"}));
  check->add_option("--plot", opts->plot, "write an SVG scatter of predicted vs measured step time")->check(non_empty());
  check->add_option("--junit", opts->junit,
                    "write a JUnit XML report for CI test reporters: the MAPE gate, each OOM disagreement, each step")->check(non_empty())
      ->type_name("FILE");
  check->add_option("--record-tolerance", opts->record_tolerance,
                    "in the JUnit report, a record's step fails beyond this error in percent (default 25)")
      ->check(finite_range(0.0, 1e6));
  check->add_option("--ops", opts->ops, "print the operator breakdown of the record with this id, and nothing else")->check(non_empty());
  check->add_option("--sim-constants", opts->sim_constants,
                    "simulation constants for the data-loader records (default: sim-constants.json beside the profile)")->check(non_empty());
  check->add_option("--gpu", opts->gpu,
                    "catalog GPU the runs were measured on (e.g. h100-sxm): its profile is derived from --profile "
                    "by datasheet ratios, as `run` derives it");
  check->add_option("--host-cpu-scale", opts->check_host_cpu_scale,
                    "a CPU factor measured on the runs' host (as the scenario's cluster.host_cpu_scale): scales the "
                    "CPU's issue time; the summary suggests one from the runs' host-bound steps")
      ->check(finite_range(0.05, 20.0));
  check->callback([opts, &ctx] { ctx.exit_code = run_check_command(*opts, ctx); });

  auto* fit = cal->add_subcommand("fit", "Fit the compute model's global constants over measured runs");
  fit->add_option("--profile", opts->profile, "GPU profile JSON")->check(non_empty())->required();
  fit->add_option("--runs", opts->fit_runs, "measured runs, JSON lines; repeat for several sessions (fitted together)")->check(non_empty())
      ->required();
  fit->add_option("--out", opts->out, "write the constants here (default: stdout)")->check(non_empty());
  fit->add_flag("--host-cpu-scale", opts->host_cpu_scale,
                "fit one CPU speed factor per --runs file after the first (its host); the constants are the first's");
  fit->add_option("--kernel-classes", opts->kernel_classes,
                  "kernel-class constants to hold fixed (tools/fit_kernel_classes.py output)")->check(non_empty());
  fit->add_option("--nchw-classes", opts->nchw_classes,
                  "NCHW kernel-class constants to carry along (tools/fit_nchw_classes.py output)")->check(non_empty());
  fit->add_option("--probe-classes", opts->probe_classes,
                  "pooling, first-convolution, per-channel-sum, grouped-convolution and roll constants to hold fixed "
                  "(tools/fit_probe_classes.py output)")->check(non_empty());
  fit->add_option("--conv-probe", opts->conv_probe,
                  "single convolutions timed alone (tools/probe_conv_layout.py output): the bf16 / fp16 convolution "
                  "efficiency is matched to them, alternating with the fit until it settles, and held fixed")->check(non_empty());
  // The same probe in another dtype (tools/probe_conv_layout.py --DTYPE --nhwc-only): that dtype's convolution
  // efficiency is matched to it once, after the fit.
  for (auto [dtype, path, extra] : {std::tuple{"fp16", &opts->conv_probe_fp16, ""},
                                    std::tuple{"tf32", &opts->conv_probe_tf32, ", and the fp32-tensor depthwise law fitted to it"},
                                    std::tuple{"fp32", &opts->conv_probe_fp32, " (strict fp32)"}})
    fit->add_option(std::string("--conv-probe-") + dtype, *path,
                    std::string("the same probe run in ") + dtype + " (tools/probe_conv_layout.py --" + dtype +
                        " --nhwc-only): the " + dtype + " convolution efficiency is matched to it once, after the fit" +
                        extra)
        ->check(non_empty());  // "" was taken as not given: the fit ran without the probe, exit 0
  fit->add_option("--depthwise-probe", opts->depthwise_probes,
                  "depthwise convolutions timed alone in tf32 / fp32 (tools/probe_conv_layout.py --depthwise-only), "
                  "fitted with the TF32 probe's into the fp32-tensor depthwise law (repeatable)")->check(non_empty());
  fit->add_option("--ckpt-cpu", opts->ckpt_cpu,
                  "GPT steps timed with and without activation checkpointing on one host (tools/measure_ckpt_cpu.py "
                  "output; repeatable, any runs file with checkpointed steps): the CPU cost per recomputed call is "
                  "fitted to the checkpointed ones, after the fit")->check(non_empty());
  fit->add_option("--oom-runs", opts->oom_runs,
                  "runs near the GPU's memory limit, some out of memory (repeatable): the out-of-memory rule's share "
                  "of the largest tensor and reserve are fitted to their verdicts and the --runs verdicts")->check(non_empty());
  fit->add_flag("--loo", opts->loo, "also report the leave-one-out error (one refit per record)");
  fit->add_flag("--loso", opts->loso, "also report leave-one-session-out errors (needs two or more --runs)");
  fit->add_flag("--gemm-loo", opts->gemm_loo, "also report the GEMM surface's leave-one-out error (slow)");
  fit->add_flag("-q,--quiet", opts->quiet, "No progress bar");
  fit->callback([opts, &ctx] { ctx.exit_code = run_fit_command(*opts); });

  auto* convs = cal->add_subcommand(
      "convs", "Time single convolutions with the model and compare with tools/probe_conv_layout.py's measurements");
  convs->add_option("--profile", opts->profile, "GPU profile JSON")->check(non_empty())->required();
  convs->add_option("--constants", opts->constants, "fitted constants (default: fit-<profile>.json beside it)")->check(non_empty());
  convs->add_option("--probe", opts->probe, "probe results, JSON lines (calibrate/probes/results/conv-layout-*.jsonl)")->check(non_empty())
      ->required();
  convs->add_option("--layout", opts->layout, "nhwc (channels-last), nchw or both (default nhwc)")
      ->check(CLI::IsMember({"nhwc", "nchw", "both"}));
  convs->add_option("--format", opts->format, "table or json")->check(CLI::IsMember({"table", "json"}));
  convs->callback([opts, &ctx] { ctx.exit_code = run_convs_command(*opts); });

  add_calibrate_comm_command(cal, ctx);  // issue 5: app/cmd_calibrate_comm.cpp
}

}  // namespace gp::app
