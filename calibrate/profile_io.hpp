// Reads and writes GPU profiles (schema "gpuplan-profile/1", written by gpuplan-probe; see
// docs/calibration.md). Problems are reported as lines `FILE:/json/path: what was expected, got X`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/gpu_profile.hpp"

namespace gp::calibrate {

// Parses a profile document; appends one line per problem to `errors` (prefixed with `file`).
std::optional<GpuProfile> parse_profile(const nlohmann::json& doc, const std::string& file,
                                        std::vector<std::string>& errors);

// Reads and parses a profile file. nullopt (with errors) when unreadable or invalid.
std::optional<GpuProfile> load_profile(const std::string& path, std::vector<std::string>& errors);

// Serialises a profile in the same schema (derived profiles carry "derived": true and "derived_from").
nlohmann::json profile_to_json(const GpuProfile& p);

}  // namespace gp::calibrate
