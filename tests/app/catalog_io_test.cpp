// Catalog entries corrupted one field at a time: each is a copy of a shipped entry with one figure changed, given as
// a --catalog override (or in a copy of the catalog folder), and must be one line naming file, JSON path and the
// accepted range. Before, these values were accepted and hung `run` or printed overflowed figures.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "app/catalog_io.hpp"
#include "tests/support/run_gpuplan.hpp"

namespace fs = std::filesystem;
using gp::app::Diagnostics;
using gp::app::load_catalogs;

namespace {

nlohmann::json read_catalog(const std::string& file) {
  return nlohmann::json::parse(std::ifstream("catalogs/" + file), nullptr, true, /*ignore_comments=*/true);
}

// The shipped entry `id` of `kind` in catalogs/FILE.
nlohmann::json shipped(const std::string& file, const std::string& kind, const std::string& id) {
  const nlohmann::json doc = read_catalog(file);
  for (const auto& e : doc[kind])
    if (e["id"] == id) return e;
  FAIL("no entry " << id << " in catalogs/" << file);
  return {};
}

fs::path temp_path(const std::string& tag) {
  return fs::temp_directory_path() / ("gpuplan-catalog-io-" + tag + "-" + std::to_string(::getpid()));
}

// The shipped catalogs with one override file holding `entry` as the only one of `kind`: the diagnostics rendered,
// each line's file name replaced by "over.json".
std::string load_with(const std::string& kind, const nlohmann::json& entry) {
  const fs::path path = temp_path("over") += ".json";
  std::ofstream(path) << nlohmann::json{{kind, {entry}}}.dump();
  Diagnostics d;
  load_catalogs("catalogs", {path.string()}, d);
  fs::remove(path);
  std::string out = d.render();
  for (std::size_t at; (at = out.find(path.string())) != std::string::npos;) out.replace(at, path.string().size(), "over.json");
  return out;
}

struct Corrupt {
  std::string file, kind, id, field;
  nlohmann::json value;
  std::string expected;  // the whole output; "" when the value must be accepted
};

void check_cases(const std::vector<Corrupt>& cases) {
  for (const auto& c : cases) {
    auto e = shipped(c.file, c.kind, c.id);
    e[c.field] = c.value;
    const std::string got = load_with(c.kind, e);
    INFO(c.id << " " << c.field << " = " << c.value.dump());
    CHECK(got == c.expected);
  }
}

}  // namespace

TEST_CASE("app::catalog_io: GPU and instance rates below any real link are refused with their range", "[catalog]") {
  check_cases({
      // 1e-300 GB/s hung `run`; 1e-6 GB/s made a step of 1.54 million seconds.
      {"gpus.json", "gpus", "h200-sxm", "pcie_GBps", 1e-300,
       "over.json:/gpus/0/pcie_GBps: must be 0 (not given) or a number in [0.01, 100000], got 1e-300\n"},
      {"gpus.json", "gpus", "h200-sxm", "pcie_GBps", 1e-6,
       "over.json:/gpus/0/pcie_GBps: must be 0 (not given) or a number in [0.01, 100000], got 1e-06\n"},
      {"gpus.json", "gpus", "h200-sxm", "pcie_GBps", -16,
       "over.json:/gpus/0/pcie_GBps: must be 0 (not given) or a number in [0.01, 100000], got -16\n"},
      {"gpus.json", "gpus", "h200-sxm", "pcie_GBps", "64",
       "over.json:/gpus/0/pcie_GBps: must be 0 (not given) or a number in [0.01, 100000], got \"64\"\n"},
      {"gpus.json", "gpus", "h200-sxm", "nvlink_GBps", 1e-300,
       "over.json:/gpus/0/nvlink_GBps: must be 0 (no NVLink) or a number in [0.01, 100000], got 1e-300\n"},
      {"gpus.json", "gpus", "h200-sxm", "idle_W", 1e18, "over.json:/gpus/0/idle_W: must be a number in [0, 100000], got 1e+18\n"},
      {"instances.json", "instances", "coreweave-8x-h200", "network_Gbps", 1e-300,
       "over.json:/instances/0/network_Gbps: must be 0 (not given) or a number in [0.1, 1e+06], got 1e-300\n"},
      // The ends of each range, and 0 where it means none or not given, stay valid.
      {"gpus.json", "gpus", "h200-sxm", "pcie_GBps", 0, ""},
      {"gpus.json", "gpus", "h200-sxm", "pcie_GBps", 0.01, ""},
      {"gpus.json", "gpus", "h200-sxm", "pcie_GBps", 1e5, ""},
      {"gpus.json", "gpus", "h200-sxm", "nvlink_GBps", 0, ""},
      {"instances.json", "instances", "coreweave-8x-h200", "network_Gbps", 0, ""},
      {"instances.json", "instances", "coreweave-8x-h200", "network_Gbps", 0.1, ""},
  });
}

