#include "app/output_file.hpp"

#include <algorithm>

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace gp::app {

namespace fs = std::filesystem;

std::string extension_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const auto dot = name.find_last_of('.');
  if (dot == std::string::npos || dot == 0) return {};
  std::string ext = name.substr(dot + 1);
  for (auto& ch : ext) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return ext;
}

std::optional<std::string> extension_problem(const std::string& flag, const std::string& path, const std::string& ext,
                                             const std::string& what, const std::string& kind) {
  const std::string got = extension_of(path);
  if (got.empty() || got == ext) return std::nullopt;
  return flag + " " + path + ": " + what + " is " + kind + ", not ." + got + " (name the file ." + ext + ")";
}

namespace {
// The same file through another spelling; or, where one does not exist yet (a store the command will create),
// the same path once normalised.
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return fs::exists(a, ec) && fs::exists(b, ec) ? fs::equivalent(a, b, ec)
                                                : fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}
}  // namespace

std::optional<std::string> output_problem(const std::string& path, const std::string& what,
                                          const std::vector<std::string>& inputs) {
  std::error_code ec;
  for (const auto& in : inputs)
    if (!in.empty() && same_file(path, in))
      return path + ": cannot write " + what + " there: it is an input of this command (" + in + ")";
  if (fs::is_directory(path, ec)) return path + ": cannot write " + what + " (it is a directory)";
  const fs::path parent = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : fs::path(".");
  if (!fs::is_directory(parent, ec))
    return path + ": cannot write " + what + " (no folder " + parent.string() + ")";
  const bool exists = fs::exists(path, ec);
  if (::access(exists ? path.c_str() : parent.c_str(), W_OK) != 0)
    return path + ": cannot write " + what + " (" + std::strerror(errno) + ")";
  return std::nullopt;
}

std::optional<std::string> first_output_problem(const std::vector<std::pair<std::string, std::string>>& outputs,
                                                const std::vector<std::string>& inputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto& [path, what] = outputs[i];
    if (path.empty()) continue;
    if (auto problem = output_problem(path, what, inputs)) return problem;
    for (std::size_t k = 0; k < i; ++k)  // two outputs into one file: the last writer won, the other was lost
      if (!outputs[k].first.empty() && same_file(path, outputs[k].first))
        return path + ": cannot write " + what + " there: it is also where " + outputs[k].second + " goes";
  }
  return std::nullopt;
}

std::vector<std::string> json_files_in(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  if (!dir.empty())
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".json") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());  // directory order is the file system's: make it the same everywhere
  return files;
}

std::optional<std::string> write_output_file(const std::string& path, const std::string& text, const std::string& what) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return path + ": cannot write " + what + " (" + std::strerror(errno) + ")";
  const bool wrote = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0;
  const int write_errno = errno;
  const bool closed = std::fclose(f) == 0;
  if (!wrote || !closed) return path + ": cannot write " + what + " (" + std::strerror(wrote ? errno : write_errno) + ")";
  return std::nullopt;
}

}  // namespace gp::app
