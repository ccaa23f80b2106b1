#include <cmath>
#include <iomanip>
#include <sstream>
#include "calibrate/json_fields.hpp"
#include "calibrate/json_text.hpp"

namespace gp::calibrate {

std::optional<nlohmann::json> read_json_file(const std::string& path, const std::string& what,
                                             std::vector<std::string>& errors) {
  std::string text, error;
  if (!read_input_file(path, text, error)) {
    errors.push_back(path + ": " + error + " (the " + what + " file)");
    return std::nullopt;
  }
  JsonTextError err;
  auto doc = parse_json_text(text, /*comments=*/true, err);
  if (!doc)
    errors.push_back(path + ":" + std::to_string(err.line) + ":" + std::to_string(err.col) + ": not valid JSON: " + err.what);
  return doc;
}

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

std::optional<double> FieldReader::non_negative(const std::string& key, bool required) {
  const auto x = number(key, required);
  if (x && *x < 0) {
    error(key, "must be zero or positive, got " + obj_[key].dump());
    return std::nullopt;
  }
  return x;
}

namespace {
std::string num(double x) {  // whole numbers in full ("10000000", not "1e+07")
  std::ostringstream o;
  if (std::floor(x) == x && std::abs(x) < 1e15) o << std::fixed << std::setprecision(0);
  o << x;
  return o.str();
}
}  // namespace

std::optional<double> FieldReader::integer(const std::string& key, bool required, double lo, double hi) {
  const auto x = number(key, required);
  if (x && !(*x >= lo && *x <= hi && std::floor(*x) == *x)) {
    error(key, "must be an integer in [" + num(lo) + ", " + num(hi) + "], got " + obj_[key].dump());
    return std::nullopt;
  }
  return x;
}

std::optional<std::pair<int, int>> FieldReader::integer_pair(const std::string& key, bool required, int lo, int hi,
                                                             const std::string& shape) {
  const std::string expected = shape + ", two integers in [" + num(lo) + ", " + num(hi) + "]";
  if (!has(key)) {
    if (required) error(key, "expected " + expected + ", got nothing");
    return std::nullopt;
  }
  const auto& v = obj_[key];
  const auto whole = [&](const nlohmann::json& x) {
    if (!x.is_number()) return false;
    const double d = x.get<double>();
    return d >= lo && d <= hi && std::floor(d) == d;
  };
  if (!v.is_array() || v.size() != 2 || !whole(v[0]) || !whole(v[1])) {
    error(key, "must be " + expected + ", got " + v.dump());
    return std::nullopt;
  }
  return std::pair<int, int>{static_cast<int>(v[0].get<double>()), static_cast<int>(v[1].get<double>())};
}

std::optional<double> FieldReader::number_in(const std::string& key, bool required, double lo, double hi) {
  const auto x = number(key, required);
  if (x && !(*x >= lo && *x <= hi)) {
    error(key, "must be a number in [" + num(lo) + ", " + num(hi) + "], got " + obj_[key].dump());
    return std::nullopt;
  }
  return x;
}

std::optional<double> FieldReader::zero_or_in(const std::string& key, bool required, double lo, double hi,
                                              const std::string& zero_means) {
  const auto x = number(key, required);
  if (x && !(*x == 0 || (*x >= lo && *x <= hi))) {
    error(key, "must be 0 (" + zero_means + ") or a number in [" + num(lo) + ", " + num(hi) + "], got " +
                   obj_[key].dump());
    return std::nullopt;
  }
  return x;
}

std::optional<double> FieldReader::positive_at_most(const std::string& key, bool required, double hi) {
  const auto x = number(key, required);
  if (x && !(*x > 0 && *x <= hi)) {
    error(key, "must be a number in (0, " + num(hi) + "], got " + obj_[key].dump());
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
