// `gpuplan comm`: what nccl-tests would print for a modelled cluster (size, count, type, time, algbw, busbw per
// message size, doubling from --min-bytes to --max-bytes), from the closed-form model in models/collective.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/catalog_io.hpp"
#include "app/cli.hpp"
#include "app/json_reader.hpp"
#include "app/output_file.hpp"
#include "app/svg.hpp"
#include "calibrate/check.hpp"
#include "calibrate/json_text.hpp"
#include "models/collective.hpp"

namespace gp::app {

namespace {

using collective::Algorithm;
using collective::Op;
using collective::Topology;

struct CommOptions {
  std::string instance;
  std::string gpu;
  int gpus_per_node = 0;
  std::string network;
  std::string intra_node;
  int nodes = 1;
  double oversubscription = 1.0;
  std::string op = "allreduce";
  std::string min_bytes = "8";
  std::string max_bytes = "4G";
  std::string algo = "auto";
  std::string format = "table";
  std::string plot;
};

// The cluster as resolved from the catalog, with the words that describe it.
struct Cluster {
  Topology topo;
  std::string label;      // e.g. "4 x aws-p5en.48xlarge"
  std::string gpu;
  std::string intra_id;
  std::string network_id;
};

void fail(CliContext& ctx, const std::string& msg) {
  std::cerr << "gpuplan comm: " << msg << "\n";
  ctx.exit_code = kExitBadInput;
}

// nccl-tests' -b/-e sizes (parsesize in its src/common.cu): a number, decimals allowed ("1.5M", "1e3"), with
// an optional K, M or G suffix (binary multiples, case-insensitive; T too), the fraction of a byte dropped.
// nccl-tests ignores what follows the suffix; here only "B" or "iB" may ("64KB", "64KiB"). At most 1 TiB, past
// any GPU's memory.
constexpr std::uint64_t kMaxCommBytes = std::uint64_t{1} << 40;

std::optional<std::uint64_t> parse_size(const std::string& s) {
  if (s.empty() || !(std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '.')) return std::nullopt;
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const std::string rest = s.substr(used);
  double unit = 1;
  if (!rest.empty()) {
    const char c = static_cast<char>(std::toupper(static_cast<unsigned char>(rest[0])));
    unit = c == 'K' ? 0x1p10 : c == 'M' ? 0x1p20 : c == 'G' ? 0x1p30 : c == 'T' ? 0x1p40 : c == 'B' ? 1 : 0;
    const std::string after = rest.substr(1);
    const bool bytes_suffix = after.empty() || (c != 'B' && (after == "B" || after == "b" || after == "iB"));
    if (unit == 0 || !bytes_suffix) return std::nullopt;
  }
  const double bytes = std::floor(v * unit);
  if (!std::isfinite(bytes) || bytes < 0 || bytes > static_cast<double>(kMaxCommBytes)) return std::nullopt;
  return static_cast<std::uint64_t>(bytes);
}

ByteRate node_line_rate(const InterconnectSpec& net) { return net.bw_per_gpu * net.ports_per_node; }

const InterconnectSpec* find_link(const Catalog& cat, const std::string& id, bool intra, CliContext& ctx) {
  const InterconnectSpec* s = Catalog::find(cat.interconnects, id);
  if (!s) fail(ctx, "unknown interconnect \"" + id + "\"" + unknown_id_hint(id, cat.interconnects, "interconnects"));
  else if (s->intra_node != intra)
    fail(ctx, "interconnect \"" + id + "\" is " + (s->intra_node ? "intra-node" : "inter-node") + ", expected " +
                  (intra ? "an intra-node one" : "an inter-node one"));
  else return s;
  return nullptr;
}

std::optional<Cluster> from_instance(const Catalog& cat, const CommOptions& o, CliContext& ctx) {
  const InstanceSpec* inst = Catalog::find(cat.instances, o.instance);
  if (!inst) {
    fail(ctx, "unknown instance \"" + o.instance + "\"" + unknown_id_hint(o.instance, cat.instances, "instances"));
    return std::nullopt;
  }
  if (o.gpus_per_node != 0 && o.gpus_per_node != inst->gpus) {
    fail(ctx, "--gpus-per-node goes with --gpu: instance \"" + inst->id + "\" has " + std::to_string(inst->gpus) +
                  " GPUs per node, got --gpus-per-node " + std::to_string(o.gpus_per_node));
    return std::nullopt;
  }
  Cluster c;
  c.topo.gpus_per_node = inst->gpus;
  c.gpu = inst->gpu;
  c.intra_id = o.intra_node.empty() ? inst->intra_node : o.intra_node;
  c.network_id = o.network.empty() ? inst->network : o.network;
  c.label = std::to_string(o.nodes) + " x " + inst->id;
  if (inst->gpus > 1 || !o.intra_node.empty()) {
    const InterconnectSpec* intra = find_link(cat, c.intra_id, true, ctx);
    if (!intra) return std::nullopt;
    c.topo.intra = *intra;
  }
  if (o.nodes > 1) {
    if (c.network_id.empty()) {
      fail(ctx, "instance \"" + inst->id + "\" has no inter-node network; give --network ID");
      return std::nullopt;
    }
    const InterconnectSpec* net = find_link(cat, c.network_id, false, ctx);
    if (!net) return std::nullopt;
    c.topo.inter = *net;
    const bool own_network = o.network.empty() && inst->network_bw.value() > 0;
    c.topo.node_network_bw = own_network ? inst->network_bw : node_line_rate(*net);
  }
  return c;
}

// The intra-node link of the first instance with this GPU and GPU count, when --intra-node is not given.
std::string default_intra(const Catalog& cat, const std::string& gpu, int gpus) {
  for (const auto& [id, inst] : cat.instances) {
    if (inst.gpu == gpu && inst.gpus == gpus && !inst.intra_node.empty()) return inst.intra_node;
  }
  return "";
}

std::optional<Cluster> from_gpu(const Catalog& cat, const CommOptions& o, CliContext& ctx) {
  if (!Catalog::find(cat.gpus, o.gpu)) {
    fail(ctx, "unknown gpu \"" + o.gpu + "\"" + unknown_id_hint(o.gpu, cat.gpus, "gpus"));
    return std::nullopt;
  }
  if (o.gpus_per_node < 1) {
    fail(ctx, "--gpu needs --gpus-per-node N (N >= 1)");
    return std::nullopt;
  }
  Cluster c;
  c.topo.gpus_per_node = o.gpus_per_node;
  c.gpu = o.gpu;
  c.label = std::to_string(o.nodes) + " x " + std::to_string(o.gpus_per_node) + " " + o.gpu;
  c.intra_id = o.intra_node.empty() ? default_intra(cat, o.gpu, o.gpus_per_node) : o.intra_node;
  if (o.gpus_per_node > 1) {
    if (c.intra_id.empty()) {
      fail(ctx, "no instance has " + std::to_string(o.gpus_per_node) + " x " + o.gpu + "; give --intra-node ID");
      return std::nullopt;
    }
    const InterconnectSpec* intra = find_link(cat, c.intra_id, true, ctx);
    if (!intra) return std::nullopt;
    c.topo.intra = *intra;
  }
  if (o.nodes > 1) {
    if (o.network.empty()) {
      fail(ctx, "more than one node needs --network ID");
      return std::nullopt;
    }
    const InterconnectSpec* net = find_link(cat, o.network, false, ctx);
    if (!net) return std::nullopt;
    c.network_id = o.network;
    c.topo.inter = *net;
    c.topo.node_network_bw = node_line_rate(*net);
  }
  return c;
}

std::optional<Cluster> resolve_cluster(const Catalog& cat, const CommOptions& o, CliContext& ctx) {
  if (o.instance.empty() == o.gpu.empty()) {
    fail(ctx, "give either --instance ID or --gpu ID --gpus-per-node N");
    return std::nullopt;
  }
  if (o.nodes < 1) {
    fail(ctx, "--nodes must be at least 1, got " + std::to_string(o.nodes));
    return std::nullopt;
  }
  auto c = o.instance.empty() ? from_gpu(cat, o, ctx) : from_instance(cat, o, ctx);
  if (!c) return std::nullopt;
  c->topo.nodes = o.nodes;
  c->topo.oversubscription = o.oversubscription;
  if (auto problem = collective::check(c->topo)) {
    fail(ctx, *problem);
    return std::nullopt;
  }
  if (c->topo.ranks() < 2) {
    fail(ctx, "a collective needs at least 2 GPUs and " + c->label + " has 1 (give --nodes N, or --gpus-per-node N "
              "with --gpu)");
    return std::nullopt;
  }
  return c;
}

// All-gather, reduce-scatter and all-to-all move a whole number of floats per rank; all-reduce and broadcast one
// buffer of whole floats.
bool per_rank_op(Op op) { return op == Op::all_gather || op == Op::reduce_scatter || op == Op::all_to_all; }

// What nccl-tests prints as `count`: elements of float per rank buffer (all-gather: per-rank send count;
// reduce-scatter: per-rank receive count; all-to-all: per-peer count).
std::uint64_t element_count(Op op, std::uint64_t bytes, int ranks) {
  const std::uint64_t elements = bytes / 4;
  const bool per_rank = per_rank_op(op);
  return per_rank ? elements / static_cast<std::uint64_t>(ranks) : elements;
}

// The sizes of the sweep as nccl-tests prints and moves them: float elements, and for the per-rank operations
// (all-gather, reduce-scatter, all-to-all) a whole number of elements per rank, (count / ranks) x ranks x 4 bytes
// (nccl-tests' *GetCollByteCount). A size that leaves no element per rank is skipped, and a size equal to the
// previous one after rounding is not repeated.
std::vector<std::uint64_t> sweep_sizes(Op op, std::uint64_t min_bytes, std::uint64_t max_bytes, int ranks) {
  std::vector<std::uint64_t> out;
  const bool per_rank = per_rank_op(op);
  const auto n = static_cast<std::uint64_t>(ranks);
  for (std::uint64_t b = min_bytes; b <= max_bytes; b *= 2) {
    const std::uint64_t count = b / 4;
    const std::uint64_t bytes = per_rank ? count / n * n * 4 : count * 4;
    if (bytes > 0 && (out.empty() || out.back() != bytes)) out.push_back(bytes);
    if (b > max_bytes / 2) break;
  }
  return out;
}

nlohmann::ordered_json cluster_json(const Cluster& c) {
  const Topology& t = c.topo;
  nlohmann::ordered_json j = {{"description", c.label},
                              {"gpu", c.gpu},
                              {"nodes", t.nodes},
                              {"gpus_per_node", t.gpus_per_node},
                              {"ranks", t.ranks()},
                              {"intra_node", c.intra_id},
                              {"intra_node_bw_gbps", t.intra.bw_per_gpu.gbps()},
                              {"intra_node_efficiency", t.intra.efficiency}};
  if (t.nodes > 1) {
    j["network"] = c.network_id;
    j["node_network_gbit"] = t.node_network_bw.gbit();
    j["network_efficiency"] = t.inter.efficiency;
    j["oversubscription"] = t.oversubscription;
  }
  return j;
}

struct Sweep {
  Op op;
  std::optional<Algorithm> algo;
  std::uint64_t min_bytes;
  std::uint64_t max_bytes;
};

void print_table(const Cluster& c, const Sweep& s, const std::string& algo_name) {
  const Topology& t = c.topo;
  std::printf("# gpuplan comm: %s, %d GPUs (%d per node), %s%s%s, algo %s\n", collective::to_string(s.op),
              t.ranks(), t.gpus_per_node, c.label.c_str(), c.intra_id.empty() ? "" : (", " + c.intra_id).c_str(),
              t.nodes > 1 ? (", " + c.network_id).c_str() : "", algo_name.c_str());
  std::printf("#%15s %13s %7s %13s %10s %8s %8s\n", "size", "count", "type", "algo", "time", "algbw", "busbw");
  std::printf("#%15s %13s %7s %13s %10s %8s %8s\n", "(B)", "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)");
  std::string fell_back;  // the algorithm used where the one asked for does not apply (docs/calibration.md)
  for (const std::uint64_t b : sweep_sizes(s.op, s.min_bytes, s.max_bytes, t.ranks())) {
    const auto r = collective::estimate(s.op, Bytes(static_cast<double>(b)), t, s.algo);
    std::printf("%16llu %13llu %7s %13s %10.2f %8.2f %8.2f\n", static_cast<unsigned long long>(b),
                static_cast<unsigned long long>(element_count(s.op, b, t.ranks())), "float",
                collective::to_string(r.algorithm), r.time.us(), r.algbw.gbps(), r.busbw.gbps());
    if (s.algo && r.algorithm != *s.algo && fell_back.empty()) fell_back = collective::to_string(r.algorithm);
  }
  // The header says what was asked; a row that runs another algorithm said so only in its column.
  if (!fell_back.empty())
    std::printf("# note: %s does not apply to %s on this cluster; the rows use %s (column algo)\n", algo_name.c_str(),
                collective::to_string(s.op), fell_back.c_str());
}

void print_json(const Cluster& c, const Sweep& s, const std::string& algo_name) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const std::uint64_t b : sweep_sizes(s.op, s.min_bytes, s.max_bytes, c.topo.ranks())) {
    const auto r = collective::estimate(s.op, Bytes(static_cast<double>(b)), c.topo, s.algo);
    rows.push_back({{"bytes", b},
                    {"count", element_count(s.op, b, c.topo.ranks())},
                    {"type", "float"},
                    {"algorithm", collective::to_string(r.algorithm)},
                    {"time_us", r.time.us()},
                    {"algbw_gbps", r.algbw.gbps()},
                    {"busbw_gbps", r.busbw.gbps()}});
  }
  nlohmann::ordered_json out = {{"op", collective::to_string(s.op)},
                                {"algorithm", algo_name},
                                {"cluster", cluster_json(c)},
                                {"rows", rows}};
  std::cout << calibrate::dump_json(out, 2) << "\n";
}

