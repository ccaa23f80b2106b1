// `gpuplan catalog list KIND`: prints a catalog as an aligned table or JSON.
#include <cstdio>
#include <iostream>

#include "app/catalog_io.hpp"
#include "app/cli.hpp"
#include "app/json_reader.hpp"
#include "calibrate/json_text.hpp"

namespace gp::app {

namespace {

std::string num(double x, int prec = 0) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", prec, x);
  return buf;
}

std::string opt_price(const std::optional<Dollars>& d) { return d ? num(d->value(), 2) : "-"; }

using Row = std::vector<std::string>;

void print_table(const Row& head, const std::vector<Row>& rows) {
  std::vector<std::size_t> w(head.size());
  for (std::size_t i = 0; i < head.size(); ++i) w[i] = head[i].size();
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], r[i].size());
  auto line = [&](const Row& r) {
    std::string s;
    for (std::size_t i = 0; i < r.size(); ++i) {
      std::string cell = r[i];
      if (i + 1 < r.size()) cell.resize(w[i], ' ');
      s += (i ? "  " : "") + cell;
    }
    std::cout << s << "\n";
  };
  line(head);
  for (const auto& r : rows) line(r);
}

void list(const Catalog& c, const std::string& kind, bool as_json) {
  std::vector<Row> rows;
  Row head;
  json out = json::array();
  if (kind == "gpus") {
    head = {"id", "bf16 TF/s", "fp32 TF/s", "HBM GiB", "HBM GB/s", "NVLink GB/s", "TDP W", "as_of"};
    for (const auto& [id, g] : c.gpus) {
      auto pk = [&](Dtype d) { return g.peak_dense.count(d) ? g.peak_dense.at(d).tflops() : 0.0; };
      rows.push_back({id, num(pk(Dtype::bf16), 1), num(pk(Dtype::fp32), 1), num(g.hbm.gib()), num(g.hbm_bw.gbps()),
                      num(g.nvlink_bw.gbps()), num(g.tdp.value()), g.prov.as_of});
      out.push_back({{"id", id}, {"name", g.name}, {"bf16_tflops", pk(Dtype::bf16)}, {"fp32_tflops", pk(Dtype::fp32)},
                     {"hbm_GiB", g.hbm.gib()}, {"hbm_bw_GBps", g.hbm_bw.gbps()}, {"nvlink_GBps", g.nvlink_bw.gbps()},
                     {"tdp_W", g.tdp.value()}, {"source", g.prov.source}, {"as_of", g.prov.as_of}});
    }
  } else if (kind == "instances") {
    head = {"id", "gpu", "gpus", "vcpus", "net Gb/s", "$/h", "reserved", "spot", "as_of"};
    for (const auto& [id, s] : c.instances) {
      rows.push_back({id, s.gpu, std::to_string(s.gpus), std::to_string(s.vcpus), num(s.network_bw.gbit()),
                      num(s.prices.on_demand_per_hour.value(), 2), opt_price(s.prices.reserved_per_hour),
                      opt_price(s.prices.spot_per_hour), s.prov.as_of});
      auto price = [](const auto& p) { return p ? json(p->value()) : json(nullptr); };
      out.push_back({{"id", id}, {"provider", s.provider}, {"name", s.name}, {"gpu", s.gpu}, {"gpus", s.gpus}, {"vcpus", s.vcpus},
                     {"network_gbit", s.network_bw.gbit()},
                     {"on_demand_per_hour", s.prices.on_demand_per_hour.value()},
                     {"reserved_per_hour", price(s.prices.reserved_per_hour)},
                     {"spot_per_hour", price(s.prices.spot_per_hour)}, {"source", s.prov.source},
                     {"as_of", s.prov.as_of}});
    }
  } else if (kind == "interconnects") {
    head = {"id", "kind", "scope", "GB/s", "ports", "hop us", "eff", "as_of"};
    for (const auto& [id, s] : c.interconnects) {
      rows.push_back({id, to_string(s.kind), s.intra_node ? "intra-node" : "inter-node", num(s.bw_per_gpu.gbps(), 1),
                      std::to_string(s.ports_per_node), num(s.hop_latency.us(), 1), num(s.efficiency, 2),
                      s.prov.as_of});
      out.push_back({{"id", id}, {"kind", to_string(s.kind)}, {"scope", s.intra_node ? "intra-node" : "inter-node"},
                     {"bw_GBps", s.bw_per_gpu.gbps()}, {"ports_per_node", s.ports_per_node},
                     {"hop_latency_us", s.hop_latency.us()}, {"efficiency", s.efficiency},
                     {"source", s.prov.source}, {"as_of", s.prov.as_of}});
    }
  } else if (kind == "storage") {
    head = {"id", "kind", "read GB/s", "write GB/s", "p50 ms", "p99 ms", "shared", "as_of"};
    for (const auto& [id, s] : c.storage) {
      rows.push_back({id, s.kind, num(s.read_bw.gbps(), 2), num(s.write_bw.gbps(), 2), num(s.latency.p50.ms(), 2),
                      num(s.latency.p99.ms(), 2), s.shared ? "yes" : "no", s.prov.as_of});
      out.push_back({{"id", id}, {"kind", s.kind}, {"read_GBps", s.read_bw.gbps()}, {"write_GBps", s.write_bw.gbps()},
                     {"latency_p50_ms", s.latency.p50.ms()}, {"latency_p99_ms", s.latency.p99.ms()},
                     {"shared", s.shared}, {"source", s.prov.source}, {"as_of", s.prov.as_of}});
    }
  } else if (kind == "images") {
    head = {"id", "compressed GB", "unpacked GB", "layers", "as_of"};
    for (const auto& [id, s] : c.images) {
      rows.push_back({id, num(s.compressed.gb(), 1), num(s.unpacked.gb(), 1), std::to_string(s.layers), s.prov.as_of});
      out.push_back({{"id", id}, {"compressed_GB", s.compressed.gb()}, {"unpacked_GB", s.unpacked.gb()},
                     {"layers", s.layers}, {"source", s.prov.source}, {"as_of", s.prov.as_of}});
    }
  } else {  // models
    head = {"id", "family", "params (M)", "fwd GFLOP/sample", "layers", "d_model", "as_of"};
    for (const auto& [id, m] : c.models) {
      rows.push_back({id, to_string(m.family), m.params > 0 ? num(m.params / 1e6, 1) : "-",
                      m.fwd_flops_per_sample > 0 ? num(m.fwd_flops_per_sample / 1e9, 2) : "-",
                      m.dims.layers ? std::to_string(m.dims.layers) : "-",
                      m.dims.d_model ? std::to_string(m.dims.d_model) : "-", m.prov.as_of});
      auto positive = [](double v) { return v > 0 ? json(v) : json(nullptr); };
      out.push_back({{"id", id}, {"family", to_string(m.family)}, {"params", positive(m.params)},
                     {"fwd_flops_per_sample", positive(m.fwd_flops_per_sample)},
                     {"layers", m.dims.layers ? json(m.dims.layers) : json(nullptr)},
                     {"d_model", m.dims.d_model ? json(m.dims.d_model) : json(nullptr)}, {"source", m.prov.source},
                     {"as_of", m.prov.as_of}});
    }
  }
  if (as_json) {
    std::cout << calibrate::dump_json(out, 2) << "\n";
  } else {
    print_table(head, rows);
  }
}

}  // namespace

void add_catalog_command(CLI::App& root, CliContext& ctx) {
  auto* cmd = root.add_subcommand("catalog", "Inspect the catalogs (GPUs, instances, prices, ...)");
  cmd->require_subcommand(1);
  auto* ls = cmd->add_subcommand("list", "List one catalog: gpus|instances|storage|interconnects|images|models");
  static std::string kind;
  static std::string format = "table";
  ls->add_option("KIND", kind, "Catalog kind")
      ->required()
      ->check(CLI::IsMember({"gpus", "instances", "storage", "interconnects", "images", "models"}));
  ls->add_option("--format", format, "table or json")->check(CLI::IsMember({"table", "json"}));
  ls->callback([&ctx] {
    auto cat = load_catalogs_or_report(ctx);
    if (!cat) {
      ctx.exit_code = kExitBadInput;
      return;
    }
    list(*cat, kind, format == "json");
  });
}

}  // namespace gp::app
