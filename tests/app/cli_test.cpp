// End-to-end through the real binary: exit codes, one line per problem, the documented JSON shape, history.
#include <unistd.h>
#include <sqlite3.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>
#include <utility>

#include "tests/support/run_gpuplan.hpp"

namespace fs = std::filesystem;

namespace {

using Result = gp::test::RunResult;

Result gpuplan(const std::string& args) { return gp::test::run_gpuplan(args); }

// `calibrate check --format json` of a runs file measured on an H100 (profile derived from the H200's).
nlohmann::json h100_check(const std::string& runs) {
  const auto r = gp::test::run_gpuplan("calibrate check --profile calibrate/profiles/h200.json --gpu h100-sxm "
                                       "--tolerance 100 --format json --runs " + runs, true);
  REQUIRE(r.code == 0);
  return nlohmann::json::parse(r.out);
}

// id -> step ms of the predictions committed before a held-out set ran (FILE: "# ..." comments, then
// "ID MS [P10, P90] ..." per record, "-" for a step predicted out of memory).
std::map<std::string, double> committed_predictions(const std::vector<std::string>& files) {
  std::map<std::string, double> out;
  for (const auto& f : files) {
    std::ifstream in(f);
    REQUIRE(in);
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream row(line);
      std::string id, ms;
      row >> id >> ms;
      if (ms != "-") out[id] = std::stod(ms);
    }
  }
  return out;
}

std::string temp_db(const char* tag) {
  auto p = fs::temp_directory_path() / (std::string("gpuplan-cli-") + tag + "-" + std::to_string(::getpid()) + ".db");
  fs::remove(p);
  return p.string();
}

}  // namespace

TEST_CASE("app::cli: validate exits 2 with one path-naming line per problem", "[cli]") {
  auto r = gpuplan("validate tests/data/bad/unknown_fields.json");
  CHECK(r.code == 2);
  int lines = 0;
  for (char c : r.out) lines += c == '\n';
  CHECK(lines == 3);
  CHECK(r.out.find("unknown_fields.json:/workload/micro_bacth: unknown field (did you mean \"micro_batch\"?)") !=
        std::string::npos);
}

TEST_CASE("app::cli: validate accepts the example scenarios", "[cli]") {
  auto r = gpuplan("validate scenarios/quickstart-gpt-350m.json");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(r.out.find("ok, 4 configurations") != std::string::npos);
}

TEST_CASE("app::cli: a sweep's problem repeated per configuration is shown three times, then counted", "[cli]") {
  // global_batch 512 on 1..10 p5en nodes (data-parallel 8..80, micro-batch 16): seven sizes cannot make 512.
  const auto r = gpuplan("validate tests/data/bad-sweep/global-batch-sweep.json");
  CHECK(r.code == 2);
  int lines = 0;
  for (char c : r.out) lines += c == '\n';
  CHECK(lines == 4);
  CHECK(r.out.find("global-batch-sweep.json:/workload/global_batch: must equal micro_batch x grad_accum x "
                   "data-parallel size (24), got 512") != std::string::npos);
  CHECK(r.out.find("global-batch-sweep.json:/workload/global_batch: the same problem in 4 more configurations of "
                   "the sweep") != std::string::npos);
}

TEST_CASE("app::cli: a missing file and a bad catalog override are bad input, not crashes", "[cli]") {
  CHECK(gpuplan("validate does-not-exist.json").code == 2);
  auto r = gpuplan("--catalog tests/data/bad/syntax_error.json catalog list gpus");
  CHECK(r.code == 2);
  CHECK(r.out.find("syntax_error.json:5:15:") != std::string::npos);
  CHECK(gpuplan("run").code == 2);  // missing FILE: CLI11's usage error maps to 2
}

TEST_CASE("app::cli: a results store that is not a database loses no results: printed, then one error line, exit 2",
          "[cli]") {
  const auto db = temp_db("corrupt");
  {
    std::ofstream f(db, std::ios::binary);
    f << "this is not an SQLite file, but it is where --db points\n";
  }
  const auto all = gpuplan("run scenarios/quickstart-gpt-350m.json --format json -q --db " + db);
  CHECK(all.code == 2);
  CHECK(all.out.find(db + ": cannot read results store: file is not a database (the results were not recorded; "
                          "give another --db FILE, or --no-db)") != std::string::npos);
  const auto json_only =
      gp::test::run_gpuplan("run scenarios/quickstart-gpt-350m.json --format json -q --db " + db, true);
  CHECK(json_only.code == 2);
  const auto j = nlohmann::json::parse(json_only.out);
  CHECK(j["configs"].size() == 4);
  CHECK(j["run_id"].is_null());
  fs::remove(db);
}

TEST_CASE("app::cli: run --format json has the documented shape and the run is in history", "[cli]") {
  const auto db = temp_db("run");
  auto r = gpuplan("run scenarios/quickstart-gpt-350m.json --format json --db " + db);
  INFO(r.out);
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["configs"].size() == 4);
  for (const auto& c : j["configs"]) {
    for (const char* k : {"id", "gpus", "nodes", "instance", "step_time_s", "throughput_samples_per_s",
                          "time_to_train_h", "cost_usd", "cost_per_1k_steps_usd", "gpu_busy_frac", "mfu",
                          "memory_gib_per_gpu", "fits", "bottleneck", "breakdown_s"}) {
      INFO(k);
      CHECK(c.contains(k));
    }
    double sum = 0;
    for (const char* k : {"compute", "dataloader_stall", "comm_exposed", "checkpoint", "startup", "failures"}) {
      INFO(k);
      REQUIRE(c["breakdown_s"].contains(k));
      sum += c["breakdown_s"][k].get<double>();
    }
    // Conservation: the breakdown adds up to the time to train.
    CHECK(sum == Approx(c["time_to_train_h"].get<double>() * 3600).epsilon(1e-6));
    // The global batch of 512 is made of micro-batches of 16 on each data-parallel replica (DDP: one per GPU), so
    // 8, 16 and 32 GPUs accumulate 4, 2 and 1 micro-batches per step.
    const int gpus = c["gpus"].get<int>();
    const auto& par = c["parallelism"];
    CHECK(par["strategy"] == "ddp");
    CHECK(par["dp"].get<int>() * par["tp"].get<int>() * par["pp"].get<int>() == gpus);
    // The scenario sets neither option: their defaults, false.
    CHECK(par["sequence_parallel"] == false);
    CHECK(par["fsdp_mixed_precision"] == false);
    CHECK(c["micro_batch"] == 16);
    CHECK(c["grad_accum"].get<int>() == 512 / (16 * gpus));
  }
  REQUIRE(j["run_id"].is_number());
  auto h = gpuplan("history --format json --db " + db);
  REQUIRE(h.code == 0);
  auto hist = nlohmann::json::parse(h.out);
  CHECK_FALSE(hist.empty());
  CHECK(h.out.find("quickstart-gpt-350m.json") != std::string::npos);
  // history reads and leaves nothing behind: its read-only connection used to leave the WAL's -wal and -shm files.
  CHECK_FALSE(fs::exists(db + "-wal"));
  CHECK_FALSE(fs::exists(db + "-shm"));
  fs::remove(db);
  fs::remove(db + "-wal");
  fs::remove(db + "-shm");
}

TEST_CASE("app::cli: every output format renders, the table fits 100 columns", "[cli]") {
  for (const char* f : {"table", "md", "csv"}) {
    auto r = gpuplan(std::string("run scenarios/quickstart-gpt-350m.json --no-db --format ") + f);
    INFO(f << "\n" << r.out);
    CHECK(r.code == 0);
    if (std::string(f) == "table") {
      std::size_t start = 0, widest = 0;
      while (start < r.out.size()) {
        auto end = r.out.find('\n', start);
        if (end == std::string::npos) end = r.out.size();
        widest = std::max(widest, end - start);
        start = end + 1;
      }
      CHECK(widest <= 100);
    }
  }
}

TEST_CASE("app::cli: catalog list prints every kind", "[cli]") {
  // Independent of the program: the catalog files themselves. One header line, then one line per entry, each
  // starting with the entry's id.
  for (const char* k : {"gpus", "instances", "storage", "interconnects", "images", "models"}) {
    auto r = gpuplan(std::string("catalog list ") + k);
    INFO(k << "\n" << r.out);
    CHECK(r.code == 0);
    std::ifstream in(std::string(GPUPLAN_SOURCE_DIR) + "/catalogs/" + k + ".json");
    const auto entries = nlohmann::json::parse(in, nullptr, true, /*ignore_comments=*/true).at(k);
    std::vector<std::string> lines;
    std::istringstream out(r.out);
    for (std::string line; std::getline(out, line);)
      if (!line.empty()) lines.push_back(line);
    REQUIRE(lines.size() == entries.size() + 1);
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const std::string id = entries[i].at("id").get<std::string>();
      CHECK(std::any_of(lines.begin() + 1, lines.end(), [&](const std::string& l) { return l.rfind(id + " ", 0) == 0; }));
    }
  }
  CHECK(gpuplan("catalog list gpu").code == 2);
}

TEST_CASE("app::cli: catalog list --format json carries the columns the table shows", "[cli]") {
  // The JSON left out fp32 and NVLink for GPUs and vCPUs, network and reserved / spot prices for instances.
  // Independent truth: the catalog files themselves.
  auto load = [](const char* kind) {
    std::ifstream in(std::string(GPUPLAN_SOURCE_DIR) + "/catalogs/" + kind + ".json");
    return nlohmann::json::parse(in, nullptr, true, true).at(kind);
  };
  auto listed = [](const char* kind) {
    const auto r = gp::test::run_gpuplan(std::string("catalog list ") + kind + " --format json", true);
    REQUIRE(r.code == 0);
    std::map<std::string, nlohmann::json> by_id;
    for (const auto& e : nlohmann::json::parse(r.out)) by_id[e.at("id")] = e;
    return by_id;
  };
  const auto gpus = listed("gpus");
  for (const auto& g : load("gpus")) {
    const auto& j = gpus.at(g.at("id").get<std::string>());
    CHECK(j.at("fp32_tflops").get<double>() == Approx(g.at("peak_tflops").value("fp32", 0.0)));
    CHECK(j.at("nvlink_GBps").get<double>() == Approx(g.value("nvlink_GBps", 0.0)));
  }
  const auto instances = listed("instances");
  for (const auto& i : load("instances")) {
    const auto& j = instances.at(i.at("id").get<std::string>());
    INFO(i.at("id").get<std::string>());
    CHECK(j.at("vcpus") == i.at("vcpus"));
    CHECK(j.at("name") == i.at("name"));  // README promises it; the JSON had provider but not name
    CHECK(j.at("provider") == i.at("provider"));
    for (const char* plan : {"reserved", "spot"}) {
      const auto& want = i.at("price_per_hour").at(plan);
      const auto& got = j.at(std::string(plan) + "_per_hour");
      CHECK(got.is_null() == want.is_null());
      if (!want.is_null()) CHECK(got.get<double>() == Approx(want.get<double>()));
    }
  }
  for (const char* kind : {"interconnects", "storage", "images", "models"}) CHECK(listed(kind).size() == load(kind).size());
}

TEST_CASE("app::cli: run uses the calibrated H200 model (a measured single-GPU step within 10%)", "[cli]") {
  // Independent truth: the measured reference run of the same configuration, 107.966 ms per step.
  auto r = gpuplan("run tests/data/h200-gpt-350m-b16.json --no-db --format json");
  INFO(r.out);
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  const double step_ms = j["configs"][0]["step_time_s"].get<double>() * 1000;
  CHECK(step_ms == Approx(107.966).epsilon(0.10));
}

TEST_CASE("app::cli: calibrate check --ops breaks one record's step into operators", "[cli]") {
  const std::string base =
      "calibrate check --profile calibrate/profiles/h200.json --runs calibrate/measured/h200-2026-12.jsonl --ops ";
  auto r = gpuplan(base + "vision/resnet50-b128-bf16");
  REQUIRE(r.code == 0);
  CHECK(r.out.rfind("vision/resnet50-b128-bf16: GPU ", 0) == 0);
  // ResNet-50 has 53 convolutions and 53 BatchNorms: their forward rows count them.
  CHECK(r.out.find("\nconv.fwd                    forward          53") != std::string::npos);
  CHECK(r.out.find("\nbn.fwd ") != std::string::npos);
  auto missing = gpuplan(base + "no/such-record");
  CHECK(missing.code == 2);
  CHECK(missing.out == "calibrate/measured/h200-2026-12.jsonl: no train record with id \"no/such-record\"\n");
}

TEST_CASE("app::cli: calibrate fit --kernel-classes rejects a file missing a constant, in one line", "[cli]") {
  const auto path = fs::temp_directory_path() / ("gpuplan-kc-" + std::to_string(::getpid()) + ".json");
  {
    std::ofstream f(path);
    f << R"({"bn_gelements_per_s": 900, "norm_row_cost_ns": 1.0, "transpose_efficiency": 0.4,
             "dwconv_flop_efficiency": -0.2})";
  }
  auto r = gpuplan("calibrate fit --profile calibrate/profiles/h200.json --runs calibrate/measured/h200-2026-12.jsonl "
                   "--kernel-classes " + path.string());
  CHECK(r.code == 2);
  CHECK(r.out.find(path.string() + ":/dwconv_flop_efficiency: must be positive, got -0.2") != std::string::npos);
  CHECK(r.out.find(path.string() + ":/dwconv_memory_efficiency: expected a number, got nothing") != std::string::npos);
  fs::remove(path);
}

