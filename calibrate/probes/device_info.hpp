// What the probe records about the device and host software, and the context start-up probe.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gp::probe {

struct DeviceInfo {
  std::string name;
  std::string pci_bus_id;
  int sm_count = 0;
  double sm_clock_mhz = 0;   // peak SM clock reported by the runtime
  double mem_clock_mhz = 0;  // peak memory clock reported by the runtime
  int mem_bus_bits = 0;
  size_t memory_total_bytes = 0;
  size_t l2_bytes = 0;
  int cc_major = 0, cc_minor = 0;
  std::string driver;        // NVML driver version string when NVML is there, else the CUDA driver API version
  std::string cuda_runtime;  // e.g. "13.0"
  std::string cuda_driver_api;
  std::optional<double> power_limit_w;
};

// Reads the properties of device `dev` (creates the CUDA context). Throws ProbeError.
DeviceInfo read_device_info(int dev);

// NVML loaded at run time (libnvidia-ml.so.1); every query is optional because NVML may be missing.
class Nvml {
 public:
  Nvml();
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;
  bool ok() const { return dev_ != nullptr; }
  // Binds to the device with this PCI bus id ("0000:1B:00.0"); returns false when NVML cannot.
  bool bind(const std::string& pci_bus_id);
  // Binds to NVML's device 0 (before any CUDA context exists).
  bool bind_first();
  std::optional<std::string> driver_version() const;
  std::optional<double> sm_clock_mhz() const;       // current SM clock
  std::optional<double> used_memory_bytes() const;  // device memory in use, all processes
  std::optional<double> power_limit_w() const;

 private:
  void* lib_ = nullptr;
  void* dev_ = nullptr;
  bool inited_ = false;
};

// CUDA start-up, measured in fresh child processes of this executable (runs of `--startup-child`).
struct StartupFigures {
  std::vector<double> dlopen_libcuda_s, cuinit_s, primary_ctx_s;
  std::vector<double> ctx_nvml_bytes;  // NVML used memory after minus before the child's context (when NVML works)
  double create_s = 0;  // median over runs of dlopen + cuInit + primary context creation
};

// Runs `runs` children; throws ProbeError when a child fails.
StartupFigures run_startup_probe(int runs);

// Entry of `gpuplan-probe --startup-child`: prints "dlopen_s cuinit_s ctx_s nvml_ctx_bytes" (bytes -1 without
// NVML) and returns an exit code.
int startup_child_main();

}  // namespace gp::probe
