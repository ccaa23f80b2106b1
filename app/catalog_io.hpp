// Reads catalogs/*.json (and --catalog override files) into gp::Catalog, reporting every problem as a
// Diagnostic naming file and JSON path. Schema: catalogs/README.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/diagnostics.hpp"
#include "models/hardware.hpp"

namespace gp::app {

// Default catalog folder: $GPUPLAN_CATALOG_DIR, else ./catalogs when it exists, else the source tree's.
std::string default_catalog_dir();

// Loads every *.json in `dir` (in name order), then each override file in order: entries with an existing
// id replace it, others are added. Cross-references (instance -> gpu, network) are checked at the end.
// Problems go to `diags`; the returned catalog holds every entry that parsed.
Catalog load_catalogs(const std::string& dir, const std::vector<std::string>& overrides, Diagnostics& diags);

// Convenience for commands: loads with ctx options, prints diagnostics to stderr, nullopt on any problem.
struct CliContext;
std::optional<Catalog> load_catalogs_or_report(const CliContext& ctx);

// The files a command that loads the catalogs reads: the --catalog overrides and every *.json of the catalog
// folder. An output path must name none of them (app/output_file.hpp first_output_problem).
std::vector<std::string> catalog_input_files(const CliContext& ctx);

}  // namespace gp::app