TEST_CASE("app::cli: calibrate check --sim-constants names an unreadable file or a bad field, exit 2", "[cli]") {
  const std::string base = "calibrate check --profile calibrate/profiles/h200.json "
                           "--runs calibrate/measured/h200-2026-12.jsonl --sim-constants ";
  auto missing = gpuplan(base + "no/such/sim.json");
  CHECK(missing.code == 2);
  CHECK(missing.out ==
        "no/such/sim.json: cannot read (expected a sim-constants JSON file, as calibrate/profiles/sim-constants.json)\n");
  const auto path = fs::temp_directory_path() / ("gpuplan-sim-" + std::to_string(::getpid()) + ".json");
  {
    std::ifstream in("calibrate/profiles/sim-constants.json");
    auto doc = nlohmann::json::parse(in);
    doc["cpu_all_core_slowdown"]["value"] = "fast";
    std::ofstream f(path);
    f << doc.dump();
  }
  auto bad = gpuplan(base + path.string());
  CHECK(bad.code == 2);
  CHECK(bad.out == path.string() + ":/cpu_all_core_slowdown/value: expected a number\n");
  // Read through json_text like every other input: too deep, a number past a double, not an object.
  for (const auto& [text, expect] : std::vector<std::pair<std::string, std::string>>{
           {std::string(100000, '['), ":1:65: not valid JSON: arrays and objects nest more than 64 deep"},
           {R"({"compute_step_cv": {"value": 1e400}})", ":1:31: not valid JSON: number 1e400 is beyond the range of a double"},
           {"[1, 2]", ":/: expected an object of named constants"}}) {
    {
      std::ofstream f(path);
      f << text;
    }
    bad = gpuplan(base + path.string());
    CHECK(bad.code == 2);
    CHECK(bad.out == path.string() + expect + "\n");
  }
  // Every constant is range-checked (a slowdown of 1e9 made the loader simulation spin for minutes).
  {
    std::ifstream in("calibrate/profiles/sim-constants.json");
    auto doc = nlohmann::json::parse(in);
    doc["cpu_all_core_slowdown"]["value"] = 1e9;
    doc["checkpoint_write_efficiency"]["value"] = -0.5;
    std::ofstream f(path);
    f << doc.dump();
  }
  bad = gpuplan(base + path.string());
  CHECK(bad.code == 2);
  CHECK(bad.out == path.string() + ":/checkpoint_write_efficiency/value: expected a number in (0, 1], got -0.5\n" +
                       path.string() + ":/cpu_all_core_slowdown/value: expected a number in [0, 10], got 1000000000.0\n");
  fs::remove(path);
}

TEST_CASE("app::cli: the memory-limit example: one H200's limit less DDP's buckets", "[cli]") {
  // calibrate/probes/results/h200-holdout15-2026-12-04.jsonl, GPT-1.3B AdamW bf16 s1024 on one H200: micro-batch
  // 44 and 46 ran (121.59 and 126.34 GiB peak), 48 ran out of memory. On 8 GPUs DDP's reducer adds its buckets,
  // 4 bytes x 1,313,722,368 parameters = 4.89 GiB at every moment (measured with the fake process group:
  // calibrate/probes/results/dp-memory-h100-2026-12-07.jsonl), so 46 no longer fits.
  auto r = gpuplan("run scenarios/gpt-1.3b-memory-limit.json --no-db --format json");
  INFO(r.out);
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["configs"].size() == 5);
  const auto& b44 = j["configs"][2];
  const auto& b46 = j["configs"][3];
  const auto& b48 = j["configs"][4];
  const double buckets = 4.0 * 1313722368 / (1024.0 * 1024 * 1024);
  CHECK(b44["fits"].get<bool>());
  CHECK_FALSE(b46["fits"].get<bool>());
  CHECK_FALSE(b48["fits"].get<bool>());
  CHECK(b44["memory_gib_per_gpu"].get<double>() == Approx(121.59 + buckets).epsilon(0.03));
  CHECK(b46["memory_gib_per_gpu"].get<double>() == Approx(126.34 + buckets).epsilon(0.03));
  // Within 4% of the limit: the advice says so.
  CHECK(b44["advice"].dump().find("close to the memory limit") != std::string::npos);
}

TEST_CASE("app::cli: the README's run examples show what gpuplan prints now", "[cli]") {
  // Every `$ ./build/gpuplan run FILE` block of README.md: each shown line (but "..." and the store's "Recorded as"
  // line) must be a line of today's output, so that the README cannot drift from the model.
  std::ifstream in(std::string(GPUPLAN_SOURCE_DIR) + "/README.md");
  REQUIRE(in);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  const auto rstrip = [](std::string s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.pop_back();
    return s;
  };
  const std::string prompt = "    $ ./build/gpuplan run ";
  int blocks = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind(prompt, 0) != 0) continue;
    ++blocks;
    const std::string args = lines[i].substr(prompt.size());
    const auto r = gp::test::run_gpuplan("run " + args + " --no-db", true);
    REQUIRE(r.code == 0);
    std::vector<std::string> out;
    std::istringstream os(r.out);
    for (std::string l; std::getline(os, l);) out.push_back(rstrip(l));
    for (std::size_t k = i + 1; k < lines.size(); ++k) {
      const std::string& l = lines[k];
      if (!l.empty() && l.rfind("    ", 0) != 0) break;  // prose again
      if (l.rfind("    $ ", 0) == 0) break;              // the next command
      const std::string shown = rstrip(l.size() >= 4 ? l.substr(4) : "");
      if (shown.empty() || shown == "..." || shown.rfind("Recorded as run", 0) == 0) continue;
      INFO("README line " << k + 1 << ": " << shown);
      CHECK(std::find(out.begin(), out.end(), shown) != out.end());
    }
  }
  CHECK(blocks >= 2);
}

TEST_CASE("app::cli: the table shows launch-overhead in full and millions in short form, within 100 columns",
          "[cli]") {
  const auto r = gpuplan("run tests/data/launch-bound-long.json --no-db -q");
  INFO(r.out);
  REQUIRE(r.code == 0);
  std::istringstream in(r.out);
  bool row = false;
  for (std::string l; std::getline(in, l);) {
    CHECK(l.size() <= 100);
    if (l.rfind("c0000", 0) != 0) continue;
    row = true;
    // 10^12 steps of ~45 ms: 4.5e10 s = 12.5M hours ("1.18e+07" before, and a cut "launch-overh~").
    CHECK(l.find(" launch-overhead") != std::string::npos);
    CHECK(l.find("12.5M") != std::string::npos);
    CHECK(l.find('~') == std::string::npos);
  }
  CHECK(row);
}

TEST_CASE("app::cli: calibrate check --gpu predicts runs of another GPU from a profile derived by datasheet ratios",
          "[cli]") {
  // Held-out set 15 (H200 steps up to 134 GiB) as if measured on an H100 SXM: same datasheet bf16 peak, HBM 3.35
  // against 4.8 TB/s and 80 GB against 141 GB (catalogs/gpus.json). Invariants, not figures: no step is faster on
  // the H100, a memory-bound one is slower, the peak does not depend on the GPU, and a step needing more than the
  // H100's 74.5 GiB does not fit on it.
  const std::string base = "calibrate check --profile calibrate/profiles/h200.json --tolerance 1000 --format json "
                           "--runs calibrate/probes/results/h200-holdout15-2026-12-04.jsonl";
  const auto h200 = gpuplan(base);
  const auto h100 = gp::test::run_gpuplan(base + " --gpu h100-sxm", true);
  REQUIRE(h200.code == 0);
  REQUIRE(h100.code == 0);
  const auto a = nlohmann::json::parse(h200.out)["records"], b = nlohmann::json::parse(h100.out)["records"];
  REQUIRE(a.size() == b.size());
  int slower = 0, newly_oom = 0, both = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO(a[i]["id"].get<std::string>());
    REQUIRE(a[i]["id"] == b[i]["id"]);
    if (a[i]["predicted_peak_mem_gib"].is_number())
      CHECK(b[i]["predicted_peak_mem_gib"].get<double>() == Approx(a[i]["predicted_peak_mem_gib"].get<double>()));
    if (!a[i]["predicted_oom"].get<bool>() && a[i]["predicted_peak_mem_gib"].get<double>() > 80.0) {
      CHECK(b[i]["predicted_oom"].get<bool>());
      ++newly_oom;
    }
    if (a[i]["predicted_oom"].get<bool>()) CHECK(b[i]["predicted_oom"].get<bool>());
    if (a[i]["predicted_step_ms"].is_number() && b[i]["predicted_step_ms"].is_number()) {
      ++both;
      const double ta = a[i]["predicted_step_ms"].get<double>(), tb = b[i]["predicted_step_ms"].get<double>();
      CHECK(tb >= ta * (1 - 1e-9));
      if (b[i]["bottleneck"] == "gpu-memory" && tb > ta * 1.1) ++slower;
    }
  }
  CHECK(newly_oom >= 5);
  CHECK(both >= 4);  // the set's four steps under 74 GiB
  CHECK(slower >= 1);
  const auto note = gpuplan(base + " --gpu h100-sxm");
  CHECK(note.out.rfind("GPU profile of h100-sxm: derived by datasheet ratios from calibrate/profiles/h200.json\n", 0) == 0);
  const auto bad = gpuplan(base + " --gpu h900");
  CHECK(bad.code == 2);
  CHECK(bad.out == "--gpu h900: this GPU is not in catalogs/gpus.json (expected a catalog GPU id such as h100-sxm)\n");
}

TEST_CASE("app::cli: held-out set 18, measured on an H100, through the profile derived from the H200's", "[cli]") {
  // calibrate/probes/results/h100-holdout18-2026-12-06.jsonl: four pairs just under and over 2^31 - 1 elements in
  // their largest BatchNorm, max-pool or depthwise tensor, defined (commit 7bb53cc) before they were measured; the
  // device lent an H100. The wide-index classes were fitted to operators timed alone on an H200. Checked: the
  // per-sample slow-down over the limit within 8% of the measured one for each pair, every step within 20%, the
  // out-of-memory verdicts right.
  const auto r = gp::test::run_gpuplan(
      "calibrate check --profile calibrate/profiles/h200.json --gpu h100-sxm --tolerance 100 --format json "
      "--runs calibrate/probes/results/h100-holdout18-2026-12-06.jsonl", true);
  REQUIRE(r.code == 0);
  const auto recs = nlohmann::json::parse(r.out)["records"];
  std::map<std::string, std::pair<double, double>> per_sample;  // id -> (measured, predicted) ms per sample
  int oom_right = 0;
  for (const auto& x : recs) {
    const std::string id = x["id"];
    INFO(id);
    if (x["oom_agrees"].get<bool>()) ++oom_right;
    if (!x["predicted_step_ms"].is_number() || !x["measured_step_ms"].is_number()) continue;
    CHECK(std::abs(x["step_err_pct"].get<double>()) <= 20.0);
    const double batch = std::stod(id.substr(id.find("-b") + 2));  // holdout18/resnet18-b2600-bf16: 2600
    per_sample[id] = {x["measured_step_ms"].get<double>() / batch, x["predicted_step_ms"].get<double>() / batch};
  }
  CHECK(oom_right == 8);
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"holdout18/resnet18-b2600-bf16", "holdout18/resnet18-b2800-bf16"},
      {"holdout18/mobilenet_v2-b1700-bf16", "holdout18/mobilenet_v2-b1900-bf16"},
      {"holdout18/regnet_y_8gf-b700-bf16", "holdout18/regnet_y_8gf-b800-bf16"}};
  for (const auto& [under, over] : pairs) {
    INFO(under << " -> " << over);
    REQUIRE(per_sample.count(under));
    REQUIRE(per_sample.count(over));
    const double measured = per_sample[over].first / per_sample[under].first;  // 1.22, 1.54, 1.11
    const double predicted = per_sample[over].second / per_sample[under].second;
    CHECK(measured > 1.1);
    CHECK(predicted == Approx(measured).epsilon(0.08));  // 1.21, 1.45, 1.07 (one FLOP rate for depthwise: 1.15)
  }
}

TEST_CASE("app::cli: seven held-out set-8 steps re-measured on an H100, predicted before they ran", "[cli]") {
  // calibrate/probes/results/h100-holdout8-rerun-2026-12-06.jsonl: GPU-bound steps at ordinary batch sizes
  // (ConvNeXt-T, ViT-B/16, ResNet-50, EfficientNet-B3, MobileNetV2, GPT-124M, GPT-1.3B), their H100 predictions
  // written into docs/calibration.md (commit 4376015) before the run. Measured 3.6% MAPE, largest 6.2%;
  // with the classes scaled by HBM bandwidth instead it would be 13.4%, largest 21.4%.
  const auto r = gp::test::run_gpuplan(
      "calibrate check --profile calibrate/profiles/h200.json --gpu h100-sxm --tolerance 8 --format json "
      "--runs calibrate/probes/results/h100-holdout8-rerun-2026-12-06.jsonl", true);
  CHECK(r.code == 0);  // exit 1 when the MAPE exceeds the 8% tolerance
  const auto j = nlohmann::json::parse(r.out);
  int n = 0;
  for (const auto& x : j["records"]) {
    INFO(x["id"].get<std::string>());
    REQUIRE(x["step_err_pct"].is_number());
    CHECK(std::abs(x["step_err_pct"].get<double>()) <= 10.0);
    ++n;
  }
  CHECK(n == 7);
}

TEST_CASE("app::cli: the predicted 80% step range holds about 80% of the held-out steps it was not fitted on", "[cli]") {
  // sim-constants' step_host_cpu_log_sd and step_gpu_log_sd were fitted (tools/fit_step_spread.py) over the
  // reference runs, held-out sets 1-11 and the H100 sets; sets 12-17 (other hosts, models and batch sizes) were
  // left out of it. Counted apart, as each side's spread sets its own records' ranges: measured 26 of 31
  // launch-bound steps inside and 40 of 49 others (24 and 41 with the H200 hosts' spread alone, 0.229; with the
  // host's log sd at 0.1: 15 of 31, and the check fails).
  int records = 0, within = 0;
  std::map<bool, std::pair<int, int>> by_launch;  // launch-bound? -> (inside, records)
  for (const char* f : {"h200-holdout12-2026-12-04", "h200-holdout13-2026-12-04", "h200-holdout14-2026-12-04",
                        "h200-holdout15-2026-12-04", "h200-holdout16-2026-12-04", "h200-holdout17-2026-12-04"}) {
    const auto r = gp::test::run_gpuplan("calibrate check --profile calibrate/profiles/h200.json --tolerance 100 "
                                         "--format json --runs calibrate/probes/results/" + std::string(f) + ".jsonl",
                                         true);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    INFO(f);
    REQUIRE(j["summary"].contains("step_range_80"));
    records += j["summary"]["step_range_80"]["records"].get<int>();
    within += j["summary"]["step_range_80"]["within"].get<int>();
    for (const auto& x : j["records"]) {
      if (!x.contains("predicted_step_ms_p10") || !x["in_gpu_bound_mape"].get<bool>()) continue;
      INFO(x["id"].get<std::string>());
      const double lo = x["predicted_step_ms_p10"], hi = x["predicted_step_ms_p90"], m = x["measured_step_ms"];
      CHECK(lo < hi);
      auto& [in, n] = by_launch[x["bottleneck"] == "launch-bound"];
      in += (m >= lo && m <= hi) ? 1 : 0;
      ++n;
    }
  }
  CHECK(records == 80);
  CHECK(by_launch[true].second + by_launch[false].second == records);
  CHECK(by_launch[true].first + by_launch[false].first == within);
  for (bool launch : {true, false}) {
    INFO((launch ? "launch-bound" : "GPU-bound") << ": " << by_launch[launch].first << " of " << by_launch[launch].second);
    const double share = static_cast<double>(by_launch[launch].first) / by_launch[launch].second;
    CHECK(share >= 0.65);
    CHECK(share <= 0.92);
  }
}

