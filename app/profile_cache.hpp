// GPU profiles, fitted constants and simulation constants for evaluate(), loaded once per GPU type.
//
// Profile of a GPU: the profile in calibrate/profiles/ whose "gpu_id" is the GPU's catalog id (any file name, e.g.
// h200.json) when measured; otherwise derived from the H200 profile (that folder's, else the provisional one
// assembled from the reference runs' micro records) by datasheet ratios (models/profile_derive.hpp). Fitted
// constants: the fit-*.json whose "profile" is that GPU's profile file, else the H200's, else the compute model's
// defaults; of several fit files for one profile P.json, fit-P.json (the one `calibrate check` reads by default),
// else the first in name order. Files are scanned in name order, so the choice is deterministic.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "calibrate/fit.hpp"
#include "models/compute_model.hpp"
#include "models/gpu_profile.hpp"
#include "models/hardware.hpp"
#include "sim/job_inputs.hpp"

namespace gp::app {

struct DeviceBundle {
  GpuProfile profile;
  DeviceModel device;
  calibrate::FitConstants constants;
  std::string constants_path;       // the fitted-constants file read (empty: the compute model's defaults)
  std::vector<std::string> notes;   // how the profile / constants were obtained when not measured
};

class ProfileCache {
 public:
  // `dir`: the profiles folder (calibrate/profiles); `cat` supplies datasheet figures.
  ProfileCache(std::string dir, const Catalog& cat);
  // The bundle for `gpu`; nullptr (with `error`) when no profile can be found or derived.
  const DeviceBundle* get(const GpuSpec& gpu, std::string& error);
  // Simulation constants (sim-constants.json); defaults of 0 with a note when missing.
  const sim::SimConstants& sim_constants() const { return sim_; }
  const std::vector<std::string>& sim_notes() const { return sim_notes_; }

 private:
  std::string dir_;
  const Catalog& cat_;
  std::map<std::string, std::unique_ptr<DeviceBundle>> cache_;
  std::map<std::string, std::string> profile_files_;  // gpu_id -> profile file (measured ones)
  std::map<std::string, GpuProfile> profiles_;        // gpu_id -> its parsed profile (read once)
  std::map<std::string, std::string> fit_files_;      // gpu_id -> fitted-constants file
  sim::SimConstants sim_;
  std::vector<std::string> sim_notes_;
};

// Reads sim-constants.json at `path`; a missing file or field leaves 0 and adds a line to `notes`.
sim::SimConstants read_sim_constants(const std::string& path, std::vector<std::string>& notes);

// The folder holding calibrate/profiles: ./calibrate/profiles when present, else the source tree's.
std::string default_profiles_dir();

}  // namespace gp::app
