// Checks the shipped catalogs/*.json against independent truth: datasheet figures, measured reference runs,
// torchvision's published FLOPs, and invariants that tie the files together (ids resolve, link rates agree).
// The files are read with nlohmann_json directly, so these tests do not depend on app/catalog_io.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "app/catalog_io.hpp"
#include "app/diagnostics.hpp"

namespace {

using nlohmann::json;

// The catalog folder of the source tree (GPUPLAN_TEST_DATA is <src>/tests/data).
std::string catalog_dir() { return std::string(GPUPLAN_TEST_DATA) + "/../../catalogs"; }

// Parses catalogs/<name>.json (comments allowed) and returns its list of entries for `kind`.
json load_kind(const std::string& kind) {
  std::ifstream in(catalog_dir() + "/" + kind + ".json");
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  json doc = json::parse(ss.str(), nullptr, /*allow_exceptions=*/true, /*ignore_comments=*/true);
  REQUIRE(doc.contains(kind));
  REQUIRE(doc[kind].is_array());
  return doc[kind];
}

// Entries keyed by id.
std::map<std::string, json> by_id(const json& list) {
  std::map<std::string, json> m;
  for (const auto& e : list) m[e.at("id").get<std::string>()] = e;
  return m;
}

const char* const kKinds[] = {"gpus", "instances", "interconnects", "storage", "images", "models"};

// GPT-family parameter count as built in the reference runs: embeddings (+ untied head), learned positions,
// per block two LayerNorms, QKV and output projections with bias, MLP d->d_ff->d with bias; final LayerNorm.
double gpt_params(const json& m) {
  const double L = m.at("layers").get<double>(), d = m.at("d_model").get<double>();
  const double V = m.at("vocab").get<double>(), S = m.at("seq").get<double>();
  const double f = m.contains("d_ff") ? m.at("d_ff").get<double>() : 4 * d;
  const bool tied = m.value("tied_embeddings", true);
  const double block = 4 * d + (3 * d * d + 3 * d) + (d * d + d) + (d * f + f) + (f * d + d);
  return V * d * (tied ? 1 : 2) + S * d + L * block + 2 * d;
}

}  // namespace

TEST_CASE("app::catalogs: every entry has a unique id, a source and an as_of date", "[app][catalogs]") {
  const std::regex date(R"(\d{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?)");
  for (const char* kind : kKinds) {
    INFO("kind " << kind);
    const json list = load_kind(kind);
    REQUIRE(list.size() > 0);
    std::set<std::string> ids;
    for (const auto& e : list) {
      const std::string id = e.at("id").get<std::string>();
      INFO("id " << id);
      CHECK_FALSE(id.empty());
      CHECK(ids.insert(id).second);
      CHECK(e.at("source").get<std::string>().size() > 10);
      CHECK(std::regex_match(e.at("as_of").get<std::string>(), date));
    }
  }
}

TEST_CASE("app::catalogs: instance references resolve to GPUs and links of the right scope", "[app][catalogs]") {
  const auto gpus = by_id(load_kind("gpus"));
  const auto links = by_id(load_kind("interconnects"));
  for (const auto& inst : load_kind("instances")) {
    INFO("instance " << inst.at("id").get<std::string>());
    REQUIRE(gpus.count(inst.at("gpu").get<std::string>()) == 1);
    const std::string net = inst.at("network").get<std::string>(), intra = inst.at("intra_node").get<std::string>();
    REQUIRE(links.count(net) == 1);
    REQUIRE(links.count(intra) == 1);
    CHECK(links.at(net).at("scope") == "inter-node");
    CHECK(links.at(intra).at("scope") == "intra-node");
  }
}

TEST_CASE("app::catalogs: coverage of GPUs and providers", "[app][catalogs]") {
  CHECK(load_kind("gpus").size() >= 10);
  const json insts = load_kind("instances");
  CHECK(insts.size() >= 25);
  std::map<std::string, int> per_provider;
  for (const auto& i : insts) ++per_provider[i.at("provider").get<std::string>()];
  for (const char* hyperscaler : {"aws", "gcp", "azure"}) CHECK(per_provider[hyperscaler] >= 1);
  int gpu_clouds = 0;
  for (const auto& [p, n] : per_provider) gpu_clouds += (p != "aws" && p != "gcp" && p != "azure") ? 1 : 0;
  CHECK(gpu_clouds >= 2);
}

