#include "calibrate/json_text.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <fstream>
#include <sstream>
#include <system_error>
#include <utility>
#include <vector>

namespace gp::calibrate {

std::string pointer_escape(const std::string& key) {
  std::string out;
  for (const char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

void offset_to_line_col(const std::string& text, std::size_t offset, int& line, int& col) {
  line = 1;
  col = 1;
  for (std::size_t i = 0; i < text.size() && i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
}

// Offset of the first array or object that opens deeper than kMaxJsonDepth, skipping strings (and comments when
// allowed); npos when none.
std::size_t too_deep_at(const std::string& t, bool comments) {
  int depth = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (c == '"') {
      for (++i; i < t.size() && t[i] != '"'; ++i)
        if (t[i] == '\\') ++i;
    } else if (comments && c == '/' && i + 1 < t.size() && t[i + 1] == '/') {
      while (i < t.size() && t[i] != '\n') ++i;
    } else if (comments && c == '/' && i + 1 < t.size() && t[i + 1] == '*') {
      const auto end = t.find("*/", i + 2);
      i = end == std::string::npos ? t.size() : end + 1;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::string::npos;
}

// Offset of the `n`-th (0-based) object key in the text: a string followed, past blanks and comments, by ':'.
// npos when there are fewer. Only called on text that parsed, so strings and comments are well formed.
std::size_t nth_key_at(const std::string& t, bool comments, std::size_t n) {
  auto skip_blank = [&](std::size_t i) {
    while (i < t.size()) {
      if (std::isspace(static_cast<unsigned char>(t[i]))) {
        ++i;
      } else if (comments && t.compare(i, 2, "//") == 0) {
        while (i < t.size() && t[i] != '\n') ++i;
      } else if (comments && t.compare(i, 2, "/*") == 0) {
        const auto end = t.find("*/", i + 2);
        i = end == std::string::npos ? t.size() : end + 2;
      } else {
        break;
      }
    }
    return i;
  };
  std::size_t seen = 0;
  for (std::size_t i = skip_blank(0); i < t.size(); i = skip_blank(i)) {
    if (t[i] != '"') {
      ++i;
      continue;
    }
    const std::size_t start = i;
    for (++i; i < t.size() && t[i] != '"'; ++i)
      if (t[i] == '\\') ++i;
    ++i;  // past the closing quote
    const std::size_t after = skip_blank(i);
    if (after < t.size() && t[after] == ':' && seen++ == n) return start;
  }
  return std::string::npos;
}

// "[json.exception.parse_error.101] parse error at line 3, column 5: syntax error ..." -> "syntax error ...".
std::string strip_prefix(const std::string& what) {
  auto pos = what.find("syntax error");
  if (pos != std::string::npos) return what.substr(pos);
  pos = what.find("] ");
  return pos == std::string::npos ? what : what.substr(pos + 2);
}

}  // namespace

bool read_input_file(const std::string& path, std::string& text, std::string& error) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) {
    error = "cannot open: no such file";
    return false;
  }
  if (std::filesystem::is_directory(st)) {
    error = "is a directory, not a file";
    return false;
  }
  if (!std::filesystem::is_regular_file(st)) {
    error = "is not a regular file";
    return false;
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxInputBytes) {
    error = "is " + std::to_string(size) + " bytes; input files may be at most 256 MiB";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open: permission denied or unreadable";
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    error = "could not be read";
    return false;
  }
  text = ss.str();
  // A UTF-16 file (Windows editors and PowerShell's `>` write one) is not JSON text as our readers take it: it gave
  // a line of errors per record. One line says what it is and what to do.
  if (text.size() >= 2 && ((text[0] == '\xFF' && text[1] == '\xFE') || (text[0] == '\xFE' && text[1] == '\xFF'))) {
    error = std::string("is UTF-16 text (byte-order mark ") + (text[0] == '\xFF' ? "FF FE" : "FE FF") +
            "); save it as UTF-8";
    text.clear();
    return false;
  }
  return true;
}

std::optional<nlohmann::json> parse_json_text(const std::string& text, bool comments, JsonTextError& err) {
  if (const auto at = too_deep_at(text, comments); at != std::string::npos) {
    offset_to_line_col(text, at, err.line, err.col);
    err.what = "arrays and objects nest more than " + std::to_string(kMaxJsonDepth) + " deep";
    return std::nullopt;
  }
  try {
    // A key given twice in one object: nlohmann keeps the last value without a word ("steps": 20000, ... "steps":
    // 5 trained 5 steps). Each object's keys are tracked while parsing; the first repeat is the error.
    std::vector<std::set<std::string>> keys;  // per open object (arrays hold an empty, unused entry)
    std::size_t key_index = 0;
    std::optional<std::pair<std::size_t, std::string>> repeat;  // key index in the text, key
    auto check_keys = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
      using E = nlohmann::json::parse_event_t;
      if (event == E::object_start || event == E::array_start) {
        keys.emplace_back();
      } else if ((event == E::object_end || event == E::array_end) && !keys.empty()) {
        keys.pop_back();
      } else if (event == E::key && !keys.empty()) {
        const auto& k = parsed.get_ref<const std::string&>();
        if (!keys.back().insert(k).second && !repeat) repeat.emplace(key_index, k);
        ++key_index;
      }
      return true;
    };
    auto doc = nlohmann::json::parse(text, check_keys, true, comments);
    if (repeat) {
      const auto at = nth_key_at(text, comments, repeat->first);
      offset_to_line_col(text, at == std::string::npos ? 0 : at, err.line, err.col);
      err.what = "key \"" + repeat->second + "\" appears twice in one object (which value is meant?)";
      return std::nullopt;
    }
    return doc;
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann's byte is one past the offending character.
    offset_to_line_col(text, e.byte > 0 ? e.byte - 1 : 0, err.line, err.col);
    err.what = strip_prefix(e.what());
    return std::nullopt;
  } catch (const nlohmann::json::exception& e) {
    // out_of_range.406, "number overflow parsing '1e999'": no offset, so find the number in the text.
    const std::string w = e.what();
    const auto q1 = w.find('\''), q2 = w.rfind('\'');
    if (q1 != std::string::npos && q2 > q1) {
      const std::string token = w.substr(q1 + 1, q2 - q1 - 1);
      const auto at = text.find(token);
      if (at != std::string::npos) offset_to_line_col(text, at, err.line, err.col);
      err.what = "number " + token + " is beyond the range of a double";
    } else {
      err.what = strip_prefix(w);
    }
    return std::nullopt;
  }
}

std::optional<std::string> document_not_json_lines(const std::string& text, const std::string& path,
                                                   const std::string& example) {
  std::size_t lines = 0, non_empty = 0;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    ++lines;
    non_empty += l.find_first_not_of(" \t\r") != std::string::npos;
  }
  JsonTextError ignored;
  if (non_empty > 1 && parse_json_text(text, /*comments=*/false, ignored))
    return path + ": is one JSON document over " + std::to_string(lines) + " lines, not JSON lines (one record per line, as " +
           example + ")";
  return std::nullopt;
}

