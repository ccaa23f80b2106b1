// `gpuplan calibrate comm`: measured NCCL collectives (gpuplan-probe --nccl-only) against the collective model,
// and the fit of its per-hop latency and bandwidth efficiency; `gpuplan calibrate ddp`: multi-GPU DDP records
// against the step simulation. Both registered on `calibrate` by one call from cmd_calibrate.cpp.
#pragma once

#include <CLI/CLI.hpp>

#include "app/cli.hpp"

namespace gp::app {

// Adds the `comm` sub-command (and `ddp`, below) to the `calibrate` command. `ctx` must outlive the parse.
void add_calibrate_comm_command(CLI::App* calibrate, CliContext& ctx);

// `calibrate ddp` (app/cmd_calibrate_ddp.cpp): multi-GPU DDP records against the step simulation.
void add_calibrate_ddp_command(CLI::App* calibrate, CliContext& ctx);

}  // namespace gp::app
