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
#include <utility>
#include <vector>

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
  Run r = gpuplan_comm("--instance aws-p5.48xlarge");
  REQUIRE(r.code == 0);
  CHECK(count_lines(r.out, true) == 30);  // 2^3 .. 2^32
  CHECK(r.out.find("\n               8 ") != std::string::npos);
  CHECK(r.out.find("\n      4294967296 ") != std::string::npos);
  CHECK(r.out.find("busbw") != std::string::npos);
  // All-gather over 8 GPUs moves whole floats per GPU: 8 and 16 B hold none, so the table starts at 32 B.
  r = gpuplan_comm("--instance aws-p5.48xlarge --op allgather");
  REQUIRE(r.code == 0);
  CHECK(count_lines(r.out, true) == 28);  // 2^5 .. 2^32
  CHECK(r.out.find("\n              32             1 ") != std::string::npos);  // count: floats per rank
}

TEST_CASE("app::comm: sizes are rounded to whole floats per rank as nccl-tests does", "[cli][comm]") {
  // nccl-tests' AllGatherGetCollByteCount: count = bytes / 4, per-rank count = count / ranks, size printed and
  // moved = per-rank count x ranks x 4. 24 ranks: 1 KiB -> 256 / 24 = 10 -> 960 B; 2 KiB -> 21 -> 2016 B.
  const Run r = gpuplan_comm("--instance aws-p5.48xlarge --nodes 3 --op allgather --min-bytes 1K --max-bytes 2K "
                             "--format json",
                             true);
  REQUIRE(r.code == 0);
  const auto rows = nlohmann::json::parse(r.out).at("rows");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].at("bytes") == 960);
  CHECK(rows[0].at("count") == 10);
  CHECK(rows[1].at("bytes") == 2016);
  CHECK(rows[1].at("count") == 21);
  // algbw is the rounded size over the time (GB/s = 10^9 B/s).
  for (const auto& row : rows)
    CHECK(row.at("algbw_gbps").get<double>() ==
          Approx(row.at("bytes").get<double>() / (row.at("time_us").get<double>() * 1e3)).epsilon(1e-9));
}

TEST_CASE("app::comm: sizes are read as nccl-tests reads -b and -e", "[cli][comm]") {
  for (const auto& [arg, bytes] : std::vector<std::pair<std::string, long long>>{
           {"1.5M", 1572864}, {"1e3", 1000}, {"64KB", 65536}, {"1KiB", 1024}, {".5K", 512}, {"1g", 1073741824}}) {
    const Run r = gpuplan_comm("--instance aws-p5.48xlarge --min-bytes " + arg + " --max-bytes " + arg +
                                   " --format json",
                               true);
    INFO(arg);
    REQUIRE(r.code == 0);
    CHECK(nlohmann::json::parse(r.out).at("rows").at(0).at("bytes") == bytes);
  }
  for (const std::string bad : {"2T", "8589934592G", "1BB", "1X", "abc", "-8", "0.1"}) {
    const Run r = gpuplan_comm("--instance aws-p5.48xlarge --min-bytes " + bad);
    INFO(bad << ": " << r.out);
    CHECK(r.code == 2);
    CHECK(r.out == "gpuplan comm: --min-bytes must be a positive size up to 1T like 8, 64K, 1.5M or 4G, got \"" + bad +
                       "\"\n");
  }
}

TEST_CASE("app::comm: one GPU, or --gpus-per-node against an instance, is one line and exit 2", "[cli][comm]") {
  struct Case {
    std::string args, expect;  // expect empty: exit 0
  };
  for (const auto& c : std::vector<Case>{
           // A single GPU printed time 0 and bandwidth 0 for every size, which contradicts algbw = size / time.
           {"--instance runpod-1x-h100-sxm --op broadcast",
            "gpuplan comm: a collective needs at least 2 GPUs and 1 x runpod-1x-h100-sxm has 1 (give --nodes N, or "
            "--gpus-per-node N with --gpu)\n"},
           {"--gpu h100-sxm --gpus-per-node 1 --intra-node nvlink4-h100",
            "gpuplan comm: a collective needs at least 2 GPUs and 1 x 1 h100-sxm has 1 (give --nodes N, or "
            "--gpus-per-node N with --gpu)\n"},
           // --gpus-per-node was ignored beside --instance (8 GPUs ran); nccl-tests' -g would have applied it.
           {"--instance aws-p5.48xlarge --gpus-per-node 4",
            "gpuplan comm: --gpus-per-node goes with --gpu: instance \"aws-p5.48xlarge\" has 8 GPUs per node, got "
            "--gpus-per-node 4\n"},
           {"--instance aws-p5.48xlarge --gpus-per-node 8 --max-bytes 8", ""},
           {"--instance aws-p5.48xlarge --plot \"\"",
            "gpuplan: --plot: expected a value, got an empty string (see --help)\n"}}) {
    const Run r = gpuplan_comm(c.args);
    INFO(c.args << "\n" << r.out);
    CHECK(r.code == (c.expect.empty() ? 0 : 2));
    if (!c.expect.empty()) CHECK(r.out == c.expect);
  }
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

TEST_CASE("app::comm: an --algo that does not apply is named in a note under the table", "[cli][comm]") {
  // All-to-all has no tree: the model runs it direct (docs/calibration.md), and the header said "algo tree" while
  // every row said direct, with nothing to tie the two together.
  Run r = gpuplan_comm("--instance aws-p5en.48xlarge --op alltoall --algo tree --max-bytes 1024", true);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("# note: tree does not apply to alltoall on this cluster; the rows use direct") != std::string::npos);
  // A ring all-reduce is a ring all-reduce: no note.
  r = gpuplan_comm("--instance aws-p5en.48xlarge --op allreduce --algo ring --max-bytes 1024", true);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("# note:") == std::string::npos);
  CHECK(count_lines(r.out, true) == 8);  // 8 B .. 1 KiB
}