TEST_CASE("app::cli: run gives each configuration its 80% range, wide where the host's CPU sets the step", "[cli]") {
  auto gpu = gp::test::run_gpuplan("run scenarios/quickstart-gpt-350m.json --no-db --format json", true);
  REQUIRE(gpu.code == 0);
  for (const auto& c : nlohmann::json::parse(gpu.out)["configs"]) {
    INFO(c["id"].get<std::string>());
    const double step = c["step_time_s"], p10 = c["step_time_p10_s"], p90 = c["step_time_p90_s"];
    CHECK(p10 < step);
    CHECK(step < p90);
    CHECK(p90 / p10 < 1.15);  // GPU-bound: the GPU side's spread only (log sd 0.031: x1.083)
    // Every step at the 90th percentile: the job takes steps x (p90 - step) longer, at the same price per hour.
    const double extra_h = c["steps"].get<double>() * (p90 - step) / 3600;
    CHECK(c["time_to_train_p90_h"].get<double>() == Approx(c["time_to_train_h"].get<double>() + extra_h));
    CHECK(c["cost_p90_usd"].get<double>() ==
          Approx(c["price_per_hour_usd"].get<double>() * c["time_to_train_p90_h"].get<double>()));
  }
  auto lb = gp::test::run_gpuplan("run tests/data/launch-bound-long.json --no-db --format json", true);
  REQUIRE(lb.code == 0);
  const auto c = nlohmann::json::parse(lb.out)["configs"][0];
  REQUIRE(c["bottleneck"] == "launch-overhead");
  const double p10 = c["step_time_p10_s"], p90 = c["step_time_p90_s"];
  CHECK(p90 / p10 > 1.6);  // the host's spread, log sd 0.280: exp(2 x 1.2816 x 0.280) = 2.05
  const std::string advice = c["advice"][0];
  CHECK(advice.find("80% range over the hosts measured") != std::string::npos);
}

TEST_CASE("app::cli: a negative step spread in sim-constants is one line, exit 2", "[cli]") {
  const auto path = fs::temp_directory_path() / ("gpuplan-spread-" + std::to_string(::getpid()) + ".json");
  {
    std::ifstream in("calibrate/profiles/sim-constants.json");
    auto doc = nlohmann::json::parse(in);
    doc["step_host_cpu_log_sd"]["value"] = -0.2;
    std::ofstream f(path);
    f << doc.dump();
  }
  auto bad = gp::test::run_gpuplan("calibrate check --profile calibrate/profiles/h200.json "
                                   "--runs calibrate/measured/h200-2026-12.jsonl --sim-constants " + path.string());
  CHECK(bad.code == 2);
  CHECK(bad.out == path.string() + ":/step_host_cpu_log_sd/value: expected a log standard deviation >= 0\n");
  fs::remove(path);
}

TEST_CASE("app::cli: held-out set 19 on an H100: GPU-bound steps inside their ranges, a faster host outside", "[cli]") {
  // calibrate/probes/results/h100-holdout19-2026-12-06.jsonl: 22 steps no run had measured (defined in commit
  // 2ce6318 before the run), on the H100 the device lent. Its GPU-bound steps: MAPE 3.2%, all inside their 80%
  // ranges. Its host issued eager steps about 1.5x faster than the H200 hosts' median, so every launch-bound step
  // ran faster than the point and most below their range (docs/calibration.md, "Held-out set 19 on an H100").
  const auto r = gp::test::run_gpuplan(
      "calibrate check --profile calibrate/profiles/h200.json --gpu h100-sxm --tolerance 100 --format json "
      "--runs calibrate/probes/results/h100-holdout19-2026-12-06.jsonl", true);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  int gpu_bound = 0, launch_bound = 0, oom_right = 0;
  for (const auto& x : j["records"]) {
    INFO(x["id"].get<std::string>());
    if (x["oom_agrees"].get<bool>()) ++oom_right;
    REQUIRE(x["predicted_step_ms_p10"].is_number());
    const double m = x["measured_step_ms"], p = x["predicted_step_ms"];
    if (x["bottleneck"] == "launch-bound") {
      ++launch_bound;
      CHECK(m < p);  // the faster host
    } else {
      ++gpu_bound;
      CHECK(std::abs(x["step_err_pct"].get<double>()) <= 15.0);
      CHECK(m >= x["predicted_step_ms_p10"].get<double>());
      CHECK(m <= x["predicted_step_ms_p90"].get<double>());
    }
  }
  CHECK(gpu_bound == 9);
  CHECK(launch_bound == 13);
  CHECK(oom_right == 22);
  CHECK(j["summary"]["mape_by_bottleneck"]["gpu"]["mape_pct"].get<double>() <= 5.0);
  CHECK(j["summary"]["peak_mem_mape_pct"].get<double>() <= 8.0);
}

TEST_CASE("app::cli: held-out set 19 on a second and a third H100 host, fitted on by nothing, falls inside its ranges", "[cli]") {
  // calibrate/probes/results/h100-holdout19-host{2,3}-2026-12-06.jsonl: the same 22 steps on two more lent H100s
  // (launch probe 6.6-6.9 and 9.1-10.8 us per eager kernel against the first host's 5.8). No fit has seen either.
  // Measured: host 2 21 of 22 inside their 80% ranges, launch-bound MAPE 17.6%, GPU-bound 4.0%; host 3 (measured
  // after every constant was fixed) 20 of 22, launch-bound 16.1%, GPU-bound 4.75%. Against the first host the
  // GPU-bound steps of host 2 agree within 8% while launch-bound ones ran x1.17 to x2.31 slower: the host sets them.
  auto check = [](const std::string& file) {
    const auto r = gp::test::run_gpuplan("calibrate check --profile calibrate/profiles/h200.json --gpu h100-sxm "
                                         "--tolerance 100 --format json --runs " + file, true);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out);
  };
  const auto host1 = check("calibrate/probes/results/h100-holdout19-2026-12-06.jsonl");
  const auto host2 = check("calibrate/probes/results/h100-holdout19-host2-2026-12-06.jsonl");
  const auto host3 = check("calibrate/probes/results/h100-holdout19-host3-2026-12-06.jsonl");
  for (const auto* h : {&host2, &host3}) {
    CHECK((*h)["summary"]["step_range_80"]["records"].get<int>() == 22);
    CHECK((*h)["summary"]["step_range_80"]["within"].get<int>() >= 18);
    CHECK((*h)["summary"]["mape_by_bottleneck"]["gpu"]["mape_pct"].get<double>() <= 6.0);
    CHECK((*h)["summary"]["mape_by_bottleneck"]["launch_bound"]["mape_pct"].get<double>() <= 25.0);
    CHECK((*h)["summary"]["oom_agree"].get<int>() == 22);
  }
  std::map<std::string, double> first;
  for (const auto& x : host1["records"]) first[x["id"]] = x["measured_step_ms"];
  double launch_max = 0, gpu_max = 0;
  for (const auto& x : host2["records"]) {
    const std::string id = x["id"];
    REQUIRE(first.count(id));
    const double a = first[id], b = x["measured_step_ms"];
    const double ratio = std::max(a, b) / std::min(a, b);
    if (x["bottleneck"] == "launch-bound")
      launch_max = std::max(launch_max, ratio);
    else
      gpu_max = std::max(gpu_max, ratio);
  }
  CHECK(launch_max > 1.8);  // GPT-124M b2 s256 eager: 14.2 and 32.8 ms
  CHECK(gpu_max < 1.10);    // GPT-350M b6: 50.8 and 54.5 ms
}

TEST_CASE("app::cli: held-out set 18 at the H100's memory limit repeats within 1.5% on another host", "[cli]") {
  // calibrate/probes/results/h100-holdout18{,-host3}-2026-12-06.jsonl: the same eight large-batch steps on two lent
  // H100s. Steps the GPU sets do not follow the host: measured 338.2/338.3 ms (EfficientNet-B0 b1700) ... 568.4/565.6
  // (RegNetY-8GF b800). Both give the same OOM verdicts (8 of 8 right) and the same predictions.
  auto read = [](const std::string& file) {
    std::map<std::string, nlohmann::json> m;
    std::ifstream in(file);
    REQUIRE(in);
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) {
        auto j = nlohmann::json::parse(line);
        if (j.value("kind", "") == "train") m[j["id"].get<std::string>()] = j;
      }
    return m;
  };
  const auto a = read("calibrate/probes/results/h100-holdout18-2026-12-06.jsonl");
  const auto b = read("calibrate/probes/results/h100-holdout18-host3-2026-12-06.jsonl");
  REQUIRE(a.size() == 8);
  REQUIRE(b.size() == 8);
  int compared = 0;
  for (const auto& [id, x] : a) {
    INFO(id);
    REQUIRE(b.count(id));
    const auto& y = b.at(id);
    CHECK(x.value("oom", false) == y.value("oom", false));
    if (x.value("oom", false)) continue;
    const double r = x["step_ms"].get<double>() / y["step_ms"].get<double>();
    CHECK(std::abs(r - 1) < 0.015);
    ++compared;
  }
  CHECK(compared == 7);
  const auto j = h100_check("calibrate/probes/results/h100-holdout18-host3-2026-12-06.jsonl");
  CHECK(j["summary"]["oom_agree"].get<int>() == 8);
  CHECK(j["summary"]["mape_pct"].get<double>() <= 8.0);
}

TEST_CASE("app::cli: held-out set 20 on an H100, predicted before it ran: GPU-bound steps of twelve unmeasured configurations", "[cli]") {
  // calibrate/probes/results/h100-holdout20-2026-12-06.jsonl: twelve GPU-bound steps no run had measured, their
  // predictions written into tools/measure_holdout.py (CONFIGS20) before the run. Measured: MAPE 6.95%, largest
  // -13.0% (DenseNet-161 b192), 8 of 12 inside their 80% ranges, OOM 12 of 12, peaks 2.4%. The six DenseNets
  // ran 5-13% slower than predicted (BatchNorm and elementwise kernels run 7-17% slower on the H100 than the
  // model's rules give; docs/calibration.md "Probed classes on an H100"), the six others 3.7% MAPE.
  const auto j = h100_check("calibrate/probes/results/h100-holdout20-2026-12-06.jsonl");
  REQUIRE(j["records"].size() == 12);
  CHECK(j["summary"]["mape_pct"].get<double>() <= 9.0);
  CHECK(j["summary"]["within_25_pct"].get<int>() == 12);
  CHECK(j["summary"]["oom_agree"].get<int>() == 12);
  CHECK(j["summary"]["peak_mem_mape_pct"].get<double>() <= 5.0);
  double dense = 0, other = 0;
  int n_dense = 0, n_other = 0;
  for (const auto& x : j["records"]) {
    INFO(x["id"].get<std::string>());
    CHECK(x["bottleneck"] != "launch-bound");
    const double e = std::abs(x["step_err_pct"].get<double>());
    CHECK(e <= 15.0);
    if (x["id"].get<std::string>().find("densenet") != std::string::npos) {
      dense += e;
      ++n_dense;
    } else {
      other += e;
      ++n_other;
    }
  }
  REQUIRE(n_dense == 6);
  REQUIRE(n_other == 6);
  CHECK(other / n_other <= 5.0);
  CHECK(dense / n_dense > other / n_other);  // the DenseNet shortfall the docs describe
}

TEST_CASE("app::cli: held-out set 21 on an H100, predicted before it ran: GPU-bound BatchNorm networks", "[cli]") {
  // calibrate/probes/results/h100-holdout21-2026-12-06.jsonl: GPU-bound BatchNorm networks no run had measured,
  // predicted in tools/measure_holdout.py (CONFIGS21) by both rules before the run. Seven steps ran first; with the
  // SM rule their MAPE was 2.66%, and the BatchNorm bandwidth share it was written to test (commit 99c8d4a) gave
  // 4.13%, the six other networks 5% over, and was removed. The last four ran in a later session on another H100
  // host, still unfitted: all eleven 2.73%, DenseNet-121 b320 -9.8% and ResNet-101 fp16 -7.6% the largest.
  const auto j = h100_check("calibrate/probes/results/h100-holdout21-2026-12-06.jsonl");
  REQUIRE(j["summary"]["mape_records"].get<int>() == 11);
  CHECK(j["summary"]["mape_pct"].get<double>() <= 4.0);
  CHECK(j["summary"]["oom_agree"].get<int>() == 11);
  CHECK(j["summary"]["step_range_80"]["within"].get<int>() >= 10);
  for (const auto& x : j["records"]) {
    INFO(x["id"].get<std::string>());
    CHECK(std::abs(x["step_err_pct"].get<double>()) <= 12.0);
  }
}

TEST_CASE("app::cli: held-out set 22 on an H100, predicted and committed before it ran", "[cli]") {
  // calibrate/probes/results/h100-holdout22-2026-12-07.jsonl: 14 configurations defined in tools/measure_holdout.py
  // (CONFIGS22), their predictions committed in f3299cc (holdout22-predictions-2026-12-06.txt) two sessions before
  // a device came. Measured: MAPE 3.70%, RegNetY-8GF b192 +12.2% the largest. The issue's bar is 10% and 25%.
  const auto j = h100_check("calibrate/probes/results/h100-holdout22-2026-12-07.jsonl");
  REQUIRE(j["summary"]["mape_records"].get<int>() == 14);
  CHECK(j["summary"]["mape_pct"].get<double>() <= 5.0);
  CHECK(j["summary"]["oom_agree"].get<int>() == 14);
  CHECK(j["summary"]["peak_mem_mape_pct"].get<double>() <= 5.0);
  for (const auto& x : j["records"]) {
    INFO(x["id"].get<std::string>());
    CHECK(std::abs(x["step_err_pct"].get<double>()) <= 15.0);
  }
}

TEST_CASE("app::cli: held-out sets 9 and 10 on an H100, predicted and committed before they ran", "[cli]") {
  // calibrate/probes/results/h100-holdout{9,10}-2026-12-07.jsonl: sets measured on H200s on 2026-12-03, run on a lent
  // H100 after their H100 predictions were committed (43f7a34, holdout9-10-h100-predictions-2026-12-07.txt).
  // Measured: set 9 MAPE 7.53% (RegNetX-400MF b256, launch-bound, +32.0%), set 10 5.69% (all within 25%).
  const auto s9 = h100_check("calibrate/probes/results/h100-holdout9-2026-12-07.jsonl");
  const auto s10 = h100_check("calibrate/probes/results/h100-holdout10-2026-12-07.jsonl");
  REQUIRE(s9["summary"]["mape_records"].get<int>() == 28);
  REQUIRE(s10["summary"]["mape_records"].get<int>() == 25);
  CHECK(s9["summary"]["mape_pct"].get<double>() <= 10.0);
  CHECK(s10["summary"]["mape_pct"].get<double>() <= 10.0);
  CHECK(s9["summary"]["oom_agree"].get<int>() == 28);
  CHECK(s10["summary"]["oom_agree"].get<int>() == 25);
  for (const auto* j : {&s9, &s10})
    for (const auto& x : (*j)["records"]) {
      INFO(x["id"].get<std::string>());
      // Where the GPU sets the step (in the model), within 16% (the largest, SwinV2-S b64, is -15.2%).
      if (x["bottleneck"].get<std::string>().rfind("gpu", 0) == 0) CHECK(std::abs(x["step_err_pct"].get<double>()) <= 16.0);
      // Swin-T b64 TF32 was -33.5% on the H200 host of set 10, which ran it in 60.0 ms; this H100 ran it in 46.7 ms
      // (a slower GPU, a faster step): that miss was the host, and here the model is within 2%.
      if (x["id"] == "holdout10/swin_t-b64-tf32") CHECK(std::abs(x["step_err_pct"].get<double>()) <= 2.0);
    }
}

