#include "app/json_reader.hpp"

#include "calibrate/json_text.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace gp::app {

namespace {

const char* type_name(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

std::string fmt_num(double x) {
  std::ostringstream os;
  os << x;
  return os.str();
}

}  // namespace

std::optional<json> parse_json_text(const std::string& text, const std::string& name, Diagnostics& diags) {
  calibrate::JsonTextError err;
  // An empty (or blank) file is no syntax error at a place: say what it is (the parser's "unexpected end of input"
  // came without a line and column for an empty file, and at 2:1 for a blank line).
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    diags.add(name, "", "is empty: expected a JSON object");
    return std::nullopt;
  }
  auto doc = calibrate::parse_json_text(text, /*comments=*/true, err);
  if (!doc) diags.add_at(name, err.line, err.col, "invalid JSON: " + err.what);
  return doc;
}

std::optional<json> parse_json_file(const std::string& path, Diagnostics& diags, std::string* text_out) {
  std::string text, error;
  if (!calibrate::read_input_file(path, text, error)) {
    diags.add(path, "", error);
    return std::nullopt;
  }
  auto doc = parse_json_text(text, path, diags);
  if (text_out) *text_out = std::move(text);
  return doc;
}


std::string unknown_id_hint(const std::string& id, const std::vector<std::string>& ids, const std::string& list_kind) {
  std::vector<std::string> family;
  for (const auto& k : ids)
    if (!id.empty() && k.size() > id.size() && k.find(id) != std::string::npos) family.push_back(k);
  if (!family.empty() && family.size() <= 4) {
    std::string hint = family.size() == 1 ? " (did you mean" : " (did you mean one of";
    for (std::size_t i = 0; i < family.size(); ++i) hint += (i ? ", \"" : " \"") + family[i] + "\"";
    return hint + "?)";
  }
  if (const std::string near = nearest_name(id, ids); !near.empty()) return " (did you mean \"" + near + "\"?)";
  return list_kind.empty() ? std::string() : " (see `gpuplan catalog list " + list_kind + "`)";
}

std::string brief(const json& v) {
  std::string s = v.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

ObjectReader::ObjectReader(const json* obj, std::string file, std::string pointer, Diagnostics& diags)
    : obj_(obj), file_(std::move(file)), pointer_(std::move(pointer)), diags_(diags) {
  if (obj_ && !obj_->is_object()) {
    diags_.add(file_, pointer_, std::string("must be an object, got ") + type_name(*obj_));
    obj_ = nullptr;
  }
}

bool ObjectReader::has(const char* key) const { return obj_ && obj_->contains(key); }

const json* ObjectReader::get(const char* key, bool required) {
  known_.insert(key);
  diags_.known_field(pointer_, key);
  if (!obj_) return nullptr;
  auto it = obj_->find(key);
  if (it == obj_->end()) {
    if (required) diags_.add(file_, pointer_.empty() ? "/" : pointer_, std::string("missing required field \"") + key + "\"");
    return nullptr;
  }
  return &*it;
}

std::optional<double> ObjectReader::number(const char* key, bool required, double min, double max) {
  const json* v = get(key, required);
  if (!v) return std::nullopt;
  if (!v->is_number()) {
    error(path(key), "must be a number in [" + fmt_num(min) + ", " + fmt_num(max) + "], got " + brief(*v));
    return std::nullopt;
  }
  double x = v->get<double>();
  if (!std::isfinite(x) || x < min || x > max) {
    error(path(key), "must be a number in [" + fmt_num(min) + ", " + fmt_num(max) + "], got " + brief(*v));
    return std::nullopt;
  }
  return x;
}

std::optional<double> ObjectReader::positive(const char* key, bool required) {
  const json* v = get(key, required);
  if (!v) return std::nullopt;
  // Capped far above any quantity a scenario or catalog gives, so that derived times and costs stay finite.
  if (!v->is_number() || !(v->get<double>() > 0) || !(v->get<double>() <= 1e15)) {
    error(path(key), "must be a positive number (at most 1e+15), got " + brief(*v));
    return std::nullopt;
  }
  return v->get<double>();
}

std::optional<long long> ObjectReader::integer(const char* key, bool required, long long min, long long max) {
  const json* v = get(key, required);
  if (!v) return std::nullopt;
  bool integral = v->is_number_integer() || v->is_number_unsigned() ||
                  (v->is_number_float() && std::floor(v->get<double>()) == v->get<double>() &&
                   std::fabs(v->get<double>()) < 9e15);
  const bool unbounded = max >= (1LL << 30);
  std::string want = min == 1 && unbounded   ? "a positive integer"
                     : min == 0 && unbounded ? "a non-negative integer"
                                             : "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  if (!integral) {
    error(path(key), "must be " + want + ", got " + brief(*v));
    return std::nullopt;
  }
  long long x = v->is_number_float() ? static_cast<long long>(v->get<double>()) : v->get<long long>();
  if (x < min) {
    error(path(key), "must be " + want + ", got " + brief(*v));
    return std::nullopt;
  }
  if (x > max) {
    error(path(key), "must be at most " + std::to_string(max) + ", got " + brief(*v));
    return std::nullopt;
  }
  return x;
}

