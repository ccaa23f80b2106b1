// `gpuplan run FILE`: predicts every configuration of a scenario, prints the results and records the run.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>

#include "app/catalog_io.hpp"
#include "app/cli.hpp"
#include "app/evaluate.hpp"
#include "app/output_file.hpp"
#include "app/profile_cache.hpp"
#include "app/progress.hpp"
#include "app/store.hpp"
#include "calibrate/json_text.hpp"

namespace gp::app {

namespace {

struct RunOptions {
  std::string file;
  std::string format;  // empty: from the --out file's extension, else table
  std::string out;
  std::string db = "gpuplan.db";
  bool no_db = false;
  bool quiet = false;
  std::string trace;
  std::string plot;
};

Format parse_format(const std::string& f) {
  if (f == "json") return Format::json;
  if (f == "md") return Format::md;
  if (f == "csv") return Format::csv;
  return Format::table;
}

// The format `run` writes: --format when given, else the one the --out file's extension names (r.json, r.csv,
// r.md), else the table. A file named for a format that run does not write (r.xlsx, r.html), or for another one
// than --format asks for, is refused: the file would not open in the program its name promises.
std::optional<std::string> resolve_format(const RunOptions& o, std::string* format) {
  const std::string ext = o.out.empty() ? std::string() : extension_of(o.out);
  std::string named;
  if (ext == "json") named = "json";
  else if (ext == "csv") named = "csv";
  else if (ext == "md" || ext == "markdown") named = "md";
  else if (ext == "txt" || ext == "text") named = "table";
  else if (ext == "xlsx" || ext == "xls" || ext == "ods" || ext == "html" || ext == "htm" || ext == "pdf" ||
           ext == "parquet" || ext == "svg" || ext == "db" || ext == "sqlite") {
    return "--out " + o.out + ": gpuplan run writes table, json, md or csv, not ." + ext +
           " (name the file .txt, .json, .md or .csv; --plot writes an SVG)";
  }
  if (!o.format.empty() && !named.empty() && named != o.format) {
    return "--out " + o.out + " names a ." + ext + " file but --format is " + o.format +
           " (leave --format out to write what the name says)";
  }
  *format = !o.format.empty() ? o.format : !named.empty() ? named : "table";
  return std::nullopt;
}

// SHA-256 over the catalog files (the folder's, then each --catalog override in order) and the profiles folder's
// JSON files, each as its file name and bytes: what a run read besides the scenario. The names only, not the
// folders, so that the same inputs on another machine give the same digest. An unreadable file counts as empty.
std::string inputs_digest(const std::vector<std::string>& catalogs, const std::vector<std::string>& profiles) {
  std::string all;
  for (const auto* files : {&catalogs, &profiles}) {
    for (const auto& f : *files) {
      std::string text, error;
      calibrate::read_input_file(f, text, error);
      all += std::filesystem::path(f).filename().string() + '\0' + std::to_string(text.size()) + '\0' + text;
    }
    all += '\1';
  }
  return sha256_hex(all);
}

// What the run should say about the scenario itself, before its results: business inputs that nothing reads yet,
// and a sweep whose configurations train different amounts of data.
void scenario_notes(const Scenario& sc, std::vector<std::string>& notes) {
  for (const auto& doc : sc.concrete) {
    const auto roi = doc.find("roi");
    if (roi == doc.end() || !roi->is_object()) continue;
    std::string unused;
    int count = 0;
    for (const char* key : {"value_per_run_usd", "runs_per_year", "discount_rate", "horizon_years"}) {
      if (roi->contains(key)) unused += std::string(count++ ? ", " : "") + "roi." + key;
    }
    if (count > 0) {
      notes.push_back(unused + (count > 1 ? " are" : " is") + " checked but not used yet: gpuplan does not compute "
                      "NPV, IRR or payback; only roi.deadline_hours shapes the recommendation");
      break;
    }
  }
  // A fixed step count at a global batch that grows with the GPUs compares jobs of different sizes.
  double lo = 0, hi = 0;
  for (const auto& job : sc.configs) {
    const double samples =
        static_cast<double>(job.length.total_steps(job.global_batch())) * static_cast<double>(job.global_batch());
    lo = lo == 0 ? samples : std::min(lo, samples);
    hi = std::max(hi, samples);
  }
  if (lo > 0 && hi > lo * 1.01) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g", hi / lo);
    notes.push_back(std::string("the configurations train different amounts of data (up to ") + buf +
                    "x the samples: a fixed step count at a global batch that changes with the GPUs); compare "
                    "throughput or cost per sample, or give workload.global_batch or workload.dataset");
  }
}

StoredRun to_stored(const Scenario& sc, const std::vector<ConfigOutcome>& all, const std::string& command) {
  StoredRun run;
  run.scenario_path = sc.path;
  run.scenario_text = sc.text;
  run.scenario_sha256 = sha256_hex(sc.text);
  run.gpuplan_version = GPUPLAN_VERSION;
  run.command = command;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto& c = all[i];
    StoredConfig s;
    s.config_id = c.job.id;
    s.inputs_json = calibrate::dump_json(sc.concrete[i]);
    s.results_json = calibrate::dump_json(config_json(c));
    s.gpus = c.job.cluster.total_gpus();
    s.instance = cluster_label(c.job);
    // A configuration the model cannot predict has no step, time or cost: NULL in the store, not 0 (a query that
    // did not filter on `fits` saw a free run).
    const double none = std::numeric_limits<double>::quiet_NaN();
    const bool known = predicted(c.result);
    s.step_time_s = known ? c.result.step_time.value() : none;
    // ... and one that never finishes (report.hpp finishes()) no time or cost.
    s.time_to_train_h = known && finishes(c.result) ? c.result.time_to_train.hours() : none;
    s.cost_usd = known && finishes(c.result) ? c.result.cost.value() : none;
    s.fits = c.result.fits;
    s.bottleneck = c.result.bottleneck;
    run.configs.push_back(std::move(s));
  }
  return run;
}

