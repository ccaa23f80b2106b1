// Scenario parsing: every example scenario parses; each class of bad input gives the expected lines.
// Bad inputs are data files (tests/data/bad/*.json) whose `// expect:` header lines list the diagnostics.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "app/catalog_io.hpp"
#include "app/scenario.hpp"
#include "models/step_ops.hpp"

namespace fs = std::filesystem;
using namespace gp;
using namespace gp::app;

namespace {

const Catalog& catalog() {
  static const Catalog cat = [] {
    Diagnostics d;
    Catalog c = load_catalogs("catalogs", {}, d);
    INFO(d.render());
    REQUIRE(d.empty());
    return c;
  }();
  return cat;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> expected_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    auto pos = line.find("// expect: ");
    if (pos != std::string::npos) out.push_back(line.substr(pos + 11));
  }
  return out;
}

}  // namespace

TEST_CASE("app::scenario: every example scenario parses", "[scenario]") {
  int n = 0;
  for (const auto& e : fs::directory_iterator("scenarios")) {
    if (e.path().extension() != ".json") continue;
    Diagnostics d;
    auto sc = load_scenario(e.path().string(), catalog(), d);
    INFO(e.path().string() << "\n" << d.render());
    CHECK(sc.has_value());
    if (sc) CHECK_FALSE(sc->configs.empty());
    ++n;
  }
  CHECK(n >= 3);
}

TEST_CASE("app::scenario: each class of bad input is reported with file, path and expectation", "[scenario]") {
  int files = 0;
  for (const auto& e : fs::directory_iterator(std::string(GPUPLAN_TEST_DATA) + "/bad")) {
    const auto text = read(e.path());
    const auto expect = expected_lines(text);
    REQUIRE_FALSE(expect.empty());
    Diagnostics d;
    auto sc = load_scenario_text(text, e.path().filename().string(), catalog(), d);
    CHECK_FALSE(sc.has_value());
    const std::string got = d.render();
    for (const auto& want : expect) {
      INFO(e.path().filename().string() << " should report: " << want << "\ngot:\n" << got);
      CHECK(got.find(want) != std::string::npos);
    }
    // One line per problem, each starting with the file name, and no line besides those expected (a mistake
    // brings no second, misleading line with it).
    for (const auto& diag : d.items()) CHECK(diag.render().rfind(e.path().filename().string(), 0) == 0);
    INFO(e.path().filename().string() << " reported:\n" << got);
    CHECK(d.items().size() == expect.size());
    ++files;
  }
  CHECK(files >= 7);
}

TEST_CASE("app::scenario: on-prem cost fields are accepted when some configuration of a sweep is on-prem",
          "[scenario][sweep]") {
  // Cloud against on-prem in one sweep: the on-prem fields are read by the on-prem half, the rate by the cloud half.
  Diagnostics d;
  auto sc = load_scenario_text(R"({"workload": {"model": "gpt-350m", "micro_batch": 8, "steps": 1000},
      "cluster": {"gpu": "h100-sxm", "gpus_per_node": 8, "intra_node": "nvlink4-h100", "nodes": 1},
      "pricing": {"plan": ["on-demand", "on-prem"], "price_per_gpu_hour": 3, "capex_per_node_usd": 300000,
                  "electricity_usd_per_kwh": 0.1, "pue": 1.3}})",
                               "mix.json", catalog(), d);
  INFO(d.render());
  REQUIRE(sc.has_value());
  REQUIRE(sc->configs.size() == 2);
  CHECK(sc->configs[1].pricing.plan == PricingPlan::on_prem);
}

TEST_CASE("app::scenario: all problems are reported, not only the first", "[scenario]") {
  Diagnostics d;
  load_scenario_text(R"({"workload": {"model": "nope", "micro_batch": 0, "steps": -1},
                         "cluster": {"instance": "nope"}})",
                     "s.json", catalog(), d);
  CHECK(d.size() >= 4);
}

