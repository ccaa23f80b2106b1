// Multi-GPU DDP records through the training-step simulation. Truths used: DDP on one GPU moves no gradients
// (its step is the one-GPU step); ring all-reduce time grows with 2(n-1)/n, so on the same node the step does
// not shrink from 2 to 4 to 8 GPUs; gradient all-reduce time is bounded by the closed-form time of all the
// gradient bytes plus one hop-latency set per bucket; the last bucket cannot overlap backward, so some
// communication is exposed; measured fields never change a prediction.

#include <catch2/catch.hpp>

#include "tests/support/run_gpuplan.hpp"
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app/catalog_io.hpp"
#include "calibrate/ddp_check.hpp"
#include "calibrate/profile_io.hpp"
#include "models/collective.hpp"
#include "models/step_ops.hpp"

namespace {

using gp::calibrate::RunRecord;

const std::string kSrc = GPUPLAN_SOURCE_DIR;

std::string ddp_line(int gpus, const std::string& extra = "") {
  return R"({"id": "ddp/gpt-1.3b-b8-s1024-bf16-g)" + std::to_string(gpus) +
         R"(", "kind": "train", "model": "gpt", "size": "gpt-1.3b", "layers": 24, "d_model": 2048,
     "heads": 16, "vocab": 50304, "seq": 1024, "batch": 8, "grad_accum": 1, "precision": "bf16",
     "optimizer": "adamw-fused", "attention": "sdpa-causal", "activation_checkpointing": false,
     "data": "synthetic-on-gpu", "tied_embeddings": true, "gpus": )" + std::to_string(gpus) +
         R"(, "nodes": 1, "parallel": "ddp", "bucket_cap_mb": 25)" + extra + "}";
}

// JSONL: one record per line.
std::string one_line(std::string s) {
  for (char& ch : s)
    if (ch == '\n') ch = ' ';
  return s;
}

RunRecord record(const std::string& line) {
  std::vector<std::string> errors;
  auto runs = gp::calibrate::parse_runs({line}, "synthetic.jsonl", errors);
  INFO((errors.empty() ? std::string() : errors.front()));
  REQUIRE(errors.empty());
  REQUIRE(runs.size() == 1);
  return runs.front();
}

struct Fixture {
  gp::GpuProfile profile;
  gp::calibrate::FitConstants constants;
  gp::DeviceModel dev;
  gp::Catalog cat;
  gp::sim::SimConstants k;  // no per-step noise: deterministic steps
  Fixture() {
    std::vector<std::string> errors;
    auto p = gp::calibrate::load_profile(kSrc + "/calibrate/profiles/h200.json", errors);
    auto c = gp::calibrate::load_constants(kSrc + "/calibrate/profiles/fit-h200.json", errors);
    REQUIRE(errors.empty());
    REQUIRE(p);
    REQUIRE(c);
    profile = *p;
    constants = *c;
    dev = gp::make_device_model(profile);
    gp::app::Diagnostics diags;
    cat = gp::app::load_catalogs(kSrc + "/catalogs", {}, diags);
  }
  gp::calibrate::DdpPrediction predict(const RunRecord& rec) {
    std::string err;
    const auto node = gp::calibrate::single_node_cluster(cat, "coreweave-8x-h200", gp::calibrate::record_gpus(rec),
                                                         err);
    INFO(err);
    REQUIRE(node);
    return gp::calibrate::predict_ddp_record(rec, dev, profile, constants, *node, k, 50);
  }
};

}  // namespace

TEST_CASE("calibrate::ddp_check: DDP on one GPU is the one-GPU step", "[calibrate][ddp]") {
  Fixture f;
  const auto d = f.predict(record(ddp_line(1)));
  REQUIRE(d.step_ms);
  REQUIRE(d.base.step_ms);
  CHECK(*d.step_ms == Approx(*d.base.step_ms).epsilon(0.01));
  CHECK(d.comm_total.value() == 0);
}

