// Reading user input files and parsing JSON text without letting hostile input through: a directory, a device
// or a file too large to be input is refused with one line, nesting deeper than any of our formats needs is
// refused before the parser (or a recursive walk over the document) can run out of stack, and a number past a
// double's range is a parse error, not an exception. Used by calibrate/ and app/ for every file they read.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace gp::calibrate {

// The largest input file read (scenarios, catalogs, profiles, runs files): far above any real one.
inline constexpr std::size_t kMaxInputBytes = std::size_t{256} << 20;
// The deepest nesting of arrays and objects accepted; the deepest real document (a profile) nests 5.
inline constexpr int kMaxJsonDepth = 64;

// Escapes a key for use inside a JSON pointer (RFC 6901: ~ -> ~0, / -> ~1).
std::string pointer_escape(const std::string& key);

// Reads a whole file into `text`. On failure returns false and sets `error` to what is wrong, to follow "PATH: ":
// "cannot open: no such file", "is a directory, not a file", "is not a regular file", "is N bytes; ...".
bool read_input_file(const std::string& path, std::string& text, std::string& error);

struct JsonTextError {
  int line = 1, col = 1;  // 1-based position of the problem in the text
  std::string what;       // e.g. "syntax error while parsing object - unexpected end of input; expected '}'"
};

// Parses JSON text (comments allowed when `comments`). Nullopt with `err` set on any problem.
std::optional<nlohmann::json> parse_json_text(const std::string& text, bool comments, JsonTextError& err);

// JSON text for output (`indent` as nlohmann's dump): bytes that are not UTF-8 (a path, a row of a results store
// edited by hand) become U+FFFD instead of throwing. Input files never need it: the parser rejects such bytes.
template <class Json>
std::string dump_json(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

// For JSON-lines files (runs, probe results): when `text` is one JSON document spread over several lines (a profile,
// a pretty-printed record), the one problem line saying so, "PATH: is one JSON document over N lines, not JSON
// lines (one record per line, as EXAMPLE)"; nullopt otherwise.
std::optional<std::string> document_not_json_lines(const std::string& text, const std::string& path,
                                                   const std::string& example);

// Levenshtein distance, for "did you mean" suggestions. O(|a|·|b|).
std::size_t edit_distance(const std::string& a, const std::string& b);
// The candidate nearest to `word`, or "" when none is close enough to be a likely typo (at most a third of the
// word's letters differ, two edits always allowed). Scenarios, catalogs and runs files name unknown keys with it.
std::string nearest_name(const std::string& word, const std::vector<std::string>& candidates);

// Appends the first 20 of `found` to `errors`, then "PATH: N more problems not shown": a wrong file is not a
// screenful of lines.
void append_first_problems(std::vector<std::string>& errors, const std::vector<std::string>& found,
                           const std::string& path);

// A figure and the limit it is held to, written so that the text agrees with the verdict `within` (value <= limit):
// the limit as the user typed it (at least `limit_decimals` decimals, up to 10), the value with `value_decimals`
// and more where rounding would show the two equal or reversed. "4.66% (tolerance 4.7%) FAIL" was printed for a
// MAPE of 4.6596 against --tolerance 4.65, and "(-25.0%), beyond 25%" for a step 25.004% off. Every check's
// summary line (calibrate check, comm, ddp) writes its figures with it.
std::pair<std::string, std::string> verdict_figures(double value, double limit, bool within, int value_decimals,
                                                    int limit_decimals);

}  // namespace gp::calibrate