TEST_CASE("app::scenario: a run length beyond a step count is refused, not overflowed", "[scenario]") {
  // 1e6 samples x 1e14 epochs / 8 per step = 1.25e19 steps: past int64, it came out as a negative time and cost.
  // Epochs now stop at 1e6, and samples x epochs / global batch at 2^50 steps.
  auto check = [](const std::string& workload, const std::string& path, const std::string& says) {
    Diagnostics d;
    auto sc = load_scenario_text(R"({"workload": )" + workload + R"(, "cluster": {"instance": "aws-p5en.48xlarge"}})",
                                 "len.json", catalog(), d);
    INFO(d.render());
    CHECK_FALSE(sc.has_value());
    REQUIRE(d.size() == 1);
    CHECK(d.render().find("len.json:" + path + ": ") == 0);
    CHECK(d.render().find(says) != std::string::npos);
  };
  check(R"({"model": "gpt-350m", "micro_batch": 1, "dataset": {"samples": 1e15, "epochs": 1e6}})",
        "/workload/dataset", "1.25e+20 optimizer steps");  // 1e15 x 1e6 / (1 x 8 GPUs)
  check(R"({"model": "gpt-350m", "micro_batch": 1, "dataset": {"samples": 1000000, "epochs": 1e14}})",
        "/workload/dataset/epochs", "1e+06");
  check(R"({"model": "gpt-350m", "micro_batch": 1, "dataset": {"samples": 1000, "epochs": 1e7}})",
        "/workload/dataset/epochs", "1e+06");
  check(R"({"model": "gpt-350m", "micro_batch": 1, "grad_accum": 131072, "steps": 10})", "/workload/grad_accum",
        "65536");
  // The largest dataset, one epoch: 1e15 / 8 = 1.25e14 steps, under 2^50 (1.13e15), is a run length; nine epochs
  // (1.125e15) are not.
  check(R"({"model": "gpt-350m", "micro_batch": 1, "dataset": {"samples": 1e15, "epochs": 9.1}})", "/workload/dataset",
        "optimizer steps");
  Diagnostics d;
  auto fine = load_scenario_text(R"({"workload": {"model": "gpt-350m", "micro_batch": 1,
      "dataset": {"samples": 1e15, "epochs": 1}}, "cluster": {"instance": "aws-p5en.48xlarge"}})",
                                 "len.json", catalog(), d);
  INFO(d.render());
  REQUIRE(fine.has_value());
  CHECK(fine->configs.at(0).length.total_steps(fine->configs.at(0).global_batch()) == 125000000000000LL);
}

TEST_CASE("app::scenario: spot interruptions under a plan that is never spot are refused", "[scenario]") {
  // 1,000 interruptions a day on an on-demand plan gave the same $74.81 as none, without a word.
  auto load = [](const std::string& plan, Diagnostics& d) {
    return load_scenario_text(R"({"workload": {"model": "gpt-350m", "micro_batch": 4, "steps": 1000},
        "cluster": {"instance": "aws-p5en.48xlarge"}, "reliability": {"spot_interruptions_per_day": 1000},
        "pricing": {"plan": )" + plan + "}}",
                              "spot.json", catalog(), d);
  };
  Diagnostics d1, d2, d3;
  CHECK_FALSE(load(R"("on-demand")", d1).has_value());
  CHECK(d1.render() == "spot.json:/reliability/spot_interruptions_per_day: applies only to \"plan\": \"spot\" and no "
                       "configuration of this scenario is on spot; remove it or set the plan\n");
  CHECK(load(R"("spot")", d2).has_value());
  CHECK(load(R"(["on-demand", "spot"])", d3).has_value());  // read by the spot half of the sweep
}

