// Tests of the closed-form collective model. Hand-computed cases use round, made-up link figures so that the
// expected times can be checked on paper; the acceptance checks against published nccl-tests figures
// (../shared/facts/public-figures.md) read the real catalogs, whose efficiencies come from NCCL's own
// topology/tuning model and one multi-node EFA run (docs/calibration.md, "Collectives").
#include <catch2/catch.hpp>

#include "app/catalog_io.hpp"
#include "models/collective.hpp"

using namespace gp;
using namespace gp::collective;

namespace {

// g GPUs per node on a 100 GB/s link at efficiency `eff`, 2 us per hop; nodes on a 20 GB/s network.
Topology toy(int g, int nodes, double eff = 0.5) {
  Topology t;
  t.gpus_per_node = g;
  t.nodes = nodes;
  t.intra.bw_per_gpu = ByteRate::gbps(100);
  t.intra.efficiency = eff;
  t.intra.hop_latency = Seconds::us(2);
  t.inter.efficiency = 1.0;
  t.inter.hop_latency = Seconds::us(10);
  t.node_network_bw = ByteRate::gbps(20);
  return t;
}

const Op kOps[] = {Op::all_reduce, Op::all_gather, Op::reduce_scatter, Op::all_to_all, Op::broadcast};
const Algorithm kAlgos[] = {Algorithm::ring, Algorithm::tree, Algorithm::hierarchical, Algorithm::direct,
                            Algorithm::nvls};

}  // namespace

TEST_CASE("models::collective: ring all-reduce time in one node, hand-computed", "[models][collective]") {
  // 4 GPUs, 1 GB: 2(n-1) = 6 hops x 2 us = 12 us; each GPU sends 2(n-1)/n x 1 GB = 1.5 GB at 50 GB/s = 30 ms.
  const Topology t = toy(4, 1);
  const Result r = estimate(Op::all_reduce, Bytes::gb(1), t, Algorithm::ring);
  CHECK(r.algorithm == Algorithm::ring);
  CHECK(r.latency.us() == Approx(12.0));
  CHECK(r.transfer.ms() == Approx(30.0));
  CHECK(r.time.value() == Approx(0.030012));
  CHECK(r.algbw.gbps() == Approx(1.0 / 0.030012));
  CHECK(r.busbw.gbps() == Approx(1.5 / 0.030012));
}

TEST_CASE("models::collective: ring all-reduce across nodes shares the node's NICs", "[models][collective]") {
  // 2 nodes x 2 GPUs, 1 GB, fabric over-subscribed 2:1. Ring of 4: 6 steps, 4 of them (2N) on the network:
  // 2 x 2 us + 4 x 10 us = 44 us. NVLink: 1.5 GB at 50 GB/s = 30 ms. A node pushes 1.5 GB through 20 GB/s / 2
  // = 10 GB/s: 150 ms, the bottleneck.
  Topology t = toy(2, 2);
  t.oversubscription = 2.0;
  const Plan p = plan(Op::all_reduce, Algorithm::ring, Bytes::gb(1), t);
  REQUIRE(p.phases.size() == 1);
  CHECK(p.phases[0].intra_hops == 2);
  CHECK(p.phases[0].inter_hops == 4);
  const Result r = estimate(Op::all_reduce, Bytes::gb(1), t, Algorithm::ring);
  CHECK(r.latency.us() == Approx(44.0));
  CHECK(r.transfer.ms() == Approx(150.0));
  // Each of the 2 GPUs of a node gets half the node's share.
  CHECK(per_gpu_rate(t, Link::inter_node, 2).gbps() == Approx(5.0));
  CHECK(per_gpu_rate(t, Link::intra_node, 1).gbps() == Approx(50.0));
}

TEST_CASE("models::collective: hierarchical all-reduce phases, hand-computed", "[models][collective]") {
  // 2 nodes x 2 GPUs, 1 GB, non-blocking. Reduce-scatter in the node: 0.5 GB at 50 GB/s = 10 ms + 2 us;
  // all-reduce across the 2 nodes of 0.5 GB shards: each GPU sends 0.5 GB at 20/2 = 10 GB/s = 50 ms + 2 x 10 us;
  // all-gather in the node: 10 ms + 2 us. Total 70.024 ms.
  const Topology t = toy(2, 2);
  const Plan p = plan(Op::all_reduce, Algorithm::hierarchical, Bytes::gb(1), t);
  REQUIRE(p.phases.size() == 3);
  CHECK(p.phases[0].loads.at(0).link == Link::intra_node);
  CHECK(p.phases[1].loads.at(0).link == Link::inter_node);
  CHECK(p.phases[1].loads.at(0).bytes_per_gpu.gb() == Approx(0.5));
  CHECK(p.phases[1].loads.at(0).senders_per_node == 2);
  CHECK(phase_transfer(p.phases[0], t).ms() == Approx(10.0));
  CHECK(phase_transfer(p.phases[1], t).ms() == Approx(50.0));
  CHECK(plan_time(p, t).value() == Approx(0.070024));
  // The NICs are the bottleneck: a node sends 1.5 GB with the ring (75 ms), 1 GB with the hierarchy (after and
  // before its NVLink phases) and 1 GB with the double binary tree, overlapped with its chain (50 ms + 24 us).
  CHECK(estimate(Op::all_reduce, Bytes::gb(1), t, Algorithm::ring).time.ms() == Approx(75.044));
  const Result best = estimate(Op::all_reduce, Bytes::gb(1), t);
  CHECK(best.algorithm == Algorithm::tree);
  CHECK(best.time.value() == Approx(0.050024));
}