TEST_CASE("app::cli: held-out sets 11 to 13 on an H100, predicted and committed before they ran", "[cli]") {
  // calibrate/probes/results/h100-holdout{11,12,13}-2026-12-07.jsonl: sets measured on H200s on 2026-12-04, run on a
  // lent H100 (a fast host: launch probe 5.7-6.1 us a kernel) after their H100 predictions were committed (b874582,
  // holdout11-13-h100-predictions-2026-12-07.txt). Measured: the 26 steps the model finds GPU-bound 4.88% (largest
  // ShuffleNetV2 b256 TF32 -21.8%), the 21 launch-bound ones 40.2%, all over-predicted but Swin-S (the host's CPU:
  // it suggests host_cpu_scale 0.64); OOM 48 of 48 (gpt-2.7b b24 does not fit an H100); peak memory 2.6%.
  auto committed = committed_predictions({"calibrate/probes/results/holdout11-13-h100-predictions-2026-12-07.txt"});
  int gpu = 0, host = 0, oom = 0, records = 0;
  double gpu_abs = 0, mem_abs = 0;
  for (const char* set : {"11", "12", "13"}) {
    const auto j = h100_check(std::string("calibrate/probes/results/h100-holdout") + set + "-2026-12-07.jsonl");
    oom += j["summary"]["oom_agree"].get<int>();
    records += j["summary"]["oom_records"].get<int>();
    for (const auto& x : j["records"]) {
      const std::string id = x["id"];
      INFO(id);
      if (x["step_err_pct"].is_null()) continue;  // the 2.7B step out of memory, as predicted
      REQUIRE(committed.count(id) == 1);
      CHECK(x["predicted_step_ms"].get<double>() == Approx(committed[id]).margin(0.051));
      mem_abs += std::abs(x["peak_mem_err_pct"].get<double>());
      if (x["bottleneck"].get<std::string>().rfind("gpu", 0) == 0) {
        CHECK(std::abs(x["step_err_pct"].get<double>()) <= 22.0);
        gpu_abs += std::abs(x["step_err_pct"].get<double>());
        ++gpu;
      } else {
        ++host;
      }
    }
  }
  CHECK(gpu == 26);
  CHECK(host == 21);
  CHECK(gpu_abs / gpu <= 6.0);
  CHECK(mem_abs / (gpu + host) <= 4.0);
  CHECK(oom == 48);
  CHECK(records == 48);
}

TEST_CASE("app::cli: held-out sets 18 to 22 on an H200, predicted and committed before they ran", "[cli]") {
  // Sets 18-21 and 22 had run on H100s only; their H200 predictions were committed first (1a00341:
  // holdout18-21-h200-predictions-2026-12-07.txt; holdout22-predictions-2026-12-06.txt), then the sets ran on a lent
  // H200 on 2026-12-07 (set 18 stopped at its time limit after one step). Measured: set 22 MAPE 4.88% (largest
  // RegNetY-8GF b192 +19.5%), set 20 5.12%, set 21 3.34%, set 18's one step -1.9%.
  auto committed = committed_predictions({"calibrate/probes/results/holdout22-predictions-2026-12-06.txt",
                                          "calibrate/probes/results/holdout18-21-h200-predictions-2026-12-07.txt"});
  REQUIRE(committed.size() >= 40);
  int steps = 0;
  for (const char* set : {"22", "20", "21", "18-partial"}) {
    const auto r = gp::test::run_gpuplan(std::string("calibrate check --profile calibrate/profiles/h200.json "
                                                     "--tolerance 100 --format json --runs "
                                                     "calibrate/probes/results/h200-holdout") + set + "-2026-12-07.jsonl",
                                         true);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["summary"]["mape_pct"].get<double>() <= 6.0);
    CHECK(j["summary"]["oom_agree"].get<int>() == j["summary"]["mape_records"].get<int>());
    for (const auto& x : j["records"]) {
      const std::string id = x["id"];
      INFO(id);
      REQUIRE(committed.count(id) == 1);
      // The prediction is still the one committed before the run, and every step is within 20%.
      CHECK(x["predicted_step_ms"].get<double>() == Approx(committed[id]).margin(0.051));
      CHECK(std::abs(x["step_err_pct"].get<double>()) <= 20.0);
      ++steps;
    }
  }
  CHECK(steps == 38);
}

TEST_CASE("app::cli: cluster.host_cpu_scale, measured on the host, scales eager steps and narrows their range", "[cli]") {
  auto write = [](const std::string& name, const std::string& extra) {
    const auto path = fs::temp_directory_path() / (name + std::to_string(::getpid()) + ".json");
    std::ofstream(path) << R"({"name": "launch-bound", "workload": {"model": "gpt-350m", "global_batch": 8,
        "micro_batch": 1, "steps": 1000, "precision": "bf16", "optimizer": "adamw-fused"},
        "cluster": {"instance": "aws-p5en.48xlarge", "nodes": 1, "storage": "fsx-lustre-p2-500")" + extra + "}}";
    return path;
  };
  const auto plain = write("gpuplan-host-", "");
  const auto fast = write("gpuplan-host-fast-", R"(, "host_cpu_scale": 0.7)");
  const auto bad = write("gpuplan-host-bad-", R"(, "host_cpu_scale": 0)");
  auto a = gp::test::run_gpuplan("run " + plain.string() + " --no-db --format json", true);
  auto b = gp::test::run_gpuplan("run " + fast.string() + " --no-db --format json", true);
  REQUIRE(a.code == 0);
  REQUIRE(b.code == 0);
  const auto ca = nlohmann::json::parse(a.out)["configs"][0], cb = nlohmann::json::parse(b.out)["configs"][0];
  REQUIRE(ca["bottleneck"] == "launch-overhead");
  REQUIRE(cb["bottleneck"] == "launch-overhead");
  // The CPU's 41.9 ms of issue becomes 29.3 (still above the GPU's 15.4): the compute part of the step x 0.7.
  const double step_a = ca["step_time_s"], step_b = cb["step_time_s"];
  const double compute_a = ca["step_breakdown_s"]["compute"], compute_b = cb["step_breakdown_s"]["compute"];
  CHECK(compute_b == Approx(0.7 * compute_a).epsilon(0.01));
  CHECK(step_b < step_a);
  // Range: the host-blind spread (log sd 0.280: p90 / p10 = 2.05) against the one within a known host (0.179: 1.58).
  const double wide = ca["step_time_p90_s"].get<double>() / ca["step_time_p10_s"].get<double>();
  const double narrow = cb["step_time_p90_s"].get<double>() / cb["step_time_p10_s"].get<double>();
  CHECK(wide > 1.9);
  CHECK(narrow < 1.7);
  CHECK(narrow > 1.4);
  CHECK(cb["advice"][0].get<std::string>().find("CPU factor 0.70 as measured") != std::string::npos);
  auto e = gp::test::run_gpuplan("run " + bad.string() + " --no-db");
  CHECK(e.code == 2);
  CHECK(e.out.find(bad.string() + ":/cluster/host_cpu_scale: must be a number in [0.05, 20], got 0") != std::string::npos);
  for (const auto& p : {plain, fast, bad}) fs::remove(p);
}

TEST_CASE("app::cli: calibrate check suggests the runs' host CPU factor and --host-cpu-scale applies one", "[cli]") {
  // Set 19's first H100 host issued eager steps fast: the median measured / predicted of its 12 host-bound steps
  // is 0.65. With that factor (taken from the same runs: in-sample; docs/calibration.md gives the leave-one-out
  // figures) its launch-bound MAPE goes from 49.9% to 7.4% and 20 of 22 steps lie in the narrower range.
  const std::string base = "calibrate check --profile calibrate/profiles/h200.json --gpu h100-sxm --tolerance 100 "
                           "--format json --runs calibrate/probes/results/h100-holdout19-2026-12-06.jsonl";
  const auto a = gp::test::run_gpuplan(base, true);
  const auto b = gp::test::run_gpuplan(base + " --host-cpu-scale 0.65", true);
  REQUIRE(a.code == 0);
  REQUIRE(b.code == 0);
  // The suggestion is the median measured / predicted over the steps whose CPU issue time is at least 1.5x their
  // GPU time (docs/calibration.md), recomputed here from the records' own fields.
  const auto host_median = [](const nlohmann::json& doc) {
    std::vector<double> ratios;
    for (const auto& r : doc["records"]) {
      if (!r["measured_step_ms"].is_number() || !r["predicted_step_ms"].is_number()) continue;
      const auto& b = r["breakdown_ms"];
      const double gpu = b["gpu_forward"].get<double>() + b["gpu_backward"].get<double>() +
                         b["gpu_optimizer"].get<double>();
      if (b["cpu_issue"].get<double>() >= 1.5 * gpu)
        ratios.push_back(r["measured_step_ms"].get<double>() / r["predicted_step_ms"].get<double>());
    }
    std::sort(ratios.begin(), ratios.end());
    const std::size_t n = ratios.size();
    return std::pair{n, n % 2 ? ratios[n / 2] : 0.5 * (ratios[n / 2 - 1] + ratios[n / 2])};
  };
  const auto ja = nlohmann::json::parse(a.out);
  const auto sa = ja["summary"], sb = nlohmann::json::parse(b.out)["summary"];
  const auto [hosts_a, median_a] = host_median(ja);
  CHECK(hosts_a == 12);
  CHECK(sa["host_bound_records"].get<int>() == 12);
  CHECK(sa["host_cpu_scale"].is_null());
  CHECK(sa["host_cpu_scale_suggested"].get<double>() == Approx(median_a).epsilon(1e-6));
  CHECK(median_a == Approx(0.65).margin(0.02));  // the factor the rest of this test applies
  CHECK(sb["host_cpu_scale"].get<double>() == 0.65);
  CHECK(sa["mape_by_bottleneck"]["launch_bound"]["mape_pct"].get<double>() > 40.0);
  CHECK(sb["mape_by_bottleneck"]["launch_bound"]["mape_pct"].get<double>() < 15.0);
  CHECK(sb["step_range_80"]["host_cpu_log_sd"].get<double>() < sa["step_range_80"]["host_cpu_log_sd"].get<double>());
  CHECK(sb["step_range_80"]["within"].get<int>() >= 18);
  // The reference runs' host was a slow one: the factor they suggest is above 1 (5 host-bound steps: 1.22).
  const auto ref = gp::test::run_gpuplan("calibrate check --profile calibrate/profiles/h200.json --format json "
                                         "--runs calibrate/measured/h200-2026-12.jsonl", true);
  const auto jref = nlohmann::json::parse(ref.out);
  const auto [hosts_ref, median_ref] = host_median(jref);
  CHECK(static_cast<int>(hosts_ref) == jref["summary"]["host_bound_records"].get<int>());
  CHECK(jref["summary"]["host_cpu_scale_suggested"].get<double>() == Approx(median_ref).epsilon(1e-6));
  CHECK(median_ref > 1.1);
  const auto bad = gp::test::run_gpuplan(base + " --host-cpu-scale 0");
  CHECK(bad.code == 2);
}

TEST_CASE("app::cli: the CPU-bound advice names a fractional container CPU limit as given", "[cli]") {
  // docker run --cpus 0.5 (tests/data/half-cpu-container.json): the advice printed the limit rounded to whole
  // cores, "the container has 0", which reads as no CPU at all.
  const auto r = gpuplan("run --no-db -q --format json tests/data/half-cpu-container.json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["configs"].size() == 1);
  CHECK(j["configs"][0]["advice"].dump().find("the container has 0.5: decode on the GPU") != std::string::npos);
}

TEST_CASE("app::cli: run names each configuration's choices in a sweep and in the recommendation", "[cli]") {
  // scenarios/cuda-graphs-small-batch.json sweeps two workloads (4 x 256 and 16 x 1024 tokens) by cuda_graphs
  // false / true: c0000 is the small eager one, c0002 the small one as a graph.
  auto j = gpuplan("run scenarios/cuda-graphs-small-batch.json --no-db -q --format json");
  REQUIRE(j.code == 0);
  const auto doc = nlohmann::json::parse(j.out);
  REQUIRE(doc["configs"].size() == 4);
  CHECK(doc["configs"][0]["sweep"] ==
        nlohmann::json::parse(R"({"software.cuda_graphs": false, "workload.micro_batch": 4, "workload.seq": 256})"));
  CHECK(doc["configs"][3]["sweep"]["workload.seq"] == 1024);
  CHECK(doc["configs"][3]["sweep"]["software.cuda_graphs"] == true);
  auto t = gpuplan("run scenarios/cuda-graphs-small-batch.json --no-db -q");
  REQUIRE(t.code == 0);
  CHECK(t.out.find("\nc0000 cuda_graphs=false micro_batch=4 seq=256\n") != std::string::npos);
  CHECK(t.out.find("c0002 (1 x h200-sxm, aws-p5en.48xlarge, cuda_graphs=true micro_batch=4 seq=256)") !=
        std::string::npos);
  // The table stays within 100 columns with the legend, and a scenario that sweeps only what the columns show
  // (straggler-scaling: the node count) gets none.
  std::size_t widest = 0;
  for (std::size_t s = 0, e; s < t.out.size(); s = e + 1) {
    e = t.out.find('\n', s);
    if (e == std::string::npos) e = t.out.size();
    widest = std::max(widest, e - s);
  }
  CHECK(widest <= 100);
  auto plain = gpuplan("run scenarios/straggler-scaling.json --no-db -q");
  REQUIRE(plain.code == 0);
  CHECK(plain.out.find("\nc0000 ") == plain.out.rfind("\nc0000 "));  // the table's row only
  auto csv = gpuplan("run scenarios/cuda-graphs-small-batch.json --no-db -q --format csv");
  CHECK(csv.out.find(",sweep\n") != std::string::npos);
  CHECK(csv.out.find(",cuda_graphs=true micro_batch=16 seq=1024\n") != std::string::npos);
  // The store keeps it: history --show prints the same choices under its table.
  const auto db = temp_db("sweep");
  REQUIRE(gpuplan("run scenarios/cuda-graphs-small-batch.json -q --db " + db).code == 0);
  auto h = gpuplan("history --show 1 --db " + db);
  REQUIRE(h.code == 0);
  CHECK(h.out.find("\nc0002  cuda_graphs=true micro_batch=4 seq=256\n") != std::string::npos);
  std::filesystem::remove(db);
}

TEST_CASE("app::cli: run --plot writes the time-against-cost SVG and says so in one line when it cannot", "[cli]") {
  const auto svg = (fs::temp_directory_path() / ("gpuplan-plot-" + std::to_string(::getpid()) + ".svg")).string();
  auto r = gpuplan("run scenarios/gpt-scaling-100g.json --no-db -q --plot " + svg);
  REQUIRE(r.code == 0);
  std::ifstream in(svg);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.rfind("<svg", 0) == 0);
  CHECK(text.find("</svg>") != std::string::npos);
  // 4 GPUs: $4.41 in 0.395 h; 64 GPUs: $860 in 4.82 h (README): both axes span a factor of 10, so both are log.
  CHECK(text.find("time to train (h, log scale)") != std::string::npos);
  CHECK(text.find("cost (USD, log scale)") != std::string::npos);
  CHECK(text.find("<title>c0000 (4 x a100-sxm-80gb") != std::string::npos);
  fs::remove(svg);
  auto bad = gpuplan("run scenarios/gpt-scaling-100g.json --no-db -q --plot /nonexistent-dir/p.svg");
  CHECK(bad.code == 2);
  CHECK(bad.out.find("/nonexistent-dir/p.svg: cannot write the plot") != std::string::npos);
}