TEST_CASE("app::scenario: a list inside a sweep list is refused and follow-on lines are not printed", "[scenario]") {
  // [[1, [2, [4]]]] ran three configurations, flattened without a word; a "steps" of the wrong type also said
  // "must give the run length"; tp = 3 on 8 GPUs also said the global batch did not match a data-parallel size of 2.
  auto lines = [](const std::string& text) {
    Diagnostics d;
    auto sc = load_scenario_text(text, "s.json", catalog(), d);
    CHECK_FALSE(sc.has_value());
    return d.render();
  };
  CHECK(lines(R"({"workload": {"model": "gpt-350m", "micro_batch": 1, "steps": 10},
      "cluster": {"instance": "aws-p5en.48xlarge", "nodes": [[1, [2, [4]]]]}})") ==
        "s.json:/cluster/nodes/0: a list inside a list: a sweep lists values or objects (write [1, 2, 4], not "
        "[[1, 2], 4])\n");
  CHECK(lines(R"({"workload": {"model": "gpt-350m", "micro_batch": 1, "steps": "10"},
      "cluster": {"instance": "aws-p5en.48xlarge"}})") ==
        "s.json:/workload/steps: must be a positive integer, got \"10\"\n");
  CHECK(lines(R"({"workload": {"model": "gpt-350m", "global_batch": 16, "micro_batch": 1, "steps": 10},
      "software": {"parallelism": {"tp": 3}}, "cluster": {"instance": "aws-p5en.48xlarge"}})") ==
        "s.json:/software/parallelism: tp x pp (3) must divide the GPU count (8)\n"
        "s.json:/software/parallelism/tp: must divide the attention heads (16)\n");
}

TEST_CASE("app::scenario: a pipeline whose stages cannot hold equal layers is refused", "[scenario]") {
  // GPT-350M has 24 layers: 16 stages would hold 1 or 2 layers each, and the 2-layer stages set the pace and
  // the memory; the model's equal stages (24 / 16 = 1.5 layers) ran it silently as if it were balanced.
  auto lines = [](const std::string& pp, bool& ok) {
    Diagnostics d;
    auto sc = load_scenario_text(R"({"workload": {"model": "gpt-350m", "global_batch": 32, "micro_batch": 1, "steps": 10},
      "software": {"parallelism": {"pp": )" + pp + R"(}}, "cluster": {"instance": "aws-p5en.48xlarge", "nodes": 2}})",
                                 "s.json", catalog(), d);
    ok = sc.has_value();
    return d.render();
  };
  bool ok = true;
  CHECK(lines("16", ok) == "s.json:/software/parallelism/pp: must divide the layers (24), got 16\n");
  CHECK_FALSE(ok);
  CHECK(lines("8", ok).empty());  // 3 layers a stage
  CHECK(ok);
}

TEST_CASE("app::scenario: a vision transformer's heads and layers bound tp and pp as a GPT's do", "[scenario]") {
  // ViT-B/16: 12 heads, 12 layers. tp = 8 would split 12 heads into 1.5 a GPU, and pp = 8 12 layers into 1.5 a
  // stage: both ran silently (the tp all-reduces and the stage split are timed from the ViT's dimensions).
  auto lines = [](const std::string& par, bool& ok) {
    Diagnostics d;
    auto sc = load_scenario_text(R"({"workload": {"model": "vit_b_16", "micro_batch": 32, "steps": 10},
      "software": {"parallelism": )" + par + R"(}, "cluster": {"instance": "aws-p5en.48xlarge"}})",
                                 "s.json", catalog(), d);
    ok = sc.has_value();
    return d.render();
  };
  bool ok = true;
  CHECK(lines(R"({"tp": 8})", ok) == "s.json:/software/parallelism/tp: must divide the attention heads (12)\n");
  CHECK_FALSE(ok);
  CHECK(lines(R"({"pp": 8})", ok) == "s.json:/software/parallelism/pp: must divide the layers (12), got 8\n");
  CHECK_FALSE(ok);
  CHECK(lines(R"({"tp": 4, "pp": 2})", ok).empty());
  CHECK(ok);
}

