#include "app/diagnostics.hpp"

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
  std::string out;
  for (const auto& d : items_) out += d.render() + "\n";
  return out;
}

}  // namespace gp::app