TEST_CASE("app::catalog_io: model figures that hung or meant no model are refused with their range", "[catalog]") {
  check_cases({
      // A 1e15-byte sample hung the loader simulation (a scenario's dataloader.sample_bytes is capped at 1e10).
      {"models.json", "models", "resnet50", "sample_bytes", 1e15,
       "over.json:/models/0/sample_bytes: must be a number in [1, 1e+10], got 1e+15\n"},
      {"models.json", "models", "gpt-350m", "vocab", 0,
       "over.json:/models/0/vocab: must be an integer in [1, 16777216], got 0\n"},
      {"models.json", "models", "resnet50", "params", 1e-300,
       "over.json:/models/0/params: must be a number in [1, 1e+14], got 1e-300\n"},
      {"models.json", "models", "resnet50", "fwd_flops_per_sample", 1e-300,
       "over.json:/models/0/fwd_flops_per_sample: must be a number in [1, 1e+18], got 1e-300\n"},
      {"models.json", "models", "resnet50", "activation_bytes_per_sample", 1e13,
       "over.json:/models/0/activation_bytes_per_sample: must be a number in [1, 1e+12], got 10000000000000.0\n"},
      // input_shape is [channels, height, width] (catalogs/models.json); any other length was read as no shape.
      {"models.json", "models", "resnet50", "input_shape", nlohmann::json::array(),
       "over.json:/models/0/input_shape: must be [channels, height, width], three integers in [1, 100000], got []\n"},
      {"models.json", "models", "resnet50", "input_shape", {224, 224},
       "over.json:/models/0/input_shape: must be [channels, height, width], three integers in [1, 100000], got "
       "[224,224]\n"},
      {"models.json", "models", "resnet50", "input_shape", {3, 0, 224},
       "over.json:/models/0/input_shape/1: must be an integer in [1, 100000], got 0\n"},
      {"models.json", "models", "resnet50", "input_shape", {3, 224, 5000000000LL},
       "over.json:/models/0/input_shape/2: must be an integer in [1, 100000], got 5000000000\n"},
      {"models.json", "models", "gpt-350m", "train_batch_tokens", 0,
       "over.json:/models/0/train_batch_tokens: must be a number in [1, 1e+12], got 0\n"},
      {"models.json", "models", "gpt-350m", "train_batch_tokens", 1e12, ""},
      {"models.json", "models", "resnet50", "sample_bytes", 1e10, ""},
      {"models.json", "models", "resnet50", "params", 1, ""},
      {"models.json", "models", "gpt-350m", "vocab", 1, ""},
      {"models.json", "models", "resnet50", "input_shape", {1, 1, 1}, ""},
  });
}

TEST_CASE("app::catalog_io: a storage kind is one of the documented kinds", "[catalog]") {
  const std::string id = read_catalog("storage.json")["storage"][0]["id"];
  check_cases({
      {"storage.json", "storage", id, "kind", "x",
       "over.json:/storage/0/kind: must be one of local-nvme, block, nfs, lustre, object, got \"x\"\n"},
      {"storage.json", "storage", id, "kind", "luster",
       "over.json:/storage/0/kind: must be one of local-nvme, block, nfs, lustre, object, got \"luster\" (did you mean "
       "\"lustre\"?)\n"},
      {"storage.json", "storage", id, "kind", "object", ""},
  });
}

