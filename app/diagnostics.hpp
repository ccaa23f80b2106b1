// User-input problems, collected rather than thrown, so that every problem in a file is reported at once.
// Each renders as one line: `FILE:/json/pointer: what was expected, got X` (with `:LINE:COL` for syntax errors).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace gp::app {

struct Diagnostic {
  std::string file;     // path as the user gave it
  std::string pointer;  // RFC 6901 JSON pointer, "" for the whole document
  std::string message;  // what was expected, and what was found
  int line = 0;         // 1-based, 0 when unknown (only syntax errors carry it)
  int column = 0;

  // One line: "file:/path: message" or "file:line:col: message".
  [[nodiscard]] std::string render() const;
};

class Diagnostics {
 public:
  void add(std::string file, std::string pointer, std::string message) {
    items_.push_back({std::move(file), std::move(pointer), std::move(message), 0, 0});
  }
  void add_at(std::string file, int line, int column, std::string message) {
    items_.push_back({std::move(file), "", std::move(message), line, column});
  }
  [[nodiscard]] bool empty() const { return items_.empty(); }
  [[nodiscard]] std::size_t size() const { return items_.size(); }
  [[nodiscard]] const std::vector<Diagnostic>& items() const { return items_; }
  // All problems, one line each, newline-terminated. Past three lines at one JSON path, one line counts the rest.
  [[nodiscard]] std::string render() const;
  // The problems come from the configurations of a sweep: the count line says so ("the same problem in N more
  // configurations of the sweep") instead of counting problems at the path.
  void mark_sweep() { sweep_ = true; }
  // Where the readers looked for each field (the object's pointer), so that a field found in the wrong object can
  // be told where it belongs: ObjectReader reports every key it reads or accepts, kept only after
  // record_field_homes() (the scenario reader's one skeleton parse; not every configuration of a sweep).
  void record_field_homes() { record_homes_ = true; }
  void known_field(const std::string& object_pointer, const std::string& key) {
    if (record_homes_) homes_[key].insert(object_pointer);
  }
  [[nodiscard]] const std::map<std::string, std::set<std::string>>& field_homes() const { return homes_; }

 private:
  std::vector<Diagnostic> items_;
  bool sweep_ = false;
  bool record_homes_ = false;
  std::map<std::string, std::set<std::string>> homes_;
};

}  // namespace gp::app