TEST_CASE("app::scenario: tensor parallelism of a model without transformer dimensions is refused", "[scenario]") {
  // ResNet-50 with tp 2 ran with its compute halved and no all-reduce at all (a note said tp's all-reduces are
  // modelled for transformers only): a step time with no basis. A CNN, a Swin and a generic model are refused.
  for (const char* workload : {R"({"model": "resnet50", "micro_batch": 32, "steps": 10})",
                               R"({"model": "swin_t", "micro_batch": 32, "steps": 10})",
                               R"({"generic": {"params": 1e8, "fwd_flops_per_sample": 1e10, "activation_bytes_per_sample": 1e7},
                                   "micro_batch": 32, "steps": 10})"}) {
    Diagnostics d;
    auto sc = load_scenario_text(std::string(R"({"workload": )") + workload + R"(,
      "software": {"parallelism": {"tp": 2}}, "cluster": {"instance": "aws-p5en.48xlarge"}})", "s.json", catalog(), d);
    INFO(workload);
    CHECK_FALSE(sc);
    CHECK(d.render() == "s.json:/software/parallelism/tp: applies to transformers given by their dimensions (a GPT, a "
                        "ViT or workload.transformer), got 2 for a model without them: use data parallelism (tp 1)\n");
  }
  // The same with tp 1 (data parallelism) is fine.
  Diagnostics d;
  CHECK(load_scenario_text(R"({"workload": {"model": "resnet50", "micro_batch": 32, "steps": 10},
      "software": {"parallelism": {"tp": 1}}, "cluster": {"instance": "aws-p5en.48xlarge"}})", "s.json", catalog(), d));
}

TEST_CASE("app::scenario: sweep expands to the cartesian product", "[scenario][sweep]") {
  auto doc = json::parse(R"({"a": [1, 2, 3], "b": {"c": ["x", "y"]}, "d": 5})");
  auto pts = expand_sweep(doc, 1000);
  REQUIRE(pts);
  REQUIRE(pts->size() == 6);
  CHECK((*pts)[0].doc == json::parse(R"({"a": 1, "b": {"c": "x"}, "d": 5})"));
  CHECK((*pts)[5].doc == json::parse(R"({"a": 3, "b": {"c": "y"}, "d": 5})"));
  // Error pointers map back to the list element.
  CHECK((*pts)[5].original_pointer("/b/c") == "/b/c/1");
  CHECK((*pts)[5].original_pointer("/a") == "/a/2");
  CHECK((*pts)[5].original_pointer("/d") == "/d");
}

TEST_CASE("app::scenario: a list of objects is a list of alternatives, nested lists expand inside", "[sweep]") {
  auto doc = json::parse(R"({"cluster": [{"nodes": [1, 2]}, {"gpus": 4}]})");
  auto pts = expand_sweep(doc, 1000);
  REQUIRE(pts);
  REQUIRE(pts->size() == 3);
  CHECK((*pts)[1].doc == json::parse(R"({"cluster": {"nodes": 2}})"));
  CHECK((*pts)[1].original_pointer("/cluster/nodes") == "/cluster/0/nodes/1");
  CHECK((*pts)[2].original_pointer("/cluster/gpus") == "/cluster/1/gpus");
}

TEST_CASE("app::scenario: a sweep over the limit is refused", "[sweep]") {
  json big = json::object();
  for (int i = 0; i < 6; ++i) big["k" + std::to_string(i)] = json::array({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  CHECK_FALSE(expand_sweep(big, 100000).has_value());  // 10^6 configurations
  CHECK(expand_sweep(big, 2000000).has_value());
}

TEST_CASE("app::scenario: global batch resolves micro-batch and accumulation from the data-parallel size",
          "[scenario]") {
  Diagnostics d;
  auto sc = load_scenario_text(R"({"workload": {"model": "gpt-350m", "global_batch": 512, "grad_accum": 4,
                                                 "steps": 10},
                                   "cluster": {"instance": "aws-p5en.48xlarge", "nodes": [1, 2]}})",
                               "s.json", catalog(), d);
  INFO(d.render());
  REQUIRE(sc);
  REQUIRE(sc->configs.size() == 2);
  CHECK(sc->configs[0].parallel.dp == 8);
  CHECK(sc->configs[0].step.micro_batch == 16);  // 512 / (8 x 4)
  CHECK(sc->configs[1].parallel.dp == 16);
  CHECK(sc->configs[1].step.micro_batch == 8);
  CHECK(sc->configs[1].global_batch() == 512);
  CHECK(sc->configs[1].id == "c0001");
}

