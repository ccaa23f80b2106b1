#include "app/report.hpp"

#include "app/svg.hpp"

#include "calibrate/check.hpp"
#include "calibrate/json_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace gp::app {

using json = nlohmann::ordered_json;

namespace {

std::string fixed(double x, int prec) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", prec, x);
  return buf;
}

std::string money(double x) {
  // Thousands, millions, billions, trillions as spreadsheets abbreviate them; beyond that in powers of ten (a job
  // that failures all but stop printed $2617737.26M).
  if (x >= 1e15) return "$" + sig3(x);  // $6.57e20, as the table writes any figure past 1e15
  if (x >= 1e12) return "$" + fixed(x / 1e12, x >= 1e14 ? 0 : 2) + "T";
  if (x >= 1e9) return "$" + fixed(x / 1e9, x >= 1e11 ? 0 : 2) + "B";
  if (x >= 1e6) return "$" + fixed(x / 1e6, x >= 1e8 ? 0 : 2) + "M";
  if (x >= 1e4) return "$" + fixed(x / 1e3, 1) + "k";
  return "$" + fixed(x, x >= 100 ? 0 : 2);
}

std::string cut(const std::string& s, std::size_t n) { return s.size() <= n ? s : s.substr(0, n - 1) + "~"; }

struct Column {
  const char* head;
  int width;
  bool left;
};

const std::vector<Column> kCols = {
    {"id", 5, true},        {"gpus", 5, false},     {"cluster", 18, true}, {"step s", 7, false},
    {"samp/s", 7, false},   {"train h", 7, false},  {"cost", 8, false},    {"busy", 4, false},
    {"mfu", 4, false},      {"GiB", 5, false},      {"fit", 3, true},      {"bottleneck", 15, true}};

std::vector<std::string> table_cells(const ConfigOutcome& c) {
  const auto& r = c.result;
  return {c.job.id,
          std::to_string(c.job.cluster.total_gpus()),
          cut(cluster_label(c.job), 18),
          r.fits ? sig3(r.step_time.value()) : "-",
          r.fits ? sig3(r.throughput_samples_per_s) : "-",
          !r.fits ? "-" : finishes(r) ? sig3(r.time_to_train.hours()) : "never",
          r.fits && finishes(r) ? money(r.cost.value()) : "-",
          r.fits ? fixed(100 * r.gpu_busy_frac, 0) + "%" : "-",
          r.fits ? fixed(100 * r.mfu, 0) + "%" : "-",
          fixed(r.memory_per_gpu.gib(), 1),
          r.fits ? "yes" : "NO",
          cut(r.bottleneck, 15)};
}

std::string pad(const std::string& s, int w, bool left) {
  if (static_cast<int>(s.size()) >= w) return s;
  std::string sp(static_cast<std::size_t>(w) - s.size(), ' ');
  return left ? s + sp : sp + s;
}

// Wraps text to `width` columns, continuation lines indented by `indent` spaces.
std::string wrap(const std::string& text, std::size_t width, std::size_t indent) {
  std::string out, line;
  std::istringstream words(text);
  std::string w;
  while (words >> w) {
    if (!line.empty() && line.size() + 1 + w.size() > width) {
      out += line + "\n";
      line = std::string(indent, ' ');
    }
    line += (line.empty() || line.back() == ' ' ? "" : " ") + w;
  }
  return out + line + "\n";
}

// " (80% range 2.36-2.55 h, $119-$129)": the job with every step at its 10th and 90th percentile (docs/output.md,
// "Ranges"); empty when the range is a point. A no-break space keeps the unit with its figure when wrapped.
std::string range_text(const JobResult& r) {
  if (!(r.time_to_train_p90.value() > r.time_to_train_p10.value())) return {};
  return " (80% range " + sig3(r.time_to_train_p10.hours()) + "-" + sig3(r.time_to_train_p90.hours()) + "\u00a0h, " +
         money(r.cost_p10.value()) + "-" + money(r.cost_p90.value()) + ")";
}

// A warning when the range's slow end misses the deadline that the point meets.
std::string deadline_risk(const JobResult& r, std::optional<double> deadline) {
  if (!deadline || r.time_to_train_p90.hours() <= *deadline) return {};
  return " At the slow end of its range it takes " + sig3(r.time_to_train_p90.hours()) + " h, past the deadline.";
}

