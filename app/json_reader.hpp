// Typed, path-tracking reading of user JSON (scenarios, catalogs). Every problem becomes one Diagnostic naming
// file, JSON pointer and what was expected; unknown keys are reported with the nearest valid name.
#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "app/diagnostics.hpp"
#include "calibrate/json_text.hpp"

namespace gp::app {

using nlohmann::json;

// Parses a file as JSON with // and /* */ comments allowed. A syntax error is reported with line and column.
// When `text_out` is given it receives the file's bytes. Returns nullopt on any problem.
std::optional<json> parse_json_file(const std::string& path, Diagnostics& diags,
                                    std::string* text_out = nullptr);
// Same for text already in memory; `name` is what diagnostics call the file.
std::optional<json> parse_json_text(const std::string& text, const std::string& name, Diagnostics& diags);

// "Did you mean" suggestions and JSON-pointer escaping (calibrate/json_text.hpp, shared with the runs-file reader
// of calibrate/).
using calibrate::edit_distance;
using calibrate::nearest_name;
using calibrate::pointer_escape;

// What to say after "unknown ... id ID", for scenarios, catalogs and the comm command alike: the ids that contain
// ID when they are few (a family name: "h100", "nvlink4", "p5.48xlarge"; a short word is also within the typo
// distance of unrelated ids, "h100" two edits from "a10g"), else the nearest id when it is a likely typo, else
// where to list them (`list_kind`; nothing when empty). Begins with a space: " (did you mean \"h100-sxm\"?)".
std::string unknown_id_hint(const std::string& id, const std::vector<std::string>& ids, const std::string& list_kind);
template <class Map>
std::string unknown_id_hint(const std::string& id, const Map& map, const std::string& list_kind) {
  std::vector<std::string> ids;
  ids.reserve(map.size());
  for (const auto& kv : map) ids.push_back(kv.first);
  return unknown_id_hint(id, ids, list_kind);
}

// A short rendering of a JSON value for messages: strings quoted, long values truncated.
std::string brief(const json& v);

// Reads the fields of one JSON object. Each accessor marks its key as known; finish() reports the rest as
// unknown fields. Accessors return nullopt when the key is absent (reporting it if required) or invalid.
class ObjectReader {
 public:
  ObjectReader(const json* obj, std::string file, std::string pointer, Diagnostics& diags);

  [[nodiscard]] bool ok() const { return obj_ != nullptr; }
  // The object being read (nullptr when it was not an object).
  [[nodiscard]] const json* object_ptr() const { return obj_; }
  [[nodiscard]] bool has(const char* key) const;
  [[nodiscard]] std::string path(const char* key) const { return pointer_ + "/" + pointer_escape(key); }
  [[nodiscard]] const std::string& pointer() const { return pointer_; }
  [[nodiscard]] const std::string& file() const { return file_; }
  Diagnostics& diags() { return diags_; }

  // A number in [min, max].
  std::optional<double> number(const char* key, bool required, double min, double max);
  // A positive number (> 0).
  std::optional<double> positive(const char* key, bool required);
  // An integer in [min, max].
  std::optional<long long> integer(const char* key, bool required, long long min, long long max);
  std::optional<std::string> string(const char* key, bool required);
  std::optional<bool> boolean(const char* key, bool required);
  // A string that must be one of `choices`.
  std::optional<std::string> choice(const char* key, bool required, std::initializer_list<const char*> choices);
  std::optional<std::string> choice(const char* key, bool required, const std::vector<std::string>& choices);
  // A nested object (nullptr when absent or not an object; wrong type is reported).
  const json* object(const char* key, bool required);
  // A nested array (nullptr when absent or not an array).
  const json* array(const char* key, bool required);
  // Marks a key as known without reading it (a caller handles it).
  void accept(const char* key) {
    known_.insert(key);
    diags_.known_field(pointer_, key);
  }

  // Reports keys that no accessor asked for, suggesting the nearest known key.
  void finish(const std::vector<std::string>& extra_known = {});

  void error(const std::string& pointer, const std::string& message) { diags_.add(file_, pointer, message); }

 private:
  const json* get(const char* key, bool required);

  const json* obj_;
  std::string file_;
  std::string pointer_;
  Diagnostics& diags_;
  std::set<std::string> known_;
};

}  // namespace gp::app