TEST_CASE("app::cli: calibrate check --junit writes a report CI test viewers read and one line when it cannot", "[cli]") {
  const auto xml = (fs::temp_directory_path() / ("gpuplan-junit-" + std::to_string(::getpid()) + ".xml")).string();
  const std::string base = "calibrate check --profile calibrate/profiles/h200.json --runs ";
  auto r = gpuplan(base + "calibrate/probes/results/h200-holdout12-2026-12-04.jsonl --junit " + xml);
  CHECK(r.code == 1);  // held-out set 12's MAPE (15.4%) exceeds the default 10%: the report's gate case fails too
  std::ifstream in(xml);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.rfind("<?xml", 0) == 0);
  CHECK(text.find("<testcase classname=\"gpuplan.calibrate.check\" name=\"step-time MAPE over GPU-bound train "
                  "records\"><failure") != std::string::npos);
  // ResNet-18 b64 eager ran 7.05 ms on that host against 11.13 predicted: +58%, beyond 25%.
  CHECK(text.find("name=\"holdout12/resnet18-b64-bf16 step time\"><failure") != std::string::npos);
  fs::remove(xml);
  auto bad = gpuplan(base + "calibrate/measured/h200-2026-12.jsonl --junit /nonexistent-dir/j.xml");
  CHECK(bad.code == 2);
  CHECK(bad.out.find("/nonexistent-dir/j.xml: cannot write the JUnit report") != std::string::npos);
}

TEST_CASE("app::cli: calibrate check refuses runs of another GPU than the profile's, in one line, unless --gpu derives it",
          "[cli]") {
  // Two records of the reference format measured on an H100, checked against the H200 profile: it printed a table
  // and exit 0 or 1, comparing H200 predictions with H100 measurements. With --gpu h100-sxm it is the documented
  // derived check and runs.
  const auto dir = fs::temp_directory_path() / ("gpuplan-other-gpu-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string runs = (dir / "h100.jsonl").string();
  std::ofstream(runs)
      << R"({"id":"m","kind":"micro","probe":"launch","device":"NVIDIA H100 80GB HBM3"})" "\n"
      << R"({"id":"a","kind":"train","model":"resnet50","batch":128,"precision":"bf16","channels_last":true,)"
         R"("optimizer":"sgd-momentum","data":"synthetic-on-gpu","step_ms":25.0,"device":"NVIDIA H100 80GB HBM3"})" "\n"
      << R"({"id":"b","kind":"train","model":"resnet50","batch":256,"precision":"bf16","channels_last":true,)"
         R"("optimizer":"sgd-momentum","data":"synthetic-on-gpu","step_ms":48.0,"device":"NVIDIA H100 80GB HBM3"})" "\n";
  const std::string check = "calibrate check --profile calibrate/profiles/h200.json --runs " + runs;
  const auto r = gpuplan(check);
  CHECK(r.code == 2);
  // The first H100 record is on line 2; 2 of the 2 train records are the H100's.
  CHECK(r.out == runs + ":2:/device: measured on \"NVIDIA H100 80GB HBM3\", but the profile is of \"NVIDIA H200\" (2 of 2 "
                        "train records): check them against a profile of that GPU, or derive one with --gpu and its "
                        "catalog id (catalogs/gpus.json)\n");
  const auto derived = gpuplan(check + " --gpu h100-sxm --tolerance 1000");
  CHECK(derived.code == 0);
  fs::remove_all(dir);
}

TEST_CASE("app::cli: calibrate check of a runs file with no train record is one line and exit 2 as fit", "[cli]") {
  // It printed an empty table ending "FAIL" and exit 1, and --junit wrote a failing case: a model that drifted, not
  // a wrong file. An empty file, and one of micro-benchmark records only.
  const auto dir = fs::temp_directory_path() / ("gpuplan-no-train-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string empty = (dir / "empty.jsonl").string(), micro = (dir / "micro.jsonl").string(),
                    xml = (dir / "check.xml").string();
  std::ofstream(empty) << "";
  std::ofstream(micro) << R"({"id":"g1","kind":"micro","op":"gemm","m":4096,"n":4096,"k":4096,"ms":0.2})" "\n"
                       << R"({"id":"c1","kind":"checkpoint","bytes":1000000000})" "\n";
  for (const auto& runs : {empty, micro}) {
    const auto r = gpuplan("calibrate check --profile calibrate/profiles/h200.json --runs " + runs + " --junit " + xml);
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK(r.out == runs + ": no train record to check (expected lines with \"kind\": \"train\", as "
                          "calibrate/measured/h200-2026-12.jsonl)\n");
    CHECK_FALSE(fs::exists(xml));
    // calibrate fit refuses the same file with exit 2 too.
    CHECK(gpuplan("calibrate fit --profile calibrate/profiles/h200.json --runs " + runs + " --out " +
                  (dir / "fit.json").string()).code == 2);
  }
  fs::remove_all(dir);
}

TEST_CASE("app::cli: hostile input files give one line and exit 2, never a crash", "[cli]") {
  const auto dir = fs::temp_directory_path() / ("gpuplan-hostile-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const auto write = [&](const char* name, const std::string& text) {
    const auto p = (dir / name).string();
    std::ofstream(p) << text;
    return p;
  };
  std::string deep = R"({"name": "d", "workload": {"micro_batch": )";
  for (int i = 0; i < 20000; ++i) deep += "[";
  const std::string huge = write("huge.json", R"({"name": "x", "workload": {"steps": 1e999}})");
  const std::string nested = write("deep.json", deep);
  const std::string runs = write("huge.jsonl", R"({"id": "a", "kind": "train", "step_ms": 1e999})" "\n");
  // A runs file and a scenario saved as UTF-16 (PowerShell's `>`): "{" is 7B 00 after the FF FE mark.
  const std::string utf16 = write("u16.jsonl", std::string("\xFF\xFE{\0\"\0i\0d\0\"\0:\0 \0\"\0a\0\"\0}\0\n\0", 24));
  const std::string utf16be = write("u16be.json", std::string("\xFE\xFF\0{\0}", 6));
  const std::string empty = write("empty.json", ""), blank = write("blank.json", "  \n\n");
  struct Case { std::string args, expect; };
  for (const Case& c : std::vector<Case>{
           // An empty scenario said "FILE:/: invalid JSON: ... unexpected end of input", a blank one "FILE:3:1: ...".
           {"validate " + empty, empty + ":/: is empty: expected a JSON object"},
           {"validate " + blank, blank + ":/: is empty: expected a JSON object"},
           {"calibrate check --profile calibrate/profiles/h200.json --runs " + utf16,
            utf16 + ": is UTF-16 text (byte-order mark FF FE); save it as UTF-8 (the runs file)"},
           {"validate " + utf16be, utf16be + ":/: is UTF-16 text (byte-order mark FE FF); save it as UTF-8"},
           {"validate " + huge, huge + ":1:37: invalid JSON: number 1e999 is beyond the range of a double"},
           {"validate " + nested, nested + ":1:105: invalid JSON: arrays and objects nest more than 64 deep"},
           {"validate " + dir.string(), dir.string() + ":/: is a directory, not a file"},
           {"validate /dev/zero", "/dev/zero:/: is not a regular file"},
           {"calibrate check --profile calibrate/profiles/h200.json --runs " + runs,
            runs + ":1:41: not valid JSON (expected one JSON object per line): number 1e999 is beyond the range of a double"},
           {"calibrate check --profile calibrate/profiles/h200.json --runs " + dir.string(),
            dir.string() + ": is a directory, not a file (the runs file)"},
           // The fitted constants sit beside the profile: no second line about them.
           {"calibrate check --profile /nonexistent/p.json --runs calibrate/measured/h200-2026-12.jsonl",
            "/nonexistent/p.json: cannot open: no such file (the profile file)"},
           {"calibrate check --profile calibrate/profiles/h200.json --runs " + runs + " --tolerance nan",
            "gpuplan: --tolerance: expected a number in [0.001, 1e+06], got nan (see --help)"},
           {"calibrate check --profile calibrate/profiles/h200.json --runs calibrate/measured/h200-2026-12.jsonl "
            "--ops micro/gemm-bf16-1024",
            "calibrate/measured/h200-2026-12.jsonl: record \"micro/gemm-bf16-1024\" cannot be expressed: it is not a "
            "one-GPU train step (kind \"micro\")"},
           {"calibrate check --profile calibrate/profiles/h200.json --runs " + runs + " --record-tolerance ''",
            "gpuplan: --record-tolerance: expected a number in [0, 1e+06], got  (see --help)"},
           {"calibrate check --profile calibrate/profiles/h200.json --runs " + runs + " --tolerance 0x10",
            "gpuplan: --tolerance: expected a number in [0.001, 1e+06], got 0x10 (see --help)"},
           {"run --format xml scenarios/quickstart-gpt-350m.json", "gpuplan: --format: xml not in {table,json,md,csv} (see --help)"},
           // A word that names no command (it said only "A subcommand is required").
           {"--catalog-dir catalogs frobnicate",
            "gpuplan: unknown command \"frobnicate\"; expected one of validate, run, catalog, history, calibrate, comm "
            "(see --help)"},
           {"calibrate chek", "gpuplan calibrate: unknown command \"chek\"; expected one of check, fit, convs, comm, ddp "
                              "(see --help)"},
           {"comm --instance aws-p5en.48xlarge --nodes 1000000000",
            "gpuplan comm: at most 1,048,576 GPUs in all, got 8 x 1000000000"}}) {
    const auto r = gpuplan(c.args);
    INFO(c.args << "\n" << r.out);
    CHECK(r.code == 2);
    CHECK(r.out == c.expect + "\n");
  }
  fs::remove_all(dir);
}

TEST_CASE("app::cli: run writes the format its --out name says and refuses a name for a format it does not write",
          "[cli]") {
  const auto dir = fs::temp_directory_path() / ("gpuplan-outfmt-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string sc = "scenarios/quickstart-gpt-350m.json";
  // r.xlsx used to receive the plain-text table (exit 0): a file that no spreadsheet opens.
  for (const auto& [name, ext] : std::vector<std::pair<std::string, std::string>>{{"r.xlsx", "xlsx"}, {"r.HTML", "html"}}) {
    const auto out = (dir / name).string();
    const auto r = gpuplan("run --no-db -q --out " + out + " " + sc);
    CHECK(r.code == 2);
    CHECK(r.out == "--out " + out + ": gpuplan run writes table, json, md or csv, not ." + ext +
                       " (name the file .txt, .json, .md or .csv; --plot writes an SVG)\n");
    CHECK_FALSE(fs::exists(out));
  }
  // Without --format the name decides: r.csv holds CSV and r.json parses as JSON with one row per configuration.
  auto r = gpuplan("run --no-db -q --out " + (dir / "r.csv").string() + " " + sc);
  CHECK(r.code == 0);
  std::ifstream csv(dir / "r.csv");
  std::string header;
  std::getline(csv, header);
  CHECK(header.rfind("id,gpus,", 0) == 0);
  r = gpuplan("run --no-db -q --out " + (dir / "r.json").string() + " " + sc);
  CHECK(r.code == 0);
  std::ifstream js(dir / "r.json");
  const auto doc = nlohmann::json::parse(js, nullptr, false);
  REQUIRE_FALSE(doc.is_discarded());
  CHECK(doc.at("configs").size() == 4);
  // A --format that contradicts the name, or a plot that is not named .svg, is refused before the work.
  r = gpuplan("run --no-db -q --format json --out " + (dir / "x.csv").string() + " " + sc);
  CHECK(r.code == 2);
  CHECK(r.out == "--out " + (dir / "x.csv").string() +
                     " names a .csv file but --format is json (leave --format out to write what the name says)\n");
  CHECK_FALSE(fs::exists(dir / "x.csv"));
  r = gpuplan("run --no-db -q --plot " + (dir / "p.png").string() + " " + sc);
  CHECK(r.code == 2);
  CHECK(r.out == "--plot " + (dir / "p.png").string() + ": the plot is an SVG image, not .png (name the file .svg)\n");
  // The same rule for every file a command writes in a fixed format: comm and calibrate check wrote an SVG named
  // .png and JUnit XML named .txt, run a Chrome trace named .svg, each with exit code 0.
  const std::string check = "calibrate check --profile calibrate/profiles/h200.json --runs calibrate/measured/h200-2026-12.jsonl";
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"comm --instance aws-p5en.48xlarge --plot " + (dir / "c.png").string(),
       "gpuplan comm: --plot " + (dir / "c.png").string() + ": the plot is an SVG image, not .png (name the file .svg)"},
      {check + " --plot " + (dir / "v.png").string(),
       "--plot " + (dir / "v.png").string() + ": the plot is an SVG image, not .png (name the file .svg)"},
      {check + " --junit " + (dir / "j.txt").string(),
       "--junit " + (dir / "j.txt").string() + ": the JUnit report is XML, not .txt (name the file .xml)"},
      {"run --no-db -q --trace " + (dir / "t.svg").string() + " " + sc,
       "--trace " + (dir / "t.svg").string() + ": the trace is Chrome trace JSON, not .svg (name the file .json)"}};
  for (const auto& [args, line] : refused) {
    INFO(args);
    r = gpuplan(args);
    CHECK(r.code == 2);
    CHECK(r.out == line + "\n");
  }
  for (const char* f : {"c.png", "v.png", "j.txt", "t.svg"}) CHECK_FALSE(fs::exists(dir / f));
  // Upper case and no extension at all are accepted.
  r = gpuplan("run --no-db -q --plot " + (dir / "P.SVG").string() + " " + sc);
  CHECK(r.code == 0);
  CHECK(fs::exists(dir / "P.SVG"));
  fs::remove_all(dir);
}

TEST_CASE("app::cli: run says when the configurations of a sweep train different amounts of data", "[cli]") {
  // gpt-scaling-100g: 10,000 steps at micro-batch 2 per GPU are 8 samples a step on 4 GPUs and 128 on 64: 16x.
  auto r = gpuplan("run --no-db --format csv scenarios/gpt-scaling-100g.json");
  CHECK(r.code == 0);
  CHECK(r.out.find("note: the configurations train different amounts of data (up to 16x the samples") !=
        std::string::npos);
  // The note stays with the results where the format can hold it (found by a planner's audit: it was on standard
  // error alone, so -q, a JSON consumer or a saved Markdown report lost it): JSON `notes`, Markdown **Notes:**.
  r = gp::test::run_gpuplan("run --no-db -q --format json scenarios/gpt-scaling-100g.json", /*stdout_only=*/true);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j.contains("notes"));
  REQUIRE(j["notes"].is_array());
  bool data_note = false;
  for (const auto& n : j["notes"]) data_note |= n.get<std::string>().find("the configurations train different amounts of data (up to 16x") == 0;
  CHECK(data_note);
  r = gp::test::run_gpuplan("run --no-db -q --format md scenarios/gpt-scaling-100g.json", /*stdout_only=*/true);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("**Notes:**\n") != std::string::npos);
  CHECK(r.out.find("\n- the configurations train different amounts of data (up to 16x") != std::string::npos);
  // The quickstart fixes the global batch: every configuration trains the same samples.
  r = gpuplan("run --no-db --format csv scenarios/quickstart-gpt-350m.json");
  CHECK(r.code == 0);
  CHECK(r.out.find("different amounts of data") == std::string::npos);
  r = gp::test::run_gpuplan("run --no-db -q --format json scenarios/quickstart-gpt-350m.json", /*stdout_only=*/true);
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["notes"] == nlohmann::json::array());
}

