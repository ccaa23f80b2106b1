// Closed-form model of NCCL collectives (all-reduce, all-gather, reduce-scatter, all-to-all, broadcast) on a
// cluster of identical nodes: GPUs of a node talk over the intra-node fabric (NVLink, PCIe), nodes over their
// NICs, which the GPUs of a node share. Time = per-hop latency terms + bytes over the achievable bandwidth of
// the busiest link, the shape of NCCL's own tuning model. Equations and sources: docs/calibration.md
// ("Collectives").
//
// A collective is first laid out as a Plan (phases run one after another; inside a phase, the link loads
// proceed concurrently), then timed. The discrete-event simulator can build the same Plan as flows over
// shared resources (a GPU's NVLink port, a node's NICs), so this closed form is its test oracle.
// Pure functions: no I/O, no globals.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/hardware.hpp"
#include "models/job.hpp"
#include "models/units.hpp"

namespace gp::collective {

// The collectives nccl-tests measures. Sizes follow nccl-tests: all-reduce and broadcast: the buffer;
// all-gather: the gathered (receive) buffer; reduce-scatter: the send buffer; all-to-all: one rank's send buffer.
enum class Op { all_reduce, all_gather, reduce_scatter, all_to_all, broadcast };

// How the collective is carried out.
//   ring:         one (multi-channel) ring through every GPU; NCCL's default for large messages.
//   tree:         all-reduce only: a chain inside each node and a double binary tree across nodes.
//   hierarchical: reduce-scatter over the intra-node fabric, the inter-node collective on 1/g of the data per
//                 GPU over the NICs, all-gather over the intra-node fabric (one phase after the other).
//   direct:       all-to-all: every GPU sends to every other GPU at once (NCCL's only all-to-all).
//   nvls:         all-reduce in one node with NVLink SHARP: the switch reduces and multicasts.
enum class Algorithm { ring, tree, hierarchical, direct, nvls };

const char* to_string(Op op);
const char* to_string(Algorithm a);
// Parses "allreduce", "allgather", "reducescatter", "alltoall", "broadcast"; nullopt otherwise.
std::optional<Op> parse_op(const std::string& s);
// Parses "ring", "tree", "hierarchical", "direct", "nvls"; nullopt otherwise ("auto" is the caller's nullopt).
std::optional<Algorithm> parse_algorithm(const std::string& s);
// The scenario's algorithm choice; nullopt for auto.
std::optional<Algorithm> from_config(CollectiveAlgo a);

// The links a collective runs over.
struct Topology {
  int gpus_per_node = 1;         // g >= 1
  int nodes = 1;                 // N >= 1
  InterconnectSpec intra;        // GPU to GPU in a node; bw_per_gpu: one GPU's bandwidth per direction
  InterconnectSpec inter;        // node to node; only hop_latency and efficiency are used (bw: node_network_bw)
  ByteRate node_network_bw;      // a node's total NIC line rate per direction (all ports); > 0 when N > 1
  double oversubscription = 1.0; // fabric over-subscription (>= 1; 1 = non-blocking): divides inter-node bw
  [[nodiscard]] int ranks() const { return gpus_per_node * nodes; }
};

// Builds a Topology from a resolved cluster (a node's line rate: node_network_bw, else ports x port bw).
Topology topology_from(const ClusterConfig& c);

// nullopt when usable; otherwise what is wrong, in one line (for the caller to report).
std::optional<std::string> check(const Topology& t);

enum class Link { intra_node, inter_node };

// Bytes one GPU sends over one kind of link within a phase. On the inter-node link, `senders_per_node` GPUs
// of each node send at the same time and share the node's NICs.
struct LinkLoad {
  Link link = Link::intra_node;
  Bytes bytes_per_gpu;
  int senders_per_node = 1;
  double rate_factor = 1.0;      // fraction of per_gpu_rate this traffic reaches (NVLS: intra.nvls_efficiency)
};

// One phase: `intra_hops` + `inter_hops` latency-bound steps and link loads moved concurrently. Phases of a
// plan run one after another.
struct Phase {
  std::string name;              // e.g. "intra-node reduce-scatter"
  int intra_hops = 0;            // steps paying the intra-node hop latency
  int inter_hops = 0;            // steps paying the network hop latency
  std::vector<LinkLoad> loads;
};

// A collective laid out on a topology.
struct Plan {
  Op op = Op::all_reduce;
  Algorithm algorithm = Algorithm::ring;
  Bytes size;                    // nccl-tests size (see Op)
  int ranks = 1;
  std::vector<Phase> phases;     // empty when there is nothing to move (one rank, zero bytes)
};

// Whether `a` can carry out `op` on `t` (tree: all-reduce; direct: all-to-all only and all-to-all has no
// other; nvls: all-reduce in one node whose intra.nvls_efficiency > 0; hierarchical: N > 1 and g > 1).
bool applicable(Op op, Algorithm a, const Topology& t);

// Lays out `op` of `size` bytes with algorithm `a`. Precondition: check(t) is nullopt, applicable(op, a, t).
Plan plan(Op op, Algorithm a, Bytes size, const Topology& t);

// Achievable bandwidth of one GPU on `link` while `senders_per_node` GPUs of its node use it:
// intra: bw_per_gpu x efficiency; inter: node_network_bw x efficiency / oversubscription / senders.
ByteRate per_gpu_rate(const Topology& t, Link link, int senders_per_node);

// Latency term of a phase: hops x hop latency of each link kind.
Seconds phase_latency(const Phase& p, const Topology& t);
// Bandwidth term of a phase: the slowest of its concurrent loads.
Seconds phase_transfer(const Phase& p, const Topology& t);
// Both terms of a plan, summed over phases.
Seconds plan_time(const Plan& plan, const Topology& t);

// nccl-tests' busbw/algbw factor: all-reduce 2(n-1)/n; all-gather, reduce-scatter, all-to-all (n-1)/n;
// broadcast 1. n >= 1.
double bus_factor(Op op, int ranks);

struct Result {
  Algorithm algorithm = Algorithm::ring;  // the algorithm used (auto's choice, or a fallback)
  Seconds time;
  ByteRate algbw;                         // size / time (0 when time is 0)
  ByteRate busbw;                         // algbw x bus_factor
  Seconds latency;                        // latency part of time
  Seconds transfer;                       // bandwidth part of time
};

// Time of `op` on `size` bytes. `algo` nullopt = auto: the fastest applicable algorithm, like NCCL's tuner.
// An explicit algorithm that cannot carry out `op` falls back to auto (NCCL ignores NCCL_ALGO there too);
// Result::algorithm says which ran. Precondition: check(t) is nullopt. O(1).
Result estimate(Op op, Bytes size, const Topology& t, std::optional<Algorithm> algo = std::nullopt);

}  // namespace gp::collective