// "8", "64K", "1M", "4G": a byte count in nccl-tests' binary units.
std::string size_text(double b) {
  const char* unit[] = {"", "K", "M", "G", "T"};
  int u = 0;
  while (b >= 1024 && u < 4) b /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g%s", b, unit[u]);
  return buf;
}

// `--plot FILE`: bus bandwidth (and algorithm bandwidth, lighter) against message size, one point per size,
// coloured by the algorithm the model picks, as nccl-tests' results are usually drawn.
std::string render_comm_plot(const Cluster& c, const Sweep& s) {
  using calibrate::xml_escape;
  struct Pt {
    double bytes, busbw, algbw;
    std::string algo;
  };
  std::vector<Pt> pts;
  for (const std::uint64_t b : sweep_sizes(s.op, s.min_bytes, s.max_bytes, c.topo.ranks())) {
    const auto r = collective::estimate(s.op, Bytes(static_cast<double>(b)), c.topo, s.algo);
    pts.push_back({static_cast<double>(b), r.busbw.gbps(), r.algbw.gbps(), collective::to_string(r.algorithm)});
  }
  double top_bw = 0;
  for (const auto& p : pts) top_bw = std::max({top_bw, p.busbw, p.algbw});
  const Axis ay(0, std::max(top_bw, 1e-9));
  // Sizes on a log2 axis: a tick every 2x, every 4x past 12 doublings, every 16x past 24.
  const double x0 = std::log2(pts.front().bytes), x1 = std::max(std::log2(pts.back().bytes), x0 + 1);
  const int every = x1 - x0 > 24 ? 4 : x1 - x0 > 12 ? 2 : 1;
  const double W = 760, H = 480, left = 70, right = 150, top = 50, bottom = 60;
  const double pw = W - left - right, ph = H - top - bottom;
  auto X = [&](double b) { return left + pw * (std::log2(b) - x0) / (x1 - x0); };
  auto Y = [&](double v) { return top + ph * (1 - ay.frac(v)); };
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << "<text x=\"" << W / 2 << "\" y=\"24\" text-anchor=\"middle\" font-size=\"14\">gpuplan comm: "
    << collective::to_string(s.op) << ", " << c.topo.ranks() << " GPUs, " << xml_escape(c.label) << "</text>\n";
  for (int e = static_cast<int>(std::ceil(x0)); e <= static_cast<int>(std::floor(x1)); ++e) {
    if ((e - static_cast<int>(std::ceil(x0))) % every != 0) continue;
    const double b = std::pow(2.0, e);
    o << "<line x1=\"" << X(b) << "\" y1=\"" << top << "\" x2=\"" << X(b) << "\" y2=\"" << top + ph
      << "\" stroke=\"#eee\"/><text x=\"" << X(b) << "\" y=\"" << top + ph + 18 << "\" text-anchor=\"middle\">"
      << size_text(b) << "</text>\n";
  }
  for (double t : ay.ticks) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", t);
    o << "<line x1=\"" << left << "\" y1=\"" << Y(t) << "\" x2=\"" << left + pw << "\" y2=\"" << Y(t)
      << "\" stroke=\"#eee\"/><text x=\"" << left - 8 << "\" y=\"" << Y(t) + 4 << "\" text-anchor=\"end\">" << buf
      << "</text>\n";
  }
  o << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << pw << "\" height=\"" << ph
    << "\" fill=\"none\" stroke=\"black\"/>\n"
    << "<text x=\"" << left + pw / 2 << "\" y=\"" << H - 20 << "\" text-anchor=\"middle\">message size (bytes)</text>\n"
    << "<text x=\"18\" y=\"" << top + ph / 2 << "\" text-anchor=\"middle\" transform=\"rotate(-90 18 " << top + ph / 2
    << ")\">bandwidth (GB/s)</text>\n";
  auto line = [&](double Pt::*field, const char* colour, const char* dash) {
    o << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"1.5\"" << dash << " points=\"";
    for (const auto& p : pts) o << X(p.bytes) << "," << Y(p.*field) << " ";
    o << "\"/>\n";
  };
  line(&Pt::algbw, "#aaa", " stroke-dasharray=\"4 3\"");
  line(&Pt::busbw, "#555", "");
  const char* palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};
  std::vector<std::string> algos;
  for (const auto& p : pts) {
    auto it = std::find(algos.begin(), algos.end(), p.algo);
    if (it == algos.end()) it = algos.insert(algos.end(), p.algo);
    const char* colour = palette[static_cast<std::size_t>(it - algos.begin()) % 6];
    o << "<circle cx=\"" << X(p.bytes) << "\" cy=\"" << Y(p.busbw) << "\" r=\"3.5\" fill=\"" << colour << "\"><title>"
      << size_text(p.bytes) << "B: busbw " << p.busbw << " GB/s, algbw " << p.algbw << " GB/s, " << p.algo
      << "</title></circle>\n";
  }
  double ly = top + 10;
  for (std::size_t k = 0; k < algos.size(); ++k, ly += 16)
    o << "<circle cx=\"" << left + pw + 20 << "\" cy=\"" << ly - 4 << "\" r=\"4\" fill=\"" << palette[k % 6]
      << "\"/><text x=\"" << left + pw + 30 << "\" y=\"" << ly << "\">busbw, " << xml_escape(algos[k]) << "</text>\n";
  o << "<line x1=\"" << left + pw + 14 << "\" y1=\"" << ly - 4 << "\" x2=\"" << left + pw + 26 << "\" y2=\"" << ly - 4
    << "\" stroke=\"#aaa\" stroke-dasharray=\"4 3\"/><text x=\"" << left + pw + 30 << "\" y=\"" << ly
    << "\">algbw</text>\n</svg>\n";
  return o.str();
}