void run(const RunOptions& o, CliContext& ctx) {
  auto cat = load_catalogs_or_report(ctx);
  if (!cat) {
    ctx.exit_code = kExitBadInput;
    return;
  }
  // Every output path is checked before the work: a run is never done only for its results to go nowhere, and
  // no output may overwrite an input (the scenario, a catalog, the results store).
  const std::vector<std::string> catalogs = catalog_input_files(ctx), profiles = json_files_in(default_profiles_dir());
  std::vector<std::string> inputs = catalogs;
  inputs.push_back(o.file);
  inputs.insert(inputs.end(), profiles.begin(), profiles.end());  // profiles, constants
  if (!o.no_db) {
    // The store is written too: its folder must exist and it must be a file (--db /dev/null left /dev/null-journal).
    std::optional<std::string> problem = output_problem(o.db, "the results store", inputs);
    std::error_code ec;
    if (!problem && std::filesystem::exists(o.db, ec) && !std::filesystem::is_regular_file(o.db, ec)) {
      problem = o.db + ": cannot keep the results store there: not a regular file";
    }
    if (problem) {
      std::cerr << *problem << " (give another --db FILE, or --no-db)\n";
      ctx.exit_code = kExitBadInput;
      return;
    }
    inputs.push_back(o.db);
  }
  if (const auto problem =
          first_output_problem({{o.out, "the output"}, {o.plot, "the plot"}, {o.trace, "the trace"}}, inputs)) {
    std::cerr << *problem << "\n";
    ctx.exit_code = kExitBadInput;
    return;
  }
  std::string format;
  if (const auto problem = resolve_format(o, &format)) {
    std::cerr << *problem << "\n";
    ctx.exit_code = kExitBadInput;
    return;
  }
  for (const auto& problem : {extension_problem("--plot", o.plot, "svg", "the plot", "an SVG image"),
                               extension_problem("--trace", o.trace, "json", "the trace", "Chrome trace JSON")}) {
    if (problem) {
      std::cerr << *problem << "\n";
      ctx.exit_code = kExitBadInput;
      return;
    }
  }
  Diagnostics diags;
  auto sc = load_scenario(o.file, *cat, diags);
  if (!sc) {
    std::cerr << diags.render();
    ctx.exit_code = kExitBadInput;
    return;
  }
  EvaluateOptions eo;
  eo.trace_path = o.trace;
  eo.progress = progress_bar(!o.quiet, "configurations");
  std::vector<std::string> notes;
  eo.warnings = &notes;
  std::string trace_error;
  eo.trace_error = &trace_error;
  scenario_notes(*sc, notes);
  auto results = evaluate(*sc, *cat, eo);
  if (!trace_error.empty()) std::cerr << trace_error << "\n";  // the run's exit code says it at the end
  // What the prediction rests on (derived profiles, simplifications): once each, on stderr.
  if (!o.quiet) {
    for (const auto& n : notes) std::cerr << "note: " << n << "\n";
  }

  // A store that cannot be opened or written loses nothing: the results are still printed, then the error.
  long long run_id = 0;
  std::string store_error;
  if (!o.no_db) {
    auto store = Store::open(o.db, &store_error);
    if (store) {
      StoredRun stored = to_stored(*sc, results, ctx.command_line);
      stored.inputs_sha256 = inputs_digest(catalogs, profiles);
      auto id = store->record_run(stored, &store_error);
      if (id) run_id = *id;
    }
  }
  std::optional<double> deadline;
  if (!sc->configs.empty()) deadline = sc->configs.front().roi.deadline_hours;
  std::string text =
      render(results, parse_format(format), sc->name.empty() ? sc->path : sc->name, deadline, run_id, notes);
  if (o.out.empty()) {
    std::cout << text;
  } else {
    if (const auto problem = write_output_file(o.out, text, "the output")) {
      std::cout << text;  // nothing lost: the results go to standard output instead
      std::cerr << *problem << " (printed on standard output instead)\n";
      ctx.exit_code = kExitBadInput;
      return;
    }
  }
  if (!o.plot.empty()) {
    if (const auto problem =
            write_output_file(o.plot, render_plot(results, sc->name.empty() ? sc->path : sc->name, deadline), "the plot")) {
      std::cerr << *problem << "\n";
      ctx.exit_code = kExitBadInput;
      return;
    }
  }
  if (!store_error.empty()) {
    std::cerr << store_error << " (the results were not recorded; give another --db FILE, or --no-db)\n";
    ctx.exit_code = kExitBadInput;
    return;
  }
  ctx.exit_code = trace_error.empty() ? kExitOk : kExitBadInput;
}

}  // namespace

