// gpuplan-probe: measures one GPU (GEMM throughput per dtype and shape, memory and L2 bandwidth, host link,
// launch latency, context start-up) and optionally NCCL collectives across the host's GPUs, and writes a profile
// JSON ("gpuplan-profile/1") that calibrate/ reads. Exit codes: 0 done, 1 a CUDA/cuBLAS/NCCL failure or no GPU,
// 2 bad command line, 3 a numerical self-check failed (the file is still written).
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "bandwidth_probes.hpp"
#include "device_info.hpp"
#include "gemm_probe.hpp"
#include "nccl_probe.hpp"
#include "probe_util.hpp"

namespace gp::probe {
namespace {

using nlohmann::json;

struct Options {
  std::string out, nccl_out, gpu_id = "unknown", command;
  int device = 0;
  bool quick = false, nccl = false, nccl_only = false, verbose = false, help = false;
  bool gemm_only = false, gemm_rotate = true;
  size_t gemm_gap_ms = 0;
  std::string gemm_tags;  // comma-separated substrings of shape tags to keep; empty keeps all
  size_t nccl_min = 8, nccl_max = size_t(4) << 30, hbm_bytes = size_t(2) << 30, host_bytes = size_t(1) << 30;
};

const char* kUsage =
    "usage: gpuplan-probe --out FILE [--gpu-id ID] [--device N] [--quick] [--verbose]\n"
    "                     [--nccl] [--nccl-only] [--nccl-out FILE] [--nccl-min-bytes B] [--nccl-max-bytes B]\n"
    "                     [--hbm-bytes B] [--host-bytes B] [--gemm-only] [--gemm-tags T1,T2] [--gemm-no-rotate]\n"
    "                     [--gemm-gap-ms MS]\n"
    "  --out FILE        profile JSON to write (gpuplan-profile/1)\n"
    "  --gpu-id ID       catalog id of the GPU type (e.g. h200-sxm), stored as gpu_id\n"
    "  --quick           a few GEMM shapes only (smoke test)\n"
    "  --nccl            also measure NCCL collectives over all visible GPUs (section \"nccl\")\n"
    "  --nccl-only       only the NCCL probe; with --nccl-out FILE the section goes to that file\n"
    "  --gemm-only       only the GEMM probe (diagnostics)\n"
    "  --gemm-tags T,..  keep GEMM shapes whose tag contains one of these (square, ref-micro, gpt-d768, ...)\n"
    "  --gemm-no-rotate  reuse one operand set per shape (L2-warm inputs, as a torch.matmul loop sees them)\n"
    "  --gemm-gap-ms MS  idle MS before each GEMM shape, so that clocks are not held down by the power limit\n";

std::optional<size_t> parse_size(const std::string& s) {
  try {
    size_t pos = 0;
    const unsigned long long v = std::stoull(s, &pos);
    if (pos != s.size() || v == 0) return std::nullopt;
    return static_cast<size_t>(v);
  } catch (...) {
    return std::nullopt;
  }
}

// Returns an error message, or "" when the command line is valid.
std::string parse(int argc, char** argv, Options& o) {
  for (int i = 0; i < argc; ++i) {
    if (i) o.command += ' ';
    o.command += argv[i];
  }
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string& dst) {
      if (i + 1 >= argc) return false;
      dst = argv[++i];
      return true;
    };
    auto size_value = [&](size_t& dst) {
      std::string v;
      if (!value(v)) return false;
      auto p = parse_size(v);
      if (p) dst = *p;
      return p.has_value();
    };
    std::string dev;
    bool ok = true;
    if (a == "--out") ok = value(o.out);
    else if (a == "--nccl-out") ok = value(o.nccl_out);
    else if (a == "--gpu-id") ok = value(o.gpu_id);
    else if (a == "--device") {
      ok = value(dev);
      auto p = ok ? parse_size(dev + "1") : std::nullopt;  // accepts 0
      ok = ok && p && dev.find_first_not_of("0123456789") == std::string::npos;
      if (ok) o.device = std::stoi(dev);
    } else if (a == "--quick") o.quick = true;
    else if (a == "--gemm-only") o.gemm_only = true;
    else if (a == "--gemm-no-rotate") o.gemm_rotate = false;
    else if (a == "--gemm-tags") ok = value(o.gemm_tags);
    else if (a == "--gemm-gap-ms") ok = size_value(o.gemm_gap_ms);
    else if (a == "--verbose" || a == "-v") o.verbose = true;
    else if (a == "--nccl") o.nccl = true;
    else if (a == "--nccl-only") o.nccl = o.nccl_only = true;
    else if (a == "--nccl-min-bytes") ok = size_value(o.nccl_min);
    else if (a == "--nccl-max-bytes") ok = size_value(o.nccl_max);
    else if (a == "--hbm-bytes") ok = size_value(o.hbm_bytes);
    else if (a == "--host-bytes") ok = size_value(o.host_bytes);
    else if (a == "--help" || a == "-h") o.help = true;
    else return "unknown option '" + a + "'";
    if (!ok) return "option " + a + " needs a valid value";
  }
  if (o.help) return "";
  if (o.out.empty() && !(o.nccl_only && !o.nccl_out.empty())) return "--out FILE is required";
  if (o.nccl_min > o.nccl_max) return "--nccl-min-bytes must not exceed --nccl-max-bytes";
  if (o.hbm_bytes % 16 || o.host_bytes % 16) return "--hbm-bytes and --host-bytes must be multiples of 16";
  return "";
}