TEST_CASE("app::cli: run says that the business inputs of roi are not used yet", "[cli]") {
  const auto dir = fs::temp_directory_path() / ("gpuplan-roi-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const auto sc = (dir / "roi.json").string();
  std::ofstream(sc) << R"({"workload": {"model": "gpt-350m", "micro_batch": 8, "steps": 1000},
    "cluster": {"instance": "aws-p5en.48xlarge", "nodes": 1},
    "roi": {"deadline_hours": 24, "value_per_run_usd": 5000, "discount_rate": 0.08}})";
  auto r = gpuplan("run --no-db --format csv " + sc);
  CHECK(r.code == 0);
  CHECK(r.out.find("note: roi.value_per_run_usd, roi.discount_rate are checked but not used yet: gpuplan does not "
                   "compute NPV, IRR or payback; only roi.deadline_hours shapes the recommendation\n") !=
        std::string::npos);
  // Without them, no such note.
  std::ofstream(sc) << R"({"workload": {"model": "gpt-350m", "micro_batch": 8, "steps": 1000},
    "cluster": {"instance": "aws-p5en.48xlarge", "nodes": 1}, "roi": {"deadline_hours": 24}})";
  r = gpuplan("run --no-db --format csv " + sc);
  CHECK(r.code == 0);
  CHECK(r.out.find("not used yet") == std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("app::cli: run traces the first configuration that fits, and says which", "[cli]") {
  // Found by an audit: the first configuration was traced even when it did not fit in memory, as if it ran.
  // GPT-1.3B with fused AdamW on one H200: micro-batch 48 ran out of memory in held-out set 15, 64 needs more still;
  // micro-batch 8 fits. The sweep's trace must be the one of micro-batch 8 alone (the simulation is deterministic).
  const auto dir = fs::temp_directory_path() / ("gpuplan-trace-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto scenario = [&](const std::string& name, const std::string& mb) {
    const std::string path = (dir / name).string();
    std::ofstream(path) << R"({"workload": {"model": "gpt-1.3b", "micro_batch": )" << mb
                        << R"(, "seq": 1024, "steps": 100, "precision": "bf16"},
      "cluster": {"gpu": "h200-sxm", "gpus_per_node": 1, "intra_node": "nvlink4-h100"},
      "pricing": {"price_per_gpu_hour": 3.0}})";
    return path;
  };
  const std::string sweep = scenario("sweep.json", "[64, 8]"), alone = scenario("alone.json", "8"),
                    none = scenario("none.json", "[64, 96]");
  const std::string t1 = (dir / "sweep.trace.json").string(), t2 = (dir / "alone.trace.json").string(),
                    t3 = (dir / "none.trace.json").string();
  auto r = gp::test::run_gpuplan("run --no-db -q --format json --trace " + t1 + " " + sweep, true);
  REQUIRE(r.code == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["configs"].size() == 2);
  CHECK_FALSE(j["configs"][0]["fits"].get<bool>());
  CHECK(j["configs"][1]["fits"].get<bool>());
  CHECK(std::find(j["notes"].begin(), j["notes"].end(),
                  "--trace shows c0001, the first configuration that fits in memory") != j["notes"].end());
  REQUIRE(gpuplan("run --no-db -q --format csv --trace " + t2 + " " + alone).code == 0);
  auto slurp = [](const std::string& p) {
    std::ifstream f(p);
    return std::string(std::istreambuf_iterator<char>(f), {});
  };
  CHECK_FALSE(slurp(t1).empty());
  CHECK(slurp(t1) == slurp(t2));
  // When nothing fits, the first is traced and the note says its steps cannot run.
  r = gp::test::run_gpuplan("run --no-db -q --format json --trace " + t3 + " " + none, true);
  REQUIRE(r.code == 0);
  j = nlohmann::json::parse(r.out);
  CHECK(std::find(j["notes"].begin(), j["notes"].end(),
                  "--trace shows c0000, which does not fit in memory (no configuration does): its steps cannot run "
                  "as traced") != j["notes"].end());
  CHECK(fs::exists(t3));
  fs::remove_all(dir);
}

TEST_CASE("app::cli: outputs are checked before the work and never overwrite an input", "[cli]") {
  const auto dir = fs::temp_directory_path() / ("gpuplan-outputs-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string sc = (dir / "q.json").string();
  fs::copy_file("scenarios/quickstart-gpt-350m.json", sc, fs::copy_options::overwrite_existing);
  const auto before = fs::file_size(sc);
  // --out naming the scenario (through another spelling of its path) is refused; the scenario is intact.
  auto r = gpuplan("run --no-db --out " + (dir / "." / "q.json").string() + " " + sc);
  CHECK(r.code == 2);
  CHECK(r.out == (dir / "." / "q.json").string() + ": cannot write the output there: it is an input of this command (" +
                     sc + ")\n");
  CHECK(fs::file_size(sc) == before);
  // A catalog file of the catalog folder, and a store that this run would create, are inputs too.
  const auto gpus_before = fs::file_size("catalogs/gpus.json");
  r = gpuplan("run --no-db -q --trace catalogs/gpus.json " + sc);
  CHECK(r.code == 2);
  CHECK(r.out == "catalogs/gpus.json: cannot write the trace there: it is an input of this command (catalogs/gpus.json)\n");
  CHECK(fs::file_size("catalogs/gpus.json") == gpus_before);
  const std::string new_db = (dir / "new.db").string();
  r = gpuplan("run -q --db " + new_db + " --plot " + new_db + " " + sc);
  CHECK(r.code == 2);
  CHECK_FALSE(fs::exists(new_db));
  // The store is checked up front too: --db /dev/null used to fail after the work and leave /dev/null-journal.
  r = gpuplan("run -q --db /dev/null " + sc);
  CHECK(r.code == 2);
  CHECK(r.out == "/dev/null: cannot keep the results store there: not a regular file (give another --db FILE, or "
                 "--no-db)\n");
  CHECK_FALSE(fs::exists("/dev/null-journal"));
  r = gpuplan("run -q --db " + (dir / "no-such-folder" / "x.db").string() + " " + sc);
  CHECK(r.code == 2);
  CHECK(r.out == (dir / "no-such-folder" / "x.db").string() + ": cannot write the results store (no folder " +
                     (dir / "no-such-folder").string() + ") (give another --db FILE, or --no-db)\n");
  // A trace into a missing folder is refused up front, even with -q (it used to be a note, and exit 0).
  r = gpuplan("run --no-db -q --trace /nonexistent-dir/t.json " + sc);
  CHECK(r.code == 2);
  CHECK(r.out == "/nonexistent-dir/t.json: cannot write the trace (no folder /nonexistent-dir)\n");
  // A full disk fails at the flush: exit 2, and the results reach standard output instead of vanishing.
  if (fs::exists("/dev/full")) {
    r = gp::test::run_gpuplan("run --no-db -q --format csv --out /dev/full " + sc, true);
    CHECK(r.code == 2);
    CHECK(r.out.rfind("id,", 0) == 0);
    // A trace that passes the check but cannot be written: one line, the results still printed, exit 2.
    r = gpuplan("run --no-db -q --format csv --trace /dev/full " + sc);
    CHECK(r.code == 2);
    CHECK(r.out.rfind("/dev/full: cannot write the trace (No space left on device)\nid,", 0) == 0);
    r = gpuplan("calibrate check --profile calibrate/profiles/h200.json --runs calibrate/measured/h200-2026-12.jsonl "
                "--junit /dev/full");
    CHECK(r.code == 2);
    const std::string line = "/dev/full: cannot write the JUnit report (No space left on device)\n";
    REQUIRE(r.out.size() > line.size());
    CHECK(r.out.substr(r.out.size() - line.size()) == line);
  }
  fs::remove_all(dir);
}

TEST_CASE("app::cli: comm and calibrate outputs never overwrite a catalog file they read", "[cli]") {
  // A copy of the catalog folder, so that a regression overwrites the copy and not the source tree's catalogs.
  const auto dir = fs::temp_directory_path() / ("gpuplan-cat-outputs-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy("catalogs", dir / "cat");
  const std::string cat = (dir / "cat").string();
  const std::string gpus = (dir / "cat" / "gpus.json").string();
  const std::string links = (dir / "cat" / "interconnects.json").string();
  // A plot must be named .svg (or have no extension), so a catalog named .json is refused on its name alone; an
  // override catalog without an extension still reaches the check that an output is not an input.
  const std::string over = (dir / "cat-override").string();
  fs::copy_file("catalogs/gpus.json", over);
  const auto gpus_before = fs::file_size(gpus), links_before = fs::file_size(links), over_before = fs::file_size(over);
  struct Case {
    std::string args, expect;
  };
  for (const Case& c : std::vector<Case>{
           {"--catalog-dir " + cat + " comm --instance coreweave-8x-h200 --plot " + gpus,
            "gpuplan comm: --plot " + gpus + ": the plot is an SVG image, not .json (name the file .svg)"},
           {"--catalog-dir " + cat + " --catalog " + over + " comm --instance coreweave-8x-h200 --plot " + over,
            "gpuplan comm: " + over + ": cannot write the plot there: it is an input of this command (" + over + ")"},
           {"--catalog-dir " + cat + " calibrate comm --nccl calibrate/probes/results/nccl-selftest-h200x1-2026-12-02.json"
            " --instance coreweave-8x-h200 --fit-out " + links,
            "gpuplan calibrate comm: " + links + ": cannot write the fit there: it is an input of this command (" + links +
                ")"},
           {"--catalog-dir " + cat + " --catalog " + over + " calibrate check --profile calibrate/profiles/h200.json --gpu h100-sxm --runs "
            "calibrate/probes/results/h100-holdout22-2026-12-07.jsonl --plot " + over,
            over + ": cannot write the plot there: it is an input of this command (" + over + ")"}}) {
    const auto r = gpuplan(c.args);
    INFO(c.args << "\n" << r.out);
    CHECK(r.code == 2);
    CHECK(r.out == c.expect + "\n");
  }
  CHECK(fs::file_size(gpus) == gpus_before);
  CHECK(fs::file_size(links) == links_before);
  CHECK(fs::file_size(over) == over_before);
  // Files read by default, not named on the command line: the constants and sim constants beside the profile.
  fs::copy("calibrate/profiles", dir / "prof");
  const std::string prof = (dir / "prof" / "h200.json").string();
  const std::string fit = (dir / "prof" / "fit-h200.json").string();
  const auto fit_before = fs::file_size(fit);
  auto r = gpuplan("calibrate check --profile " + prof + " --runs calibrate/measured/h200-2026-12.jsonl --junit " + fit);
  CHECK(r.code == 2);
  CHECK(r.out == "--junit " + fit + ": the JUnit report is XML, not .json (name the file .xml)\n");
  CHECK(fs::file_size(fit) == fit_before);
  // Two outputs into one file: one was lost (the last writer won).
  const std::string both = (dir / "both").string();
  r = gpuplan("calibrate check --profile calibrate/profiles/h200.json --runs calibrate/measured/h200-2026-12.jsonl "
              "--junit " + both + " --plot " + (dir / "." / "both").string());
  CHECK(r.code == 2);
  CHECK(r.out == both + ": cannot write the JUnit report there: it is also where the plot goes\n");
  CHECK_FALSE(fs::exists(both));
  fs::remove_all(dir);
}

TEST_CASE("app::cli: a wrong file or folder is one problem, not a screenful", "[cli]") {
  const auto dir = fs::temp_directory_path() / ("gpuplan-wrongfile-" + std::to_string(::getpid()));
  fs::create_directories(dir / "partcat");
  fs::copy_file("catalogs/instances.json", dir / "partcat" / "instances.json");
  // A catalog folder missing kinds: one line naming them (it was one line per instance that refers to them).
  auto r = gpuplan("--catalog-dir " + (dir / "partcat").string() + " validate scenarios/quickstart-gpt-350m.json");
  CHECK(r.code == 2);
  CHECK(r.out == (dir / "partcat").string() + ":/: has no catalog of gpus, interconnects, storage, images, models "
                 "(expected gpus.json, interconnects.json, storage.json, images.json, models.json, as in catalogs/)\n");
  // A profile (one JSON document over many lines) given as a runs file: one line (it was 18,406).
  r = gpuplan("calibrate check --profile calibrate/profiles/h200.json --runs calibrate/profiles/h200.json");
  CHECK(r.code == 2);
  CHECK(r.out.rfind("calibrate/profiles/h200.json: is one JSON document over ", 0) == 0);
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
  // 30 bad lines: the first 20, then how many more.
  const auto bad = (dir / "bad.jsonl").string();
  {
    std::ofstream f(bad);
    for (int i = 1; i <= 30; ++i) f << "bad " << i << "\n";
  }
  r = gpuplan("calibrate check --profile calibrate/profiles/h200.json --runs " + bad);
  CHECK(r.code == 2);
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 21);
  CHECK(r.out.find(bad + ": 10 more problems not shown\n") != std::string::npos);
  // An empty runs file gives no fit (it wrote the starting constants, exit 0, as if fitted).
  const auto empty = (dir / "empty.jsonl").string();
  std::ofstream(empty).close();
  r = gpuplan("calibrate fit --profile calibrate/profiles/h200.json --runs " + empty);
  CHECK(r.code == 2);
  CHECK(r.out == empty + ": no train record with a measured step_ms to fit on\n");
  fs::remove_all(dir);
}

namespace {
// Runs `sql` on the SQLite file at `path` with CHECK constraints off (a store edited by hand or by another tool).
bool raw_exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  bool ok = sqlite3_open(path.c_str(), &db) == SQLITE_OK &&
            sqlite3_exec(db, ("PRAGMA ignore_check_constraints = ON; " + sql).c_str(), nullptr, nullptr, nullptr) ==
                SQLITE_OK;
  sqlite3_close(db);
  return ok;
}
}  // namespace