TEST_CASE("app::scenario: run length from a dataset rounds up to whole steps", "[scenario]") {
  RunLength len;
  len.samples = 1000;
  len.epochs = 2;
  CHECK(len.total_steps(300) == 7);  // 2000 / 300 = 6.67
}

TEST_CASE("app::catalog_io: problems in a --catalog override are reported with file and path", "[catalog]") {
  int files = 0;
  for (const auto& e : fs::directory_iterator(std::string(GPUPLAN_TEST_DATA) + "/bad-catalog")) {
    const auto expect = expected_lines(read(e.path()));
    REQUIRE_FALSE(expect.empty());
    Diagnostics d;
    load_catalogs("catalogs", {e.path().string()}, d);
    const std::string got = d.render();
    for (const auto& want : expect) {
      INFO(e.path().filename().string() << " should report: " << want << "\ngot:\n" << got);
      CHECK(got.find(want) != std::string::npos);
    }
    ++files;
  }
  CHECK(files >= 2);
}

TEST_CASE("app::catalog_io: an override replaces an entry by id and adds new ones", "[catalog]") {
  const auto path = fs::temp_directory_path() / ("gpuplan-override-" + std::to_string(::getpid()) + ".json");
  {
    std::ofstream f(path);
    f << R"({"instances": [
      {"id": "aws-p5en.48xlarge", "provider": "aws", "gpu": "h200-sxm", "gpus": 8, "network": "efa-v3-3200",
       "intra_node": "nvlink4-h200", "price_per_hour": {"on_demand": 40.0}, "source": "negotiated", "as_of": "2026-12"},
      {"id": "my-h200-box", "provider": "onprem", "gpu": "h200-sxm", "gpus": 4, "intra_node": "nvlink4-h200",
       "price_per_hour": {"on_demand": 12.0}, "source": "quote", "as_of": "2026-12"}]})";
  }
  Diagnostics d;
  Catalog c = load_catalogs("catalogs", {path.string()}, d);
  fs::remove(path);
  INFO(d.render());
  REQUIRE(d.empty());
  CHECK(c.instances.at("aws-p5en.48xlarge").prices.on_demand_per_hour.value() == Approx(40.0));
  CHECK(c.instances.at("my-h200-box").gpus == 4);
  CHECK(c.instances.size() == catalog().instances.size() + 1);
}

TEST_CASE("app::scenario: a list of names or descriptions is refused, not swept", "[scenario][sweep]") {
  // "name": ["a", "b"] made 2 x 4 = 8 configurations, each pair identical, titled by the file's path.
  Diagnostics d;
  auto sc = load_scenario_text(R"({"name": ["a", "b"], "description": ["x", "y"],
      "workload": {"model": "gpt-350m", "micro_batch": 1, "steps": 10},
      "cluster": {"instance": "aws-p5en.48xlarge", "nodes": [1, 2, 4, 8]}})",
                               "s.json", catalog(), d);
  CHECK_FALSE(sc.has_value());
  CHECK(d.render() ==
        "s.json:/name: one title per scenario, not a list: it describes every configuration of the run, got a list\n"
        "s.json:/description: one description per scenario, not a list: it describes every configuration of the "
        "run, got a list\n");
}