bool any_sweep(const std::vector<ConfigOutcome>& all) {
  for (const auto& c : all) {
    if (!c.sweep_label.empty()) return true;
  }
  return false;
}

std::string render_table(const std::vector<ConfigOutcome>& all, const std::string& name,
                         std::optional<double> deadline, long long run_id) {
  std::ostringstream os;
  if (!name.empty()) os << name << "\n";
  std::string line;
  for (std::size_t i = 0; i < kCols.size(); ++i) {
    line += (i ? " " : "") + pad(kCols[i].head, kCols[i].width, kCols[i].left);
  }
  const std::size_t width = line.size();  // the rule spans every column; the heading, like the rows, ends trimmed
  while (!line.empty() && line.back() == ' ') line.pop_back();
  os << line << "\n" << std::string(width, '-') << "\n";
  for (const auto& c : all) {
    auto cells = table_cells(c);
    std::string row;
    for (std::size_t i = 0; i < kCols.size(); ++i) {
      row += (i ? " " : "") + pad(cells[i], kCols[i].width, kCols[i].left);
    }
    // Trailing spaces are noise in a terminal and in diffs.
    while (!row.empty() && row.back() == ' ') row.pop_back();
    os << row << "\n";
  }
  // What each configuration chose in the sweep, beyond the columns (the rows are already 100 wide).
  if (any_sweep(all)) {
    os << "\n";
    for (const auto& c : all) {
      if (!c.sweep_label.empty()) os << wrap(pad(c.job.id, 6, true) + c.sweep_label, 100, 8);
    }
  }
  int best = pick_best(all, deadline);
  os << "\n";
  if (best < 0) {
    os << "No configuration fits" << (deadline ? " and meets the deadline of " + sig3(*deadline) + " h" : "")
       << ".\n";
  } else {
    const auto& b = all[static_cast<std::size_t>(best)];
    std::ostringstream line;
    line << "Cheapest" << (deadline ? " within " + sig3(*deadline) + " h" : "") << ": " << b.job.id << " ("
         << b.job.cluster.total_gpus() << " x " << b.job.cluster.gpu.id << ", " << cluster_label(b.job)
         << (b.sweep_label.empty() ? "" : ", " + b.sweep_label) << "): " << sig3(b.result.time_to_train.hours())
         << "\u00a0h, " << money(b.result.cost.value()) << range_text(b.result)
         << ", bottleneck " << b.result.bottleneck << "." << deadline_risk(b.result, deadline);
    os << wrap(line.str(), 100, 2);
    for (const auto& a : b.result.advice) os << wrap("  - " + a, 100, 4);
  }
  if (run_id > 0) os << "Recorded as run " << run_id << " (gpuplan history --show " << run_id << ").\n";
  return os.str();
}

std::string csv_escape(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

const std::vector<std::string> kFlatKeys = {
    "id", "gpus", "nodes", "instance", "gpu", "step_time_s", "throughput_samples_per_s", "time_to_train_h",
    "cost_usd", "cost_per_1k_steps_usd", "gpu_busy_frac", "mfu", "memory_gib_per_gpu", "fits", "bottleneck",
    "step_time_p10_s", "step_time_p90_s", "time_to_train_p10_h", "time_to_train_p90_h", "cost_p10_usd", "cost_p90_usd"};
const std::vector<std::string> kBreakdownKeys = {"compute",    "dataloader_stall", "comm_exposed",
                                                 "checkpoint", "startup",          "failures"};

std::string cell_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  if (v.is_number_float() && !std::isfinite(v.get<double>())) return "";  // a job that never finishes
  return calibrate::dump_json(v);
}

std::string render_csv(const std::vector<ConfigOutcome>& all) {
  std::ostringstream os;
  std::string head;
  for (const auto& k : kFlatKeys) head += (head.empty() ? "" : ",") + k;
  for (const auto& k : kBreakdownKeys) head += ",breakdown_" + k + "_s";
  head += ",sweep";
  os << head << "\n";
  for (const auto& c : all) {
    json j = config_json(c);
    std::string row;
    for (const auto& k : kFlatKeys) row += (row.empty() ? "" : ",") + csv_escape(cell_text(j[k]));
    for (const auto& k : kBreakdownKeys) row += "," + cell_text(j["breakdown_s"][k]);
    row += "," + csv_escape(c.sweep_label);
    os << row << "\n";
  }
  return os.str();
}

