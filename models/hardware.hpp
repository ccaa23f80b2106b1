// Catalog value types: GPUs, instances, interconnects, storage, container images, models.
// Every entry carries `source` and `as_of` (where the figure came from and when).
// Parsed from catalogs/*.json by app/catalog_io; these structs hold no I/O.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/units.hpp"

namespace gp {

// Numeric formats a GPU computes in. tf32 = fp32 tensors on tensor cores with TF32 matmuls.
enum class Dtype { fp32, tf32, bf16, fp16, fp8 };

struct Provenance {
  std::string source;  // URL or document the figures came from
  std::string as_of;   // date of the figure, "YYYY-MM" or "YYYY-MM-DD"
};

struct GpuSpec {
  std::string id;        // catalog id, e.g. "h200-sxm"
  std::string name;      // marketing name
  std::string vendor;    // "nvidia", "amd"
  std::map<Dtype, FlopRate> peak_dense;  // datasheet dense peak per dtype (absent: unsupported)
  Bytes hbm;             // device memory (decimal GB as sold)
  ByteRate hbm_bw;       // datasheet device-memory bandwidth
  int sm_count = 0;      // streaming multiprocessors / compute units
  ByteRate nvlink_bw;    // total NVLink bandwidth per GPU, both directions; 0 when none
  int pcie_gen = 0;
  ByteRate pcie_bw;      // PCIe bandwidth per direction, theoretical
  Watts tdp;
  Watts idle;
  Provenance prov;
};

struct InstancePrices {
  Dollars on_demand_per_hour;
  std::optional<Dollars> reserved_per_hour;
  std::optional<Dollars> spot_per_hour;
};

struct InstanceSpec {
  std::string id;          // e.g. "aws-p5en.48xlarge"
  std::string provider;    // aws, gcp, azure, lambda, coreweave, runpod, ...
  std::string name;        // provider's name for it
  std::string gpu;         // GpuSpec id
  int gpus = 0;
  int vcpus = 0;
  Bytes ram;
  ByteRate network_bw;     // node's total inter-node bandwidth (line rate)
  std::string network;     // InterconnectSpec id used between nodes ("" for none)
  std::string intra_node;  // InterconnectSpec id used between GPUs of a node
  Bytes local_nvme;
  int numa_nodes = 2;
  InstancePrices prices;
  Provenance prov;
};

enum class LinkKind { nvlink, pcie, infiniband, ethernet, efa, xgmi };

struct InterconnectSpec {
  std::string id;
  LinkKind kind = LinkKind::ethernet;
  bool intra_node = false;    // true: GPU-to-GPU inside a node; false: node-to-node network
  ByteRate bw_per_gpu;        // unidirectional bandwidth available to one GPU (intra) / one NIC port (inter)
  int ports_per_node = 1;     // inter-node: NIC ports per node
  Seconds hop_latency;        // per-hop latency of the Simple protocol ring
  double efficiency = 1.0;    // achievable fraction of line rate for large collectives (documented)
  double nvls_efficiency = 0; // intra-node NVSwitch with NVLink SHARP: fraction of the achievable link rate
                              // a switch-reduced all-reduce reaches (0: no NVLS); see models/collective.hpp
  Provenance prov;
};

struct LatencyPercentiles {
  Seconds p50;
  Seconds p99;
};

struct StorageSpec {
  std::string id;
  std::string kind;           // local-nvme, nfs, lustre, s3, ...
  ByteRate read_bw;           // aggregate per client node
  ByteRate write_bw;
  LatencyPercentiles latency;
  bool shared = false;        // shared by all nodes (bandwidth divided) or per node
  ByteRate aggregate_bw;      // shared systems: total bandwidth across clients
  ByteRate aggregate_write_bw;  // shared systems: total write bandwidth across clients where it is below
                                // aggregate_bw (a filer's write limit); 0: aggregate_bw for writes too
  Provenance prov;
};

struct ImageSpec {
  std::string id;
  Bytes compressed;
  Bytes unpacked;
  int layers = 0;
  ByteRate pull_bw;      // registry pull rate per node (0: not given)
  ByteRate unpack_bw;    // single-core layer decompression rate (0: not given)
  Provenance prov;
};

enum class ModelFamily { gpt, cnn, vit, swin, generic };

// A transformer decoder by its dimensions (the reference runs' `gpt`).
struct TransformerDims {
  int layers = 0;
  int d_model = 0;
  int heads = 0;
  int vocab = 50304;
  int seq = 1024;
  int d_ff = 0;              // 0 means 4 * d_model
  bool tied_embeddings = true;
  int patch = 0;             // vision transformers: patch size in pixels (0 = not a ViT)
};

struct ModelSpec {
  std::string id;
  ModelFamily family = ModelFamily::generic;
  TransformerDims dims;                // gpt / vit
  double params = 0;                   // parameter count
  double fwd_flops_per_sample = 0;     // forward FLOPs for one sample (multiply-add = 2)
  Bytes activation_bytes_per_sample;   // saved activations per sample at 16-bit (generic/cnn)
  int layers_hint = 0;                 // cnn: number of conv/bn layers (kernel count estimate)
  std::vector<int> input_shape;        // e.g. {3,224,224}
  Bytes sample_bytes;                  // size of one input sample on the host (decoded, as fed to GPU)
  double train_batch_tokens = 0;       // gpt: tokens per optimizer step it was published with (0: not known)
  Provenance prov;
};

// All catalogs, keyed by id. Lookups return nullptr when an id is unknown.
struct Catalog {
  std::map<std::string, GpuSpec> gpus;
  std::map<std::string, InstanceSpec> instances;
  std::map<std::string, InterconnectSpec> interconnects;
  std::map<std::string, StorageSpec> storage;
  std::map<std::string, ImageSpec> images;
  std::map<std::string, ModelSpec> models;

  template <class M>
  static const typename M::mapped_type* find(const M& m, const std::string& id) {
    auto it = m.find(id);
    return it == m.end() ? nullptr : &it->second;
  }
};

const char* to_string(Dtype d);
const char* to_string(LinkKind k);
const char* to_string(ModelFamily f);

}  // namespace gp