TEST_CASE("app::cli: run ids and catalog references are checked as a user means them", "[cli]") {
  const auto dir = fs::temp_directory_path() / ("gpuplan-ids-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string db = (dir / "h.db").string();
  REQUIRE(gpuplan("run -q --format csv --db " + db + " scenarios/quickstart-gpt-350m.json").code == 0);
  // --show read "0x10" as 16 and 9223372036854775808 as the largest int64, then named an id the user never gave.
  for (const std::string id : {"9223372036854775808", "0x10", "0", "-3", "1.5"}) {
    const auto r = gpuplan("history --db " + db + " --show " + id);
    INFO(id);
    CHECK(r.code == 2);
    CHECK(r.out == "gpuplan: --show: expected a whole number in [1, 999999999999999999], got " + id + " (see --help)\n");
  }
  CHECK(gpuplan("history --db " + db + " --show 1").code == 0);
  // A catalog GPU missing 7 required fields counted the 4 past the first 3 as "configurations of the sweep"; an
  // instance naming a misspelt GPU had no suggestion.
  const std::string cat = (dir / "cat.json").string();
  std::ofstream(cat) << R"({"gpus": [{"id": "x-gpu", "name": "X"}]})";
  auto r = gpuplan("--catalog " + cat + " catalog list gpus");
  CHECK(r.code == 2);
  CHECK(r.out.find("/gpus/0: 4 more problems here, not shown (fix these and run again)\n") != std::string::npos);
  CHECK(r.out.find("sweep") == std::string::npos);
  std::ifstream in("catalogs/instances.json");
  auto instances = nlohmann::json::parse(in, nullptr, true, true);
  auto inst = instances.at("instances").at(0);
  const std::string gpu = inst.at("gpu");
  inst["id"] = "my-instance";
  inst["gpu"] = gpu.substr(0, gpu.size() - 1);
  std::ofstream(cat) << nlohmann::json{{"instances", {inst}}}.dump();
  r = gpuplan("--catalog " + cat + " catalog list gpus");
  CHECK(r.code == 2);
  CHECK(r.out == cat + ":/instances/0/gpu: unknown GPU id \"" + gpu.substr(0, gpu.size() - 1) + "\" (did you mean \"" +
                     gpu + "\"?)\n");
  fs::remove_all(dir);
}

TEST_CASE("app::cli: a stored run records its whole command line and a digest of the catalogs and profiles", "[cli]") {
  // A run under a --catalog override that cut a price was stored as "gpuplan run FILE" with the scenario's digest
  // alone: nothing told it from the run at list price.
  const auto dir = fs::temp_directory_path() / ("gpuplan-inputs-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string db = (dir / "r.db").string(), sc = "scenarios/quickstart-gpt-350m.json";
  const std::string cheap = (dir / "cheap.json").string();
  std::ifstream in("catalogs/instances.json");
  auto instances = nlohmann::json::parse(in, nullptr, true, true);
  auto inst = instances.at("instances").at(0);
  inst["price_per_hour"]["on_demand"] = 1.0;
  std::ofstream(cheap) << nlohmann::json{{"instances", {inst}}}.dump();
  for (const std::string& args : {"run -q --format csv --db " + db + " " + sc, "run -q --format csv --db " + db + " " + sc,
                                  "--catalog " + cheap + " run -q --format csv --db " + db + " " + sc})
    REQUIRE(gpuplan(args).code == 0);
  std::vector<nlohmann::json> runs;
  for (int id = 1; id <= 3; ++id) {
    const auto r = gp::test::run_gpuplan("history --format json --db " + db + " --show " + std::to_string(id), true);
    REQUIRE(r.code == 0);
    runs.push_back(nlohmann::json::parse(r.out));
  }
  CHECK(runs[0]["command"] == "gpuplan run -q --format csv --db " + db + " " + sc);
  CHECK(runs[2]["command"] == "gpuplan --catalog " + cheap + " run -q --format csv --db " + db + " " + sc);
  CHECK(runs[0]["inputs_sha256"].get<std::string>().size() == 64);
  CHECK(runs[0]["inputs_sha256"] == runs[1]["inputs_sha256"]);  // the same inputs, the same digest
  CHECK(runs[0]["inputs_sha256"] != runs[2]["inputs_sha256"]);
  CHECK(runs[0]["scenario_sha256"] == runs[2]["scenario_sha256"]);
  fs::remove_all(dir);
}

TEST_CASE("app::cli: hostile input to ddp, fit, comm and history is one line and exit 2, never a crash", "[cli]") {
  // Each case was found by fuzzing these commands (2026-12-07); before the fix the first crashed with "internal
  // error" (exit 3), the fit overwrote its --ckpt-cpu input, and history crashed on bytes that are not UTF-8.
  const auto dir = fs::temp_directory_path() / ("gpuplan-fuzzed-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string runs = (dir / "ddp.jsonl").string();
  {
    std::ofstream f(runs);
    const std::string gpt = R"("kind":"train","model":"gpt","layers":24,"d_model":2048,"heads":16,"seq":1024,)"
                            R"("batch":8,"data":"synthetic-on-gpu","gpus":8,)";
    f << R"({"id":"ddp/a",)" << gpt << R"("nodes":1,"parallel":5,"step_ms":300})" << "\n"
      << R"({"id":"ddp/b",)" << gpt << R"("nodes":4294967297,"step_ms":300})" << "\n"
      << R"({"id":"ddp/c",)" << gpt << R"("nodes":1,"step_ms":1e-300})" << "\n";
  }
  auto r = gpuplan("calibrate ddp --runs " + runs);
  CHECK(r.code == 2);
  CHECK(r.out == runs + ":1:/parallel: expected a string, got 5\n" + runs +
                     ":2:/nodes: must be an integer in [1, 1048576], got 4294967297\n" + runs +
                     ":3:/step_ms: must be a number in [0.001, 86400000], got 1e-300\n");

  // calibrate fit --out naming one of its --ckpt-cpu inputs is refused, the input intact.
  const std::string ckpt = (dir / "ckpt.jsonl").string();
  fs::copy_file("calibrate/probes/results/ckpt-cpu-2026-12-04.jsonl", ckpt);
  const auto ckpt_size = fs::file_size(ckpt);
  r = gpuplan("calibrate fit --profile calibrate/profiles/h200.json --runs calibrate/measured/h200-2026-12.jsonl -q "
              "--ckpt-cpu " + ckpt + " --out " + ckpt);
  CHECK(r.code == 2);
  CHECK(r.out == ckpt + ": cannot write the constants there: it is an input of this command (" + ckpt + ")\n");
  CHECK(fs::file_size(ckpt) == ckpt_size);

  // A store whose text is not UTF-8, and whose results nest 20,000 deep: JSON output still valid, and small.
  const std::string db = (dir / "s.db").string();
  REQUIRE(gpuplan("run scenarios/quickstart-gpt-350m.json -q --format csv --db " + db).code == 0);
  REQUIRE(raw_exec(db, "UPDATE runs SET command = X'E282'; UPDATE configs SET results_json = '" +
                           std::string(20000, '[') + std::string(20000, ']') + "' WHERE seq = 0;"));
  r = gp::test::run_gpuplan("history --db " + db + " --show 1 --format json", true);
  CHECK(r.code == 0);
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  REQUIRE_FALSE(j.is_discarded());
  CHECK(j["command"] == "\xEF\xBF\xBD");  // the broken byte pair printed as U+FFFD
  CHECK(j["configs"][0]["results"].is_string());  // too deep to be JSON here: shown as the stored text
  CHECK(r.out.size() < 200000);  // it printed 2 x 20,000^2 bytes
  fs::remove_all(dir);
}

TEST_CASE("app::cli: catalog ids are plain names and one id is defined once per catalog folder", "[cli]") {
  const auto dir = fs::temp_directory_path() / ("gpuplan-ids-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy("catalogs", dir / "cat");
  // A second file of the folder redefining an instance: it won or lost by file-name order, without a word.
  const auto read = [](const char* f) { return nlohmann::json::parse(std::ifstream(f), nullptr, true, true); };
  const auto instances = read("catalogs/instances.json"), gpus = read("catalogs/gpus.json");
  nlohmann::json inst;
  for (const auto& e : instances["instances"])
    if (e["id"] == "coreweave-8x-h200") inst = e;
  REQUIRE(inst.is_object());
  std::ofstream(dir / "cat" / "zzz.json") << nlohmann::json{{"instances", {inst}}}.dump();
  auto r = gpuplan("--catalog-dir " + (dir / "cat").string() + " validate scenarios/quickstart-gpt-350m.json");
  CHECK(r.code == 2);
  CHECK(r.out == (dir / "cat" / "zzz.json").string() +
                     ":/instances/0/id: duplicate id \"coreweave-8x-h200\": another file of the catalog folder defines "
                     "it (--catalog FILE overrides)\n");
  fs::remove(dir / "cat" / "zzz.json");
  // A file given as the folder (it said "catalog folder not found").
  r = gpuplan("--catalog-dir catalogs/gpus.json validate scenarios/quickstart-gpt-350m.json");
  CHECK(r.code == 2);
  CHECK(r.out == "catalogs/gpus.json:/: is a file, not a catalog folder (expected a folder such as catalogs/)\n");
  // Ids that broke the table (a newline), the CSV column (empty) and the SVG (BEL) are refused.
  const std::string over = (dir / "over.json").string();
  for (const std::string& id : {std::string(""), std::string("a\\nb"), std::string("x\\u0007"), std::string(101, 'g')}) {
    auto g = gpus["gpus"][0];
    g["id"] = nlohmann::json::parse("\"" + id + "\"");
    std::ofstream(over) << nlohmann::json{{"gpus", {g}}}.dump();
    r = gpuplan("--catalog " + over + " validate scenarios/quickstart-gpt-350m.json");
    INFO(id << "\n" << r.out);
    CHECK(r.code == 2);
    CHECK(r.out.find(over + ":/gpus/0/id: expected an id of 1 to 100 letters, digits and . _ - + /, got ") !=
          std::string::npos);
  }
  fs::remove_all(dir);
}

TEST_CASE("app::cli: the Markdown report shows no timings for a configuration that does not fit, as the table", "[cli]") {
  // scenarios/gpt-1.3b-memory-limit.json: micro-batch 48 ran out of memory on the H200 (held-out set 15).
  auto r = gp::test::run_gpuplan("run scenarios/gpt-1.3b-memory-limit.json --no-db -q --format md", true);
  REQUIRE(r.code == 0);
  std::istringstream in(r.out);
  std::string line, oom;
  while (std::getline(in, line))
    if (line.rfind("| c0004 |", 0) == 0) oom = line;
  REQUIRE(!oom.empty());
  CHECK(oom.find("| coreweave-8x-h200 | - | - | - | - | - | - | - | - | - | ") != std::string::npos);
  CHECK(oom.find("| no | out-of-memory |") != std::string::npos);
  // A scenario name is one heading line, whatever control characters it holds.
  const auto path = fs::temp_directory_path() / ("gpuplan-md-" + std::to_string(::getpid()) + ".json");
  {
    std::ifstream src("scenarios/quickstart-gpt-350m.json");
    auto doc = nlohmann::json::parse(src, nullptr, true, true);
    doc["name"] = "two\nlines\u0007";
    std::ofstream(path) << doc.dump();
  }
  r = gp::test::run_gpuplan("run " + path.string() + " --no-db -q --format md", true);
  REQUIRE(r.code == 0);
  CHECK(r.out.rfind("# two lines \n\n| id |", 0) == 0);
  fs::remove(path);
}

TEST_CASE("app::cli: files read by default are inputs: run keeps its profiles, check reports broken sim constants", "[cli]") {
  // A scratch project folder (catalogs, profiles, a scenario), so that a regression overwrites copies only.
  const auto dir = fs::temp_directory_path() / ("gpuplan-defaults-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "calibrate");
  fs::copy("catalogs", dir / "catalogs");
  fs::copy("calibrate/profiles", dir / "calibrate" / "profiles");
  fs::copy_file("scenarios/quickstart-gpt-350m.json", dir / "q.json");
  const auto profile = dir / "calibrate" / "profiles" / "h200.json";
  const auto size = fs::file_size(profile);
  // `run` reads calibrate/profiles/ of its folder; a --trace over h200.json replaced the profile (exit 0), and
  // later runs fell back to a provisional one.
  const auto in_dir = [&](const std::string& args) {
    return gp::test::run_gpuplan("--version >/dev/null && cd " + dir.string() + " && " + GPUPLAN_BINARY + " " + args);
  };
  auto r = in_dir("run q.json --no-db -q --trace calibrate/profiles/h200.json");
  CHECK(r.code == 2);
  CHECK(r.out == "calibrate/profiles/h200.json: cannot write the trace there: it is an input of this command "
                 "(calibrate/profiles/h200.json)\n");
  CHECK(fs::file_size(profile) == size);
  // A broken sim-constants.json beside the profile was ignored without a word by calibrate check.
  std::ofstream(dir / "calibrate" / "profiles" / "sim-constants.json") << "<xml/>";
  r = gpuplan("calibrate check --profile " + profile.string() + " --runs calibrate/measured/h200-2026-12.jsonl");
  CHECK(r.code == 2);
  CHECK(r.out == (dir / "calibrate" / "profiles" / "sim-constants.json").string() +
                     ":1:1: not valid JSON: syntax error while parsing value - invalid literal; last read: '<'\n");
  fs::remove_all(dir);
}

TEST_CASE("app::cli: a configuration that is not predicted has no figures in JSON, CSV or the store, not zeros", "[cli]") {
  // bf16 on a V100 is not predicted (no bf16 tensor cores); its step, time and cost were 0 in the JSON, the CSV
  // and the store, where a query that did not filter on `fits` saw a free, instant run. fp16 is predicted.
  const auto dir = fs::temp_directory_path() / ("gpuplan-notpredicted-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string sc = (dir / "v100.json").string(), db = (dir / "r.db").string();
  std::ofstream(sc) << R"({"name": "v100", "workload": {"model": "gpt-124m", "micro_batch": 8, "steps": 1000,
      "precision": ["bf16", "fp16"]}, "cluster": {"instance": "aws-p3.2xlarge"}, "pricing": {"plan": "on-demand"}})";
  auto r = gp::test::run_gpuplan("run -q --format json --db " + db + " " + sc, true);
  REQUIRE(r.code == 0);
  const auto doc = nlohmann::json::parse(r.out);
  const auto& none = doc.at("configs").at(0);
  const auto& fp16 = doc.at("configs").at(1);
  CHECK(none.at("bottleneck") == "not-predicted");
  for (const char* k : {"step_time_s", "time_to_train_h", "cost_usd", "cost_per_1k_steps_usd", "throughput_samples_per_s",
                        "gpu_busy_frac", "mfu", "memory_gib_per_gpu", "memory_capacity_gib"}) {
    INFO(k);
    CHECK(none.at(k).is_null());
    CHECK(fp16.at(k).get<double>() > 0);
  }
  CHECK(none.at("breakdown_s").at("compute").is_null());
  CHECK(doc.at("best") == "c0001");
  r = gp::test::run_gpuplan("run --no-db -q --format csv " + sc, true);
  REQUIRE(r.code == 0);
  std::istringstream csv(r.out);
  std::string head, row0;
  std::getline(csv, head);
  std::getline(csv, row0);
  // id,gpus,nodes,instance,gpu,step_time_s,...: the sixth cell on, up to fits, is empty.
  CHECK(row0.rfind("c0000,1,1,aws-p3.2xlarge,v100-sxm2-16gb,,,,,,,,,false,not-predicted", 0) == 0);
  sqlite3* h = nullptr;
  REQUIRE(sqlite3_open(db.c_str(), &h) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(h, "SELECT count(*) FROM configs WHERE config_id = 'c0000' AND step_time_s IS NULL AND "
                                "time_to_train_h IS NULL AND cost_usd IS NULL", -1, &st, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(st) == SQLITE_ROW);
  CHECK(sqlite3_column_int(st, 0) == 1);
  sqlite3_finalize(st);
  sqlite3_close(h);
  fs::remove_all(dir);
}

TEST_CASE("app::cli: a job that never finishes is never recommended and has no time or cost", "[cli]") {
  // GPU MTBF 1 h on 128 GPUs: failures every 28 s. Checkpoints every 10 min leave a finite (astronomical) expected
  // time; every 60 min the work between checkpoints never completes. The latter was given a finite time shorter
  // than the former's and recommended as the cheapest.
  const auto dir = fs::temp_directory_path() / ("gpuplan-never-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string sc = (dir / "never.json").string();
  std::ofstream(sc) << R"({"name": "never", "workload": {"model": "gpt-1.3b", "micro_batch": 8, "steps": 200000},
      "cluster": {"instance": "aws-p5en.48xlarge", "nodes": 16, "storage": "local-nvme-raid0-8x"},
      "checkpoint": {"every_minutes": [10, 60]},
      "reliability": {"gpu_mtbf_hours": 1, "node_mtbf_hours": 100000, "restart_minutes": 1},
      "pricing": {"plan": "on-demand"}})";
  auto r = gp::test::run_gpuplan("run --no-db -q --format json " + sc, true);
  REQUIRE(r.code == 0);
  const auto doc = nlohmann::json::parse(r.out);
  const auto& slow = doc.at("configs").at(0);
  const auto& never = doc.at("configs").at(1);
  CHECK(slow.at("time_to_train_h").get<double>() > 1e6);
  CHECK(never.at("time_to_train_h").is_null());
  CHECK(never.at("cost_usd").is_null());
  CHECK(never.at("step_time_s").get<double>() > 0);  // the step itself is predicted
  CHECK(doc.at("best") == "c0000");
  bool said = false;
  for (const auto& a : never.at("advice")) said = said || a.get<std::string>().find("failures arrive faster") == 0;
  CHECK(said);
  r = gpuplan("run --no-db -q " + sc);
  REQUIRE(r.code == 0);
  const auto row = r.out.find("\nc0001 ");
  REQUIRE(row != std::string::npos);
  const std::string line = r.out.substr(row + 1, r.out.find('\n', row + 1) - row - 1);
  CHECK(line.find("   never        -") != std::string::npos);  // train h "never", cost "-"
  fs::remove_all(dir);
}

TEST_CASE("app::cli: a container memory limit below the DataLoader queues is named in the advice", "[cli]") {
  // container.memory_gib was read and then ignored. Hand-computed: 100 samples of 1e6 bytes are 1e8 bytes a batch;
  // 8 workers x prefetch 4 + the batch in use = 33 batches per GPU, x 8 GPUs = 2.64e10 bytes = 24.6 GiB a node.
  const auto dir = fs::temp_directory_path() / ("gpuplan-hostmem-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string sc = (dir / "hm.json").string();
  std::ofstream(sc) << R"({"name": "host memory", "workload": {"model": "resnet50", "micro_batch": 100, "steps": 1000},
      "software": {"dataloader": {"source": "cpu", "num_workers": 8, "prefetch_factor": 4, "sample_cpu_ms": 3.159,
                                  "sample_bytes": 1000000, "worker_startup_s": 1.0}},
      "container": {"image": "ngc-pytorch-24.10", "memory_gib": [24, 25]},
      "cluster": {"instance": "aws-p5en.48xlarge"}, "pricing": {"plan": "on-demand"}})";
  const auto r = gp::test::run_gpuplan("run --no-db -q --format json " + sc, true);
  REQUIRE(r.code == 0);
  const auto doc = nlohmann::json::parse(r.out);
  auto host_advice = [](const nlohmann::json& c) {
    for (const auto& a : c.at("advice"))
      if (a.get<std::string>().rfind("host memory:", 0) == 0) return a.get<std::string>();
    return std::string();
  };
  const std::string low = host_advice(doc.at("configs").at(0));
  CHECK(low.find("at least 24.6 GiB per node (33 DataLoader batches of 0.10 GB per GPU)") != std::string::npos);
  CHECK(low.find("memory_gib of 24.0 GiB") != std::string::npos);
  CHECK(host_advice(doc.at("configs").at(1)).empty());  // 25 GiB holds 24.6
  // An asynchronous checkpoint copies the state to host memory first: a generic model of 1e9 parameters holds 4 B of
  // fp32 weights and, under AdamW, 8 B of states a parameter: 12.0 GB on the one DDP node that writes it (11.2 GiB,
  // over 8 GiB); under plain SGD 4.0 GB (3.7 GiB, under).
  const std::string ck = (dir / "ck.json").string();
  std::ofstream(ck) << R"({"name": "async checkpoint", "workload": {"generic": {"params": 1e9,
      "fwd_flops_per_sample": 2e12, "activation_bytes_per_sample": 1e8}, "micro_batch": 4, "steps": 1000,
      "optimizer": ["adamw", "sgd"]}, "container": {"image": "ngc-pytorch-24.10", "memory_gib": 8},
      "checkpoint": {"every_steps": 500, "async": true}, "cluster": {"instance": "aws-p5en.48xlarge",
      "storage": "local-nvme-raid0-8x"}, "pricing": {"plan": "on-demand"}})";
  const auto rc = gp::test::run_gpuplan("run --no-db -q --format json " + ck, true);
  REQUIRE(rc.code == 0);
  const auto dc = nlohmann::json::parse(rc.out);
  const std::string adamw = host_advice(dc.at("configs").at(0));
  CHECK(adamw.find("at least 11.2 GiB per node (the asynchronous checkpoint's 12.0 GB host copy)") != std::string::npos);
  CHECK(host_advice(dc.at("configs").at(1)).empty());
  fs::remove_all(dir);
}

