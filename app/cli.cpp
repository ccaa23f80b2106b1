#include "app/cli.hpp"

#include <cctype>
#include <cmath>
#include <exception>
#include <iostream>
#include <optional>
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

CLI::Validator integer_range(long long lo, long long hi) {
  std::ostringstream desc;
  desc << "INTEGER in [" << lo << ", " << hi << "]";
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        std::size_t start = !s.empty() && s[0] == '-' ? 1 : 0;
        bool digits = s.size() > start && s.size() - start <= 18;
        for (std::size_t i = start; digits && i < s.size(); ++i) digits = std::isdigit(static_cast<unsigned char>(s[i]));
        const long long v = digits ? std::stoll(s) : 0;
        if (!digits || v < lo || v > hi) {
          std::ostringstream msg;
          msg << "expected a whole number in [" << lo << ", " << hi << "], got " << s;
          return msg.str();
        }
        return "";
      },
      desc.str());
}

CLI::Validator non_empty() {
  return CLI::Validator(
      [](std::string& s) -> std::string { return s.empty() ? "expected a value, got an empty string" : ""; }, "");
}

namespace {
// "unknown command \"X\"; expected one of ..." when the words name no subcommand where one is required (CLI11
// said only "A subcommand is required", without the word it did not know).
std::optional<std::string> unknown_command(CLI::App& root, int argc, char** argv) {
  CLI::App* app = &root;
  std::string path = "gpuplan";
  for (int i = 1; i < argc; ++i) {
    const std::string t = argv[i];
    if (t.rfind("-", 0) == 0) {  // an option; skip its value when it takes one and it is not given with '='
      const CLI::Option* opt = t.find('=') == std::string::npos ? app->get_option_no_throw(t) : nullptr;
      if (opt && opt->get_type_size() > 0) ++i;
      continue;
    }
    CLI::App* sub = nullptr;
    for (CLI::App* c : app->get_subcommands({}))
      if (c->check_name(t)) sub = c;
    if (sub) {
      app = sub;
      path += " " + t;
      continue;
    }
    if (app->get_require_subcommand_min() == 0) return std::nullopt;
    std::string names;
    for (const CLI::App* c : app->get_subcommands({}))
      names += (names.empty() ? "" : ", ") + c->get_name();
    return path + ": unknown command \"" + t + "\"; expected one of " + names;
  }
  return std::nullopt;
}
}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App root{"gpuplan: how many GPUs, of which kind, for a training job; what it costs and whether it pays off"};
  root.set_version_flag("--version", std::string("gpuplan ") + GPUPLAN_VERSION);
  root.require_subcommand(1);
  root.fallthrough();
  CliContext ctx;
  ctx.command_line = "gpuplan";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool plain = !arg.empty() && arg.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                              "0123456789-_./=:,+@%") == std::string::npos;
    std::string quoted = "'";
    for (const char ch : arg) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    ctx.command_line += " " + (plain ? arg : quoted + "'");
  }
  root.add_option("--catalog", ctx.catalog_overrides, "Catalog FILE adding or overriding entries (repeatable)")->check(non_empty())
      ->type_name("FILE");
  root.add_option("--catalog-dir", ctx.catalog_dir, "Folder of catalog files (default: $GPUPLAN_CATALOG_DIR, else ./catalogs, else the catalogs/ of the source tree gpuplan was built from)")->check(non_empty())
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
    if (const auto unknown = unknown_command(root, argc, argv)) {
      std::cerr << *unknown << " (see --help)\n";
      return kExitBadInput;
    }
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