TEST_CASE("models::collective: all-to-all, broadcast and NVLS, hand-computed", "[models][collective]") {
  const Topology t = toy(2, 2);
  // All-to-all of 1 GB per rank over 4 ranks: 0.25 GB to the peer in the node (50 GB/s: 5 ms), 0.5 GB to the
  // other node, both GPUs at once through 20 GB/s (10 GB/s each: 50 ms). Hops: 1 x 2 us + 1 x 10 us.
  const Result a2a = estimate(Op::all_to_all, Bytes::gb(1), t, Algorithm::ring);
  CHECK(a2a.algorithm == Algorithm::direct);  // all-to-all has no ring: falls back
  CHECK(a2a.time.value() == Approx(0.050012));
  CHECK(a2a.busbw.gbps() == Approx(a2a.algbw.gbps() * 0.75));
  // Broadcast as a pipelined chain: every GPU forwards 1 GB (50 GB/s: 20 ms); each node sends 1 GB through its
  // NICs, shared by its 2 GPUs (0.5 GB each at 10 GB/s: 50 ms). Hops: 2 intra + 1 network.
  const Result bc = estimate(Op::broadcast, Bytes::gb(1), t, Algorithm::ring);
  CHECK(bc.time.value() == Approx(0.050014));
  CHECK(bc.busbw.gbps() == Approx(bc.algbw.gbps()));
  // NVLS in one node of 4 with nvls_efficiency 0.8: each GPU moves 1.25 GB at 0.8 x 50 GB/s = 31.25 ms + 2 hops.
  Topology one = toy(4, 1);
  one.intra.nvls_efficiency = 0.8;
  const Result nv = estimate(Op::all_reduce, Bytes::gb(1), one, Algorithm::nvls);
  CHECK(nv.algorithm == Algorithm::nvls);
  CHECK(nv.time.value() == Approx(0.031254));
}

TEST_CASE("models::collective: busbw factors follow nccl-tests", "[models][collective]") {
  CHECK(bus_factor(Op::all_reduce, 8) == Approx(1.75));
  CHECK(bus_factor(Op::all_gather, 8) == Approx(0.875));
  CHECK(bus_factor(Op::reduce_scatter, 32) == Approx(31.0 / 32.0));
  CHECK(bus_factor(Op::all_to_all, 4) == Approx(0.75));
  CHECK(bus_factor(Op::broadcast, 16) == Approx(1.0));
  CHECK(bus_factor(Op::all_reduce, 1) == Approx(0.0));
  const Topology t = toy(8, 2);
  for (Op op : kOps) {
    const Result r = estimate(op, Bytes::mib(64), t);
    CHECK(r.algbw.value() == Approx(Bytes::mib(64).value() / r.time.value()));
    CHECK(r.busbw.value() == Approx(r.algbw.value() * bus_factor(op, 16)));
  }
}

TEST_CASE("models::collective: time grows with bytes", "[models][collective]") {
  for (const Topology& t : {toy(8, 1), toy(8, 4), toy(1, 8), toy(4, 3)}) {
    for (Op op : kOps) {
      for (Algorithm a : kAlgos) {
        if (!applicable(op, a, t)) continue;
        Seconds prev;
        for (double b = 8; b <= 8.0 * (1ull << 30); b *= 2) {
          const Seconds now = estimate(op, Bytes(b), t, a).time;
          CHECK(now > prev);
          prev = now;
        }
      }
    }
  }
}

TEST_CASE("models::collective: latency-dominated at 8 B, bandwidth-dominated at 4 GiB", "[models][collective]") {
  for (const Topology& t : {toy(8, 1), toy(8, 4)}) {
    for (Op op : kOps) {
      const Result small = estimate(op, Bytes(8), t);
      const Result large = estimate(op, Bytes::gib(4), t);
      CHECK(small.latency.value() > 0.9 * small.time.value());
      CHECK(large.transfer.value() > 0.99 * large.time.value());
    }
  }
}

