// `gpuplan history [--db FILE] [--limit N] [--format table|json] [--show ID]`. Output shape: docs/output.md.
#include "app/cmd_history.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "app/cli.hpp"
#include "app/report.hpp"
#include "calibrate/json_text.hpp"

namespace gp::app {
namespace {

using nlohmann::json;
constexpr std::size_t kMaxWidth = 100;  // terminal columns the table must fit

// ---- aligned table ----
struct Column {
  std::string header;
  bool right = false;      // numbers align right
  bool keep_tail = false;  // paths: when cut, keep the end ("...narios/x.json")
  bool shrinkable = false; // may be cut to fit kMaxWidth
};

// Display width in code points (UTF-8 continuation bytes take no column).
std::size_t width_of(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
  return n;
}

// Byte offset of the code point that starts at display column `col`.
std::size_t byte_at(const std::string& s, std::size_t col) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && seen++ == col) return i;
  }
  return s.size();
}

std::string cut(const std::string& s, std::size_t w, bool keep_tail) {
  const std::size_t have = width_of(s);
  if (have <= w) return s;
  if (w <= 3) return std::string(w, '.');
  return keep_tail ? "..." + s.substr(byte_at(s, have - (w - 3))) : s.substr(0, byte_at(s, w - 3)) + "...";
}

// What a configuration chose in its sweep, as `run` labelled it (`sweep_label` of its stored results, recorded
// since 2026-12-06); empty for runs recorded before, or without a sweep.
std::string sweep_text(const std::string& results_json) {
  const auto j = nlohmann::json::parse(results_json, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("sweep_label") || !j["sweep_label"].is_string()) return {};
  return j["sweep_label"].get<std::string>();
}

std::string render_table(const std::vector<Column>& cols, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> w(cols.size());
  for (std::size_t i = 0; i < cols.size(); ++i) {
    w[i] = width_of(cols[i].header);
    for (const auto& r : rows) w[i] = std::max(w[i], width_of(r[i]));
  }
  auto total = [&] {
    std::size_t t = 2 * (cols.size() - 1);
    for (auto x : w) t += x;
    return t;
  };
  while (total() > kMaxWidth) {  // narrow the widest shrinkable column, one column at a time
    std::size_t pick = cols.size();
    for (std::size_t i = 0; i < cols.size(); ++i) {
      if (cols[i].shrinkable && w[i] > std::max<std::size_t>(8, width_of(cols[i].header)) &&
          (pick == cols.size() || w[i] > w[pick])) {
        pick = i;
      }
    }
    if (pick == cols.size()) break;
    --w[pick];
  }
  std::ostringstream out;
  auto line = [&](auto cell_of) {
    std::string text;
    for (std::size_t i = 0; i < cols.size(); ++i) {
      const std::string c = cut(cell_of(i), w[i], cols[i].keep_tail);
      const std::string pad(w[i] - width_of(c), ' ');
      if (i > 0) text += "  ";
      text += cols[i].right ? pad + c : c + (i + 1 < cols.size() ? pad : "");
    }
    out << text << '\n';
  };
  line([&](std::size_t i) { return cols[i].header; });
  for (const auto& r : rows) line([&](std::size_t i) { return r[i]; });
  return out.str();
}

// ---- numbers ----
// Dollars as `gpuplan run` printed them (report.hpp, usd_text): $124, $12.3k, $1.23M; "$1,234,567,890" before.
std::string money(double usd) { return std::isfinite(usd) ? usd_text(usd) : "-"; }

// Step and time to train in three significant digits, as `gpuplan run` printed them (report.hpp, sig3): fixed
// decimals showed a 14-second job (0.00392 h) as 0.00 h.
std::string hours(double h) { return std::isfinite(h) ? sig3(h) : "-"; }

std::string seconds(double s) { return std::isfinite(s) ? sig3(s) : "-"; }

std::string time_of(const std::string& iso) {  // "2026-12-02T09:03:12Z" -> "2026-12-02 09:03:12"
  std::string t = iso;
  if (t.size() > 10 && t[10] == 'T') t[10] = ' ';
  if (!t.empty() && t.back() == 'Z') t.pop_back();
  return t;
}