TEST_CASE("app::catalogs: prices are positive, per-GPU H100 prices plausible, spot below on-demand",
          "[app][catalogs]") {
  int h100_rows = 0;
  for (const auto& inst : load_kind("instances")) {
    INFO("instance " << inst.at("id").get<std::string>());
    const json& p = inst.at("price_per_hour");
    const double od = p.at("on_demand").get<double>();
    CHECK(od > 0);
    for (const char* k : {"spot", "reserved"}) {
      if (!p.at(k).is_null()) CHECK(p.at(k).get<double>() <= od);
    }
    if (inst.at("gpu") == "h100-sxm") {
      ++h100_rows;
      const double per_gpu_hour = od / inst.at("gpus").get<double>();
      CHECK(per_gpu_hour >= 1.0);
      CHECK(per_gpu_hour <= 15.0);
    }
  }
  CHECK(h100_rows >= 4);
}

TEST_CASE("app::catalogs: GPU figures match datasheets and are internally ordered", "[app][catalogs]") {
  const auto gpus = by_id(load_kind("gpus"));
  // NVIDIA H100 SXM datasheet: 989 dense bf16 TFLOP/s, 3.35 TB/s, 80 GB, 700 W; H200: 141 GB, 4.8 TB/s.
  CHECK(gpus.at("h100-sxm").at("peak_tflops").at("bf16").get<double>() == Approx(989));
  CHECK(gpus.at("h100-sxm").at("hbm_bw_GBps").get<double>() == Approx(3350));
  CHECK(gpus.at("h200-sxm").at("hbm_GiB").get<double>() == Approx(141));
  CHECK(gpus.at("h200-sxm").at("hbm_bw_GBps").get<double>() == Approx(4800));
  for (const auto& [id, g] : gpus) {
    INFO("gpu " << id);
    const double bw = g.at("hbm_bw_GBps").get<double>();
    CHECK(bw >= 250);
    CHECK(bw <= 10000);
    const json& pk = g.at("peak_tflops");
    REQUIRE(pk.contains("fp32"));
    if (pk.contains("bf16")) CHECK(pk.at("bf16").get<double>() >= pk.at("fp32").get<double>());
    if (pk.contains("fp8")) CHECK(pk.at("fp8").get<double>() >= pk.at("bf16").get<double>());
    const double tdp = g.at("tdp_W").get<double>(), idle = g.at("idle_W").get<double>();
    CHECK(idle > 0);
    CHECK(idle < 0.5 * tdp);
  }
}

TEST_CASE("app::catalogs: the idle power of the H200 matches the reference host's measured load power range",
          "[app][catalogs]") {
  // Reference runs (h200-2026-12.jsonl): a busy H200 drew 244-689 W; idle must sit below the lightest load.
  const double idle = by_id(load_kind("gpus")).at("h200-sxm").at("idle_W").get<double>();
  CHECK(idle < 244.1);
  CHECK(idle > 50);
}

TEST_CASE("app::catalogs: links agree with the GPUs and instances that use them", "[app][catalogs]") {
  const auto gpus = by_id(load_kind("gpus"));
  const auto links = by_id(load_kind("interconnects"));
  for (const auto& [id, l] : links) {
    INFO("link " << id);
    const double eff = l.at("efficiency").get<double>();
    CHECK(eff > 0.3);
    CHECK(eff <= 1.0);
    CHECK(l.at("bw_GBps").get<double>() > 0);
    CHECK(l.at("hop_latency_us").get<double>() > 0);
    if (l.at("scope") == "inter-node") CHECK(l.at("ports_per_node").get<int>() >= 1);
  }
  for (const auto& inst : load_kind("instances")) {
    INFO("instance " << inst.at("id").get<std::string>());
    const json& net = links.at(inst.at("network").get<std::string>());
    const double line_Gbps = net.at("bw_GBps").get<double>() * 8 * net.at("ports_per_node").get<double>();
    const double node_Gbps = inst.at("network_Gbps").get<double>();
    CHECK(node_Gbps <= line_Gbps * 1.001);
    CHECK(node_Gbps >= 0.75 * line_Gbps);
    // A GPU-to-GPU fabric's per-direction rate is half the GPU's datasheet total (both directions).
    const json& intra = links.at(inst.at("intra_node").get<std::string>());
    const json& gpu = gpus.at(inst.at("gpu").get<std::string>());
    if (intra.at("kind") == "nvlink" || intra.at("kind") == "xgmi") {
      CHECK(2 * intra.at("bw_GBps").get<double>() == Approx(gpu.at("nvlink_GBps").get<double>()));
    }
    if (inst.at("gpus").get<int>() > 1 && gpu.at("nvlink_GBps").get<double>() == 0) CHECK(intra.at("kind") == "pcie");
  }
}

