#include "app/catalog_io.hpp"

#include <algorithm>
#include <cstdlib>
#include <cctype>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "app/cli.hpp"
#include "app/json_reader.hpp"
#include "app/output_file.hpp"

namespace gp::app {

namespace fs = std::filesystem;

namespace {

constexpr double kBig = 1e18;

// A rate that is 0 (what `zero_means`: none, or not given) or in [min, max]. A positive value below any real link
// (1e-300 GB/s) made a step that never finished, 1e-6 GB/s a step of 1.5 million seconds.
std::optional<double> zero_or_in(ObjectReader& r, const char* key, double min, double max, const char* zero_means) {
  r.accept(key);
  if (!r.has(key)) return std::nullopt;
  const json& v = (*r.object_ptr())[key];
  if (v.is_number() && (v.get<double>() == 0 || (v.get<double>() >= min && v.get<double>() <= max)))
    return v.get<double>();
  std::ostringstream want;
  want << "must be 0 (" << zero_means << ") or a number in [" << min << ", " << max << "], got " << brief(v);
  r.error(r.path(key), want.str());
  return std::nullopt;
}

Provenance read_prov(ObjectReader& r) {
  Provenance p;
  if (auto s = r.string("source", true)) {
    if (s->empty()) r.error(r.path("source"), "must name where the figures came from, got \"\"");
    p.source = *s;
  }
  if (auto s = r.string("as_of", true)) {
    bool ok = s->size() >= 4 && std::all_of(s->begin(), s->begin() + 4, ::isdigit);
    if (!ok) r.error(r.path("as_of"), "must be a date \"YYYY-MM\" or \"YYYY-MM-DD\", got \"" + *s + "\"");
    p.as_of = *s;
  }
  r.accept("notes");
  return p;
}

std::optional<Dtype> dtype_from(const std::string& s) {
  if (s == "fp32") return Dtype::fp32;
  if (s == "tf32") return Dtype::tf32;
  if (s == "bf16") return Dtype::bf16;
  if (s == "fp16") return Dtype::fp16;
  if (s == "fp8") return Dtype::fp8;
  return std::nullopt;
}

std::optional<GpuSpec> read_gpu(ObjectReader& r) {
  GpuSpec g;
  g.id = r.string("id", true).value_or("");
  g.name = r.string("name", true).value_or(g.id);
  g.vendor = r.choice("vendor", true, {"nvidia", "amd", "intel", "google"}).value_or("");
  if (const json* pk = r.object("peak_tflops", true)) {
    ObjectReader pr(pk, r.file(), r.path("peak_tflops"), r.diags());
    for (const char* d : {"fp32", "tf32", "bf16", "fp16", "fp8"}) {
      if (auto v = pr.number(d, false, 0.1, 1e5)) g.peak_dense[*dtype_from(d)] = FlopRate::tflops(*v);
    }
    pr.accept("int8");
    pr.finish();
  }
  // Ranges wide around every GPU there is, so that no derived time or fraction can overflow.
  g.hbm = Bytes::gib(r.number("hbm_GiB", true, 1, 1e5).value_or(0));
  g.hbm_bw = ByteRate::gbps(r.number("hbm_bw_GBps", true, 10, 1e6).value_or(0));
  g.sm_count = static_cast<int>(r.integer("sm_count", false, 1, 100000).value_or(0));
  g.nvlink_bw = ByteRate::gbps(zero_or_in(r, "nvlink_GBps", 0.01, 1e5, "no NVLink").value_or(0));
  g.pcie_gen = static_cast<int>(r.integer("pcie_gen", false, 1, 7).value_or(0));  // 0: not given (informative only)
  g.pcie_bw = ByteRate::gbps(zero_or_in(r, "pcie_GBps", 0.01, 1e5, "not given").value_or(0));
  g.tdp = Watts(r.number("tdp_W", true, 1, 1e5).value_or(0));
  g.idle = Watts(r.number("idle_W", false, 0, 1e5).value_or(0));
  r.accept("arch");
  r.accept("memory");
  g.prov = read_prov(r);
  return g;
}

std::optional<InstanceSpec> read_instance(ObjectReader& r) {
  InstanceSpec s;
  s.id = r.string("id", true).value_or("");
  s.provider = r.string("provider", true).value_or("");
  s.name = r.string("name", false).value_or(s.id);
  s.gpu = r.string("gpu", true).value_or("");
  s.gpus = static_cast<int>(r.integer("gpus", true, 1, 1 << 20).value_or(1));
  s.vcpus = static_cast<int>(r.integer("vcpus", false, 1, 1 << 20).value_or(0));
  s.ram = Bytes::gib(r.number("ram_GiB", false, 0, kBig).value_or(0));
  // 0: not given, the network link's line rate is used. At least 0.1 Gb/s (~0.01 GB/s), as a link's bw_GBps.
  s.network_bw = ByteRate::gbit(zero_or_in(r, "network_Gbps", 0.1, 1e6, "not given").value_or(0));
  s.network = r.string("network", false).value_or("");
  s.intra_node = r.string("intra_node", false).value_or("");
  s.local_nvme = Bytes::tb(r.number("local_nvme_TB", false, 0, kBig).value_or(0));
  // Not given: one NUMA node, so no cross-node penalty is modelled (the catalog gives it for every instance).
  s.numa_nodes = static_cast<int>(r.integer("numa_nodes", false, 1, 64).value_or(1));
  if (const json* p = r.object("price_per_hour", true)) {
    ObjectReader pr(p, r.file(), r.path("price_per_hour"), r.diags());
    s.prices.on_demand_per_hour = Dollars(pr.number("on_demand", true, 0, kBig).value_or(0));
    for (const char* k : {"reserved", "spot"}) {
      if (pr.has(k) && (*p)[k].is_null()) {
        pr.accept(k);
        continue;
      }
      if (auto v = pr.number(k, false, 0, kBig)) {
        (std::string(k) == "reserved" ? s.prices.reserved_per_hour : s.prices.spot_per_hour) = Dollars(*v);
      }
    }
    pr.finish();
  }
  r.accept("region");
  s.prov = read_prov(r);
  return s;
}

std::optional<InterconnectSpec> read_interconnect(ObjectReader& r) {
  InterconnectSpec c;
  c.id = r.string("id", true).value_or("");
  auto kind = r.choice("kind", true, {"nvlink", "pcie", "infiniband", "ethernet", "efa", "xgmi"}).value_or("");
  static const std::map<std::string, LinkKind> kinds = {
      {"nvlink", LinkKind::nvlink},         {"pcie", LinkKind::pcie}, {"infiniband", LinkKind::infiniband},
      {"ethernet", LinkKind::ethernet},     {"efa", LinkKind::efa},   {"xgmi", LinkKind::xgmi}};
  if (kinds.count(kind)) c.kind = kinds.at(kind);
  c.intra_node = r.choice("scope", true, {"intra-node", "inter-node"}).value_or("") == "intra-node";
  c.bw_per_gpu = ByteRate::gbps(r.number("bw_GBps", true, 0.01, 1e5).value_or(0));
  c.ports_per_node = static_cast<int>(r.integer("ports_per_node", false, 1, 1024).value_or(1));
  c.hop_latency = Seconds::us(r.number("hop_latency_us", true, 0, 1e6).value_or(0));
  c.efficiency = r.number("efficiency", true, 0.01, 1.0).value_or(1.0);
  c.nvls_efficiency = r.number("nvls_efficiency", false, 0.0, 1.0).value_or(0.0);
  c.prov = read_prov(r);
  return c;
}

std::optional<StorageSpec> read_storage(ObjectReader& r) {
  StorageSpec s;
  s.id = r.string("id", true).value_or("");
  s.kind = r.choice("kind", true, {"local-nvme", "block", "nfs", "lustre", "object"}).value_or("");
  s.read_bw = ByteRate::gbps(r.number("read_GBps", true, 0.001, 1e5).value_or(0));
  s.write_bw = ByteRate::gbps(r.number("write_GBps", true, 0.001, 1e5).value_or(0));
  if (const json* l = r.object("latency_ms", true)) {
    ObjectReader lr(l, r.file(), r.path("latency_ms"), r.diags());
    // Up to 1000 s: beyond any storage system that still answers.
    s.latency.p50 = Seconds::ms(lr.number("p50", true, 0, 1e6).value_or(0));
    s.latency.p99 = Seconds::ms(lr.number("p99", true, 0, 1e6).value_or(0));
    lr.accept("p90");
    lr.finish();
  }
  s.shared = r.boolean("shared", false).value_or(false);
  if (r.has("aggregate_GBps") && !(*r.object_ptr())["aggregate_GBps"].is_null()) {
    s.aggregate_bw = ByteRate::gbps(r.number("aggregate_GBps", false, 0.001, 1e6).value_or(0));
  }
  r.accept("aggregate_GBps");
  if (r.has("aggregate_write_GBps") && !(*r.object_ptr())["aggregate_write_GBps"].is_null()) {
    s.aggregate_write_bw = ByteRate::gbps(r.number("aggregate_write_GBps", false, 0.001, 1e6).value_or(0));
  }
  r.accept("aggregate_write_GBps");
  r.accept("price_per_GB_month");
  s.prov = read_prov(r);
  return s;
}

std::optional<ImageSpec> read_image(ObjectReader& r) {
  ImageSpec im;
  im.id = r.string("id", true).value_or("");
  im.compressed = Bytes::gb(r.number("compressed_GB", true, 0.001, 1e4).value_or(0));
  im.unpacked = Bytes::gb(r.number("unpacked_GB", true, 0.001, 1e4).value_or(0));
  im.layers = static_cast<int>(r.integer("layers", false, 1, 10000).value_or(1));
  r.accept("name");
  r.accept("reference");
  im.prov = read_prov(r);
  return im;
}

std::optional<ModelSpec> read_model(ObjectReader& r) {
  ModelSpec m;
  m.id = r.string("id", true).value_or("");
  auto fam = r.choice("family", true, {"gpt", "cnn", "vit", "swin", "generic"}).value_or("generic");
  m.family = fam == "gpt" ? ModelFamily::gpt : fam == "cnn" ? ModelFamily::cnn
             : fam == "vit" ? ModelFamily::vit : fam == "swin" ? ModelFamily::swin : ModelFamily::generic;
  bool transformer = m.family == ModelFamily::gpt || m.family == ModelFamily::vit;
  m.dims.layers = static_cast<int>(r.integer("layers", m.family == ModelFamily::gpt, 1, 100000).value_or(0));
  m.dims.d_model = static_cast<int>(r.integer("d_model", m.family == ModelFamily::gpt, 1, 1 << 20).value_or(0));
  m.dims.heads = static_cast<int>(r.integer("heads", m.family == ModelFamily::gpt, 1, 1 << 16).value_or(0));
  m.dims.vocab = static_cast<int>(r.integer("vocab", false, 1, 1 << 24).value_or(transformer && m.family == ModelFamily::gpt ? 50304 : 0));
  m.dims.seq = static_cast<int>(r.integer("seq", false, 1, 1 << 24).value_or(1024));
  m.dims.d_ff = static_cast<int>(r.integer("d_ff", false, 1, 1 << 24).value_or(0));
  m.dims.tied_embeddings = r.boolean("tied_embeddings", false).value_or(true);
  // The bounds of a scenario's generic model (app/scenario.cpp): far beyond any real model (100 T parameters, 1e18
  // FLOP and 1 TB of activations a sample, 10 GB samples), short of values that overflow or never finish (a 1e15-byte
  // sample made a loader that never ended; 1e-300 parameters or FLOPs are no model).
  const bool sized = !transformer || m.family == ModelFamily::vit;
  m.params = r.number("params", sized, 1, 1e14).value_or(0);
  m.fwd_flops_per_sample = r.number("fwd_flops_per_sample", sized, 1, 1e18).value_or(0);
  m.activation_bytes_per_sample = Bytes(r.number("activation_bytes_per_sample", false, 1, 1e12).value_or(0));
  m.layers_hint = static_cast<int>(r.integer("layers_hint", false, 1, 100000).value_or(0));
  // [channels, height, width], as the models read it (another length was taken for "no shape", silently).
  if (const json* a = r.array("input_shape", false)) {
    if (a->size() != 3) {
      r.error(r.path("input_shape"), "must be [channels, height, width], three integers in [1, 100000], got " + brief(*a));
    } else {
      for (std::size_t i = 0; i < a->size(); ++i) {
        const json& v = (*a)[i];
        if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > 100000) {
          r.error(r.path("input_shape") + "/" + std::to_string(i), "must be an integer in [1, 100000], got " + brief(v));
        } else {
          m.input_shape.push_back(v.get<int>());
        }
      }
    }
  }
  m.sample_bytes = Bytes(r.number("sample_bytes", false, 1, 1e10).value_or(0));
  m.train_batch_tokens = r.number("train_batch_tokens", false, 1, 1e12).value_or(0);
  r.accept("name");
  m.dims.patch = static_cast<int>(r.integer("patch", false, 1, 4096).value_or(0));  // ViT patch size (0: 16)
  r.accept("image_hw");
  m.prov = read_prov(r);
  return m;
}

// Where each instance entry was read (file, JSON pointer), for cross-reference errors.
using Origins = std::map<std::string, std::pair<std::string, std::string>>;
// The ids of entries that were reported and left out, by kind ("gpus", ...). They are still known ids: an instance
// naming a GPU whose entry had a wrong field is not a second problem (it printed "unknown GPU id" under the real one
// for every instance of that GPU).
using Reported = std::map<std::string, std::set<std::string>>;

// An id is what scenarios, tables, CSV columns and SVG labels show: letters, digits and . _ - + /, at most 100.
// (An empty id printed a blank column, a newline split table rows, a BEL made the SVG unreadable.)
bool valid_id(const std::string& id) {
  if (id.empty() || id.size() > 100) return false;
  for (const char c : id)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '+' || c == '/'))
      return false;
  return true;
}

