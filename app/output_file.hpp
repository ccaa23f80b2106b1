// Writing what a command produces (--out, --plot, --trace, --junit, --fit-out) so that nothing is lost without a
// word: a path is checked before the work starts (its folder exists and is writable, it is not one of the
// command's inputs), and a write is checked through to the close (a full disk fails the flush, not the <<).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gp::app {

// One line to print when `path` cannot take the command's `what` ("the plot"): its folder is missing or not
// writable, it is a directory, or it names one of `inputs` (the same file, also through another spelling).
// Nullopt when it looks writable.
std::optional<std::string> output_problem(const std::string& path, const std::string& what,
                                          const std::vector<std::string>& inputs = {});

// The first of `outputs` ({path, what}; empty paths skipped) that output_problem refuses, or that names the same
// file as an earlier output, as its line.
std::optional<std::string> first_output_problem(const std::vector<std::pair<std::string, std::string>>& outputs,
                                                const std::vector<std::string>& inputs);

// Lower-case extension of a path's file name, without the dot ("" when it has none).
std::string extension_of(const std::string& path);

// One line when `path` (given to `flag`) names a file of another kind than `ext` ("svg"): "--plot p.png: the plot
// is an SVG image, not .png (name the file .svg)", so that no file opens in the wrong program. `kind` says what
// the file is ("an SVG image"). Nullopt for that extension or none at all (/dev/stdout, a pipe's name).
std::optional<std::string> extension_problem(const std::string& flag, const std::string& path, const std::string& ext,
                                             const std::string& what, const std::string& kind);

// Every *.json in `dir`, sorted (none when it is empty or not a folder): the catalogs, profiles and constants a command
// reads from a folder, to pass as `inputs` above.
std::vector<std::string> json_files_in(const std::string& dir);

// Writes `text` to `path` in full. Nullopt on success, else the line to print: "PATH: cannot write WHAT (REASON)".
std::optional<std::string> write_output_file(const std::string& path, const std::string& text, const std::string& what);

}  // namespace gp::app
