#include "app/progress.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace gp::app {

Progress progress_bar(bool enabled, const std::string& what) {
  if (!enabled || !isatty(STDERR_FILENO)) return {};
  const auto start = std::chrono::steady_clock::now();
  return [start, what](std::size_t done, std::size_t total) {
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (total == 0 || (total < 20 && secs < 0.5)) return;
    constexpr std::size_t kWidth = 30;
    const std::size_t filled = kWidth * done / total;
    std::fprintf(stderr, "\r[%s%s] %zu/%zu %s", std::string(filled, '#').c_str(),
                 std::string(kWidth - filled, ' ').c_str(), done, total, what.c_str());
    if (done == total) std::fprintf(stderr, "\n");
  };
}

}  // namespace gp::app