template <class Spec, class Reader>
void read_kind(const json& doc, const char* kind, const std::string& file, Diagnostics& diags,
               std::map<std::string, Spec>& into, Reader read, bool overriding, Reported& reported,
               Origins* origins = nullptr) {
  const std::string base = std::string("/") + kind;
  const json& list = doc[kind];
  if (!list.is_array()) {
    diags.add(file, base, "must be an array of entries");
    return;
  }
  std::set<std::string> seen;
  for (std::size_t i = 0; i < list.size(); ++i) {
    std::string ptr = base + "/" + std::to_string(i);
    std::size_t before = diags.size();
    ObjectReader r(&list[i], file, ptr, diags);
    if (!r.ok()) continue;
    auto spec = read(r);
    r.finish();
    if (!spec || diags.size() != before) {
      if (spec && valid_id(spec->id)) reported[kind].insert(spec->id);
      continue;
    }
    if (!valid_id(spec->id)) {
      diags.add(file, ptr + "/id",
                "expected an id of 1 to 100 letters, digits and . _ - + /, got " + brief(json(spec->id)));
      continue;
    }
    if (!seen.insert(spec->id).second) {
      diags.add(file, ptr + "/id", "duplicate id \"" + spec->id + "\" in this file");
      continue;
    }
    // Two files of the catalog folder defining one id: which one won depended on the file names' order.
    if (!overriding && into.count(spec->id)) {
      diags.add(file, ptr + "/id", "duplicate id \"" + spec->id +
                                       "\": another file of the catalog folder defines it (--catalog FILE overrides)");
      continue;
    }
    into[spec->id] = *spec;
    if (origins) (*origins)[spec->id] = {file, ptr};
  }
}

