// `gpuplan calibrate comm`: measured NCCL collectives (gpuplan-probe --nccl-only) against the collective model,
// and the fit of its per-hop latency and bandwidth efficiency. Registered on `calibrate` by cmd_calibrate.cpp.
#pragma once

#include <CLI/CLI.hpp>

#include "app/cli.hpp"

namespace gp::app {

// Adds the `comm` sub-command to the `calibrate` command. `ctx` must outlive the parse.
void add_calibrate_comm_command(CLI::App* calibrate, CliContext& ctx);

}  // namespace gp::app
