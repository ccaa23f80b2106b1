// `gpuplan comm` end to end through the real binary: the nccl-tests-like table, the JSON shape, size parsing
// and one line with exit code 2 per bad input.

#include <catch2/catch.hpp>

#include "tests/support/run_gpuplan.hpp"
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

namespace {

using Run = gp::test::RunResult;

// Runs gpuplan with `args` (a shell fragment); stderr joins stdout unless `stdout_only`.
Run gpuplan_comm(const std::string& args, bool stdout_only = false) {
  return gp::test::run_gpuplan("comm " + args, stdout_only);
}

int count_lines(const std::string& s, bool data_only) {
  std::istringstream in(s);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += !data_only || (!line.empty() && line[0] != '#');
  return n;
}

}  // namespace

TEST_CASE("app::comm: table doubles from 8 B to 4 GiB by default", "[cli][comm]") {
  const Run r = gpuplan_comm("--instance aws-p5.48xlarge --op allgather");
  REQUIRE(r.code == 0);
  CHECK(count_lines(r.out, true) == 30);  // 2^3 .. 2^32
  CHECK(r.out.find("\n               8 ") != std::string::npos);
  CHECK(r.out.find("\n      4294967296 ") != std::string::npos);
  CHECK(r.out.find("busbw") != std::string::npos);
}

TEST_CASE("app::comm: JSON rows follow nccl-tests' definitions", "[cli][comm]") {
  const Run r = gpuplan_comm("--instance aws-p5en.48xlarge --nodes 4 --min-bytes 1M --max-bytes 8M --format json",
                             true);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("cluster").at("ranks") == 32);
  CHECK(j.at("cluster").at("nodes") == 4);
  const auto& rows = j.at("rows");
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].at("bytes") == 1048576);
  CHECK(rows[3].at("bytes") == 8388608);
  for (const auto& row : rows) {
    const double bytes = row.at("bytes").get<double>();
    const double t_us = row.at("time_us").get<double>();
    CHECK(row.at("algbw_gbps").get<double>() == Approx(bytes / (t_us * 1e-6) / 1e9));
    CHECK(row.at("busbw_gbps").get<double>() == Approx(row.at("algbw_gbps").get<double>() * 2 * 31 / 32));
  }
}

TEST_CASE("app::comm: a GPU type with --gpus-per-node models the same node as its instance", "[cli][comm]") {
  const Run a = gpuplan_comm("--instance aws-p5en.48xlarge --min-bytes 1G --max-bytes 1G --format json", true);
  const Run b = gpuplan_comm("--gpu h200-sxm --gpus-per-node 8 --intra-node nvlink4-h200 --min-bytes 1G "
                             "--max-bytes 1G --format json",
                             true);
  REQUIRE(a.code == 0);
  REQUIRE(b.code == 0);
  CHECK(nlohmann::json::parse(a.out).at("rows") == nlohmann::json::parse(b.out).at("rows"));
}

TEST_CASE("app::comm: bad input is one line on stderr and exit code 2", "[cli][comm]") {
  for (const char* args :
       {"--instance no-such-instance", "--instance aws-p5.48xlarge --min-bytes 4G --max-bytes 1G",
        "--instance aws-p5.48xlarge --op allsum", "--instance aws-p5.48xlarge --max-bytes 4X",
        "--instance aws-p5.48xlarge --algo fastest", "--gpu h100-sxm --gpus-per-node 8 --nodes 2",
        "--instance aws-p5.48xlarge --nodes 0", "--instance aws-p5.48xlarge --gpu h100-sxm"}) {
    INFO(args);
    const Run r = gpuplan_comm(args);
    CHECK(r.code == 2);
    CHECK(count_lines(r.out, false) == 1);
    CHECK(r.out.rfind("gpuplan comm: ", 0) == 0);
  }
}

TEST_CASE("app::comm: --plot draws one point per message size with the algorithms of the table", "[cli][comm]") {
  const std::string svg = "/tmp/gpuplan-comm-plot-" + std::to_string(::getpid()) + ".svg";
  // 1 MiB to 4 GiB: 13 sizes. Four p5en nodes: the model picks tree for mid sizes and ring for the largest (JSON).
  const std::string args = "--instance aws-p5en.48xlarge --nodes 4 --min-bytes 1M --max-bytes 4G";
  const Run j = gpuplan_comm(args + " --format json", true);
  REQUIRE(j.code == 0);
  std::set<std::string> algos;
  for (const auto& row : nlohmann::json::parse(j.out)["rows"]) algos.insert(row["algorithm"].get<std::string>());
  const Run r = gpuplan_comm(args + " --plot " + svg);
  REQUIRE(r.code == 0);
  std::ifstream in(svg);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  int points = 0;
  for (auto at = text.find("<circle cx"); at != std::string::npos; at = text.find("<circle cx", at + 1))
    points += text.compare(text.find('>', at) + 1, 7, "<title>") == 0;
  CHECK(points == 13);
  for (const auto& a : algos) CHECK(text.find(">busbw, " + a + "</text>") != std::string::npos);
  CHECK(text.find("<title>4GB: busbw ") != std::string::npos);
  std::remove(svg.c_str());
  const Run bad = gpuplan_comm(args + " --plot /nonexistent-dir/c.svg");
  CHECK(bad.code == 2);
  CHECK(bad.out.find("gpuplan comm: /nonexistent-dir/c.svg: cannot write the plot") != std::string::npos);
}