void add_run_command(CLI::App& root, CliContext& ctx) {
  static RunOptions o;
  auto* cmd = root.add_subcommand("run", "Predict every configuration of a scenario and record the run");
  cmd->add_option("FILE", o.file, "Scenario file")->required();
  cmd->add_option("--format", o.format, "table, json, md or csv (default: what the --out name says, else table)")->check(CLI::IsMember({"table", "json", "md", "csv"}));
  cmd->add_option("--out", o.out, "Write the output to FILE instead of standard output")->check(non_empty())->type_name("FILE");
  cmd->add_option("--db", o.db, "SQLite results store (default ./gpuplan.db)")->check(non_empty())->type_name("FILE");
  cmd->add_flag("--no-db", o.no_db, "Do not record the run");
  cmd->add_flag("-q,--quiet", o.quiet, "No progress bar and no notes on standard error (JSON and Markdown keep them)");
  cmd->add_option("--trace", o.trace,
                  "Write the first 3 steps of up to 16 ranks (and the straggler) as Chrome trace JSON (Perfetto)")->check(non_empty())
      ->type_name("FILE");
  cmd->add_option("--plot", o.plot, "Write an SVG of time to train against cost, one point per configuration")->check(non_empty())
      ->type_name("FILE");
  cmd->callback([&ctx] { run(o, ctx); });
}

}  // namespace gp::app