std::string render_md(const std::vector<ConfigOutcome>& all, const std::string& name,
                      std::optional<double> deadline, const std::vector<std::string>& notes) {
  std::ostringstream os;
  // A name is one heading line: control characters (a newline would end the heading) become spaces.
  std::string title = name.empty() ? "gpuplan run" : name;
  for (char& ch : title)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == '\x7f') ch = ' ';
  os << "# " << title << "\n\n";
  os << "| id | GPUs | cluster | step (s) | step, 80% range (s) | samples/s | time to train (h) | cost | cost, 80% range "
        "| $/1k steps | GPU busy | MFU | GiB/GPU | fits | bottleneck |"
     << (any_sweep(all) ? " sweep |" : "") << "\n";
  os << "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|" << (any_sweep(all) ? "---|" : "")
     << "\n";
  for (const auto& c : all) {
    const auto& r = c.result;
    os << "| " << c.job.id << " | " << c.job.cluster.total_gpus() << " | " << cluster_label(c.job) << " | ";
    if (r.fits)  // a job that never finishes has a step but no time to train or cost
      os << sig3(r.step_time.value()) << " | " << sig3(r.step_time_p10.value()) << "-" << sig3(r.step_time_p90.value())
         << " | " << sig3(r.throughput_samples_per_s) << " | "
         << (finishes(r) ? sig3(r.time_to_train.hours()) + " | " + money(r.cost.value()) + " | " +
                               money(r.cost_p10.value()) + "-" + money(r.cost_p90.value())
                         : std::string("never | - | -"))
         << " | " << money(r.cost_per_1k_steps.value()) << " | " << fixed(100 * r.gpu_busy_frac, 0) << "% | "
         << fixed(100 * r.mfu, 0) << "% | ";
    else  // as the terminal table: a configuration that does not fit has no timings or cost
      os << "- | - | - | - | - | - | - | - | - | ";
    os << fixed(r.memory_per_gpu.gib(), 1) << " | " << (r.fits ? "yes" : "no")
       << " | " << r.bottleneck << " |" << (any_sweep(all) ? " " + c.sweep_label + " |" : "") << "\n";
  }
  int best = pick_best(all, deadline);
  if (best < 0) {  // as the table says it
    os << "\nNo configuration fits" << (deadline ? " and meets the deadline of " + sig3(*deadline) + " h" : "")
       << ".\n";
  } else {
    const auto& b = all[static_cast<std::size_t>(best)];
    os << "\n**Cheapest" << (deadline ? " within " + sig3(*deadline) + " h" : "") << ":** " << b.job.id
       << (b.sweep_label.empty() ? "" : " (" + b.sweep_label + ")") << ", "
       << money(b.result.cost.value()) << ", " << sig3(b.result.time_to_train.hours()) << " h" << range_text(b.result)
       << "." << deadline_risk(b.result, deadline) << "\n";
    for (const auto& a : b.result.advice) os << "- " << a << "\n";
  }
  if (!notes.empty()) {
    os << "\n**Notes:**\n";
    for (const auto& n : notes) os << "- " << n << "\n";
  }
  return os.str();
}

}  // namespace

std::string usd_text(double x) { return money(x); }

