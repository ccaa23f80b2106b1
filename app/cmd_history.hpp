// `gpuplan history`: lists the runs recorded in a results store, or shows one run's configurations.
// The command's logic is a plain function over streams so that tests can drive it without a process.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include "app/store.hpp"

namespace gp::app {

struct HistoryOptions {
  std::string db_path = kDefaultDbPath;
  int limit = 20;                      // runs listed, newest first; 0 lists all
  std::string format = "table";        // "table" (aligned, <= 100 columns) or "json"
  std::optional<std::int64_t> show_id; // print this run's configurations instead of the list
};

// Writes the listing (or the run) to `out` and problems to `err` as one line each; returns the exit code:
// 0 (also when the database does not exist: "no runs recorded in FILE"), 2 for an unreadable or corrupt
// database, an unknown run id or a bad option value. Never throws for user input.
int run_history(const HistoryOptions& opts, std::ostream& out, std::ostream& err);

}  // namespace gp::app
