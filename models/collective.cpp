#include "models/collective.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>

namespace gp::collective {

const char* to_string(Op op) {
  switch (op) {
    case Op::all_reduce: return "allreduce";
    case Op::all_gather: return "allgather";
    case Op::reduce_scatter: return "reducescatter";
    case Op::all_to_all: return "alltoall";
    case Op::broadcast: return "broadcast";
  }
  return "?";
}

const char* to_string(Algorithm a) {
  switch (a) {
    case Algorithm::ring: return "ring";
    case Algorithm::tree: return "tree";
    case Algorithm::hierarchical: return "hierarchical";
    case Algorithm::direct: return "direct";
    case Algorithm::nvls: return "nvls";
  }
  return "?";
}

std::optional<Op> parse_op(const std::string& s) {
  for (Op op : {Op::all_reduce, Op::all_gather, Op::reduce_scatter, Op::all_to_all, Op::broadcast}) {
    if (s == to_string(op)) return op;
  }
  return std::nullopt;
}

std::optional<Algorithm> parse_algorithm(const std::string& s) {
  for (Algorithm a : {Algorithm::ring, Algorithm::tree, Algorithm::hierarchical, Algorithm::direct,
                      Algorithm::nvls}) {
    if (s == to_string(a)) return a;
  }
  return std::nullopt;
}

std::optional<Algorithm> from_config(CollectiveAlgo a) {
  switch (a) {
    case CollectiveAlgo::ring: return Algorithm::ring;
    case CollectiveAlgo::tree: return Algorithm::tree;
    case CollectiveAlgo::hierarchical: return Algorithm::hierarchical;
    case CollectiveAlgo::auto_select: return std::nullopt;
  }
  return std::nullopt;
}

Topology topology_from(const ClusterConfig& c) {
  Topology t;
  t.gpus_per_node = c.gpus_per_node;
  t.nodes = c.nodes;
  t.intra = c.intra_node;
  if (c.network) t.inter = *c.network;
  t.node_network_bw = c.node_network_bw;
  if (t.node_network_bw.value() <= 0 && c.network) {
    t.node_network_bw = c.network->bw_per_gpu * c.network->ports_per_node;
  }
  t.oversubscription = c.oversubscription;
  return t;
}

std::optional<std::string> check(const Topology& t) {
  if (t.gpus_per_node < 1) return "gpus per node must be at least 1";
  if (t.nodes < 1) return "node count must be at least 1";
  // The model's range, not a hardware fact: the largest jobs run today use ~100k GPUs.
  constexpr std::int64_t kMaxRanks = std::int64_t{1} << 20;
  if (static_cast<std::int64_t>(t.gpus_per_node) * t.nodes > kMaxRanks)
    return "at most 1,048,576 GPUs in all, got " + std::to_string(t.gpus_per_node) + " x " + std::to_string(t.nodes);
  if (t.gpus_per_node > 1) {
    if (t.intra.bw_per_gpu.value() <= 0) return "intra-node interconnect \"" + t.intra.id + "\" has no bandwidth";
    if (t.intra.efficiency <= 0 || t.intra.efficiency > 1) return "intra-node efficiency must be in (0, 1]";
  }
  if (t.nodes > 1) {
    if (t.node_network_bw.value() <= 0) return "more than one node needs a network with a bandwidth";
    if (t.inter.efficiency <= 0 || t.inter.efficiency > 1) return "network efficiency must be in (0, 1]";
    if (!(t.oversubscription >= 1 && t.oversubscription <= 1000)) return "over-subscription must be in [1, 1000]";
  }
  if (t.intra.hop_latency.value() < 0 || t.inter.hop_latency.value() < 0) return "hop latency must be >= 0";
  return std::nullopt;
}

bool applicable(Op op, Algorithm a, const Topology& t) {
  const bool multi_node = t.nodes > 1;
  switch (a) {
    case Algorithm::direct: return op == Op::all_to_all;
    case Algorithm::ring: return op != Op::all_to_all;
    case Algorithm::tree: return op == Op::all_reduce;
    case Algorithm::hierarchical: return op != Op::all_to_all && multi_node && t.gpus_per_node > 1;
    case Algorithm::nvls:
      return op == Op::all_reduce && !multi_node && t.gpus_per_node > 1 && t.intra.nvls_efficiency > 0;
  }
  return false;
}

namespace {

// The bytes a step moves through one node's NICs in total, spread over all its GPUs (NCCL gives each
// channel its own NIC, so every NIC of the node carries part of a ring's or tree's inter-node edge).
LinkLoad node_nic_load(Bytes per_node, int gpus_per_node) {
  return {Link::inter_node, per_node / gpus_per_node, gpus_per_node, 1.0};
}

LinkLoad intra_load(Bytes per_gpu) { return {Link::intra_node, per_gpu, 1, 1.0}; }

// Adds the loads that are non-empty (a one-GPU node has no intra-node edge; one node, no NIC traffic).
Phase make_phase(std::string name, int intra_hops, int inter_hops, std::vector<LinkLoad> loads) {
  Phase p{std::move(name), intra_hops, inter_hops, {}};
  for (const LinkLoad& l : loads) {
    if (l.bytes_per_gpu.value() > 0) p.loads.push_back(l);
  }
  return p;
}

// Ring over all n = g*N GPUs; `rounds` is 2 for all-reduce (reduce-scatter then all-gather), 1 otherwise.
// Each GPU sends rounds*(n-1)/n of the buffer to its neighbour; each node as much through its NICs.
// Hop count follows NCCL's tuning model: rounds*(n-1) steps, of which rounds*N cross the network
// (all-reduce) or N-1 (one round).
Phase ring_phase(const std::string& name, int rounds, Bytes size, const Topology& t) {
  const int n = t.ranks();
  const int steps = rounds * (n - 1);
  const int net_steps = t.nodes > 1 ? std::min(steps, rounds == 2 ? 2 * t.nodes : t.nodes - 1) : 0;
  const Bytes per_edge = size * (rounds * (n - 1.0) / n);
  std::vector<LinkLoad> loads;
  if (t.gpus_per_node > 1) loads.push_back(intra_load(per_edge));
  if (t.nodes > 1) loads.push_back(node_nic_load(per_edge, t.gpus_per_node));
  return make_phase(name, steps - net_steps, net_steps, loads);
}

// Pipelined chain (NCCL's ring broadcast): every GPU forwards the whole buffer once.
Phase chain_broadcast_phase(Bytes size, const Topology& t) {
  const int n = t.ranks();
  const int net_steps = t.nodes - 1;
  std::vector<LinkLoad> loads;
  if (t.gpus_per_node > 1) loads.push_back(intra_load(size));
  if (t.nodes > 1) loads.push_back(node_nic_load(size, t.gpus_per_node));
  return make_phase("ring broadcast", n - 1 - net_steps, net_steps, loads);
}

int ceil_log2(int x) {
  int k = 0;
  while ((1 << k) < x) ++k;
  return k;
}

// NCCL's tree all-reduce: a chain in each node (every GPU sends the buffer up for the reduction and down for
// the broadcast: 2S), a double binary tree across nodes, each tree carrying half the buffer. The busiest node
// is inner with two children in one tree (S/2 up, S/2 to each child) and a leaf in the other (S/2 up): it sends
// 2S through its NICs; with 2 nodes each is root of one tree and leaf of the other: S. Hops:
// 2((g-1) intra + ceil(log2 N) network), as NCCL counts them.
Phase tree_phase(Bytes size, const Topology& t) {
  const int g = t.gpus_per_node;
  const int n_nodes = t.nodes;
  std::vector<LinkLoad> loads;
  if (g > 1) loads.push_back(intra_load(size * 2.0));
  if (n_nodes > 1) loads.push_back(node_nic_load(size * (n_nodes == 2 ? 1.0 : 2.0), g));
  return make_phase("tree all-reduce", 2 * (g - 1), 2 * ceil_log2(n_nodes), loads);
}

// Intra-node ring reduce-scatter or all-gather of a buffer of `size` among the g GPUs of each node.
Phase intra_ring(const std::string& name, Bytes size, const Topology& t) {
  const int g = t.gpus_per_node;
  return make_phase(name, g - 1, 0, {intra_load(size * ((g - 1.0) / g))});
}

// Inter-node ring among the N GPUs of equal local rank; every GPU of a node does it at once on its 1/g
// share `shard`, so the node's NICs carry g such rings.
Phase inter_ring(const std::string& name, int rounds, Bytes shard, const Topology& t) {
  const int n_nodes = t.nodes;
  const Bytes per_gpu = shard * (rounds * (n_nodes - 1.0) / n_nodes);
  return make_phase(name, 0, rounds * (n_nodes - 1), {{Link::inter_node, per_gpu, t.gpus_per_node, 1.0}});
}

std::vector<Phase> hierarchical_phases(Op op, Bytes size, const Topology& t) {
  const Bytes shard = size / t.gpus_per_node;
  switch (op) {
    case Op::all_reduce:
      return {intra_ring("intra-node reduce-scatter", size, t), inter_ring("inter-node all-reduce", 2, shard, t),
              intra_ring("intra-node all-gather", size, t)};
    case Op::reduce_scatter:
      return {intra_ring("intra-node reduce-scatter", size, t), inter_ring("inter-node reduce-scatter", 1, shard, t)};
    case Op::all_gather:
      return {inter_ring("inter-node all-gather", 1, shard, t), intra_ring("intra-node all-gather", size, t)};
    case Op::broadcast: {
      const int g = t.gpus_per_node;
      Phase scatter = make_phase("intra-node scatter", 1, 0, {intra_load(size * ((g - 1.0) / g))});
      Phase chain = make_phase("inter-node broadcast", 0, t.nodes - 1, {{Link::inter_node, shard, g, 1.0}});
      return {scatter, chain, intra_ring("intra-node all-gather", size, t)};
    }
    case Op::all_to_all: break;
  }
  return {};
}

// Every GPU sends size/n to each other GPU at once: (g-1)/n of its buffer over the intra-node fabric and
// (n-g)/n through the NICs that all g GPUs of the node share. Latency: one round per intra-node peer and
// per remote node.
Phase direct_all_to_all(Bytes size, const Topology& t) {
  const int n = t.ranks();
  const int g = t.gpus_per_node;
  return make_phase("all-to-all", g - 1, t.nodes - 1,
                    {intra_load(size * ((g - 1.0) / n)), {Link::inter_node, size * (double(n - g) / n), g, 1.0}});
}

// NVLink SHARP all-reduce: GPU i asks the switch for the reduced 1/n-th i (the switch reads it from every
// GPU) and multicasts it back: each GPU sends and receives S(n+1)/n. Two switch round trips of latency.
Phase nvls_phase(Bytes size, const Topology& t) {
  const int n = t.ranks();
  LinkLoad load{Link::intra_node, size * ((n + 1.0) / n), 1, t.intra.nvls_efficiency};
  return make_phase("nvls all-reduce", 2, 0, {load});
}

}  // namespace

Plan plan(Op op, Algorithm a, Bytes size, const Topology& t) {
  Plan p{op, a, size, t.ranks(), {}};
  if (t.ranks() < 2 || size.value() <= 0) return p;
  switch (a) {
    case Algorithm::ring:
      if (op == Op::broadcast) p.phases = {chain_broadcast_phase(size, t)};
      else if (op == Op::all_reduce) p.phases = {ring_phase("ring all-reduce", 2, size, t)};
      else p.phases = {ring_phase(std::string("ring ") + to_string(op), 1, size, t)};
      break;
    case Algorithm::tree: p.phases = {tree_phase(size, t)}; break;
    case Algorithm::hierarchical: p.phases = hierarchical_phases(op, size, t); break;
    case Algorithm::direct: p.phases = {direct_all_to_all(size, t)}; break;
    case Algorithm::nvls: p.phases = {nvls_phase(size, t)}; break;
  }
  return p;
}

ByteRate per_gpu_rate(const Topology& t, Link link, int senders_per_node) {
  if (link == Link::intra_node) return t.intra.bw_per_gpu * t.intra.efficiency;
  const double share = std::max(1.0, t.oversubscription) * std::max(1, senders_per_node);
  return t.node_network_bw * (t.inter.efficiency / share);
}

Seconds phase_latency(const Phase& p, const Topology& t) {
  return t.intra.hop_latency * p.intra_hops + t.inter.hop_latency * p.inter_hops;
}

Seconds phase_transfer(const Phase& p, const Topology& t) {
  Seconds slowest;
  for (const LinkLoad& l : p.loads) {
    const ByteRate rate = per_gpu_rate(t, l.link, l.senders_per_node) * l.rate_factor;
    slowest = std::max(slowest, l.bytes_per_gpu / rate);
  }
  return slowest;
}

Seconds plan_time(const Plan& plan, const Topology& t) {
  Seconds total;
  for (const Phase& p : plan.phases) total += phase_latency(p, t) + phase_transfer(p, t);
  return total;
}

double bus_factor(Op op, int ranks) {
  const double n = ranks;
  switch (op) {
    case Op::all_reduce: return 2.0 * (n - 1.0) / n;
    case Op::all_gather:
    case Op::reduce_scatter:
    case Op::all_to_all: return (n - 1.0) / n;
    case Op::broadcast: return 1.0;
  }
  return 1.0;
}

namespace {

Result time_with(Op op, Algorithm a, Bytes size, const Topology& t) {
  const Plan p = plan(op, a, size, t);
  Result r;
  r.algorithm = a;
  for (const Phase& ph : p.phases) {
    r.latency += phase_latency(ph, t);
    r.transfer += phase_transfer(ph, t);
  }
  r.time = r.latency + r.transfer;
  if (r.time.value() > 0) {
    r.algbw = size / r.time;
    r.busbw = r.algbw * bus_factor(op, t.ranks());
  }
  return r;
}

}  // namespace

Result estimate(Op op, Bytes size, const Topology& t, std::optional<Algorithm> algo) {
  if (algo && applicable(op, *algo, t)) return time_with(op, *algo, size, t);
  constexpr std::array<Algorithm, 5> kOrder = {Algorithm::ring, Algorithm::tree, Algorithm::hierarchical,
                                               Algorithm::nvls, Algorithm::direct};
  std::optional<Result> best;
  for (Algorithm a : kOrder) {
    if (!applicable(op, a, t)) continue;
    Result r = time_with(op, a, size, t);
    if (!best || r.time < best->time) best = r;
  }
  return best.value_or(Result{});
}

}  // namespace gp::collective
