// `gpuplan validate FILE...`: parses scenarios and the catalogs, printing every problem, one line each.
#include <iostream>

#include "app/catalog_io.hpp"
#include "app/cli.hpp"
#include "app/scenario.hpp"

namespace gp::app {

void add_validate_command(CLI::App& root, CliContext& ctx) {
  auto* cmd = root.add_subcommand("validate", "Check scenario files (and the catalogs) without running them");
  static std::vector<std::string> files;
  cmd->add_option("FILE", files, "Scenario file(s)")->required();
  cmd->callback([&ctx] {
    auto cat = load_catalogs_or_report(ctx);
    if (!cat) {
      ctx.exit_code = kExitBadInput;
      return;
    }
    bool bad = false;
    for (const auto& f : files) {
      Diagnostics diags;
      auto sc = load_scenario(f, *cat, diags);
      if (!sc) {
        std::cerr << diags.render();
        bad = true;
        continue;
      }
      std::cout << f << ": ok, " << sc->configs.size() << " configuration" << (sc->configs.size() == 1 ? "" : "s")
                << "\n";
    }
    ctx.exit_code = bad ? kExitBadInput : kExitOk;
  });
}

}  // namespace gp::app
