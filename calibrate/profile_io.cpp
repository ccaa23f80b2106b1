#include "calibrate/profile_io.hpp"

#include <fstream>
#include <sstream>

#include "calibrate/json_fields.hpp"

namespace gp::calibrate {
namespace {

// Ranges far beyond any GPU there is (the catalog's, app/catalog_io.cpp), short of values that never finish or
// overflow: a launch of 1e15 us or a host link of 1e-300 GB/s made `calibrate check` hang; a GEMM of 1e308 TFLOP/s,
// an HBM copy of 1e-300 GB/s or a context of 1e308 bytes printed overflowed tables.
constexpr double kMaxGemmDim = 1e7;

std::optional<Dtype> parse_dtype(const std::string& s) {
  if (s == "bf16") return Dtype::bf16;
  if (s == "fp16") return Dtype::fp16;
  if (s == "tf32") return Dtype::tf32;
  if (s == "fp32") return Dtype::fp32;
  if (s == "fp8") return Dtype::fp8;
  return std::nullopt;
}

void parse_gemm(const nlohmann::json& doc, const std::string& file, GpuProfile& p, std::vector<std::string>& errors) {
  if (!doc.contains("gemm") || !doc["gemm"].is_array() || doc["gemm"].empty()) {
    errors.push_back(file + ":/gemm: expected a non-empty array of GEMM samples");
    return;
  }
  const auto& arr = doc["gemm"];
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string base = "/gemm/" + std::to_string(i);
    if (!arr[i].is_object()) {
      errors.push_back(file + ":" + base + ": expected an object");
      continue;
    }
    FieldReader r(arr[i], file, base, errors);
    GemmSample g;
    auto dt = r.string("dtype", true);
    if (dt) {
      auto d = parse_dtype(*dt);
      if (!d) r.error("dtype", "expected one of bf16, fp16, tf32, fp32, fp8, got \"" + *dt + "\"");
      else g.dtype = *d;
    }
    auto m = r.integer("m", true, 1, kMaxGemmDim), n = r.integer("n", true, 1, kMaxGemmDim),
         k = r.integer("k", true, 1, kMaxGemmDim);
    // 1 GFLOP/s to 100 PFLOP/s: the catalog's peak_tflops range is [0.1, 1e5]; small GEMMs run far below peak.
    auto tf = r.number_in("tflops", true, 0.001, 1e5);
    if (!dt || !m || !n || !k || !tf || !parse_dtype(*dt)) continue;
    g.m = static_cast<long>(*m);
    g.n = static_cast<long>(*n);
    g.k = static_cast<long>(*k);
    g.rate = FlopRate::tflops(*tf);
    p.gemm.push_back(g);
  }
}

}  // namespace