double round_to(double v, int digits) {
  const double f = std::pow(10.0, digits);
  return std::round(v * f) / f;
}

// Rounds to `sig` significant digits (timings keep their precision at any magnitude).
double sig(double v, int s) {
  if (v == 0 || !std::isfinite(v)) return v;
  const int d = s - 1 - static_cast<int>(std::floor(std::log10(std::fabs(v))));
  return round_to(v, d);
}

std::string today_utc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

json to_json(const NcclFigures& f) {
  json j{{"gpus", f.gpus}, {"nccl_version", f.nccl_version}, {"env", {{"NCCL_NVLS_ENABLE", "0"}}},
         {"method", "one process, ncclCommInitAll over all visible GPUs; float32 sum; mean of 20 (5 above 64 MiB) "
                    "iterations after warm-up, host clock with all streams synchronized, as nccl-tests"},
         {"checks", f.checks}, {"check_failures", f.check_failures}};
  json ops = json::object();
  for (const auto& [name, rows] : f.ops) {
    json arr = json::array();
    for (const auto& r : rows)
      arr.push_back({{"bytes", r.bytes}, {"time_us", sig(r.time_us, 5)}, {"algbw_GBps", sig(r.algbw_GBps, 5)},
                     {"busbw_GBps", sig(r.busbw_GBps, 5)}});
    ops[name] = arr;
  }
  j["ops"] = ops;
  return j;
}

void write_json(const std::string& path, const json& j) {
  std::ofstream f(path);
  f << j.dump(1) << "\n";
  if (!f) throw ProbeError("cannot write " + path);
}

// Creates the context on o.device and fills the "device" and "context" memory figures.
json device_and_context(const Options& o, Nvml& nvml, DeviceInfo& info, json& context) {
  const double t0 = wall_s();
  PROBE_CUDA(cudaSetDevice(o.device));  // CUDA 12+ creates the primary context here
  PROBE_CUDA(cudaFree(nullptr));
  context["runtime_context_s"] = sig(wall_s() - t0, 4);
  size_t free_b = 0, total_b = 0;
  PROBE_CUDA(cudaMemGetInfo(&free_b, &total_b));
  context["memory_bytes"] = total_b - free_b;
  context["memory_method"] = "cudaMemGetInfo total - free right after this process created its context";
  char bus[64] = {};
  PROBE_CUDA(cudaDeviceGetPCIBusId(bus, sizeof bus, o.device));
  nvml.bind(bus);
  info = read_device_info(o.device);
  if (auto d = nvml.driver_version()) info.driver = *d;
  info.power_limit_w = nvml.power_limit_w();
  json dev{{"name", info.name},
           {"sm_count", info.sm_count},
           {"sm_clock_mhz", info.sm_clock_mhz},
           {"mem_clock_mhz", info.mem_clock_mhz},
           {"mem_bus_bits", info.mem_bus_bits},
           {"driver", info.driver},
           {"cuda_runtime", info.cuda_runtime},
           {"cuda_driver_api", info.cuda_driver_api},
           {"memory_total_bytes", info.memory_total_bytes},
           {"l2_bytes", info.l2_bytes},
           {"cc", std::to_string(info.cc_major) + "." + std::to_string(info.cc_minor)},
           {"pci_bus_id", info.pci_bus_id}};
  if (info.power_limit_w) dev["power_limit_w"] = *info.power_limit_w;
  return dev;
}

