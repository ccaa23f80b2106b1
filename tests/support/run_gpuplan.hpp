// Runs the real gpuplan binary from tests (end-to-end: exit codes, output as a user sees it).
#pragma once

#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

namespace gp::test {

struct RunResult {
  int code;         // exit status, -1 when the process did not exit normally
  std::string out;  // stdout, and stderr too unless stdout_only
};

// Runs `gpuplan ARGS` (a shell fragment) from the project root. With stdout_only, stderr (progress bar,
// note lines, diagnostics) is discarded so that JSON or CSV output parses.
inline RunResult run_gpuplan(const std::string& args, bool stdout_only = false) {
  const std::string cmd = std::string(GPUPLAN_BINARY) + " " + args + (stdout_only ? " 2>/dev/null" : " 2>&1");
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[4096];
  while (std::size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace gp::test
