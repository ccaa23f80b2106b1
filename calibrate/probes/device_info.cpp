#include "device_info.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <memory>
#include <sstream>

#include "probe_util.hpp"

namespace gp::probe {
namespace {

std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

template <class F>
F sym(void* lib, const char* name) {
  return lib ? reinterpret_cast<F>(dlsym(lib, name)) : nullptr;
}

// NVML's memory record (nvml.h, nvmlMemory_t), declared here because the toolkit ships no nvml.h.
struct NvmlMemory {
  unsigned long long total, free, used;
};
constexpr int kNvmlClockSm = 1;

std::string self_exe() {
  std::array<char, 4096> buf{};
  const ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) throw ProbeError("cannot read /proc/self/exe to start the start-up probe's child");
  return std::string(buf.data(), static_cast<size_t>(n));
}

}  // namespace

DeviceInfo read_device_info(int dev) {
  DeviceInfo d;
  cudaDeviceProp p{};
  PROBE_CUDA(cudaGetDeviceProperties(&p, dev));
  d.name = p.name;
  d.sm_count = p.multiProcessorCount;
  d.memory_total_bytes = p.totalGlobalMem;
  d.l2_bytes = static_cast<size_t>(p.l2CacheSize);
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.mem_bus_bits = p.memoryBusWidth;
  int khz = 0;
  PROBE_CUDA(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev));
  d.sm_clock_mhz = khz / 1000.0;
  PROBE_CUDA(cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, dev));
  d.mem_clock_mhz = khz / 1000.0;
  std::array<char, 64> bus{};
  PROBE_CUDA(cudaDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), dev));
  d.pci_bus_id = bus.data();
  int v = 0;
  PROBE_CUDA(cudaRuntimeGetVersion(&v));
  d.cuda_runtime = version_string(v);
  PROBE_CUDA(cudaDriverGetVersion(&v));
  d.cuda_driver_api = version_string(v);
  d.driver = d.cuda_driver_api;
  return d;
}

Nvml::Nvml() {
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  auto init = sym<int (*)()>(lib_, "nvmlInit_v2");
  inited_ = init && init() == 0;
}

Nvml::~Nvml() {
  if (inited_) {
    if (auto f = sym<int (*)()>(lib_, "nvmlShutdown")) f();
  }
  if (lib_) dlclose(lib_);
}

bool Nvml::bind(const std::string& pci_bus_id) {
  auto f = sym<int (*)(const char*, void**)>(lib_, "nvmlDeviceGetHandleByPciBusId_v2");
  if (!inited_ || !f || f(pci_bus_id.c_str(), &dev_) != 0) dev_ = nullptr;
  return ok();
}

bool Nvml::bind_first() {
  auto f = sym<int (*)(unsigned, void**)>(lib_, "nvmlDeviceGetHandleByIndex_v2");
  if (!inited_ || !f || f(0, &dev_) != 0) dev_ = nullptr;
  return ok();
}

std::optional<std::string> Nvml::driver_version() const {
  auto f = sym<int (*)(char*, unsigned)>(lib_, "nvmlSystemGetDriverVersion");
  std::array<char, 96> buf{};
  if (!inited_ || !f || f(buf.data(), static_cast<unsigned>(buf.size())) != 0) return std::nullopt;
  return std::string(buf.data());
}

std::optional<double> Nvml::sm_clock_mhz() const {
  auto f = sym<int (*)(void*, int, unsigned*)>(lib_, "nvmlDeviceGetClockInfo");
  unsigned mhz = 0;
  if (!ok() || !f || f(dev_, kNvmlClockSm, &mhz) != 0) return std::nullopt;
  return mhz;
}

std::optional<double> Nvml::used_memory_bytes() const {
  auto f = sym<int (*)(void*, NvmlMemory*)>(lib_, "nvmlDeviceGetMemoryInfo");
  NvmlMemory m{};
  if (!ok() || !f || f(dev_, &m) != 0) return std::nullopt;
  return static_cast<double>(m.used);
}

std::optional<double> Nvml::power_limit_w() const {
  auto f = sym<int (*)(void*, unsigned*)>(lib_, "nvmlDeviceGetPowerManagementLimit");
  unsigned mw = 0;
  if (!ok() || !f || f(dev_, &mw) != 0) return std::nullopt;
  return mw / 1000.0;
}

int startup_child_main() {
  const double t0 = wall_s();
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  const double t1 = wall_s();
  if (!lib) {
    std::fprintf(stderr, "startup child: dlopen(libcuda.so.1) failed: %s\n", dlerror());
    return 1;
  }
  auto cu_init = sym<int (*)(unsigned)>(lib, "cuInit");
  auto dev_get = sym<int (*)(int*, int)>(lib, "cuDeviceGet");
  auto retain = sym<int (*)(void**, int)>(lib, "cuDevicePrimaryCtxRetain");
  auto release = sym<int (*)(int)>(lib, "cuDevicePrimaryCtxRelease_v2");
  auto bus_id = sym<int (*)(char*, int, int)>(lib, "cuDeviceGetPCIBusId");
  if (!cu_init || !dev_get || !retain) {
    std::fprintf(stderr, "startup child: libcuda lacks cuInit/cuDeviceGet/cuDevicePrimaryCtxRetain\n");
    return 1;
  }
  int rc = cu_init(0);
  const double t2 = wall_s();
  int dev = 0;
  if (rc == 0) rc = dev_get(&dev, 0);
  // NVML's view of device memory in use just before and after this context (device 0 of this process).
  Nvml nvml;
  std::array<char, 64> bus{};
  if (rc == 0 && bus_id && bus_id(bus.data(), static_cast<int>(bus.size()), dev) == 0) nvml.bind(bus.data());
  const auto used0 = nvml.used_memory_bytes();
  const double t_ctx = wall_s();
  void* ctx = nullptr;
  if (rc == 0) rc = retain(&ctx, dev);
  const double t3 = wall_s();
  const auto used1 = nvml.used_memory_bytes();
  if (rc != 0) {
    std::fprintf(stderr, "startup child: CUDA driver call failed with CUresult %d\n", rc);
    return 1;
  }
  if (release) release(dev);
  const double ctx_bytes = used0 && used1 ? *used1 - *used0 : -1;
  std::printf("%.6f %.6f %.6f %.0f\n", t1 - t0, t2 - t1, t3 - t_ctx, ctx_bytes);
  return 0;
}

StartupFigures run_startup_probe(int runs) {
  StartupFigures f;
  std::string cmd(1, '\'');  // built by appends: g++ 12 warns (-Wrestrict) on "'" + std::string
  cmd += self_exe();
  cmd += "' --startup-child";
  std::vector<double> total;
  for (int i = 0; i < runs; ++i) {
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
    if (!pipe) throw ProbeError("popen failed for the start-up child");
    double a = 0, b = 0, c = 0, mem = -1;
    const int got = std::fscanf(pipe.get(), "%lf %lf %lf %lf", &a, &b, &c, &mem);
    const int status = pclose(pipe.release());
    if (got != 4 || status != 0) throw ProbeError("start-up child failed (see its message above)");
    if (mem >= 0) f.ctx_nvml_bytes.push_back(mem);
    f.dlopen_libcuda_s.push_back(a);
    f.cuinit_s.push_back(b);
    f.primary_ctx_s.push_back(c);
    total.push_back(a + b + c);
  }
  f.create_s = median(total);
  return f;
}

}  // namespace gp::probe