void append_first_problems(std::vector<std::string>& errors, const std::vector<std::string>& found,
                           const std::string& path) {
  constexpr std::size_t kShown = 20;
  for (std::size_t i = 0; i < found.size() && i < kShown; ++i) errors.push_back(found[i]);
  if (found.size() > kShown) errors.push_back(path + ": " + std::to_string(found.size() - kShown) + " more problems not shown");
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string nearest_name(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = std::string::npos;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  // A likely typo: at most a third of the word's letters differ (and at least one edit allowed).
  std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  return best_d <= limit ? best : std::string();
}

std::pair<std::string, std::string> verdict_figures(double value, double limit, bool within, int value_decimals,
                                                    int limit_decimals) {
  auto fixed = [](double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return std::string(buf);
  };
  auto read = [](const std::string& s) { return std::strtod(s.c_str(), nullptr); };
  int ld = limit_decimals;
  while (ld < 10 && read(fixed(limit, ld)) != limit) ++ld;
  const bool exact = read(fixed(limit, ld)) == limit;  // a limit with more decimals grows with the value's
  std::pair<std::string, std::string> out;
  for (int d = value_decimals; d <= 17; ++d) {
    out = {fixed(value, d), fixed(limit, exact ? ld : std::max(ld, d))};
    if ((read(out.first) <= read(out.second)) == within) break;
  }
  return out;
}

}  // namespace gp::calibrate