TEST_CASE("app::catalogs: GPT dimensions reproduce the parameter counts of the measured runs", "[app][catalogs]") {
  // `params` of the train records in calibrate/measured/h200-2026-12.jsonl (counted by PyTorch).
  const std::map<std::string, double> measured = {
      {"gpt-124m", 124475904},   {"gpt-350m", 354871296},   {"gpt-760m", 758799360},
      {"gpt-1.3b", 1313722368},  {"gpt-2.7b", 2649052160},  {"gpt-6.7b", 6654402560}};
  const auto models = by_id(load_kind("models"));
  for (const auto& [id, params] : measured) {
    INFO("model " << id);
    CHECK(gpt_params(models.at(id)) == Approx(params).epsilon(1e-9));
  }
  // Llama 2 (arXiv:2307.09288): 6.74e9 and 13.0e9 parameters; the gpt-family stand-in is within 1%.
  CHECK(gpt_params(models.at("llama2-7b")) == Approx(6.74e9).epsilon(0.01));
  CHECK(gpt_params(models.at("llama2-13b")) == Approx(13.0e9).epsilon(0.01));
}

TEST_CASE("app::catalogs: vision models agree with torchvision's published figures", "[app][catalogs]") {
  // torchvision docs: params and multiply-adds ("GFLOPS" column) per 224x224 image; FLOPs = 2 x MACs.
  struct Ref { const char* id; double params; double gmacs; };
  const Ref refs[] = {{"resnet18", 11689512, 1.81},   {"resnet34", 21797672, 3.66},  {"resnet50", 25557032, 4.09},
                      {"resnet101", 44549160, 7.80},  {"resnet152", 60192808, 11.51}, {"vit_b_16", 86567656, 17.56},
                      {"vit_b_32", 88224232, 4.41},   {"mobilenet_v3_large", 5483032, 0.22},
                      {"efficientnet_b0", 5288548, 0.39}};
  const auto models = by_id(load_kind("models"));
  for (const auto& r : refs) {
    INFO("model " << r.id);
    const json& m = models.at(r.id);
    CHECK(m.at("params").get<double>() == Approx(r.params));
    CHECK(m.at("fwd_flops_per_sample").get<double>() == Approx(2e9 * r.gmacs).epsilon(0.03));
    CHECK(m.at("input_shape") == json::array({3, 224, 224}));
    CHECK(m.at("sample_bytes").get<double>() == Approx(3 * 224 * 224 * 4));
  }
  // ViT sequence = (224 / patch)^2 patches + one class token.
  CHECK(models.at("vit_b_16").at("seq").get<int>() == 14 * 14 + 1);
  CHECK(models.at("vit_b_32").at("seq").get<int>() == 7 * 7 + 1);
}

TEST_CASE("app::catalogs: storage and images are physically consistent", "[app][catalogs]") {
  const auto storage = by_id(load_kind("storage"));
  for (const auto& [id, s] : storage) {
    INFO("storage " << id);
    CHECK(s.at("read_GBps").get<double>() > 0);
    CHECK(s.at("write_GBps").get<double>() > 0);
    CHECK(s.at("latency_ms").at("p99").get<double>() >= s.at("latency_ms").at("p50").get<double>());
    if (!s.at("aggregate_GBps").is_null()) {
      CHECK(s.at("shared").get<bool>());
      CHECK(s.at("aggregate_GBps").get<double>() >= s.at("read_GBps").get<double>());
    }
  }
  // Reference host disk: raw sequential writes measured at 1.566 and 1.717 GB/s (checkpoint records).
  const double ref_w = storage.at("ref-h200-host-disk").at("write_GBps").get<double>();
  CHECK(ref_w >= 1.566);
  CHECK(ref_w <= 1.717);
  for (const auto& im : load_kind("images")) {
    INFO("image " << im.at("id").get<std::string>());
    CHECK(im.at("compressed_GB").get<double>() > 0);
    CHECK(im.at("unpacked_GB").get<double>() >= im.at("compressed_GB").get<double>());
    CHECK(im.at("layers").get<int>() >= 1);
  }
}

TEST_CASE("app::catalogs: the shipped catalogs load through catalog_io without diagnostics", "[app][catalogs]") {
  gp::app::Diagnostics diags;
  const gp::Catalog cat = gp::app::load_catalogs(catalog_dir(), {}, diags);
  INFO(diags.render());
  CHECK(diags.empty());
  CHECK(cat.gpus.size() == load_kind("gpus").size());
  CHECK(cat.instances.size() == load_kind("instances").size());
  CHECK(cat.models.size() == load_kind("models").size());
}
