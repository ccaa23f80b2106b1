#include "app/profile_cache.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "calibrate/json_text.hpp"
#include "calibrate/profile_io.hpp"
#include "models/profile_derive.hpp"

namespace gp::app {

namespace fs = std::filesystem;

namespace {

constexpr const char* kBaseGpu = "h200-sxm";

std::optional<GpuProfile> load_if(const std::string& path, std::vector<std::string>& errors) {
  if (!fs::exists(path)) return std::nullopt;
  return calibrate::load_profile(path, errors);
}

}  // namespace

sim::SimConstants read_sim_constants(const std::string& path, std::vector<std::string>& notes) {
  sim::SimConstants k;
  if (!fs::exists(path)) {
    notes.push_back(path + ": missing; no per-step noise, NUMA penalty or image pull rates");
    return k;
  }
  std::string text, error;
  if (!calibrate::read_input_file(path, text, error)) {
    notes.push_back(path + ": " + error);
    return k;
  }
  calibrate::JsonTextError perr;
  const auto parsed = calibrate::parse_json_text(text, true, perr);
  if (!parsed) {
    notes.push_back(path + ":" + std::to_string(perr.line) + ":" + std::to_string(perr.col) + ": not valid JSON: " + perr.what);
    return k;
  }
  if (!parsed->is_object()) {
    notes.push_back(path + ":/: expected an object of named constants");
    return k;
  }
  try {
    const auto& doc = *parsed;
    auto num = [&](const char* key) {
      const auto it = doc.find(key);
      if (it == doc.end() || !it->is_object() || !it->contains("value") || !(*it)["value"].is_number()) {
        notes.push_back(path + ":/" + key + "/value: expected a number");
        return 0.0;
      }
      return (*it)["value"].get<double>();
    };
    // Each constant within a range far wider than any fit could give (a slowdown of 1e9 made the loader
    // simulation spin for minutes; a negative rate or efficiency was used as given).
    // Out of range or unreadable: a note, and the built-in value (sim/job_inputs.hpp SimConstants) is kept.
    auto in_range = [&](const char* key, double lo, double hi, bool lo_open, double fallback) {
      const std::size_t before = notes.size();
      const double v = num(key);
      if (notes.size() != before) return fallback;
      if (!(lo_open ? v > lo : v >= lo) || !(v <= hi)) {
        std::ostringstream range;
        range << (lo_open ? "(" : "[") << lo << ", " << hi << "]";
        notes.push_back(path + ":/" + key + "/value: expected a number in " + range.str() + ", got " +
                        doc[key]["value"].dump());
        return fallback;
      }
      return v;
    };
    k.compute_step_cv = in_range("compute_step_cv", 0, 1, false, k.compute_step_cv);
    k.numa_remote_penalty = in_range("numa_remote_penalty", 0, 10, false, k.numa_remote_penalty);
    k.image_pull_rate = ByteRate(in_range("image_pull_MBps", 0, 1e6, true, k.image_pull_rate.value() / 1e6) * 1e6);
    k.image_unpack_rate =
        ByteRate(in_range("image_unpack_MBps", 0, 1e6, true, k.image_unpack_rate.value() / 1e6) * 1e6);
    k.framework_import = Seconds(in_range("framework_import_s", 0, 3600, false, k.framework_import.value()));
    k.checkpoint_d2h_rate =
        ByteRate(in_range("checkpoint_d2h_GBps", 0, 1e4, true, k.checkpoint_d2h_rate.value() / 1e9) * 1e9);
    k.checkpoint_write_efficiency = in_range("checkpoint_write_efficiency", 0, 1, true, k.checkpoint_write_efficiency);
    k.cpu_all_core_slowdown = in_range("cpu_all_core_slowdown", 0, 10, false, k.cpu_all_core_slowdown);
    for (auto [key, v] : {std::pair{"step_host_cpu_log_sd", &k.step_spread.cpu_log_sd},
                          std::pair{"step_gpu_log_sd", &k.step_spread.gpu_log_sd},
                          std::pair{"step_derived_gpu_log_sd", &k.step_derived_gpu_log_sd},
                          std::pair{"step_known_host_cpu_log_sd", &k.step_known_host_cpu_log_sd},
                          std::pair{"loader_log_sd", &k.loader_log_sd}}) {
      // loader_log_sd came after the others (2026-12-07): a constants file without it keeps the range it gave.
      if (std::string(key) == "loader_log_sd" && !doc.contains(key)) continue;
      *v = num(key);
      if (*v < 0 || !std::isfinite(*v)) {
        notes.push_back(path + ":/" + key + "/value: expected a log standard deviation >= 0");
        *v = 0;
      }
    }
    k.source = path;
  } catch (const std::exception& e) {
    notes.push_back(path + ": " + e.what());
  }
  return k;
}

std::string default_profiles_dir() {
  if (fs::is_directory("calibrate/profiles")) return "calibrate/profiles";
  return std::string(GPUPLAN_SOURCE_DIR) + "/calibrate/profiles";
}

ProfileCache::ProfileCache(std::string dir, const Catalog& cat) : dir_(std::move(dir)), cat_(cat) {
  sim_ = read_sim_constants(dir_ + "/sim-constants.json", sim_notes_);
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  std::map<std::string, std::string> profile_by_name;  // file name -> gpu_id
  for (const std::string& f : files) {
    const std::string name = fs::path(f).filename().string();
    if (name.rfind("fit-", 0) == 0 || name == "sim-constants.json") continue;
    std::vector<std::string> errors;
    auto p = calibrate::load_profile(f, errors);
    if (!p || p->gpu_id.empty() || p->derived) continue;
    const std::string gpu_id = p->gpu_id;  // read before the profile is moved into the map
    if (profile_files_.emplace(gpu_id, f).second) profiles_.emplace(gpu_id, std::move(*p));
    profile_by_name[name] = gpu_id;
  }
  for (const std::string& f : files) {
    if (fs::path(f).filename().string().rfind("fit-", 0) != 0) continue;
    std::vector<std::string> errors;
    auto c = calibrate::load_constants(f, errors);
    if (!c) continue;
    auto it = profile_by_name.find(fs::path(c->profile).filename().string());
    if (it == profile_by_name.end()) continue;
    // The default constants of a profile P.json are fit-P.json (what `calibrate check` reads by default); other
    // fit files of the same profile (fit-h200-bytes.json) are used only when it is missing.
    if (fs::path(f).filename().string() == "fit-" + fs::path(c->profile).stem().string() + ".json")
      fit_files_[it->second] = f;
    else
      fit_files_.emplace(it->second, f);
  }
}

const DeviceBundle* ProfileCache::get(const GpuSpec& gpu, std::string& error) {
  if (auto it = cache_.find(gpu.id); it != cache_.end()) return it->second.get();
  auto b = std::make_unique<DeviceBundle>();
  std::vector<std::string> errors;
  std::optional<GpuProfile> prof;
  if (auto it = profiles_.find(gpu.id); it != profiles_.end()) prof = it->second;
  if (!prof) {
    std::string base_path;
    std::optional<GpuProfile> base;
    if (auto it = profiles_.find(kBaseGpu); it != profiles_.end()) {
      base_path = profile_files_.at(kBaseGpu);
      base = it->second;
    }
    if (!base) {
      base_path = std::string(GPUPLAN_SOURCE_DIR) + "/tests/data/h200-provisional-profile.json";
      base = load_if(base_path, errors);
    }
    const GpuSpec* base_gpu = Catalog::find(cat_.gpus, kBaseGpu);
    if (!base || !base_gpu) {
      error = "no GPU profile for \"" + gpu.id + "\" and no H200 profile to derive one from" +
              (errors.empty() ? std::string() : ": " + errors.front());
      return nullptr;
    }
    prof = gpu.id == kBaseGpu ? *base : derive_profile(*base, *base_gpu, gpu);
    b->notes.push_back("GPU profile of " + gpu.id + ": " +
                       (gpu.id == kBaseGpu ? std::string("read from ") : "derived by datasheet ratios from ") + base_path);
  }
  b->profile = *prof;
  b->device = make_device_model(b->profile);
  std::optional<calibrate::FitConstants> fit;
  for (const std::string& id : {gpu.id, std::string(kBaseGpu)}) {
    auto it = fit_files_.find(id);
    if (it != fit_files_.end() && (fit = calibrate::load_constants(it->second, errors))) {
      b->constants_path = it->second;
      break;
    }
  }
  if (fit) {
    b->constants = *fit;
  } else {
    b->notes.push_back("no fitted constants in " + dir_ + ": compute-model defaults used");
  }
  return (cache_[gpu.id] = std::move(b)).get();
}

}  // namespace gp::app