TEST_CASE("app::cli: calibrate check of CPU data-pipeline runs alone prints them and exits 2: nothing was checked", "[cli]") {
  // Three of the reference file's loader records: they are train records, but none is GPU-bound, so the MAPE gate
  // averages nothing. It printed "nothing to check: FAIL", "largest error: 0.0% ()" and exit 1 (a drifted model).
  const auto dir = fs::temp_directory_path() / ("gpuplan-loader-only-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string runs = (dir / "loader.jsonl").string(), xml = (dir / "check.xml").string();
  {
    std::ifstream in(std::string(GPUPLAN_SOURCE_DIR) + "/calibrate/measured/h200-2026-12.jsonl");
    std::ofstream out(runs);
    int n = 0;
    for (std::string line; std::getline(in, line) && n < 3;)
      if (line.find("\"data\": \"cpu-jpeg-pipeline\"") != std::string::npos) out << line << "\n", ++n;
    REQUIRE(n == 3);
  }
  const auto r = gpuplan("calibrate check --profile calibrate/profiles/h200.json --runs " + runs + " --junit " + xml);
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find("CPU data-pipeline records through the data-loader simulation") != std::string::npos);
  CHECK(r.out.find("loader/resnet50-b256-w0-nopin") != std::string::npos);
  CHECK(r.out.find("FAIL") == std::string::npos);
  CHECK(r.out.find("largest error: -;") != std::string::npos);
  CHECK(r.out.find(runs + ": no GPU-bound train record") != std::string::npos);
  CHECK_FALSE(fs::exists(xml));
  fs::remove_all(dir);
}

TEST_CASE("app::cli: calibrate check gives a record the model cannot express no out-of-memory verdict", "[cli]") {
  // A Swin step with activation checkpointing is beyond the model (its operators are not built): the record has
  // no step, no peak and no OOM verdict, measured or predicted (the table showed "-/n", JSON predicted_oom false).
  const auto dir = fs::temp_directory_path() / ("gpuplan-inexpressible-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string runs = (dir / "swin.jsonl").string();
  std::ofstream(runs) << R"({"id": "swin-ckpt", "kind": "train", "model": "swin_t", "batch": 64, "precision": "bf16", )"
                         R"("activation_checkpointing": true, "optimizer": "sgd-momentum", "data": "synthetic-on-gpu", )"
                         R"("step_ms": 60.0, "peak_mem_gib": 3.0, "device": "NVIDIA H200"})" "\n"
                      << R"({"id": "swin", "kind": "train", "model": "swin_t", "batch": 64, "precision": "bf16", )"
                         R"("optimizer": "sgd-momentum", "data": "synthetic-on-gpu", "step_ms": 60.0, )"
                         R"("peak_mem_gib": 6.0, "device": "NVIDIA H200"})" "\n";
  const auto r = gp::test::run_gpuplan("calibrate check --profile calibrate/profiles/h200.json --runs " + runs +
                         " --tolerance 1000 --format json", true);
  INFO(r.out);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["records"].size() == 2);
  const auto& ckpt = j["records"][0];
  CHECK(ckpt["id"] == "swin-ckpt");
  CHECK(ckpt["predicted_step_ms"].is_null());
  CHECK(ckpt["predicted_oom"].is_null());
  CHECK(ckpt["oom_agrees"].is_null());
  CHECK(j["records"][1]["predicted_oom"] == false);  // the same step without checkpointing fits a 141 GB H200
  const auto t = gpuplan("calibrate check --profile calibrate/profiles/h200.json --runs " + runs + " --tolerance 1000");
  const auto row = t.out.substr(t.out.find("swin-ckpt"), t.out.find('\n', t.out.find("swin-ckpt")) - t.out.find("swin-ckpt"));
  INFO(row);
  CHECK(row.substr(row.size() - 3) == "-/-");
  fs::remove_all(dir);
}

TEST_CASE("app::cli: the memory breakdown adds up to the peak, part by part as computed by hand", "[cli]") {
  const double gib = 1024.0 * 1024 * 1024;
  for (const char* sc : {"scenarios/gpt-1.3b-memory-limit.json", "scenarios/llm-6.7b-fsdp.json",
                         "scenarios/quickstart-gpt-350m.json", "scenarios/resnet50-dataloader-workers.json"}) {
    auto r = gp::test::run_gpuplan(std::string("run ") + sc + " --no-db --format json", true);
    INFO(sc << "\n" << r.out);
    REQUIRE(r.code == 0);
    for (const auto& c : nlohmann::json::parse(r.out)["configs"]) {
      double sum = 0;
      for (const auto& [k, v] : c["memory_breakdown_gib"].items())
        if (k != "peak_at") sum += v.get<double>();
      CHECK(sum == Approx(c["memory_gib_per_gpu"].get<double>()).epsilon(1e-9));
    }
  }
  // GPT-1.3B (1,313,722,368 parameters) under DDP on 8 GPUs, micro-batch 44, no accumulation: fp32 weights 4 B,
  // AdamW 8 B and the buckets 4 B a parameter; no gradient exists yet at the start of backward, where it peaks.
  auto r = gp::test::run_gpuplan("run scenarios/gpt-1.3b-memory-limit.json --no-db --format json", true);
  const auto b = nlohmann::json::parse(r.out)["configs"][2]["memory_breakdown_gib"];
  const double P = 1313722368;
  CHECK(b["peak_at"] == "start of backward");
  CHECK(b["weights"].get<double>() == Approx(4 * P / gib));
  CHECK(b["optimizer_states"].get<double>() == Approx(8 * P / gib));
  CHECK(b["ddp_buckets"].get<double>() == Approx(4 * P / gib));
  CHECK(b["gradients"].get<double>() == 0.0);
  CHECK(b["fsdp_gathered"].get<double>() == 0.0);
  // GPT-6.7B under FSDP on 32 GPUs: the shards are 1/32, and the gathered units 4 B x (root 210,247,680 + 3 blocks
  // of 201,379,840) parameters.
  r = gp::test::run_gpuplan("run scenarios/llm-6.7b-fsdp.json --no-db --format json", true);
  const auto f = nlohmann::json::parse(r.out)["configs"][2]["memory_breakdown_gib"];
  CHECK(f["weights"].get<double>() == Approx(4 * 6654402560.0 / 32 / gib));
  CHECK(f["fsdp_gathered"].get<double>() == Approx(4 * (210247680.0 + 3 * 201379840.0) / gib));
  CHECK(f["ddp_buckets"].get<double>() == 0.0);
}