json number_or_null(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

json parsed_or_text(const std::string& text) {
  // Through json_text like every input: a store edited to hold deep nesting or huge numbers prints as text.
  calibrate::JsonTextError err;
  auto j = calibrate::parse_json_text(text, false, err);
  return j ? *j : json(text);
}

// ---- the two views ----
void print_list(const std::vector<RunSummary>& runs, const HistoryOptions& opts, std::ostream& out) {
  if (opts.format == "json") {
    json list = json::array();
    for (const auto& r : runs) {
      list.push_back({{"id", r.id},
                      {"created_at", r.created_at},
                      {"scenario_path", r.scenario_path},
                      {"scenario_sha256", r.scenario_sha256},
                      {"gpuplan_version", r.gpuplan_version},
                      {"configs", r.configs},
                      {"best_cost_usd", number_or_null(r.best_cost_usd)},
                      {"best_config", r.best_config.empty() ? json(nullptr) : json(r.best_config)}});
    }
    out << calibrate::dump_json(json{{"db", opts.db_path}, {"runs", list}}, 2) << '\n';
    return;
  }
  if (runs.empty()) {
    out << "no runs recorded in " << opts.db_path << '\n';
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : runs) {
    rows.push_back({std::to_string(r.id), time_of(r.created_at), r.scenario_path, std::to_string(r.configs),
                    money(r.best_cost_usd), r.best_config.empty() ? "-" : r.best_config});
  }
  out << render_table({{"ID", true},
                       {"RECORDED (UTC)"},
                       {"SCENARIO", false, true, true},
                       {"CONFIGS", true},
                       {"BEST COST", true},
                       {"BEST", false, false, true}},
                      rows);
}

void print_run(const StoredRun& run, const HistoryOptions& opts, std::ostream& out) {
  if (opts.format == "json") {
    json configs = json::array();
    for (const auto& c : run.configs) {
      configs.push_back({{"id", c.config_id},
                         {"inputs", parsed_or_text(c.inputs_json)},
                         {"results", parsed_or_text(c.results_json)}});
    }
    out << calibrate::dump_json(json{{"id", run.id},
                {"created_at", run.created_at},
                {"scenario_path", run.scenario_path},
                {"scenario_sha256", run.scenario_sha256},
                {"gpuplan_version", run.gpuplan_version},
                {"command", run.command},
                {"inputs_sha256", run.inputs_sha256},
                {"scenario_text", run.scenario_text},
                                     {"configs", configs}},
                                2)
        << '\n';
    return;
  }
  out << "run " << run.id << "  recorded " << time_of(run.created_at) << " UTC  gpuplan " << run.gpuplan_version
      << '\n'
      << "scenario  " << cut(run.scenario_path, kMaxWidth - 10, true) << '\n'
      << "sha256    " << run.scenario_sha256 << '\n'
      << "inputs    " << (run.inputs_sha256.empty() ? "(not recorded)" : run.inputs_sha256)
      << "  (catalogs and profiles)\n"
      << "command   " << cut(run.command, kMaxWidth - 10, false) << "\n\n";
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> legend;
  for (const auto& c : run.configs) {
    rows.push_back({c.config_id, std::to_string(c.gpus), c.instance, seconds(c.step_time_s),
                    hours(c.time_to_train_h), money(c.cost_usd), c.fits ? "yes" : "no", c.bottleneck});
    const std::string chose = sweep_text(c.results_json);
    if (!chose.empty()) legend.push_back(cut(c.config_id + "  " + chose, kMaxWidth, false));
  }
  const std::vector<Column> cols = {{"CONFIG", false, false, true},
                                    {"GPUS", true},
                                    {"INSTANCE", false, false, true},
                                    {"STEP (s)", true},
                                    {"TRAIN (h)", true},
                                    {"COST", true},
                                    {"FITS"},
                                    {"BOTTLENECK", false, false, true}};
  out << render_table(cols, rows);
  // What each configuration chose in the sweep, as `gpuplan run` prints it under its table.
  if (!legend.empty()) out << '\n';
  for (const auto& l : legend) out << l << '\n';
}

bool is_missing_or_empty(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) return true;
  // An empty regular file is an SQLite database with nothing in it (e.g. made by `touch`).
  return !ec && std::filesystem::is_regular_file(status) && std::filesystem::file_size(path, ec) == 0 && !ec;
}

}  // namespace

int run_history(const HistoryOptions& opts, std::ostream& out, std::ostream& err) {
  if (opts.format != "table" && opts.format != "json") {
    err << "--format: must be table or json, got '" << opts.format << "'\n";
    return kExitBadInput;
  }
  if (is_missing_or_empty(opts.db_path)) {
    if (opts.show_id) {
      err << opts.db_path << ": no run with id " << *opts.show_id << " (no runs recorded)\n";
      return kExitBadInput;
    }
    print_list({}, opts, out);
    return kExitOk;
  }
  std::string error;
  auto store = Store::open_existing(opts.db_path, &error);
  if (!store) {
    err << error << '\n';
    return kExitBadInput;
  }
  if (opts.show_id) {
    const auto run = store->get_run(*opts.show_id, &error);
    if (!run) {
      err << error << '\n';
      return kExitBadInput;
    }
    print_run(*run, opts, out);
    return kExitOk;
  }
  const auto runs = store->list_runs(opts.limit, &error);
  if (!error.empty()) {
    err << error << '\n';
    return kExitBadInput;
  }
  print_list(runs, opts, out);
  return kExitOk;
}

void add_history_command(CLI::App& root, CliContext& ctx) {
  auto opts = std::make_shared<HistoryOptions>();
  auto show = std::make_shared<std::int64_t>(0);
  auto* cmd = root.add_subcommand("history", "List past runs recorded in the results store");
  cmd->add_option("--db", opts->db_path, "SQLite results store")->check(non_empty())->capture_default_str();
  cmd->add_option("--limit", opts->limit, "Most recent runs to list (0: all)")
      ->capture_default_str()
      ->check(integer_range(0, 1000000));
  cmd->add_option("--format", opts->format, "Output format")
      ->capture_default_str()
      ->check(CLI::IsMember({"table", "json"}));
  auto* show_opt = cmd->add_option("--show", *show, "Print the configurations of run ID")
                       ->check(integer_range(1, 999999999999999999LL))
                       ->type_name("ID");
  cmd->callback([opts, show, show_opt, &ctx] {
    HistoryOptions o = *opts;
    if (show_opt->count() > 0) o.show_id = *show;
    ctx.exit_code = run_history(o, std::cout, std::cerr);
  });
}

}  // namespace gp::app