std::optional<std::string> ObjectReader::string(const char* key, bool required) {
  const json* v = get(key, required);
  if (!v) return std::nullopt;
  if (!v->is_string()) {
    error(path(key), std::string("must be a string, got ") + brief(*v));
    return std::nullopt;
  }
  return v->get<std::string>();
}

std::optional<bool> ObjectReader::boolean(const char* key, bool required) {
  const json* v = get(key, required);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) {
    error(path(key), std::string("must be true or false, got ") + brief(*v));
    return std::nullopt;
  }
  return v->get<bool>();
}

std::optional<std::string> ObjectReader::choice(const char* key, bool required,
                                                std::initializer_list<const char*> choices) {
  return choice(key, required, std::vector<std::string>(choices.begin(), choices.end()));
}

std::optional<std::string> ObjectReader::choice(const char* key, bool required,
                                                const std::vector<std::string>& names) {
  const json* v = get(key, required);
  if (!v) return std::nullopt;
  std::string list;
  for (const std::string& c : names) list += (list.empty() ? "" : ", ") + c;
  if (v->is_string()) {
    auto s = v->get<std::string>();
    if (std::find(names.begin(), names.end(), s) != names.end()) return s;
    auto near = nearest_name(s, names);
    error(path(key), "must be one of " + list + ", got " + brief(*v) +
                         (near.empty() ? "" : " (did you mean \"" + near + "\"?)"));
    return std::nullopt;
  }
  error(path(key), "must be one of " + list + ", got " + brief(*v));
  return std::nullopt;
}

const json* ObjectReader::object(const char* key, bool required) {
  const json* v = get(key, required);
  if (!v) return nullptr;
  if (!v->is_object()) {
    error(path(key), std::string("must be an object, got ") + type_name(*v));
    return nullptr;
  }
  return v;
}

const json* ObjectReader::array(const char* key, bool required) {
  const json* v = get(key, required);
  if (!v) return nullptr;
  if (!v->is_array()) {
    error(path(key), std::string("must be an array, got ") + type_name(*v));
    return nullptr;
  }
  return v;
}

void ObjectReader::finish(const std::vector<std::string>& extra_known) {
  if (!obj_) return;
  std::vector<std::string> names(known_.begin(), known_.end());
  names.insert(names.end(), extra_known.begin(), extra_known.end());
  for (auto it = obj_->begin(); it != obj_->end(); ++it) {
    const std::string& k = it.key();
    if (known_.count(k) || std::find(extra_known.begin(), extra_known.end(), k) != extra_known.end()) continue;
    auto near = nearest_name(k, names);
    error(pointer_ + "/" + pointer_escape(k),
          "unknown field" + (near.empty() ? std::string() : " (did you mean \"" + near + "\"?)"));
  }
}

}  // namespace gp::app