bool tag_selected(const std::string& tag, const std::string& wanted) {
  if (wanted.empty()) return true;
  size_t start = 0;
  while (start <= wanted.size()) {
    const size_t end = std::min(wanted.find(',', start), wanted.size());
    const std::string w = wanted.substr(start, end - start);
    if (!w.empty() && tag.find(w) != std::string::npos) return true;
    start = end + 1;
  }
  return false;
}

json gemm_section(const Options& o, const DeviceInfo& info, Nvml& nvml, json& checks, bool& checks_ok) {
  const bool fp8 = info.cc_major * 10 + info.cc_minor >= 89;
  std::vector<GemmDtype> dts = {GemmDtype::bf16, GemmDtype::fp16, GemmDtype::tf32, GemmDtype::fp32};
  if (fp8) dts.push_back(GemmDtype::fp8);
  for (const auto& c : check_gemms(dts)) {
    checks[std::string("gemm_") + dtype_name(c.dtype) + "_rel_err"] = sig(c.rel_err, 3);
    if (!c.ok()) {
      checks_ok = false;
      std::fprintf(stderr, "gpuplan-probe: GEMM self-check failed for %s: relative error %.3g > %.3g\n",
                   dtype_name(c.dtype), c.rel_err, c.limit);
    }
  }
  std::vector<GemmShape> grid;
  for (auto& g : gemm_grid(o.quick, fp8))
    if (tag_selected(g.tag, o.gemm_tags)) grid.push_back(g);
  GemmOptions go;
  go.l2_bytes = info.l2_bytes;
  go.rotate = o.gemm_rotate;
  go.verbose = o.verbose;
  go.gap_ms = static_cast<int>(o.gemm_gap_ms);
  checks["gemm_gap_ms"] = o.gemm_gap_ms;
  go.sm_clock_mhz = [&nvml] { return nvml.sm_clock_mhz().value_or(-1.0); };
  checks["gemm_operand_rotation"] = o.gemm_rotate;
  const auto results = run_gemm_probe(grid, go);
  if (auto mhz = nvml.sm_clock_mhz()) checks["sm_clock_after_gemm_mhz"] = *mhz;
  json arr = json::array();
  for (const auto& r : results)
    arr.push_back({{"dtype", dtype_name(r.shape.dtype)}, {"m", r.shape.m}, {"n", r.shape.n}, {"k", r.shape.k},
                   {"tflops", round_to(r.tflops, 1)}, {"ms", sig(r.ms, 5)}, {"ms_single", sig(r.ms_single, 5)},
                   {"op", r.op}, {"tag", r.shape.tag}, {"sm_clock_mhz", r.sm_clock_mhz}});
  return arr;
}

