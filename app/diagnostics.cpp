#include "app/diagnostics.hpp"

#include <map>
#include <utility>

namespace gp::app {

std::string Diagnostic::render() const {
  std::string out = file;
  if (line > 0) {
    out += ":" + std::to_string(line) + ":" + std::to_string(column);
  } else {
    out += ":" + (pointer.empty() ? std::string("/") : pointer);
  }
  out += ": " + message;
  return out;
}

std::string Diagnostics::render() const {
  // A sweep repeats a problem per configuration (global_batch against each data-parallel size): the first
  // kShownPerPath lines of one JSON path are shown, then one line counting the rest.
  constexpr int kShownPerPath = 3;
  std::map<std::pair<std::string, std::string>, int> seen;
  std::vector<std::pair<std::string, std::string>> order;
  std::string out;
  for (const auto& d : items_) {
    if (d.line > 0) {
      out += d.render() + "\n";
      continue;
    }
    const auto key = std::make_pair(d.file, d.pointer);
    const int n = ++seen[key];
    if (n <= kShownPerPath) out += d.render() + "\n";
    if (n == kShownPerPath + 1) order.push_back(key);
  }
  for (const auto& key : order) {
    const int more = seen[key] - kShownPerPath;
    const std::string plural = more == 1 ? "" : "s";
    Diagnostic d{key.first, key.second,
                 sweep_ ? "the same problem in " + std::to_string(more) + " more configuration" + plural + " of the sweep"
                        : std::to_string(more) + " more problem" + plural + " here, not shown (fix these and run again)",
                 0, 0};
    out += d.render() + "\n";
  }
  return out;
}

}  // namespace gp::app