TEST_CASE("app::comm: an unknown id suggests the catalog's nearest one, as a scenario's does", "[cli][comm]") {
  // `gpuplan run` answers aws-p5en.48xl with (did you mean "aws-p5en.48xlarge"?); comm only pointed at
  // `gpuplan catalog list`. Expected hints by hand: aws-p5.48xlarg and p5.48xlarge are contained in
  // aws-p5.48xlarge only; h100 and nvlink4 in two ids each (catalogs/gpus.json, catalogs/interconnects.json,
  // sorted by id), which beat "a10g", two edits from h100 and so within a typo's distance of a 4-letter word;
  // efa-v9 is contained in no id and at least five edits from every interconnect (a third of 6 letters, or 2,
  // is a typo's).
  struct Case {
    std::string args, expect;
  };
  for (const auto& c : std::vector<Case>{
           {"--instance aws-p5.48xlarg",
            "gpuplan comm: unknown instance \"aws-p5.48xlarg\" (did you mean \"aws-p5.48xlarge\"?)\n"},
           // Contained in no id; one edit from aws-p5en.48xlarge (a third of its 17 letters would do).
           {"--instance aws-p5en.48xlarje",
            "gpuplan comm: unknown instance \"aws-p5en.48xlarje\" (did you mean \"aws-p5en.48xlarge\"?)\n"},
           {"--instance p5.48xlarge",
            "gpuplan comm: unknown instance \"p5.48xlarge\" (did you mean \"aws-p5.48xlarge\"?)\n"},
           {"--gpu h100 --gpus-per-node 8",
            "gpuplan comm: unknown gpu \"h100\" (did you mean one of \"h100-pcie\", \"h100-sxm\"?)\n"},
           {"--gpu h100-sxm --gpus-per-node 8 --intra-node nvlink4",
            "gpuplan comm: unknown interconnect \"nvlink4\" (did you mean one of \"nvlink4-h100\", "
            "\"nvlink4-h200\"?)\n"},
           {"--instance aws-p5.48xlarge --nodes 2 --network efa-v9",
            "gpuplan comm: unknown interconnect \"efa-v9\" (see `gpuplan catalog list interconnects`)\n"}}) {
    const Run r = gpuplan_comm(c.args);
    INFO(c.args);
    CHECK(r.code == 2);
    CHECK(r.out == c.expect);
  }
}

TEST_CASE("app::comm: a sweep with no whole float says how many bytes the operation needs", "[cli][comm]") {
  // All-reduce and broadcast move one buffer: 4 B (one float) is enough, whatever the GPU count. The message
  // used to demand a float per GPU (32 B on 8 GPUs) for them too. All-to-all over 8 GPUs needs 8 x 4 = 32 B,
  // and 31 B doubled is 62 B, past --max-bytes 60, so that sweep holds no size although 60 >= 32.
  struct Case {
    std::string args, expect;
  };
  for (const auto& c : std::vector<Case>{
           {"--instance aws-p5.48xlarge --op allreduce --min-bytes 2 --max-bytes 3",
            "gpuplan comm: allreduce over 8 GPUs moves at least one float (4 bytes); no size from --min-bytes 2 "
            "doubling to --max-bytes 3 holds that\n"},
           {"--instance aws-p5.48xlarge --op alltoall --min-bytes 31 --max-bytes 60",
            "gpuplan comm: alltoall over 8 GPUs moves at least one float per GPU (32 bytes); no size from "
            "--min-bytes 31 doubling to --max-bytes 60 holds that\n"}}) {
    const Run r = gpuplan_comm(c.args);
    INFO(c.args);
    CHECK(r.code == 2);
    CHECK(r.out == c.expect);
  }
  // 4 B is a whole float: broadcast of 4 B runs (one row, count 1).
  const Run ok = gpuplan_comm("--instance aws-p5.48xlarge --op broadcast --min-bytes 4 --max-bytes 4 --format json",
                              true);
  REQUIRE(ok.code == 0);
  CHECK(nlohmann::json::parse(ok.out).at("rows").at(0).at("count") == 1);
}