std::optional<Sweep> parse_sweep(const CommOptions& o, CliContext& ctx) {
  Sweep s{};
  auto op = collective::parse_op(o.op);
  if (!op) {
    fail(ctx, "unknown --op \"" + o.op + "\"; expected allreduce, allgather, reducescatter, alltoall or broadcast");
    return std::nullopt;
  }
  s.op = *op;
  if (o.algo != "auto") {
    s.algo = collective::parse_algorithm(o.algo);
    if (!s.algo) {
      fail(ctx, "unknown --algo \"" + o.algo + "\"; expected ring, tree, hierarchical, nvls, direct or auto");
      return std::nullopt;
    }
  }
  auto lo = parse_size(o.min_bytes);
  auto hi = parse_size(o.max_bytes);
  if (!lo || *lo == 0) {
    fail(ctx, "--min-bytes must be a positive size up to 1T like 8, 64K, 1.5M or 4G, got \"" + o.min_bytes + "\"");
    return std::nullopt;
  }
  if (!hi) {
    fail(ctx, "--max-bytes must be a size up to 1T like 8, 64K, 1.5M or 4G, got \"" + o.max_bytes + "\"");
    return std::nullopt;
  }
  if (*hi < *lo) {
    fail(ctx, "--max-bytes (" + o.max_bytes + ") is below --min-bytes (" + o.min_bytes + ")");
    return std::nullopt;
  }
  s.min_bytes = *lo;
  s.max_bytes = *hi;
  return s;
}

