#include "app/cli.hpp"

#include <exception>
#include <iostream>

namespace gp::app {

int run_cli(int argc, char** argv) {
  CLI::App root{"gpuplan: how many GPUs, of which kind, for a training job; what it costs and whether it pays off"};
  root.set_version_flag("--version", std::string("gpuplan ") + GPUPLAN_VERSION);
  root.require_subcommand(1);
  root.fallthrough();
  CliContext ctx;
  root.add_option("--catalog", ctx.catalog_overrides, "Catalog FILE adding or overriding entries (repeatable)")
      ->type_name("FILE");
  root.add_option("--catalog-dir", ctx.catalog_dir, "Folder of catalog files (default: catalogs/)")
      ->type_name("DIR");

  add_validate_command(root, ctx);
  add_run_command(root, ctx);
  add_catalog_command(root, ctx);
  add_history_command(root, ctx);
  add_calibrate_command(root, ctx);
  add_comm_command(root, ctx);

  try {
    root.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = root.exit(e);
    return rc == 0 ? 0 : kExitBadInput;
  } catch (const std::exception& e) {
    // Anything not anticipated: one line, never a crash dump.
    std::cerr << "gpuplan: internal error: " << e.what() << "\n";
    return 3;
  }
  return ctx.exit_code;
}

}  // namespace gp::app