// Three significant digits for wide-ranging figures (0.0123, 1.23, 123, 12300). The figure is rounded to three
// digits before its format is chosen, so 999.96M reads "1.00G" and 99.996 "100", not "1000M" and "100.00".
std::string sig3(double x) {
  char buf[64];
  if (std::isfinite(x) && x != 0) {
    const double scale = std::pow(10.0, std::floor(std::log10(std::abs(x))) - 2);
    x = std::round(x / scale) * scale;
  }
  if (x >= 1e6 && x < 1e15) {  // 1.23M, 45.6G, 789T: three digits in at most five characters
    const char* unit = x >= 1e12 ? "T" : x >= 1e9 ? "G" : "M";
    const double v = x / (x >= 1e12 ? 1e12 : x >= 1e9 ? 1e9 : 1e6);
    std::snprintf(buf, sizeof buf, v < 10 ? "%.2f%s" : v < 100 ? "%.1f%s" : "%.0f%s", v, unit);
  } else if (std::isfinite(x) && x >= 1e15) {  // 6.57e20: seven characters, the table's narrowest figure column
    const int e = static_cast<int>(std::floor(std::log10(x)));
    double m = x / std::pow(10.0, e);
    int ex = e;
    if (m >= 9.995) m /= 10, ++ex;  // rounding up across a power of ten
    std::snprintf(buf, sizeof buf, "%.2fe%d", m, ex);
  } else if (x != 0 && (x < 0.001 || x >= 1e6)) {
    std::snprintf(buf, sizeof buf, "%.2e", x);
  } else if (x < 1) {  // 0.00123, 0.0123, 0.123: three digits after the leading zeros
    std::snprintf(buf, sizeof buf, x == 0 ? "%.3f" : x < 0.01 ? "%.5f" : x < 0.1 ? "%.4f" : "%.3f", x);
  } else if (x < 100) {
    std::snprintf(buf, sizeof buf, x < 10 ? "%.2f" : "%.1f", x);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f", x);
  }
  return buf;
}

std::string cluster_label(const JobConfig& job) {
  if (job.cluster.instance) return job.cluster.instance->id;
  return job.cluster.gpu.id + " x" + std::to_string(job.cluster.gpus_per_node);
}

json config_json(const ConfigOutcome& c) {
  const auto& r = c.result;
  const auto& b = r.breakdown;
  json j;
  j["id"] = c.job.id;
  j["gpus"] = c.job.cluster.total_gpus();
  j["nodes"] = c.job.cluster.nodes;
  j["instance"] = c.job.cluster.instance ? json(c.job.cluster.instance->id) : json(nullptr);
  j["gpu"] = c.job.cluster.gpu.id;
  j["steps"] = r.steps;
  j["global_batch"] = c.job.global_batch();
  // How the global batch is made (a fixed global batch on fewer GPUs accumulates more micro-batches), and the
  // layout over the GPUs: dp x tp x pp = gpus.
  j["micro_batch"] = c.job.step.micro_batch;
  j["grad_accum"] = c.job.step.grad_accum;
  j["parallelism"] = {{"strategy", to_string(c.job.parallel.strategy)},
                      {"dp", c.job.parallel.dp},
                      {"tp", c.job.parallel.tp},
                      {"pp", c.job.parallel.pp},
                      {"sequence_parallel", c.job.parallel.sequence_parallel},
                      {"fsdp_mixed_precision", c.job.step.params_16bit}};
  j["sweep"] = c.sweep;
  j["sweep_label"] = c.sweep_label;
  j["step_time_s"] = r.step_time.value();
  j["throughput_samples_per_s"] = r.throughput_samples_per_s;
  j["time_to_train_h"] = r.time_to_train.hours();
  j["cost_usd"] = r.cost.value();
  j["cost_per_1k_steps_usd"] = r.cost_per_1k_steps.value();
  // The 80% range over hosts and the model's measured error (docs/output.md, "Ranges").
  j["step_time_p10_s"] = r.step_time_p10.value();
  j["step_time_p90_s"] = r.step_time_p90.value();
  j["time_to_train_p10_h"] = r.time_to_train_p10.hours();
  j["time_to_train_p90_h"] = r.time_to_train_p90.hours();
  j["cost_p10_usd"] = r.cost_p10.value();
  j["cost_p90_usd"] = r.cost_p90.value();
  j["price_per_hour_usd"] = r.price_per_hour.value();
  j["gpu_busy_frac"] = r.gpu_busy_frac;
  j["mfu"] = r.mfu;
  j["memory_gib_per_gpu"] = r.memory_per_gpu.gib();
  j["memory_capacity_gib"] = r.memory_capacity.gib();
  j["memory_needed_gib"] = r.memory_needed.gib();
  const MemoryParts& mp = r.memory_parts;  // memory_gib_per_gpu part by part (docs/output.md)
  j["memory_breakdown_gib"] = {{"peak_at", r.memory_peak_at},
                               {"weights", mp.weights.gib()},
                               {"gradients", mp.grads.gib()},
                               {"optimizer_states", mp.optimizer_states.gib()},
                               {"ddp_buckets", mp.grad_buckets.gib()},
                               {"fsdp_gathered", mp.gathered.gib()},
                               {"autocast_copies", mp.autocast_copies.gib()},
                               {"activations", mp.activations.gib()},
                               {"transient", mp.transient.gib()},
                               {"outputs_kept", mp.outputs_alive.gib()},
                               {"workspace", mp.workspace.gib()}};
  j["fits"] = r.fits;
  j["bottleneck"] = r.bottleneck;
  j["breakdown_s"] = {{"compute", b.compute.value()},         {"dataloader_stall", b.dataloader_stall.value()},
                      {"comm_exposed", b.comm_exposed.value()}, {"checkpoint", b.checkpoint.value()},
                      {"startup", b.startup.value()},           {"failures", b.failures.value()}};
  const auto& st = r.step_breakdown;  // one steady-state step (docs/output.md)
  j["step_breakdown_s"] = {{"compute", st.compute.value()},         {"dataloader_stall", st.dataloader_stall.value()},
                           {"comm_exposed", st.comm_exposed.value()}, {"comm_hidden", st.comm_hidden.value()},
                           {"straggler", st.straggler.value()}};
  j["advice"] = r.advice;
  if (!predicted(r)) {
    // Nothing was predicted (the advice says why): no figure, rather than zeros that read as a free, instant run.
    for (const char* k : {"step_time_s", "throughput_samples_per_s", "time_to_train_h", "cost_usd",
                          "cost_per_1k_steps_usd", "step_time_p10_s", "step_time_p90_s", "time_to_train_p10_h",
                          "time_to_train_p90_h", "cost_p10_usd", "cost_p90_usd", "gpu_busy_frac", "mfu",
                          "memory_gib_per_gpu", "memory_capacity_gib", "memory_needed_gib"})
      j[k] = nullptr;
    for (auto* part : {&j["breakdown_s"], &j["step_breakdown_s"], &j["memory_breakdown_gib"]})
      for (auto& [k, v] : part->items()) v = nullptr;
  }
  return j;
}

