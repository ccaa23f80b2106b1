// Measured-runs files (calibrate/reference_runs.cpp): a mistyped input field and a repeated record id are errors,
// while the many fields measured records carry beyond the inputs stay accepted.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "calibrate/reference_runs.hpp"

namespace fs = std::filesystem;
using namespace gp::calibrate;

namespace {

const std::string kGpt = R"("kind":"train","data":"synthetic-on-gpu","model":"gpt","batch":4,"layers":2,)"
                         R"("d_model":128,"heads":2,"seq":64)";

std::vector<std::string> errors_of(const std::vector<std::string>& lines) {
  std::vector<std::string> errors;
  parse_runs(lines, "runs.jsonl", errors);
  return errors;
}

}  // namespace

TEST_CASE("calibrate::reference_runs: a key one letter from an input field is an error with the field it meant",
          "[calibrate]") {
  // "grad_acum": 4 was ignored and the record predicted as grad_accum 1; "cuda_graph": true as eager.
  CHECK(errors_of({"{\"id\":\"a\"," + kGpt + ",\"grad_acum\":4}"}) ==
        std::vector<std::string>{"runs.jsonl:1:/grad_acum: unknown field (did you mean \"grad_accum\"?)"});
  CHECK(errors_of({"", "{\"id\":\"b\"," + kGpt + ",\"cuda_graph\":true}"}) ==
        std::vector<std::string>{"runs.jsonl:2:/cuda_graph: unknown field (did you mean \"cuda_graphs\"?)"});
  CHECK(errors_of({"{\"id\":\"c\"," + kGpt + ",\"precison\":\"fp16\",\"step_mss\":12.5}"}) ==
        std::vector<std::string>{"runs.jsonl:1:/precison: unknown field (did you mean \"precision\"?)",
                                 "runs.jsonl:1:/step_mss: unknown field (did you mean \"step_ms\"?)"});
  // Fields measured records carry that no prediction reads, some a few letters from one that does, are accepted.
  const std::string extra =
      R"("device":"NVIDIA H200","host":{"cpu_cores":16},"software":{"torch":"2.11"},"env":{"NCCL_ALGO":"Ring"},)"
      R"("nccl_version":"2.28.3","step_ms_per_rank":[10.1,10.2],"gpu_power_w":610,"first_batch_s":1.2,)"
      R"("measured_on":"2026-12-06","batches":20,"parts":3,"grad_accumulated":false,"gpu":"h200","node":"n1",)"
      R"("issue_ms":3.1,"peak_reserved_gib":12.0,"step_ms_rounds":[10.0,10.1])";
  CHECK(errors_of({"{\"id\":\"d\"," + kGpt + "," + extra + "}"}).empty());
  // A long field allows more edits (one per five letters); a key longer than any field by more is no typo of one.
  CHECK(errors_of({"{\"id\":\"e\"," + kGpt + ",\"activation_checkpoint\":true}"}) ==
        std::vector<std::string>{
            "runs.jsonl:1:/activation_checkpoint: unknown field (did you mean \"activation_checkpointing\"?)"});
  // The key is escaped as a JSON pointer (RFC 6901: "/" -> "~1"), so the path names the key and not a nesting.
  CHECK(errors_of({"{\"id\":\"g\"," + kGpt + ",\"grad/accum\":4}"}) ==
        std::vector<std::string>{"runs.jsonl:1:/grad~1accum: unknown field (did you mean \"grad_accum\"?)"});
  CHECK(errors_of({"{\"id\":\"f\"," + kGpt + ",\"" + std::string(1 << 20, 'g') + "\":1}"}).empty());
  // Records of other kinds are not predicted: their fields are not checked against the inputs of a train step.
  CHECK(errors_of({R"({"id":"m","kind":"micro","op":"gemm","m":64,"n":64,"k":64,"grad_acum":1})"}).empty());
  // Every committed runs file (JSON lines whose every record has an id and a kind; the probe results without them
  // are other formats) loads as before: no field of theirs is taken for a typo, no id is repeated.
  int files = 0;
  for (const char* dir : {"calibrate/measured", "calibrate/probes/results"}) {
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() != ".jsonl") continue;
      std::ifstream in(e.path());
      bool runs_format = true;
      for (std::string l; std::getline(in, l);) {
        if (l.find_first_not_of(" \t\r") == std::string::npos) continue;
        const auto j = nlohmann::json::parse(l, nullptr, false);
        runs_format = runs_format && j.is_object() && j.contains("id") && j.contains("kind");
      }
      if (!runs_format) continue;
      std::vector<std::string> errors;
      load_runs(e.path().string(), errors);
      INFO(e.path().string() << ": " << (errors.empty() ? "" : errors.front()));
      CHECK(errors.empty());
      ++files;
    }
  }
  CHECK(files >= 40);
}

TEST_CASE("calibrate::reference_runs: a record id given twice in one file names both lines", "[calibrate]") {
  const auto errors = errors_of({"{\"id\":\"a\"," + kGpt + "}", "{\"id\":\"b\"," + kGpt + "}",
                                 R"({"id":"a","kind":"micro"})", "{\"id\":\"b\"," + kGpt + "}"});
  CHECK(errors == std::vector<std::string>{"runs.jsonl:3:/id: duplicate id \"a\", also on line 1",
                                           "runs.jsonl:4:/id: duplicate id \"b\", also on line 2"});
}