std::optional<GpuProfile> parse_profile(const nlohmann::json& doc, const std::string& file,
                                        std::vector<std::string>& errors) {
  const std::size_t before = errors.size();
  if (!doc.is_object()) {
    errors.push_back(file + ":: expected a JSON object (a gpuplan-profile/1 document)");
    return std::nullopt;
  }
  FieldReader top(doc, file, "", errors);
  GpuProfile p;
  if (auto s = top.string("schema", true); s && *s != "gpuplan-profile/1")
    top.error("schema", "expected \"gpuplan-profile/1\", got \"" + *s + "\"");
  p.gpu_id = top.string("gpu_id", true).value_or("");
  p.derived = top.boolean("derived", false).value_or(false);
  p.derived_from = top.string("derived_from", false).value_or("");
  p.measured_on = top.string("measured_on", false).value_or("");
  p.command = top.string("command", false).value_or("");
  if (auto dev = top.object("device", true)) {
    p.device_name = dev->string("name", false).value_or("");
    p.sm_count = static_cast<int>(dev->integer("sm_count", true, 1, 100000).value_or(0));
    p.sm_clock_mhz = dev->number_in("sm_clock_mhz", false, 0, 1e5).value_or(0);
    p.mem_clock_mhz = dev->number_in("mem_clock_mhz", false, 0, 1e5).value_or(0);
    p.driver = dev->string("driver", false).value_or("");
    p.cuda_runtime = dev->string("cuda_runtime", false).value_or("");
    // 1 MB to 1 PB (the catalog's hbm_GiB is at most 1e5 GiB, 1.07e14 bytes).
    p.memory_total = Bytes(dev->number_in("memory_total_bytes", true, 1e6, 1e15).value_or(0));
    p.l2 = Bytes(dev->number_in("l2_bytes", false, 0, 1e12).value_or(0));
    if (dev->has("cc")) {
      const auto& cc = dev->json()["cc"];
      p.cc = cc.is_string() ? cc.get<std::string>() : cc.dump();
    }
  }
  parse_gemm(doc, file, p, errors);
  if (auto mem = top.object("memory", true)) {
    // As the catalog's hbm_bw_GBps: [10, 1e6].
    p.hbm_copy_bw = ByteRate::gbps(mem->number_in("hbm_copy_GBps", true, 10, 1e6).value_or(0));
    p.hbm_read_bw = ByteRate::gbps(mem->zero_or_in("hbm_read_GBps", false, 10, 1e6, "not measured").value_or(0));
    p.hbm_write_bw = ByteRate::gbps(mem->zero_or_in("hbm_write_GBps", false, 10, 1e6, "not measured").value_or(0));
    p.l2_bw = ByteRate::gbps(mem->zero_or_in("l2_GBps", false, 10, 1e7, "not measured").value_or(0));
  }
  if (auto h = top.object("host_link", false)) {
    // 0: not measured (a default rate is used); else 0.01 GB/s (a slow USB link) to 1e5 GB/s.
    p.h2d_pinned = ByteRate::gbps(h->zero_or_in("h2d_pinned_GBps", false, 0.01, 1e5, "not measured").value_or(0));
    p.d2h_pinned = ByteRate::gbps(h->zero_or_in("d2h_pinned_GBps", false, 0.01, 1e5, "not measured").value_or(0));
    p.h2d_pageable = ByteRate::gbps(h->zero_or_in("h2d_pageable_GBps", false, 0.01, 1e5, "not measured").value_or(0));
    p.d2h_pageable = ByteRate::gbps(h->zero_or_in("d2h_pageable_GBps", false, 0.01, 1e5, "not measured").value_or(0));
  }
  if (auto l = top.object("launch", true)) {
    // 10 ns to 0.1 s per kernel launch (measured: 4 us eager, 0.7 us from a graph).
    p.launch_eager = Seconds::us(l->number_in("eager_us", true, 0.01, 1e5).value_or(0));
    p.launch_graph = Seconds::us(l->number_in("graph_us", true, 0.01, 1e5).value_or(0));
  }
  if (auto c = top.object("context", false)) {
    // 0: unknown. Up to an hour to create a context, up to 1 TB for it (measured: 0.13 s, 0.55 GB).
    p.context_create = Seconds(c->number_in("create_s", false, 0, 3600).value_or(0));
    p.context_memory = Bytes(c->number_in("memory_bytes", false, 0, 1e12).value_or(0));
  }
  if (errors.size() != before) return std::nullopt;
  return p;
}

std::optional<GpuProfile> load_profile(const std::string& path, std::vector<std::string>& errors) {
  auto doc = read_json_file(path, "profile", errors);
  if (!doc) return std::nullopt;
  return parse_profile(*doc, path, errors);
}

nlohmann::json profile_to_json(const GpuProfile& p) {
  nlohmann::json j;
  j["schema"] = "gpuplan-profile/1";
  j["derived"] = p.derived;
  if (p.derived) j["derived_from"] = p.derived_from;
  j["gpu_id"] = p.gpu_id;
  j["device"] = {{"name", p.device_name},
                 {"sm_count", p.sm_count},
                 {"sm_clock_mhz", p.sm_clock_mhz},
                 {"mem_clock_mhz", p.mem_clock_mhz},
                 {"driver", p.driver},
                 {"cuda_runtime", p.cuda_runtime},
                 {"memory_total_bytes", p.memory_total.value()},
                 {"l2_bytes", p.l2.value()},
                 {"cc", p.cc}};
  j["measured_on"] = p.measured_on;
  j["command"] = p.command;
  auto& g = j["gemm"] = nlohmann::json::array();
  for (const auto& s : p.gemm)
    g.push_back({{"dtype", to_string(s.dtype)},
                 {"m", s.m},
                 {"n", s.n},
                 {"k", s.k},
                 {"tflops", s.rate.tflops()},
                 {"ms", 2.0 * s.m * s.n * s.k / s.rate.value() * 1e3}});
  j["memory"] = {{"hbm_copy_GBps", p.hbm_copy_bw.gbps()},
                 {"hbm_read_GBps", p.hbm_read_bw.gbps()},
                 {"hbm_write_GBps", p.hbm_write_bw.gbps()},
                 {"l2_GBps", p.l2_bw.gbps()}};
  j["host_link"] = {{"h2d_pinned_GBps", p.h2d_pinned.gbps()},
                    {"d2h_pinned_GBps", p.d2h_pinned.gbps()},
                    {"h2d_pageable_GBps", p.h2d_pageable.gbps()},
                    {"d2h_pageable_GBps", p.d2h_pageable.gbps()}};
  j["launch"] = {{"eager_us", p.launch_eager.us()}, {"graph_us", p.launch_graph.us()}};
  j["context"] = {{"create_s", p.context_create.value()}, {"memory_bytes", p.context_memory.value()}};
  return j;
}

}  // namespace gp::calibrate