TEST_CASE("models::collective: auto picks the fastest applicable algorithm", "[models][collective]") {
  Topology t = toy(8, 1);
  t.intra.nvls_efficiency = 0.8;
  for (const Topology& topo : {t, toy(8, 16), toy(4, 2), toy(1, 4)}) {
    for (Op op : kOps) {
      for (double b : {8.0, 65536.0, 1e8, 4e9}) {
        const Result best = estimate(op, Bytes(b), topo);
        CHECK(applicable(op, best.algorithm, topo));
        for (Algorithm a : kAlgos) {
          if (applicable(op, a, topo)) CHECK(best.time <= estimate(op, Bytes(b), topo, a).time);
        }
      }
    }
  }
  // Small messages over many nodes: the tree's log2(N) network hops beat the ring's 2N.
  CHECK(estimate(Op::all_reduce, Bytes(8), toy(8, 16)).algorithm == Algorithm::tree);
}

TEST_CASE("models::collective: reduce-scatter and all-gather mirror each other", "[models][collective]") {
  for (const Topology& t : {toy(8, 1), toy(8, 4)}) {
    for (Algorithm a : {Algorithm::ring, Algorithm::hierarchical}) {
      if (!applicable(Op::all_gather, a, t)) continue;
      CHECK(estimate(Op::all_gather, Bytes::gib(1), t, a).time.value() ==
            Approx(estimate(Op::reduce_scatter, Bytes::gib(1), t, a).time.value()));
    }
    // An all-reduce moves what a reduce-scatter and an all-gather move together.
    CHECK(estimate(Op::all_reduce, Bytes::gib(1), t, Algorithm::ring).transfer.value() ==
          Approx(2 * estimate(Op::all_gather, Bytes::gib(1), t, Algorithm::ring).transfer.value()));
  }
}

TEST_CASE("models::collective: a plan's phases sum to the estimate (the DES oracle)", "[models][collective]") {
  Topology nv = toy(8, 1);
  nv.intra.nvls_efficiency = 0.8;
  for (const Topology& t : {nv, toy(8, 4), toy(1, 3), toy(4, 2)}) {
    for (Op op : kOps) {
      for (Algorithm a : kAlgos) {
        if (!applicable(op, a, t)) continue;
        const Plan p = plan(op, a, Bytes::mib(256), t);
        CHECK(p.ranks == t.ranks());
        const Result r = estimate(op, Bytes::mib(256), t, a);
        CHECK(plan_time(p, t).value() == Approx(r.time.value()));
        for (const Phase& ph : p.phases) {
          CHECK(ph.intra_hops + ph.inter_hops > 0);
          for (const LinkLoad& l : ph.loads) {
            CHECK(l.bytes_per_gpu.value() > 0);
            CHECK(l.senders_per_node >= 1);
            CHECK(l.senders_per_node <= t.gpus_per_node);
            if (l.link == Link::inter_node) CHECK(t.nodes > 1);
            if (l.link == Link::intra_node) CHECK(t.gpus_per_node > 1);
          }
        }
      }
    }
  }
  CHECK(from_config(CollectiveAlgo::hierarchical) == Algorithm::hierarchical);
  CHECK_FALSE(from_config(CollectiveAlgo::auto_select).has_value());
}

TEST_CASE("models::collective: one rank or zero bytes take no time", "[models][collective]") {
  const Result one = estimate(Op::all_reduce, Bytes::gib(1), toy(1, 1));
  CHECK(one.time.value() == 0.0);
  CHECK(one.busbw.value() == 0.0);
  CHECK(plan(Op::all_gather, Algorithm::ring, Bytes(0), toy(8, 2)).phases.empty());
}

TEST_CASE("models::collective: topology checks and names", "[models][collective]") {
  CHECK_FALSE(check(toy(8, 4)).has_value());
  Topology no_net = toy(8, 4);
  no_net.node_network_bw = ByteRate(0);
  CHECK(check(no_net).has_value());
  Topology bad = toy(0, 1);
  CHECK(check(bad).has_value());
  Topology under = toy(8, 2);
  under.oversubscription = 0.5;
  CHECK(check(under).has_value());
  CHECK(parse_op("allreduce") == Op::all_reduce);
  CHECK(parse_op("reducescatter") == Op::reduce_scatter);
  CHECK_FALSE(parse_op("all-reduce").has_value());
  CHECK(parse_algorithm("hierarchical") == Algorithm::hierarchical);
  CHECK_FALSE(parse_algorithm("auto").has_value());
  CHECK_FALSE(applicable(Op::all_reduce, Algorithm::hierarchical, toy(8, 1)));
  CHECK_FALSE(applicable(Op::all_reduce, Algorithm::nvls, toy(8, 1)));  // no NVLS on this fabric
  CHECK_FALSE(applicable(Op::all_gather, Algorithm::tree, toy(8, 2)));
}

