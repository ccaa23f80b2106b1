#include "app/cli.hpp"

int main(int argc, char** argv) { return gp::app::run_cli(argc, argv); }
