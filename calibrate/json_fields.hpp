// Small typed accessors over nlohmann::json that record a `FILE[:LINE]:/pointer: expectation` line
// instead of throwing, so every problem of a document is reported at once. Internal to calibrate/.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace gp::calibrate {

// Reads and parses a JSON file (comments allowed). On failure appends one line to `errors` — "PATH: cannot open
// the WHAT file" or "PATH:LINE:COL: not valid JSON: ..." — and returns nullopt.
std::optional<nlohmann::json> read_json_file(const std::string& path, const std::string& what,
                                             std::vector<std::string>& errors);

class FieldReader {
 public:
  // `where` is the prefix of every error line: "file" or "file:line".
  FieldReader(const nlohmann::json& obj, std::string where, std::string base, std::vector<std::string>& errors)
      : obj_(obj), where_(std::move(where)), base_(std::move(base)), errors_(errors) {}

  // Required / optional number; `positive` rejects values <= 0.
  std::optional<double> number(const std::string& key, bool required, bool positive = false);
  // Required / optional number that may be zero but not negative.
  std::optional<double> non_negative(const std::string& key, bool required);
  // Required / optional whole number in [lo, hi] ("must be an integer in [lo, hi], got X").
  std::optional<double> integer(const std::string& key, bool required, double lo, double hi);
  // Required / optional number in (0, hi] ("must be a number in (0, hi], got X").
  std::optional<double> positive_at_most(const std::string& key, bool required, double hi);
  // Required / optional number in [lo, hi] ("must be a number in [lo, hi], got X").
  std::optional<double> number_in(const std::string& key, bool required, double lo, double hi);
  // Required / optional number that is 0 (what `zero_means`, e.g. "not measured") or in [lo, hi] ("must be 0 (not
  // measured) or a number in [lo, hi], got X").
  std::optional<double> zero_or_in(const std::string& key, bool required, double lo, double hi,
                                   const std::string& zero_means);
  // Required / optional pair of whole numbers in [lo, hi], as `shape` names them ("[height, width]"): "must be
  // SHAPE, two integers in [lo, hi], got X".
  std::optional<std::pair<int, int>> integer_pair(const std::string& key, bool required, int lo, int hi,
                                                  const std::string& shape);
  std::optional<std::string> string(const std::string& key, bool required);
  std::optional<bool> boolean(const std::string& key, bool required);
  // Sub-object reader (an empty object when absent and not required).
  std::optional<FieldReader> object(const std::string& key, bool required);
  const nlohmann::json& json() const { return obj_; }
  std::string pointer(const std::string& key) const { return base_ + "/" + key; }
  void error(const std::string& key, const std::string& what);
  bool has(const std::string& key) const { return obj_.is_object() && obj_.contains(key) && !obj_[key].is_null(); }

 private:
  const nlohmann::json& obj_;
  std::string where_, base_;
  std::vector<std::string>& errors_;
};

}  // namespace gp::calibrate
