#include "calibrate/json_fields.hpp"

namespace gp::calibrate {

void FieldReader::error(const std::string& key, const std::string& what) {
  errors_.push_back(where_ + ":" + pointer(key) + ": " + what);
}

std::optional<double> FieldReader::number(const std::string& key, bool required, bool positive) {
  if (!has(key)) {
    if (required) error(key, "expected a number, got nothing");
    return std::nullopt;
  }
  const auto& v = obj_[key];
  if (!v.is_number()) {
    error(key, "expected a number, got " + v.dump());
    return std::nullopt;
  }
  const double x = v.get<double>();
  if (positive && !(x > 0)) {
    error(key, "must be positive, got " + v.dump());
    return std::nullopt;
  }
  return x;
}

std::optional<std::string> FieldReader::string(const std::string& key, bool required) {
  if (!has(key)) {
    if (required) error(key, "expected a string, got nothing");
    return std::nullopt;
  }
  const auto& v = obj_[key];
  if (!v.is_string()) {
    error(key, "expected a string, got " + v.dump());
    return std::nullopt;
  }
  return v.get<std::string>();
}

std::optional<bool> FieldReader::boolean(const std::string& key, bool required) {
  if (!has(key)) {
    if (required) error(key, "expected true or false, got nothing");
    return std::nullopt;
  }
  const auto& v = obj_[key];
  if (!v.is_boolean()) {
    error(key, "expected true or false, got " + v.dump());
    return std::nullopt;
  }
  return v.get<bool>();
}

std::optional<FieldReader> FieldReader::object(const std::string& key, bool required) {
  static const nlohmann::json empty = nlohmann::json::object();
  if (!has(key)) {
    if (required) {
      error(key, "expected an object, got nothing");
      return std::nullopt;
    }
    return FieldReader(empty, where_, pointer(key), errors_);
  }
  if (!obj_[key].is_object()) {
    error(key, "expected an object, got " + obj_[key].dump());
    return std::nullopt;
  }
  return FieldReader(obj_[key], where_, pointer(key), errors_);
}

}  // namespace gp::calibrate
