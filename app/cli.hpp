// Command-line front end. Each sub-command lives in its own app/cmd_*.cpp and registers itself on the
// root CLI11 app through an add_*_command function declared here; main() only calls run_cli.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace gp::app {

// Options shared by every command, filled by CLI11 before a command's callback runs.
struct CliContext {
  std::vector<std::string> catalog_overrides;  // --catalog FILE (repeatable): adds/overrides entries
  std::string catalog_dir;                     // --catalog-dir DIR: default catalogs/ of the install
  int exit_code = 0;                           // set by the command's callback
  std::string command_line;                    // argv as typed, shell-quoted where needed ("gpuplan --catalog x run s")
};

// Exit codes: 0 success, 1 a check failed (e.g. calibrate check over tolerance), 2 bad input.
inline constexpr int kExitOk = 0;
inline constexpr int kExitCheckFailed = 1;
inline constexpr int kExitBadInput = 2;

void add_validate_command(CLI::App& root, CliContext& ctx);
void add_run_command(CLI::App& root, CliContext& ctx);
void add_catalog_command(CLI::App& root, CliContext& ctx);
void add_history_command(CLI::App& root, CliContext& ctx);
void add_calibrate_command(CLI::App& root, CliContext& ctx);
void add_comm_command(CLI::App& root, CliContext& ctx);

// A CLI11 check for a finite number in [lo, hi]: CLI::Range lets NaN through ("nan" parses as a double).
CLI::Validator finite_range(double lo, double hi);

// A CLI11 check for a whole number in [lo, hi], written in decimal digits: CLI11 read "0x10" as 16 and clamped
// 99999999999999999999 to the largest int64, naming an id the user never gave.
CLI::Validator integer_range(long long lo, long long hi);

// A CLI11 check that a value (a path, a record id) is not empty: `--trace ""` used to mean "no trace", silently.
CLI::Validator non_empty();

// Parses argv, runs the chosen command, returns the process exit code. Never throws.
int run_cli(int argc, char** argv);

}  // namespace gp::app