void run_comm(const CommOptions& o, CliContext& ctx) {
  if (o.format != "table" && o.format != "json") {
    fail(ctx, "unknown --format \"" + o.format + "\"; expected table or json");
    return;
  }
  if (!(o.oversubscription >= 1 && o.oversubscription <= 1000)) {
    fail(ctx, "--oversubscription must be in [1, 1000] (1 = non-blocking fabric)");
    return;
  }
  if (const auto problem = extension_problem("--plot", o.plot, "svg", "the plot", "an SVG image")) {
    fail(ctx, *problem);
    return;
  }
  if (!o.plot.empty()) {
    if (const auto problem = output_problem(o.plot, "the plot", catalog_input_files(ctx))) {
      fail(ctx, *problem);
      return;
    }
  }
  auto sweep = parse_sweep(o, ctx);
  if (!sweep) return;
  auto cat = load_catalogs_or_report(ctx);
  if (!cat) {
    ctx.exit_code = kExitBadInput;
    return;
  }
  auto cluster = resolve_cluster(*cat, o, ctx);
  if (!cluster) return;
  if (sweep_sizes(sweep->op, sweep->min_bytes, sweep->max_bytes, cluster->topo.ranks()).empty()) {
    // Doubling can step over the smallest size that holds one (alltoall over 8 GPUs, 31 B to 60 B: 31, then 62).
    const std::string per_gpu = std::to_string(4 * cluster->topo.ranks());
    const std::string least = per_rank_op(sweep->op) ? "at least one float per GPU (" + per_gpu + " bytes)"
                                                     : "at least one float (4 bytes)";
    fail(ctx, std::string(collective::to_string(sweep->op)) + " over " + std::to_string(cluster->topo.ranks()) +
                  " GPUs moves " + least + "; no size from --min-bytes " + o.min_bytes + " doubling to --max-bytes " +
                  o.max_bytes + " holds that");
    return;
  }
  if (o.format == "json") print_json(*cluster, *sweep, o.algo);
  else print_table(*cluster, *sweep, o.algo);
  if (!o.plot.empty()) {
    std::fflush(stdout);
    if (const auto problem = write_output_file(o.plot, render_comm_plot(*cluster, *sweep), "the plot")) {
      fail(ctx, *problem);
      return;
    }
  }
  ctx.exit_code = kExitOk;
}

}  // namespace