TEST_CASE("app::catalog_io: a catalog folder with a GPU of 1e-300 GB/s PCIe is one line and exit 2", "[catalog][cli]") {
  // The folder form of the corruption the audit found (`run` never ended); validate reads the same catalogs.
  const fs::path dir = temp_path("dir");
  fs::remove_all(dir);
  fs::copy("catalogs", dir);
  auto gpus = read_catalog("gpus.json");
  std::size_t at = 0;
  for (; at < gpus["gpus"].size() && gpus["gpus"][at]["id"] != "h200-sxm"; ++at) {
  }
  REQUIRE(at < gpus["gpus"].size());
  gpus["gpus"][at]["pcie_GBps"] = 1e-300;
  std::ofstream(dir / "gpus.json") << gpus.dump(1);
  const auto r = gp::test::run_gpuplan("--catalog-dir " + dir.string() + " validate scenarios/quickstart-gpt-350m.json");
  fs::remove_all(dir);
  CHECK(r.code == 2);
  CHECK(r.out == (dir / "gpus.json").string() + ":/gpus/" + std::to_string(at) +
                     "/pcie_GBps: must be 0 (not given) or a number in [0.01, 100000], got 1e-300\n");
}

namespace {

// A copy of the catalog folder with entry `id` of catalogs/FILE changed by `change`; returns the folder and the
// entry's index in its list.
std::pair<fs::path, std::size_t> corrupted_folder(const std::string& tag, const std::string& file,
                                                  const std::string& kind, const std::string& id,
                                                  const std::function<void(nlohmann::json&)>& change) {
  const fs::path dir = temp_path(tag);
  fs::remove_all(dir);
  fs::copy("catalogs", dir);
  auto doc = read_catalog(file);
  std::size_t at = 0;
  while (at < doc[kind].size() && doc[kind][at]["id"] != id) ++at;
  REQUIRE(at < doc[kind].size());
  change(doc[kind][at]);
  std::ofstream(dir / file) << doc.dump(1);
  return {dir, at};
}

}  // namespace

TEST_CASE("app::catalog_io: an entry with a wrong field is reported once and not again where it is referenced",
          "[catalog][cli]") {
  // h200-sxm with hbm_GiB "141" (a string): the real line, then four "unknown GPU id" lines for the instances that
  // name it, with a suggestion of another GPU. The id is known; its entry is broken, and only that is said.
  {
    const auto [dir, at] = corrupted_folder("gpu", "gpus.json", "gpus", "h200-sxm",
                                            [](nlohmann::json& e) { e["hbm_GiB"] = "141"; });
    const auto r = gp::test::run_gpuplan("--catalog-dir " + dir.string() + " validate scenarios/quickstart-gpt-350m.json");
    fs::remove_all(dir);
    CHECK(r.code == 2);
    CHECK(r.out == (dir / "gpus.json").string() + ":/gpus/" + std::to_string(at) +
                       "/hbm_GiB: must be a number in [1, 100000], got \"141\"\n");
  }
  // The same for a link that instances name as intra_node (three instances name nvlink4-h200).
  {
    const auto [dir, at] = corrupted_folder("link", "interconnects.json", "interconnects", "nvlink4-h200",
                                            [](nlohmann::json& e) { e["efficiency"] = 2; });
    Diagnostics d;
    load_catalogs(dir.string(), {}, d);
    fs::remove_all(dir);
    CHECK(d.render() == (dir / "interconnects.json").string() + ":/interconnects/" + std::to_string(at) +
                            "/efficiency: must be a number in [0.01, 1], got 2\n");
  }
  // A broken override of an id the folder defines is one line too, and an id no entry defines is still named.
  {
    auto g = shipped("gpus.json", "gpus", "h100-sxm");
    g["tdp_W"] = -1;
    CHECK(load_with("gpus", g) == "over.json:/gpus/0/tdp_W: must be a number in [1, 100000], got -1\n");
    auto inst = shipped("instances.json", "instances", "coreweave-8x-h200");
    inst["gpu"] = "h300-sxm";
    CHECK(load_with("instances", inst) ==
          "over.json:/instances/0/gpu: unknown GPU id \"h300-sxm\" (did you mean \"h100-sxm\"?)\n");
  }
}