void load_file(const std::string& path, Catalog& cat, Diagnostics& diags, Origins& origins, Reported& reported,
               bool overriding) {
  auto doc = parse_json_file(path, diags);
  if (!doc) return;
  if (!doc->is_object()) {
    diags.add(path, "", "must be an object with catalog kinds as keys (gpus, instances, ...)");
    return;
  }
  static const std::vector<std::string> kinds = {"gpus", "instances", "interconnects", "storage", "images",
                                                 "models", "$schema", "description"};
  for (auto it = doc->begin(); it != doc->end(); ++it) {
    const std::string& k = it.key();
    if (k == "gpus") read_kind(*doc, "gpus", path, diags, cat.gpus, read_gpu, overriding, reported);
    else if (k == "instances") read_kind(*doc, "instances", path, diags, cat.instances, read_instance, overriding, reported, &origins);
    else if (k == "interconnects") read_kind(*doc, "interconnects", path, diags, cat.interconnects, read_interconnect, overriding, reported);
    else if (k == "storage") read_kind(*doc, "storage", path, diags, cat.storage, read_storage, overriding, reported);
    else if (k == "images") read_kind(*doc, "images", path, diags, cat.images, read_image, overriding, reported);
    else if (k == "models") read_kind(*doc, "models", path, diags, cat.models, read_model, overriding, reported);
    else if (k == "$schema" || k == "description") continue;
    else {
      auto near = nearest_name(k, kinds);
      diags.add(path, "/" + pointer_escape(k),
                "unknown catalog kind" + (near.empty() ? std::string() : " (did you mean \"" + near + "\"?)"));
    }
  }
}