void add_comm_command(CLI::App& root, CliContext& ctx) {
  auto opts = std::make_shared<CommOptions>();
  auto* cmd = root.add_subcommand("comm", "Model NCCL collectives on a cluster and print what nccl-tests would");
  cmd->add_option("--instance", opts->instance, "Instance type id (its GPUs, NVLink and network)")->type_name("ID");
  cmd->add_option("--gpu", opts->gpu, "GPU id, instead of --instance (with --gpus-per-node)")->type_name("ID");
  cmd->add_option("--gpus-per-node", opts->gpus_per_node, "GPUs per node with --gpu")->type_name("N");
  cmd->add_option("--network", opts->network, "Inter-node interconnect id (default: the instance's)")
      ->type_name("ID");
  cmd->add_option("--intra-node", opts->intra_node, "Intra-node interconnect id (default: the instance's)")
      ->type_name("ID");
  cmd->add_option("--nodes", opts->nodes, "Number of nodes (default 1)")->type_name("N");
  cmd->add_option("--oversubscription", opts->oversubscription,
                  "Network fabric over-subscription factor, >= 1 (default 1: non-blocking)")
      ->type_name("X");
  cmd->add_option("--op", opts->op, "allreduce|allgather|reducescatter|alltoall|broadcast (default allreduce)")
      ->type_name("OP");
  cmd->add_option("--min-bytes", opts->min_bytes, "Smallest message, e.g. 8, 64K, 1M (default 8)")->type_name("B");
  cmd->add_option("--max-bytes", opts->max_bytes, "Largest message, e.g. 1G, 4G (default 4G)")->type_name("B");
  cmd->add_option("--algo", opts->algo, "ring|tree|hierarchical|nvls|direct|auto (default auto)")->type_name("ALGO");
  cmd->add_option("--format", opts->format, "table|json (default table)")->type_name("FMT");
  cmd->add_option("--plot", opts->plot, "Write an SVG of bus and algorithm bandwidth against message size")->check(non_empty())
      ->type_name("FILE");
  cmd->callback([opts, &ctx] { run_comm(*opts, ctx); });
}

}  // namespace gp::app