TEST_CASE("calibrate::ddp_check: 2, 4, 8 GPUs of an H200 node", "[calibrate][ddp]") {
  Fixture f;
  double prev = 0;
  for (int g : {2, 4, 8}) {
    const RunRecord rec = record(ddp_line(g));
    const auto d = f.predict(rec);
    INFO(g << " GPUs: " << d.reason);
    REQUIRE(d.step_ms);
    CHECK(d.gpus == g);
    CHECK(*d.step_ms >= *d.base.step_ms * 0.999);
    CHECK(*d.step_ms >= prev * 0.999);
    prev = *d.step_ms;
    // All gradient bytes (fp32, 4 bytes per parameter) as one all-reduce on this node, NVLS off ...
    std::string err;
    const auto node = gp::calibrate::single_node_cluster(f.cat, "coreweave-8x-h200", g, err);
    const auto topo = gp::collective::topology_from(*node);
    const gp::Bytes grads(4.0 * gp::build_step_ops(rec.step).params);
    const auto whole = gp::collective::estimate(gp::collective::Op::all_reduce, grads, topo);
    const double buckets = grads.value() / gp::Bytes::mib(25).value() + 1;
    const double hops = 2.0 * (g - 1);  // ring all-reduce hops per bucket
    // ... bounds the bucketed collectives from below, and with one latency set per bucket from above.
    CHECK(d.comm_total.value() >= whole.time.value() * 0.99);
    CHECK(d.comm_total.value() <= whole.time.value() + buckets * hops * topo.intra.hop_latency.value() * 1.01);
    CHECK(d.comm_exposed.value() > 0);
    CHECK(d.comm_hidden.value() > 0);
    CHECK(*d.step_ms - *d.base.step_ms <= d.comm_total.ms() * 1.01);
  }
}

TEST_CASE("calibrate::ddp_check: a rank's step carries DDP's bucket copies, one pass as bucket views",
          "[calibrate][ddp]") {
  // GPT-1.3B's fp32 gradients, 8 B a parameter a pass (read and write), at least P x 8 B / 4.8 TB/s (catalog H200):
  // two passes at 8 GPUs (into the buckets and back), one with gradient_as_bucket_view, none on one GPU. Each
  // pass also launches one kernel per parameter tensor, which can add up to the bytes' time again.
  Fixture f;
  const RunRecord one = record(ddp_line(1));
  const double pass = 8.0 * gp::build_step_ops(one.step).params / 4.8e12;
  const double base = f.predict(one).base.step.gpu_backward.value();
  const double copies = f.predict(record(ddp_line(8))).base.step.gpu_backward.value() - base;
  const double view =
      f.predict(record(ddp_line(8, R"(, "gradient_as_bucket_view": true)"))).base.step.gpu_backward.value() - base;
  CHECK(copies >= 2 * pass);
  CHECK(copies <= 4 * pass);
  CHECK(view >= pass);
  CHECK(view <= 2 * pass);
}

TEST_CASE("calibrate::ddp_check: measured fields do not change the prediction", "[calibrate][ddp]") {
  Fixture f;
  const auto a = f.predict(record(ddp_line(8)));
  const auto b = f.predict(record(ddp_line(8, R"(, "step_ms": 999.0, "step_ms_per_rank": [1, 2], "peak_mem_gib": 3)")));
  REQUIRE(a.step_ms);
  REQUIRE(b.step_ms);
  CHECK(*a.step_ms == *b.step_ms);
}

TEST_CASE("calibrate::ddp_check: records it cannot express say why", "[calibrate][ddp]") {
  Fixture f;
  std::string line = ddp_line(8);
  auto multi = line;
  multi.replace(multi.find(R"("nodes": 1)"), 10, R"("nodes": 2)");
  const auto d = f.predict(record(multi));
  CHECK_FALSE(d.step_ms);
  CHECK(d.reason == "more than one node");
  auto one = line;  // one node written as 1.0 is one node
  one.replace(one.find(R"("nodes": 1)"), 10, R"("nodes": 1.0)");
  CHECK(f.predict(record(one)).step_ms);
  auto fsdp = line;
  fsdp.replace(fsdp.find(R"("parallel": "ddp")"), 17, R"("parallel": "fsdp")");
  const auto e = f.predict(record(fsdp));
  CHECK_FALSE(e.step_ms);
  CHECK(e.reason == "parallel other than ddp");

  std::string err;
  CHECK_FALSE(gp::calibrate::single_node_cluster(f.cat, "coreweave-8x-h200", 9, err));
  CHECK(err.find("has 8 GPUs") != std::string::npos);
  CHECK_FALSE(gp::calibrate::single_node_cluster(f.cat, "no-such-node", 2, err));
  CHECK(err.find("unknown instance") != std::string::npos);
}

namespace {

int run_status(const std::string& args, std::string& out) {
  auto r = gp::test::run_gpuplan(args);
  out += r.out;
  return r.code;
}

}  // namespace

TEST_CASE("app::calibrate ddp: a far-off measurement fails, bad input exits 2", "[cli][calibrate][ddp]") {
  const auto path = std::filesystem::temp_directory_path() / "gpuplan-ddp-test.jsonl";
  std::ofstream(path) << one_line(ddp_line(8, R"(, "step_ms": 100000.0)")) << "\n" << one_line(ddp_line(1)) << "\n";
  std::string out;
  CHECK(run_status("calibrate ddp --runs " + path.string() + " --profile " + kSrc +
                       "/calibrate/profiles/h200.json",
                   out) == 1);
  INFO(out);
  CHECK(out.find("over 1 multi-GPU records") != std::string::npos);
  CHECK(out.find("FAIL") != std::string::npos);
  out.clear();
  CHECK(run_status("calibrate ddp --runs /nonexistent.jsonl", out) == 2);
  out.clear();
  CHECK(run_status("calibrate ddp --runs " + path.string() + " --instance no-such-node", out) == 2);
  CHECK(out.find("unknown instance") != std::string::npos);
}