void check_references(const Catalog& cat, const Origins& origins, const Reported& reported, Diagnostics& diags) {
  const auto was_reported = [&](const char* kind, const std::string& id) {
    const auto it = reported.find(kind);
    return it != reported.end() && it->second.count(id) > 0;
  };
  for (const auto& [id, inst] : cat.instances) {
    const auto& [file, ptr] = origins.at(id);
    if (!cat.gpus.count(inst.gpu) && !was_reported("gpus", inst.gpu))
      diags.add(file, ptr + "/gpu", "unknown GPU id " + brief(json(inst.gpu)) + unknown_id_hint(inst.gpu, cat.gpus, ""));
    for (const auto* ref : {&inst.network, &inst.intra_node}) {
      if (!ref->empty() && !cat.interconnects.count(*ref) && !was_reported("interconnects", *ref)) {
        diags.add(file, ptr + (ref == &inst.network ? "/network" : "/intra_node"),
                  "unknown interconnect id " + brief(json(*ref)) + unknown_id_hint(*ref, cat.interconnects, ""));
      }
    }
  }
}

}  // namespace

std::string default_catalog_dir() {
  if (const char* env = std::getenv("GPUPLAN_CATALOG_DIR"); env && *env) return env;
  if (fs::is_directory("catalogs") && fs::exists("catalogs/gpus.json")) return "catalogs";
  return std::string(GPUPLAN_SOURCE_DIR) + "/catalogs";
}

