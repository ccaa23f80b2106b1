#include "calibrate/reference_runs.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "calibrate/json_fields.hpp"
#include "calibrate/json_text.hpp"
#include "models/swin_ops.hpp"
#include "models/vision_ops.hpp"

namespace gp::calibrate {

const std::vector<std::string>& measured_fields() {
  static const std::vector<std::string> f = {
      "step_ms",   "step_ms_p10", "step_ms_p50",   "step_ms_p90", "peak_mem_gib",  "oom",
      "error",     "iters",       "gpu_util_pct",  "gpu_power_w", "samples_per_s", "tokens_per_s",
      "first_batch_s"};
  return f;
}

bool gpu_bound(const RunRecord& r) { return r.kind == "train" && r.data == "synthetic-on-gpu"; }

bool has_train_record(const std::vector<RunRecord>& runs) {
  return std::any_of(runs.begin(), runs.end(), [](const RunRecord& r) { return r.kind == "train"; });
}

namespace {

template <class T>
T get_or(const nlohmann::json& j, const char* key, T def) {
  if (!j.contains(key) || j[key].is_null()) return def;
  try {
    return j[key].get<T>();
  } catch (const nlohmann::json::exception&) {
    return def;
  }
}

// The input fields of a train record that the predictions read, with their types and sanity ranges (limits far
// beyond any real run, so that a corrupted record is named instead of overflowing a counter or a simulation).
void check_train_inputs(FieldReader& r, const std::string& data) {
  const auto model = r.string("model", true);
  r.integer("batch", true, 1, 1e7);
  r.integer("grad_accum", false, 1, 1e6);
  r.string("precision", false);
  r.string("optimizer", false);
  for (const char* b : {"activation_checkpointing", "cuda_graphs", "channels_last", "logits_kept", "tied_embeddings",
                        "pin_memory", "persistent_workers"})
    r.boolean(b, false);
  // Far beyond any real model (as in a scenario's generic model), so that no derived time overflows.
  r.positive_at_most("params", false, 1e14);
  r.positive_at_most("fwd_flops_per_sample", false, 1e18);
  r.integer_pair("image_hw", false, 1, 100000, "[height, width]");
  if (model == "gpt") {  // absent dimensions leave the record not expressible (step_from_input says why)
    r.integer("layers", false, 1, 1e4);
    r.integer("d_model", false, 1, 1e6);
    r.integer("heads", false, 1, 1e4);
    r.integer("seq", false, 1, 1e8);
    r.integer("vocab", false, 1, 1e9);
  }
  if (data == "cpu-jpeg-pipeline") {
    r.integer("num_workers", false, 0, 1024);
    r.integer("prefetch_factor", false, 1, 1024);
    r.positive_at_most("sample_cpu_ms_1thread", false, 1e5);
  }
  if (auto host = r.object("host", false)) host->integer("cpu_cores", false, 1, 1e5);
  // Multi-GPU DDP records (calibrate ddp): a GPU count that is not a whole number was read as one GPU, and a
  // bucket of 1e-300 MiB made millions of buckets.
  r.integer("gpus", false, 1, 1 << 20);
  r.integer("nodes", false, 1, 1 << 20);
  r.string("parallel", false);  // ddp, fsdp, ...: a number or an object here crashed `calibrate ddp`
  if (const auto b = r.positive_at_most("bucket_cap_mb", false, 1e6); b && *b < 0.01)
    r.error("bucket_cap_mb", "must be at least 0.01 MiB, got " + r.json()["bucket_cap_mb"].dump());
}

// The input fields of a train record (what check_train_inputs, step_from_input, the loader and DDP predictions read).
const std::vector<std::string>& input_fields() {
  static const std::vector<std::string> f = {
      "model", "batch", "grad_accum", "precision", "optimizer", "activation_checkpointing", "cuda_graphs",
      "channels_last", "logits_kept", "tied_embeddings", "pin_memory", "persistent_workers", "params",
      "fwd_flops_per_sample", "image_hw", "layers", "d_model", "heads", "seq", "vocab", "num_workers",
      "prefetch_factor", "sample_cpu_ms_1thread", "host", "gpus", "nodes", "parallel", "bucket_cap_mb", "data"};
  return f;
}

// Fields of the reference format that no prediction reads but that sit one letter from one that does: never a typo.
const std::vector<std::string>& other_fields() {
  static const std::vector<std::string> f = {"id", "kind", "gpu", "node", "device", "software", "measured_on", "env"};
  return f;
}

constexpr std::size_t kLongestField = 24;  // "activation_checkpointing", of input_fields() and measured_fields()

// A key of a train record that is no field of the format but a letter or two from an input or measured field
// ("grad_acum", "cuda_graph") is a typo: ignored, it predicted the record as if the field were absent (grad_accum 1).
// Keys far from every field stay accepted: records carry many more (device, software, nccl_version, per-rank
// times, ...). "Far" is tighter than a scenario's suggestion (a third of the letters), which would take "batches" or
// "parts" for typos of "batch" and "params": at most one edit in five letters of the field, and at least one.
void check_unknown_keys(FieldReader& r) {
  static const std::vector<std::string> fields = [] {  // built once, not per record
    std::vector<std::string> f = input_fields();
    f.insert(f.end(), measured_fields().begin(), measured_fields().end());
    return f;
  }();
  const auto& other = other_fields();
  for (auto it = r.json().begin(); it != r.json().end(); ++it) {
    const std::string& k = it.key();
    if (std::find(fields.begin(), fields.end(), k) != fields.end() ||
        std::find(other.begin(), other.end(), k) != other.end())
      continue;
    // A key longer than every field by more than the edits allowed is no typo of one (and a megabyte-long key of a
    // hostile file costs nothing).
    if (k.size() > kLongestField + kLongestField / 5) continue;
    const std::string near = nearest_name(k, fields);
    if (near.empty() || edit_distance(k, near) > std::max<std::size_t>(1, near.size() / 5)) continue;
    r.error(pointer_escape(k), "unknown field (did you mean \"" + near + "\"?)");
  }
}

}  // namespace

std::optional<std::string> step_from_input(const nlohmann::json& in, StepConfig& step) {
  const std::string model = get_or<std::string>(in, "model", "");
  step.micro_batch = get_or<int>(in, "batch", 0);
  step.grad_accum = get_or<int>(in, "grad_accum", 1);
  if (step.micro_batch < 1) return "needs a positive `batch`";
  if (step.grad_accum < 1) return "needs a positive `grad_accum`";
  auto prec = parse_precision(get_or<std::string>(in, "precision", "bf16"));
  if (!prec) return "precision `" + get_or<std::string>(in, "precision", "") + "` is not modelled";
  step.precision = *prec;
  auto opt = parse_optimizer(get_or<std::string>(in, "optimizer", "adamw-fused"));
  if (!opt) {
    std::string names;
    for (const OptimizerKind o : kOptimizers) names += (names.empty() ? "" : ", ") + std::string(to_string(o));
    return "optimizer `" + get_or<std::string>(in, "optimizer", "") + "` is not modelled (modelled: " + names + ")";
  }
  step.optimizer = *opt;
  step.activation_checkpointing = get_or<bool>(in, "activation_checkpointing", false);
  step.cuda_graphs = get_or<bool>(in, "cuda_graphs", false);
  step.channels_last = get_or<bool>(in, "channels_last", true);
  step.logits_kept = get_or<bool>(in, "logits_kept", true);
  ModelSpec& m = step.model;
  m.id = model;
  m.params = get_or<double>(in, "params", 0);
  m.fwd_flops_per_sample = get_or<double>(in, "fwd_flops_per_sample", 0);
  if (in.contains("image_hw") && in["image_hw"].is_array() && in["image_hw"].size() == 2)
    if (in["image_hw"][0].is_number_integer() && in["image_hw"][1].is_number_integer())
      m.input_shape = {3, in["image_hw"][0].get<int>(), in["image_hw"][1].get<int>()};
  if (model == "gpt") {
    m.family = ModelFamily::gpt;
    m.dims.layers = get_or<int>(in, "layers", 0);
    m.dims.d_model = get_or<int>(in, "d_model", 0);
    m.dims.heads = get_or<int>(in, "heads", 0);
    m.dims.vocab = get_or<int>(in, "vocab", 50304);
    m.dims.seq = get_or<int>(in, "seq", 0);
    m.dims.tied_embeddings = get_or<bool>(in, "tied_embeddings", true);
    if (m.dims.layers < 1 || m.dims.d_model < 1 || m.dims.heads < 1 || m.dims.seq < 1)
      return "gpt needs positive layers, d_model, heads and seq";
    if (m.dims.d_model % m.dims.heads != 0) return "gpt needs heads that divide d_model";
    return std::nullopt;
  }
  if (auto vd = vit_dims(model)) {
    m.family = ModelFamily::vit;
    m.dims = *vd;
    return std::nullopt;
  }
  if (swin_dims(model)) {
    m.family = ModelFamily::swin;
    return std::nullopt;
  }
  if (known_cnn(model)) {
    m.family = ModelFamily::cnn;
    return std::nullopt;
  }
  m.family = ModelFamily::generic;
  if (m.params <= 0 || m.fwd_flops_per_sample <= 0)
    return "model `" + model + "` is unknown and lacks `params` / `fwd_flops_per_sample` for a generic model";
  return std::nullopt;
}

std::vector<RunRecord> parse_runs(const std::vector<std::string>& lines, const std::string& file,
                                  std::vector<std::string>& errors) {
  std::vector<RunRecord> out;
  std::map<std::string, int> id_line;  // the line of each id (a second record of an id was taken as another run)
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& text = lines[i];
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = file + ":" + std::to_string(i + 1);
    JsonTextError err;
    auto parsed = parse_json_text(text, /*comments=*/false, err);
    if (!parsed) {
      errors.push_back(where + ":" + std::to_string(err.col) + ": not valid JSON (expected one JSON object per line): " +
                       err.what);
      continue;
    }
    nlohmann::json j = std::move(*parsed);
    if (!j.is_object()) {
      errors.push_back(where + ":/: expected one JSON object per line, got " + std::string(j.type_name()));
      continue;
    }
    const std::size_t before = errors.size();
    FieldReader r(j, where, "", errors);
    RunRecord rec;
    rec.line = static_cast<int>(i + 1);
    rec.id = r.string("id", true).value_or("");
    rec.kind = r.string("kind", true).value_or("");
    if (r.has("id") && r.json()["id"].is_string()) {
      if (const auto [at, first] = id_line.emplace(rec.id, rec.line); !first)
        r.error("id", "duplicate id " + r.json()["id"].dump() + ", also on line " + std::to_string(at->second));
    }
    if (rec.kind == "train") {
      rec.data = r.string("data", true).value_or("");
      check_train_inputs(r, rec.data);
      check_unknown_keys(r);
      // A step of up to a day, a peak of up to 100,000 GiB: beyond any measured run, short of overflow.
      // 1 us to a day: no training step takes under a microsecond (1e-300 fitted a "0 us" CPU cost).
      if (r.has("step_ms")) rec.measured.step_ms = r.number_in("step_ms", true, 0.001, 8.64e7);
      if (r.has("peak_mem_gib")) rec.measured.peak_mem_gib = r.positive_at_most("peak_mem_gib", true, 1e5);
      rec.measured.oom = r.boolean("oom", false).value_or(false);
    }
    if (errors.size() != before) continue;
    rec.input = j;
    for (const auto& f : measured_fields()) rec.input.erase(f);
    if (rec.kind == "train") {
      auto why = step_from_input(rec.input, rec.step);
      // Only the two kinds of the reference format have a model; any other is counted as not expressible.
      if (!why && rec.data != "synthetic-on-gpu" && rec.data != "cpu-jpeg-pipeline")
        why = "unknown `data` \"" + rec.data + "\" (expected synthetic-on-gpu or cpu-jpeg-pipeline)";
      rec.expressible = !why;
      rec.reason = why.value_or("");
    }
    out.push_back(std::move(rec));
  }
  return out;
}

std::vector<RunRecord> load_runs(const std::string& path, std::vector<std::string>& errors) {
  std::string text, error;
  if (!read_input_file(path, text, error)) {
    errors.push_back(path + ": " + error + " (the runs file)");
    return {};
  }
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  // A JSON document spread over lines (a profile, a pretty-printed record) is one problem, not one per line.
  if (auto problem = document_not_json_lines(text, path, "calibrate/measured/h200-2026-12.jsonl")) {
    errors.push_back(*problem);
    return {};
  }
  std::vector<std::string> found;
  auto out = parse_runs(lines, path, found);
  append_first_problems(errors, found, path);
  return out;
}

std::string join_paths(const std::vector<std::string>& paths, const std::string& sep) {
  std::string s;
  for (const auto& p : paths) s += (s.empty() ? "" : sep) + p;
  return s;
}

}  // namespace gp::calibrate