namespace {

// The repository's catalogs, loaded once; a problem in them fails the test that needs them.
const Catalog& repo_catalog() {
  static const Catalog cat = [] {
    app::Diagnostics diags;
    Catalog c = app::load_catalogs(std::string(GPUPLAN_SOURCE_DIR) + "/catalogs", {}, diags);
    INFO(diags.render());
    REQUIRE(diags.empty());
    return c;
  }();
  return cat;
}

// `nodes` nodes of a catalog instance, as `gpuplan comm --instance` builds them.
Topology instance_topology(const std::string& id, int nodes) {
  const Catalog& cat = repo_catalog();
  const InstanceSpec* inst = Catalog::find(cat.instances, id);
  REQUIRE(inst != nullptr);
  Topology t;
  t.gpus_per_node = inst->gpus;
  t.nodes = nodes;
  const InterconnectSpec* intra = Catalog::find(cat.interconnects, inst->intra_node);
  REQUIRE(intra != nullptr);
  t.intra = *intra;
  if (nodes > 1) {
    const InterconnectSpec* net = Catalog::find(cat.interconnects, inst->network);
    REQUIRE(net != nullptr);
    t.inter = *net;
    t.node_network_bw = inst->network_bw;
  }
  REQUIRE_FALSE(check(t).has_value());
  return t;
}

double busbw_gbps(const Topology& t, double gib, std::optional<Algorithm> a = std::nullopt) {
  return estimate(Op::all_reduce, Bytes::gib(gib), t, a).busbw.gbps();
}

}  // namespace

TEST_CASE("models::collective: 8xH100 ring all-reduce busbw within 15% of nccl-tests' 370 GB/s",
          "[models][collective][published]") {
  // nccl-tests #212: ~370 GB/s busbw with NCCL_ALGO=RING on one 8xH100 NVSwitch node.
  const Topology t = instance_topology("aws-p5.48xlarge", 1);
  for (double gib : {1.0, 2.0, 4.0}) CHECK(busbw_gbps(t, gib, Algorithm::ring) == Approx(370).epsilon(0.15));
}

TEST_CASE("models::collective: 8xH100 default (NVLS) all-reduce busbw within 15% of 480 GB/s",
          "[models][collective][published]") {
  // nccl-tests #212: ~480 GB/s busbw with NVLink SHARP, NCCL's default for all-reduce on NVSwitch nodes.
  const Topology t = instance_topology("aws-p5.48xlarge", 1);
  CHECK(estimate(Op::all_reduce, Bytes::gib(4), t).algorithm == Algorithm::nvls);
  for (double gib : {1.0, 4.0}) CHECK(busbw_gbps(t, gib) == Approx(480).epsilon(0.15));
}

TEST_CASE("models::collective: 8xH200 all-reduce busbw within 15% of nccl-tests' 475 GB/s",
          "[models][collective][published]") {
  // nccl-tests #272 (NCCL 2.20.3, default algorithm: NVLS): 475 GB/s peak busbw, 64 KiB to 4 GiB.
  const Topology t = instance_topology("aws-p5en.48xlarge", 1);
  for (double gib : {1.0, 2.0, 4.0}) CHECK(busbw_gbps(t, gib) == Approx(475).epsilon(0.15));
}

TEST_CASE("models::collective: 4 p5en nodes, 4 GiB ring all-reduce within 20% of 365 GB/s",
          "[models][collective][published]") {
  const Topology t = instance_topology("aws-p5en.48xlarge", 4);
  CHECK(busbw_gbps(t, 4, Algorithm::ring) == Approx(365).epsilon(0.20));
  // NCCL's tuner picks the ring here; so does ours.
  CHECK(estimate(Op::all_reduce, Bytes::gib(4), t).algorithm == Algorithm::ring);
  CHECK(busbw_gbps(t, 4) == Approx(365).epsilon(0.20));
}

TEST_CASE("models::collective: 8xB200 ring all-reduce within 15% of 741 GB/s at 4 GiB",
          "[models][collective][published]") {
  // public-figures.md: 741 GB/s at 4 GiB on one 8xB200 node (846 at 16 GiB, most likely NVLS: not modelled).
  const Topology t = instance_topology("aws-p6-b200.48xlarge", 1);
  CHECK(busbw_gbps(t, 4, Algorithm::ring) == Approx(741).epsilon(0.15));
}