int pick_best(const std::vector<ConfigOutcome>& all, std::optional<double> deadline_hours) {
  int best = -1;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto& r = all[i].result;
    if (!r.fits || !finishes(r)) continue;
    if (deadline_hours && r.time_to_train.hours() > *deadline_hours) continue;
    if (best < 0 || r.cost < all[static_cast<std::size_t>(best)].result.cost) best = static_cast<int>(i);
  }
  return best;
}

std::string render(const std::vector<ConfigOutcome>& all, Format f, const std::string& scenario_name,
                   std::optional<double> deadline_hours, long long run_id, const std::vector<std::string>& notes) {
  switch (f) {
    case Format::table: return render_table(all, scenario_name, deadline_hours, run_id);
    case Format::csv: return render_csv(all);
    case Format::md: return render_md(all, scenario_name, deadline_hours, notes);
    case Format::json: {
      json out;
      out["gpuplan_version"] = GPUPLAN_VERSION;
      out["scenario"] = scenario_name;
      out["run_id"] = run_id > 0 ? json(run_id) : json(nullptr);
      out["configs"] = json::array();
      for (const auto& c : all) out["configs"].push_back(config_json(c));
      int best = pick_best(all, deadline_hours);
      out["best"] = best >= 0 ? json(all[static_cast<std::size_t>(best)].job.id) : json(nullptr);
      out["notes"] = notes;
      return calibrate::dump_json(out, 2) + "\n";
    }
  }
  return "";
}