TEST_CASE("calibrate::ddp_check: a GPU count written as 8.0 is 8 GPUs", "[calibrate][ddp]") {
  // JSON writers (Python's json with a float, spreadsheets) may write whole numbers with a point; it was read as
  // one GPU, a silent single-GPU prediction.
  std::vector<std::string> errors;
  for (const char* gpus : {"8", "8.0"}) {
    const auto r = gp::calibrate::parse_runs(
        {std::string(R"({"id":"d","kind":"train","data":"synthetic-on-gpu","model":"resnet50","batch":64,"gpus":)") +
         gpus + "}"},
        "runs.jsonl", errors);
    REQUIRE(errors.empty());
    REQUIRE(r.size() == 1);
    CHECK(gp::calibrate::record_gpus(r[0]) == 8);
  }
}

TEST_CASE("app::calibrate fit: a data-parallel record is refused, not fitted as one GPU's step", "[cli][calibrate][ddp]") {
  // An 8-GPU DDP step includes its gradient all-reduce; `calibrate fit` took it as a one-GPU step time and fitted
  // the constants to it (exit 0). Now one line naming the file, the line and the field, exit 2, no --out written.
  const auto dir = std::filesystem::temp_directory_path();
  const auto runs = dir / "gpuplan-fit-ddp-test.jsonl";
  const auto out_path = dir / "gpuplan-fit-ddp-test-out.json";
  std::filesystem::remove(out_path);
  std::ofstream(runs) << one_line(ddp_line(1, R"(, "step_ms": 160.0)")) << "\n"
                      << one_line(ddp_line(8, R"(, "step_ms": 170.0)")) << "\n";
  const auto r = gp::test::run_gpuplan("calibrate fit -q --profile " + kSrc + "/calibrate/profiles/h200.json --runs " +
                                       runs.string() + " --out " + out_path.string());
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find(runs.string() + ":2:/gpus: expected one-GPU train records, got 8 GPUs (1 of 2 train records)") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out_path));

  // The same check holds for --oom-runs and --ckpt-cpu files.
  std::vector<std::string> errors;
  const auto recs = gp::calibrate::parse_runs({one_line(ddp_line(1)), one_line(ddp_line(4)), one_line(ddp_line(2))},
                                              "x.jsonl", errors);
  REQUIRE(errors.empty());
  const auto p = gp::calibrate::multi_gpu_problem(recs, "x.jsonl");
  REQUIRE(p);
  CHECK(p->rfind("x.jsonl:2:/gpus: expected one-GPU train records, got 4 GPUs (2 of 3 train records)", 0) == 0);
  CHECK_FALSE(gp::calibrate::multi_gpu_problem({recs[0]}, "x.jsonl"));
}

TEST_CASE("app::calibrate ddp: the default profile is found from any folder", "[cli][calibrate][ddp]") {
  // The default --profile was "calibrate/profiles/h200.json" relative to the working folder: from anywhere but the
  // project root, "calibrate/profiles/h200.json: cannot open: no such file", exit 2.
  const auto dir = std::filesystem::temp_directory_path() / "gpuplan-ddp-cwd-test";
  std::filesystem::create_directories(dir);
  const auto path = dir / "runs.jsonl";
  std::ofstream(path) << one_line(ddp_line(2, R"(, "step_ms": 170.0)")) << "\n";
  const std::string cmd = "cd " + dir.string() + " && " + std::string(GPUPLAN_BINARY) + " calibrate ddp --runs runs.jsonl 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[4096];
  while (std::size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = pclose(p);
  INFO(out);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) != 2);
  CHECK(out.find("cannot open") == std::string::npos);
  CHECK(out.find("over 1 multi-GPU records") != std::string::npos);
}