Catalog load_catalogs(const std::string& dir, const std::vector<std::string>& overrides, Diagnostics& diags) {
  Catalog cat;
  std::vector<std::string> files;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    diags.add(dir, "", fs::exists(dir, ec) ? "is a file, not a catalog folder (expected a folder such as catalogs/)"
                                            : "catalog folder not found");
    return cat;
  }
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  Origins origins;
  Reported reported;
  for (const auto& f : files) load_file(f, cat, diags, origins, reported, false);
  for (const auto& f : overrides) load_file(f, cat, diags, origins, reported, true);
  // A folder without one of the kinds (a mistyped --catalog-dir, a partial copy) is one line per missing kind,
  // not a line for every entry that refers to it.
  std::string missing, files_missing;
  for (const auto& [kind, empty] : {std::pair{"gpus", cat.gpus.empty()}, {"instances", cat.instances.empty()},
                                    {"interconnects", cat.interconnects.empty()}, {"storage", cat.storage.empty()},
                                    {"images", cat.images.empty()}, {"models", cat.models.empty()}}) {
    // A kind whose every entry was reported is there, with problems already named.
    if (!empty || reported.count(kind)) continue;
    missing += std::string(missing.empty() ? "" : ", ") + kind;
    files_missing += std::string(files_missing.empty() ? "" : ", ") + kind + ".json";
  }
  if (!missing.empty())
    diags.add(dir, "", "has no catalog of " + missing + " (expected " + files_missing + ", as in catalogs/)");
  else
    check_references(cat, origins, reported, diags);
  return cat;
}

std::optional<Catalog> load_catalogs_or_report(const CliContext& ctx) {
  Diagnostics diags;
  std::string dir = ctx.catalog_dir.empty() ? default_catalog_dir() : ctx.catalog_dir;
  Catalog cat = load_catalogs(dir, ctx.catalog_overrides, diags);
  if (!diags.empty()) {
    std::cerr << diags.render();
    return std::nullopt;
  }
  return cat;
}

std::vector<std::string> catalog_input_files(const CliContext& ctx) {
  std::vector<std::string> files = json_files_in(ctx.catalog_dir.empty() ? default_catalog_dir() : ctx.catalog_dir);
  files.insert(files.end(), ctx.catalog_overrides.begin(), ctx.catalog_overrides.end());
  return files;
}

}  // namespace gp::app