namespace {

// Leaves of a scenario document by dotted path, in document order (object members; an array is one value).
void flatten(const nlohmann::json& v, const std::string& path,
             std::vector<std::pair<std::string, const nlohmann::json*>>& out) {
  if (v.is_object() && !v.empty()) {
    for (auto it = v.begin(); it != v.end(); ++it) flatten(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
  } else {
    out.emplace_back(path, &v);
  }
}

std::string label_value(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "unset";
  return calibrate::dump_json(v);
}

}  // namespace

std::vector<json> sweep_values(const std::vector<nlohmann::json>& concrete) {
  // Every path in the order it first appears, and each configuration's value there (null where it is absent).
  std::vector<std::string> order;
  std::map<std::string, std::vector<const nlohmann::json*>> at;
  for (std::size_t i = 0; i < concrete.size(); ++i) {
    std::vector<std::pair<std::string, const nlohmann::json*>> leaves;
    flatten(concrete[i], "", leaves);
    for (const auto& [p, v] : leaves) {
      auto& vals = at[p];
      if (vals.empty()) {
        order.push_back(p);
        vals.assign(concrete.size(), nullptr);
      }
      vals[i] = v;
    }
  }
  std::vector<json> out(concrete.size(), json::object());
  for (const auto& p : order) {
    const auto& vals = at[p];
    auto same = [&](const nlohmann::json* a, const nlohmann::json* b) { return a && b ? *a == *b : a == b; };
    if (std::all_of(vals.begin(), vals.end(), [&](const auto* v) { return same(v, vals.front()); })) continue;
    for (std::size_t i = 0; i < concrete.size(); ++i) out[i][p] = vals[i] ? json(*vals[i]) : json(nullptr);
  }
  return out;
}

std::string sweep_label(const json& sweep, const std::vector<std::string>& dims) {
  static const std::set<std::string> shown = {"cluster.nodes", "cluster.instance", "cluster.gpu",
                                              "cluster.gpus_per_node", "cluster.gpus"};
  auto last = [](const std::string& p) { return p.substr(p.rfind('.') + 1); };
  auto under = [](const std::string& p, const std::string& d) {
    return d.empty() || p == d || (p.size() > d.size() && p.compare(0, d.size(), d) == 0 && p[d.size()] == '.');
  };
  std::string out;
  auto add = [&](const std::string& text) { out += (out.empty() ? "" : " ") + text; };
  for (const auto& d : dims) {
    std::vector<std::pair<std::string, const json*>> fields;
    for (auto it = sweep.begin(); it != sweep.end(); ++it) {
      const std::string& p = it.key();
      if (!under(p, d) || shown.count(p)) continue;
      // A field under a deeper place of choice is that place's to show.
      const bool deeper = std::any_of(dims.begin(), dims.end(), [&](const std::string& e) {
        return e.size() > d.size() && under(e, d) && under(p, e);
      });
      if (deeper) continue;
      if (p != d && it.value().is_null()) continue;  // unset in this configuration's choice
      fields.emplace_back(p, &it.value());
    }
    // Names first ("plan=on-prem", "model=gpt-1.3b"): they say most about a chosen object.
    std::stable_sort(fields.begin(), fields.end(),
                     [](const auto& a, const auto& b) { return a.second->is_string() && !b.second->is_string(); });
    for (std::size_t k = 0; k < fields.size() && k < 2; ++k) add(last(fields[k].first) + "=" + label_value(*fields[k].second));
    if (fields.size() > 2) add("...");
  }
  return out;
}

namespace {

std::string tick_text(double v, bool dollars) {
  char buf[32];
  if (v >= 1000 && v < 1e6) {
    std::snprintf(buf, sizeof buf, "%gk", std::round(v / 100) / 10);
  } else if (v >= 1e6) {
    std::snprintf(buf, sizeof buf, "%gM", std::round(v / 1e5) / 10);
  } else {
    std::snprintf(buf, sizeof buf, "%g", std::round(v * 1000) / 1000);
  }
  return (dollars ? "$" : "") + std::string(buf);
}

const char* bottleneck_colour(const std::string& b) {
  if (b == "gpu-compute") return "#1f77b4";
  if (b == "gpu-memory") return "#17becf";
  if (b == "launch-overhead") return "#d62728";
  if (b == "dataloader") return "#ff7f0e";
  if (b == "communication") return "#9467bd";
  if (b == "stragglers") return "#8c564b";
  if (b == "checkpoint") return "#e377c2";
  return "#7f7f7f";
}

}  // namespace

std::string render_plot(const std::vector<ConfigOutcome>& all, const std::string& name,
                        std::optional<double> deadline) {
  using calibrate::xml_escape;
  std::vector<const ConfigOutcome*> pts;
  std::vector<std::string> left_out;
  for (const auto& c : all) {
    const auto& r = c.result;
    if (r.fits && std::isfinite(r.time_to_train.hours()) && std::isfinite(r.cost.value()) && r.cost.value() > 0 &&
        r.time_to_train.hours() > 0) {
      pts.push_back(&c);
    } else {
      left_out.push_back(c.job.id);
    }
  }
  double tmin = 1e300, tmax = 0, cmin = 1e300, cmax = 0;
  for (const auto* c : pts) {
    const auto& r = c->result;
    tmin = std::min({tmin, r.time_to_train.hours(), r.time_to_train_p10.hours()});
    tmax = std::max({tmax, r.time_to_train.hours(), r.time_to_train_p90.hours()});
    cmin = std::min({cmin, r.cost.value(), r.cost_p10.value()});
    cmax = std::max({cmax, r.cost.value(), r.cost_p90.value()});
  }
  if (deadline && *deadline > 0) {
    tmin = std::min(tmin, *deadline);
    tmax = std::max(tmax, *deadline);
  }
  if (pts.empty()) tmin = cmin = 1, tmax = cmax = 10;
  const Axis ax(tmin, tmax), ay(cmin, cmax);
  const double W = 900, H = 560, left = 80, right = 190, top = 50, bottom = 70;  // legend on the right
  const double pw = W - left - right, ph = H - top - bottom;
  auto X = [&](double v) { return left + pw * ax.frac(v); };
  auto Y = [&](double v) { return top + ph * (1 - ay.frac(v)); };
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << "<text x=\"" << W / 2 << "\" y=\"24\" text-anchor=\"middle\" font-size=\"14\">"
    << xml_escape(name.empty() ? "gpuplan run" : name) << ": time to train against cost</text>\n";
  // Grid and ticks.
  for (double t : ax.ticks) {
    o << "<line x1=\"" << X(t) << "\" y1=\"" << top << "\" x2=\"" << X(t) << "\" y2=\"" << top + ph
      << "\" stroke=\"#eee\"/><text x=\"" << X(t) << "\" y=\"" << top + ph + 18 << "\" text-anchor=\"middle\">"
      << tick_text(t, false) << "</text>\n";
  }
  for (double t : ay.ticks) {
    o << "<line x1=\"" << left << "\" y1=\"" << Y(t) << "\" x2=\"" << left + pw << "\" y2=\"" << Y(t)
      << "\" stroke=\"#eee\"/><text x=\"" << left - 8 << "\" y=\"" << Y(t) + 4 << "\" text-anchor=\"end\">"
      << tick_text(t, true) << "</text>\n";
  }
  o << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << pw << "\" height=\"" << ph
    << "\" fill=\"none\" stroke=\"black\"/>\n";
  o << "<text x=\"" << left + pw / 2 << "\" y=\"" << H - 30 << "\" text-anchor=\"middle\">time to train (h"
    << (ax.log ? ", log scale" : "") << ")</text>\n"
    << "<text x=\"18\" y=\"" << top + ph / 2 << "\" text-anchor=\"middle\" transform=\"rotate(-90 18 " << top + ph / 2
    << ")\">cost (USD" << (ay.log ? ", log scale" : "") << ")</text>\n";
  if (deadline && *deadline > 0) {
    o << "<line x1=\"" << X(*deadline) << "\" y1=\"" << top << "\" x2=\"" << X(*deadline) << "\" y2=\"" << top + ph
      << "\" stroke=\"#d62728\" stroke-dasharray=\"6 4\"/><text x=\"" << X(*deadline) - 4 << "\" y=\"" << top + 14
      << "\" text-anchor=\"end\" fill=\"#d62728\">deadline " << sig3(*deadline) << " h</text>\n";
  }
  // The Pareto front: no other configuration is both faster and cheaper (ties count as beaten by neither).
  std::vector<const ConfigOutcome*> front;
  for (const auto* c : pts) {
    const double t = c->result.time_to_train.hours(), d = c->result.cost.value();
    const bool beaten = std::any_of(pts.begin(), pts.end(), [&](const ConfigOutcome* e) {
      const double te = e->result.time_to_train.hours(), de = e->result.cost.value();
      return te <= t && de <= d && (te < t || de < d);
    });
    if (!beaten) front.push_back(c);
  }
  std::sort(front.begin(), front.end(), [](const ConfigOutcome* a, const ConfigOutcome* b) {
    return a->result.time_to_train.hours() < b->result.time_to_train.hours();
  });
  if (front.size() > 1) {
    o << "<polyline fill=\"none\" stroke=\"#555\" stroke-dasharray=\"3 3\" points=\"";
    for (const auto* c : front) o << X(c->result.time_to_train.hours()) << "," << Y(c->result.cost.value()) << " ";
    o << "\"><title>no other configuration is both faster and cheaper:";
    for (std::size_t i = 0; i < front.size(); ++i) o << (i ? ", " : " ") << xml_escape(front[i]->job.id);
    o << "</title></polyline>\n";
  }
  // Ranges, then points with their ids.
  for (const auto* c : pts) {
    const auto& r = c->result;
    const char* col = bottleneck_colour(r.bottleneck);
    const double x = X(r.time_to_train.hours()), y = Y(r.cost.value());
    if (r.time_to_train_p90.hours() > r.time_to_train_p10.hours())
      o << "<line x1=\"" << X(r.time_to_train_p10.hours()) << "\" y1=\"" << y << "\" x2=\""
        << X(r.time_to_train_p90.hours()) << "\" y2=\"" << y << "\" stroke=\"" << col
        << "\" stroke-opacity=\"0.4\" stroke-width=\"2\"/>\n";
    if (r.cost_p90.value() > r.cost_p10.value())
      o << "<line x1=\"" << x << "\" y1=\"" << Y(r.cost_p10.value()) << "\" x2=\"" << x << "\" y2=\""
        << Y(r.cost_p90.value()) << "\" stroke=\"" << col << "\" stroke-opacity=\"0.4\" stroke-width=\"2\"/>\n";
  }
  const int best = pick_best(all, deadline);
  for (const auto* c : pts) {
    const auto& r = c->result;
    const double x = X(r.time_to_train.hours()), y = Y(r.cost.value());
    o << "<circle cx=\"" << x << "\" cy=\"" << y << "\" r=\"5\" fill=\"" << bottleneck_colour(r.bottleneck)
      << "\"><title>" << xml_escape(c->job.id) << " (" << c->job.cluster.total_gpus() << " x "
      << xml_escape(c->job.cluster.gpu.id) << ", " << xml_escape(cluster_label(c->job))
      << (c->sweep_label.empty() ? "" : ", " + xml_escape(c->sweep_label)) << "): " << sig3(r.time_to_train.hours())
      << " h, " << money(r.cost.value()) << ", " << xml_escape(r.bottleneck) << "</title></circle>\n";
    o << "<text x=\"" << x + 7 << "\" y=\"" << y - 6 << "\" font-size=\"10\" fill=\"#333\">" << xml_escape(c->job.id)
      << "</text>\n";
    if (best >= 0 && c == &all[static_cast<std::size_t>(best)])
      o << "<circle cx=\"" << x << "\" cy=\"" << y << "\" r=\"10\" fill=\"none\" stroke=\"black\" stroke-width=\"2\"/>"
        << "<text x=\"" << x + 12 << "\" y=\"" << y + 16 << "\" font-weight=\"bold\">cheapest"
        << (deadline ? " within the deadline" : "") << "</text>\n";
  }
  // Legend: the bottlenecks present, the range bars, the front; then what was left out.
  std::vector<std::string> kinds;
  for (const auto* c : pts)
    if (std::find(kinds.begin(), kinds.end(), c->result.bottleneck) == kinds.end()) kinds.push_back(c->result.bottleneck);
  double lx = left + pw + 20, ly = top + 10;
  for (const auto& k : kinds) {
    o << "<circle cx=\"" << lx << "\" cy=\"" << ly - 4 << "\" r=\"5\" fill=\"" << bottleneck_colour(k)
      << "\"/><text x=\"" << lx + 10 << "\" y=\"" << ly << "\">" << xml_escape(k) << "</text>\n";
    ly += 16;
  }
  o << "<text x=\"" << lx - 5 << "\" y=\"" << ly + 8 << "\" font-size=\"10\">bars: 80% range</text>\n"
    << "<text x=\"" << lx - 5 << "\" y=\"" << ly + 22 << "\" font-size=\"10\">dashed: no other is both</text>\n"
    << "<text x=\"" << lx - 5 << "\" y=\"" << ly + 34 << "\" font-size=\"10\">faster and cheaper</text>\n";
  if (!left_out.empty()) {
    std::string ids;
    for (const auto& id : left_out) ids += (ids.empty() ? "" : ", ") + id;
    o << "<text x=\"" << left << "\" y=\"" << H - 10 << "\" font-size=\"11\">not shown (does not fit, never finishes or not predicted): "
      << xml_escape(cut(ids, 90)) << "</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace gp::app