int run(const Options& o) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    std::fprintf(stderr, "gpuplan-probe: no usable CUDA device (%s)\n",
                 e != cudaSuccess ? cudaGetErrorString(e) : "device count is 0");
    return 1;
  }
  if (o.device >= count) {
    std::fprintf(stderr, "gpuplan-probe: --device %d but only %d device(s)\n", o.device, count);
    return 2;
  }
  bool checks_ok = true;
  if (o.nccl_only) {
    const NcclFigures nf = run_nccl_probe(o.nccl_min, o.nccl_max, o.verbose);
    json j{{"schema", "gpuplan-nccl/1"}, {"gpu_id", o.gpu_id}, {"measured_on", today_utc()}, {"command", o.command}};
    j["nccl"] = to_json(nf);
    write_json(o.nccl_out.empty() ? o.out : o.nccl_out, j);
    return nf.check_failures.empty() ? 0 : 3;
  }
  json context = json::object();
  const StartupFigures sf = run_startup_probe(3);  // fresh processes, before this one holds a context
  Nvml nvml;
  DeviceInfo info;
  json j{{"schema", "gpuplan-profile/1"}, {"derived", false}, {"gpu_id", o.gpu_id}};
  j["device"] = device_and_context(o, nvml, info, context);
  j["measured_on"] = today_utc();
  j["command"] = o.command;
  json checks = json::object();
  if (o.verbose) std::fprintf(stderr, "device: %s, %d SMs, L2 %zu B\n", info.name.c_str(), info.sm_count, info.l2_bytes);
  j["gemm"] = gemm_section(o, info, nvml, checks, checks_ok);
  if (o.gemm_only) {
    j["checks"] = checks;
    j["context"] = context;
    write_json(o.out, j);
    return checks_ok ? 0 : 3;
  }
  const MemoryFigures mf = run_memory_probe(info.sm_count, info.l2_bytes, o.hbm_bytes);
  j["memory"] = {{"hbm_copy_GBps", round_to(std::max(mf.hbm_memcpy_GBps, mf.hbm_copy_kernel_GBps), 1)},
                 {"hbm_memcpy_d2d_GBps", round_to(mf.hbm_memcpy_GBps, 1)},
                 {"hbm_copy_kernel_GBps", round_to(mf.hbm_copy_kernel_GBps, 1)},
                 {"hbm_read_GBps", round_to(mf.hbm_read_GBps, 1)},
                 {"hbm_write_GBps", round_to(mf.hbm_write_GBps, 1)},
                 {"l2_GBps", round_to(mf.l2_GBps, 1)},
                 {"hbm_bytes", mf.hbm_bytes},
                 {"l2_working_set_bytes", mf.l2_working_set_bytes},
                 {"note", "copy figures count bytes read plus bytes written; hbm_copy_GBps is the better of "
                          "cudaMemcpy and the copy kernel"}};
  const HostLinkFigures hf = run_host_link_probe(o.host_bytes);
  j["host_link"] = {{"h2d_pinned_GBps", round_to(hf.h2d_pinned_GBps, 2)},
                    {"d2h_pinned_GBps", round_to(hf.d2h_pinned_GBps, 2)},
                    {"h2d_pageable_GBps", round_to(hf.h2d_pageable_GBps, 2)},
                    {"d2h_pageable_GBps", round_to(hf.d2h_pageable_GBps, 2)},
                    {"bytes", hf.bytes}};
  const LaunchFigures lf = run_launch_probe();
  j["launch"] = {{"eager_us", sig(lf.eager_us, 4)}, {"eager_gpu_us", sig(lf.eager_gpu_us, 4)},
                 {"graph_us", sig(lf.graph_us, 4)}, {"kernels", lf.kernels}};
  context["create_s"] = sig(sf.create_s, 4);
  auto rounded = [](const std::vector<double>& v) {
    json a = json::array();
    for (double x : v) a.push_back(sig(x, 4));
    return a;
  };
  context["dlopen_libcuda_s"] = rounded(sf.dlopen_libcuda_s);
  context["cuInit_s"] = rounded(sf.cuinit_s);
  context["primary_ctx_s"] = rounded(sf.primary_ctx_s);
  if (!sf.ctx_nvml_bytes.empty()) {
    context["memory_bytes_nvml"] = median(sf.ctx_nvml_bytes);
    context["memory_nvml_method"] = "NVML used memory after minus before a fresh process's primary context";
  }
  j["context"] = context;
  j["checks"] = checks;
  if (o.nccl) {
    const NcclFigures nf = run_nccl_probe(o.nccl_min, o.nccl_max, o.verbose);
    checks_ok = checks_ok && nf.check_failures.empty();
    if (o.nccl_out.empty()) {
      j["nccl"] = to_json(nf);
    } else {
      json n{{"schema", "gpuplan-nccl/1"}, {"gpu_id", o.gpu_id}, {"measured_on", today_utc()}, {"command", o.command}};
      n["nccl"] = to_json(nf);
      write_json(o.nccl_out, n);
    }
  }
  write_json(o.out, j);
  return checks_ok ? 0 : 3;
}

}  // namespace
}  // namespace gp::probe

int main(int argc, char** argv) {
  using namespace gp::probe;
  if (argc == 2 && std::string(argv[1]) == "--startup-child") return startup_child_main();
  Options o;
  const std::string err = parse(argc, argv, o);
  if (o.help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (!err.empty()) {
    std::fprintf(stderr, "gpuplan-probe: %s\n%s", err.c_str(), kUsage);
    return 2;
  }
  try {
    return run(o);
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "gpuplan-probe: %s\n", ex.what());
    return 1;
  }
}
