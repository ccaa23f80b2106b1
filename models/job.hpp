// One concrete configuration of a training job, fully resolved (catalog references replaced by their
// entries). Built by app/scenario from a scenario file (one per point of a sweep); consumed by sim/ and
// the pricing models. Pure value types.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "models/hardware.hpp"
#include "models/units.hpp"
#include "models/workload.hpp"

namespace gp {

// The DataLoader of every rank (torch.utils.data.DataLoader semantics).
struct DataLoaderConfig {
  bool synthetic = true;            // inputs generated on the GPU: no host pipeline
  int num_workers = 0;              // 0: loading runs in the training process, serially with compute
  bool pin_memory = true;
  bool persistent_workers = true;
  int prefetch_factor = 2;          // batches prefetched per worker
  bool numa_binding = true;         // workers on the GPU's NUMA node
  Seconds sample_cpu;               // single-thread CPU time to produce one sample
  double sample_cpu_cv = 0.2;       // coefficient of variation of the per-sample CPU time
  Bytes sample_bytes;               // bytes of one sample as copied to the GPU
  Seconds worker_startup;           // start-up of one worker process (per epoch unless persistent)
};

enum class CollectiveAlgo { auto_select, ring, tree, hierarchical };

struct CommConfig {
  CollectiveAlgo algorithm = CollectiveAlgo::auto_select;
  Bytes bucket = Bytes::mib(25);    // DDP gradient bucket (bucket_cap_mb; PyTorch's MB = 2^20)
  bool overlap = true;              // all-reduce overlaps backward
};

struct ClusterConfig {
  GpuSpec gpu;
  std::optional<InstanceSpec> instance;   // when the cluster is given by instance type
  int gpus_per_node = 8;
  int nodes = 1;
  int cpu_cores_per_node = 0;             // logical CPUs (vCPUs) per node; 0 when unknown
  int numa_nodes = 0;                     // NUMA nodes of a host; 0: the instance's, else 2 (docs/scenario.md)
  InterconnectSpec intra_node;            // GPU-to-GPU inside a node
  std::optional<InterconnectSpec> network;  // between nodes (absent for one node)
  ByteRate node_network_bw;               // node's total NIC line rate
  double oversubscription = 1.0;          // fabric over-subscription (1 = non-blocking)
  int gpus_per_pcie_switch = 2;           // GPUs sharing one host PCIe switch
  // Measured on the host to plan for: its eager steps' time over gpuplan's (the median over a few launch-bound
  // steps); 0 = not measured. Scales the CPU's issue time; docs/scenario.md.
  double host_cpu_scale = 0;
  StorageSpec storage;                    // dataset and checkpoint storage
  [[nodiscard]] int total_gpus() const { return gpus_per_node * nodes; }
};

struct ContainerConfig {
  ImageSpec image;
  std::optional<double> cpus;             // --cpus limit per container (one container per node)
  std::optional<Bytes> memory;            // --memory limit
};

struct CheckpointConfig {
  bool enabled = false;
  std::optional<std::int64_t> every_steps;
  std::optional<Seconds> every;           // wall-clock interval
  bool async = false;                     // written in the background (only the device-to-host copy stalls)
  std::optional<StorageSpec> storage;     // defaults to the cluster storage
};

enum class PricingPlan { on_demand, reserved, spot, on_prem };

struct PricingConfig {
  PricingPlan plan = PricingPlan::on_demand;
  std::optional<Dollars> price_per_gpu_hour;  // explicit override
  // On-prem TCO inputs (used by later ROI work; parsed and validated now).
  std::optional<Dollars> capex_per_node;
  double depreciation_years = 5;
  double residual_fraction = 0.2;
  std::optional<Dollars> electricity_per_kwh;  // required for on-prem
  std::optional<double> pue;                   // required for on-prem
  Dollars staff_per_year;
};

struct ReliabilityConfig {
  double gpu_mtbf_hours = 0;              // 0: no failures modelled
  double node_mtbf_hours = 0;
  Seconds restart;                        // detection + restart + reload
  double spot_interruptions_per_day = 0;
};

struct RoiInputs {
  std::optional<Dollars> value_per_training_run;
  std::optional<double> runs_per_year;
  double discount_rate = 0.10;
  double horizon_years = 3;
  std::optional<double> deadline_hours;
};

struct RunLength {
  std::optional<std::int64_t> steps;      // optimizer steps
  std::optional<double> samples;          // dataset size in samples
  double epochs = 1;
  [[nodiscard]] std::int64_t total_steps(std::int64_t global_batch) const {
    if (steps) return *steps;
    // Whole steps, the last one partial; a margin of a few units in the last place for the division's rounding
    // (an absolute one, + 0.999999, added a step at 1e14 steps, where a double's spacing is 0.016).
    const double s = samples.value_or(0) * epochs / static_cast<double>(global_batch);
    return static_cast<std::int64_t>(std::ceil(s * (1.0 - 4 * std::numeric_limits<double>::epsilon())));
  }
};

struct JobConfig {
  std::string id;                         // configuration id within its run, e.g. "c0003"
  StepConfig step;                        // per-GPU micro-batch, accumulation, precision, ...
  ParallelConfig parallel;
  DataLoaderConfig loader;
  CommConfig comm;
  ClusterConfig cluster;
  ContainerConfig container;
  CheckpointConfig checkpoint;
  PricingConfig pricing;
  ReliabilityConfig reliability;
  RoiInputs roi;
  RunLength length;
  std::uint64_t seed = 1;
  [[nodiscard]] std::int64_t global_batch() const {
    return static_cast<std::int64_t>(step.micro_batch) * step.grad_accum * parallel.dp;
  }
};

}  // namespace gp
