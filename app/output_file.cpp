#include "app/output_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace gp::app {

namespace fs = std::filesystem;

std::optional<std::string> output_problem(const std::string& path, const std::string& what,
                                          const std::vector<std::string>& inputs) {
  std::error_code ec;
  for (const auto& in : inputs) {
    if (in.empty()) continue;
    // The same file through another spelling; or, where one does not exist yet (a store the command will
    // create), the same path once normalised.
    const bool same = fs::exists(path, ec) && fs::exists(in, ec)
                          ? fs::equivalent(path, in, ec)
                          : fs::weakly_canonical(path, ec) == fs::weakly_canonical(in, ec);
    if (same) return path + ": cannot write " + what + " there: it is an input of this command (" + in + ")";
  }
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
  for (const auto& [path, what] : outputs)
    if (!path.empty())
      if (auto problem = output_problem(path, what, inputs)) return problem;
  return std::nullopt;
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