TEST_CASE("app::scenario: image_size builds a vision model for its image size", "[scenario]") {
  // torchvision documents ViT-B/16 at 384 x 384 (ViT_B_16_Weights.IMAGENET1K_SWAG_E2E_V1) as 55.48 GFLOPS
  // (multiply-adds): 110.96e9 FLOPs against 35.13e9 at 224, since its 577 tokens cost more than (384/224)^2 = 2.94x.
  // ResNet-50's convolutions scale with the area: 4x at 448 but for the classifier (2 x 2048 x 1000 FLOPs).
  auto flops = [](const std::string& workload) {
    Diagnostics d;
    auto sc = load_scenario_text(R"({"workload": )" + workload + R"(, "cluster": {"instance": "aws-p5en.48xlarge"}})",
                                 "s.json", catalog(), d);
    INFO(d.render());
    REQUIRE(sc);
    return std::pair{forward_flops(build_step_ops(sc->configs[0].step)).value(), sc->configs[0].step.model};
  };
  const auto [vit384, vit] = flops(R"({"model": "vit_b_16", "image_size": 384, "micro_batch": 1, "steps": 1})");
  CHECK(vit384 == Approx(110.96e9).epsilon(0.01));
  CHECK(vit.sample_bytes.value() == Approx(3.0 * 384 * 384 * 4));
  const auto [r224, r50] = flops(R"({"model": "resnet50", "micro_batch": 1, "steps": 1})");
  const auto [r448, r50_448] = flops(R"({"model": "resnet50", "image_size": 448, "micro_batch": 1, "steps": 1})");
  const double fc = 2.0 * 2048 * 1000;
  CHECK(r448 - fc == Approx(4.0 * (r224 - fc)).epsilon(0.01));

  // A list of sizes is a sweep; a size for a language model, or out of range, is one line naming the field.
  Diagnostics d;
  auto sweep = load_scenario_text(R"({"workload": {"model": "resnet50", "image_size": [224, 448], "micro_batch": 1,
                                      "steps": 1}, "cluster": {"instance": "aws-p5en.48xlarge"}})", "w.json", catalog(), d);
  REQUIRE(sweep);
  REQUIRE(sweep->configs.size() == 2);
  CHECK(sweep->configs[1].step.model.input_shape == std::vector<int>{3, 448, 448});
  Diagnostics d2;
  load_scenario_text(R"({"workload": {"model": "gpt-350m", "image_size": 224, "micro_batch": 1, "steps": 1},
                         "cluster": {"instance": "aws-p5en.48xlarge"}})", "g.json", catalog(), d2);
  CHECK(d2.render().find("g.json:/workload/image_size: applies only to the catalog's vision models") != std::string::npos);
  Diagnostics d3;
  load_scenario_text(R"({"workload": {"model": "resnet50", "image_size": 16, "micro_batch": 1, "steps": 1},
                         "cluster": {"instance": "aws-p5en.48xlarge"}})", "r.json", catalog(), d3);
  CHECK(d3.render().find("r.json:/workload/image_size: must be an integer in [32, 4096], got 16") != std::string::npos);
}

TEST_CASE("app::scenario: FSDP's MixedPrecision in one alternative of a strategy sweep, and on its parameters",
          "[scenario][sweep]") {
  // The flag is refused with DDP, so a sweep over strategies gives parallelism as alternatives.
  Diagnostics d;
  auto sc = load_scenario_text(R"({"workload": {"model": "gpt-350m", "micro_batch": 8, "steps": 1000},
      "software": {"parallelism": [{"strategy": "ddp"}, {"strategy": "fsdp", "fsdp_mixed_precision": true}]},
      "cluster": {"gpu": "h100-sxm", "gpus_per_node": 8, "intra_node": "nvlink4-h100", "nodes": 1},
      "pricing": {"price_per_gpu_hour": 3}})",
                               "alternatives.json", catalog(), d);
  INFO(d.render());
  REQUIRE(sc.has_value());
  REQUIRE(sc->configs.size() == 2);
  CHECK(sc->configs[0].parallel.strategy == DataParallel::ddp);
  CHECK_FALSE(sc->configs[0].step.params_16bit);
  CHECK(sc->configs[1].parallel.strategy == DataParallel::fsdp);
  // The step computes on 16-bit parameters: the compute model drops autocast's casts for it.
  CHECK(sc->configs[1].step.params_16bit);
}