TEST_CASE("app::calibrate ddp: nothing to judge is bad input, not a failed model",
          "[cli][calibrate][ddp]") {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string profile = " --profile " + kSrc + "/calibrate/profiles/h200.json";
  // Empty, and micro records only: was an empty table, "MAPE over 0 multi-GPU records: 0.00% ... FAIL", exit 1.
  const auto empty = dir / "gpuplan-ddp-empty.jsonl";
  std::ofstream(empty).flush();
  auto r = gp::test::run_gpuplan("calibrate ddp --runs " + empty.string() + profile);
  CHECK(r.code == 2);
  CHECK(r.out == "gpuplan calibrate ddp: " + empty.string() +
                     ": no train record to compare (expected lines with \"kind\": \"train\", as tools/measure_ddp.py "
                     "writes)\n");
  // One-GPU records only: predictions are printed, but there is no multi-GPU error to judge.
  const auto one = dir / "gpuplan-ddp-one.jsonl";
  std::ofstream(one) << one_line(ddp_line(1, R"(, "step_ms": 160.0)")) << "\n";
  r = gp::test::run_gpuplan("calibrate ddp --runs " + one.string() + profile);
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(r.out.find("ddp/gpt-1.3b-b8-s1024-bf16-g1") != std::string::npos);
  CHECK(r.out.find("not judged") != std::string::npos);
  CHECK(r.out.find("FAIL") == std::string::npos);
  CHECK(r.out.find(one.string() + ": no record with gpus > 1 and a measured step_ms was predicted") != std::string::npos);
}

TEST_CASE("app::calibrate ddp: the tolerance is printed as given", "[cli][calibrate][ddp]") {
  // 2.55 was printed "tolerance 2.5%" (%.1f): a gate whose printed limit is not the one applied.
  std::string line = ddp_line(2, R"(, "step_ms": 160.0)");
  for (char& ch : line)
    if (ch == '\n') ch = ' ';
  const auto dir = std::filesystem::temp_directory_path();
  const std::string profile = " --profile " + kSrc + "/calibrate/profiles/h200.json";
  const auto two = dir / "gpuplan-ddp-two.jsonl";
  std::ofstream(two) << line << "\n";
  const auto r = gp::test::run_gpuplan("calibrate ddp --runs " + two.string() + profile + " --tolerance 2.55");
  INFO(r.out);
  CHECK(r.out.find("(tolerance 2.55%)") != std::string::npos);
}

TEST_CASE("app::calibrate ddp: runs measured on another GPU than the profile's are refused", "[cli][calibrate][ddp]") {
  // H100 records checked against the H200 profile and an H200 instance passed (a comparison of two GPUs, exit 0);
  // `calibrate check` refused them already. The line names the file, the record's line and the remedy of this command.
  const auto path = std::filesystem::temp_directory_path() / "gpuplan-ddp-h100-test.jsonl";
  std::ofstream(path) << one_line(ddp_line(8, R"(, "step_ms": 170.0, "device": "NVIDIA H100 80GB HBM3")")) << "\n";
  std::string out;
  CHECK(run_status("calibrate ddp --runs " + path.string() + " --profile " + kSrc + "/calibrate/profiles/h200.json",
                   out) == 2);
  INFO(out);
  CHECK(out.find(path.string() + ":1:/device: measured on \"NVIDIA H100 80GB HBM3\"") != std::string::npos);
  CHECK(out.find("--profile and --instance of that GPU") != std::string::npos);
  CHECK(out.find("PASS") == std::string::npos);
  // The same record measured on an H200 is compared.
  std::ofstream(path) << one_line(ddp_line(8, R"(, "step_ms": 170.0, "device": "NVIDIA H200")")) << "\n";
  out.clear();
  CHECK(run_status("calibrate ddp --runs " + path.string() + " --profile " + kSrc + "/calibrate/profiles/h200.json --tolerance 1000",
                   out) == 0);
  std::filesystem::remove(path);
}

TEST_CASE("app::calibrate ddp: multi-GPU records it cannot predict are counted in the summary", "[cli][calibrate][ddp]") {
  // A 16-GPU record does not fit the 8-GPU instance: it was listed "not predicted" and left out of the MAPE with no
  // word in the summary, so a file could pass on the records that remained.
  const auto path = std::filesystem::temp_directory_path() / "gpuplan-ddp-left-out.jsonl";
  std::ofstream(path) << one_line(ddp_line(8, R"(, "step_ms": 170.0)")) << "\n"
                      << one_line(ddp_line(16, R"(, "step_ms": 180.0)")) << "\n";
  const std::string cmd = "calibrate ddp --tolerance 1000 --runs " + path.string() + " --profile " + kSrc +
                          "/calibrate/profiles/h200.json";
  auto r = gp::test::run_gpuplan(cmd);
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(r.out.find("over 1 multi-GPU records") != std::string::npos);
  CHECK(r.out.find("not predicted, outside the MAPE: 1 multi-GPU record with a measured step") != std::string::npos);
  r = gp::test::run_gpuplan(cmd + " --format json", true);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["summary"]["not_predicted"] == 1);
  CHECK(j["summary"]["multi_gpu_records"] == 1);
  std::filesystem::remove(path);
}
