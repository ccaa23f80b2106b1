#include "app/cli.hpp"

#include <cmath>
#include <exception>
#include <iostream>
#include <sstream>
#include <string>

namespace gp::app {

CLI::Validator finite_range(double lo, double hi) {
  std::ostringstream desc;
  desc << "NUMBER in [" << lo << ", " << hi << "]";
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        double x = 0;
        std::size_t used = 0;
        try {
          x = std::stod(s, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        std::ostringstream msg;
        // An empty value read as 0 and a hexadecimal one ("0x10") as 16 before: neither is a number a user means.
        const bool hex = s.find_first_of("xX") != std::string::npos;
        if (s.empty() || hex || used != s.size() || !std::isfinite(x) || x < lo || x > hi)
          msg << "expected a number in [" << lo << ", " << hi << "], got " << s;
        return msg.str();
      },
      desc.str());
}

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
    if (e.get_exit_code() == 0) return root.exit(e);  // --help, --version
    // One line, as for every other bad input (CLI11's own adds a second, "Run with --help ...").
    std::cerr << "gpuplan: " << e.what() << " (see --help)\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    // Anything not anticipated: one line, never a crash dump.
    std::cerr << "gpuplan: internal error: " << e.what() << "\n";
    return 3;
  }
  return ctx.exit_code;
}

}  // namespace gp::app
