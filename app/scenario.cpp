#include "app/scenario.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "models/step_ops.hpp"

namespace gp::app {

namespace {

constexpr double kBig = 1e18;
constexpr long long kBigInt = 1LL << 50;
constexpr long long kMaxBatch = 1LL << 20;  // samples a micro-batch: far beyond any real one
// Micro-batches an optimizer step: far beyond any real one, and the step simulation walks each of them (2^20 with
// the CPU data pipeline took three minutes and 640 MB for one configuration).
constexpr long long kMaxAccum = 1LL << 16;

// ---- sweep expansion -------------------------------------------------------------------------------

using Points = std::vector<SweepPoint>;

// Pointers of lists directly inside a list: a sweep's list holds values or objects, and [[1, [2, [4]]]] was
// flattened into three configurations without a word.
void nested_lists(const json& v, const std::string& ptr, std::vector<std::string>& out) {
  if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string elem = ptr + "/" + std::to_string(i);
      if (v[i].is_array()) out.push_back(elem);
      else nested_lists(v[i], elem, out);
    }
  } else if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) nested_lists(it.value(), ptr + "/" + pointer_escape(it.key()), out);
  }
}

bool expand_into(const json& v, const std::string& cptr, const std::string& optr, std::size_t limit, Points& out) {
  out.clear();
  if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      Points sub;
      std::string elem = optr + "/" + std::to_string(i);
      if (!expand_into(v[i], cptr, elem, limit, sub)) return false;
      for (auto& p : sub) {
        p.origin.emplace_back(cptr, elem);
        out.push_back(std::move(p));
        if (out.size() > limit) return false;
      }
    }
    if (v.empty()) out.push_back({v, {}});  // an empty list stays (and is reported by validation)
    return true;
  }
  if (v.is_object()) {
    out.push_back({json::object(), {}});
    for (auto it = v.begin(); it != v.end(); ++it) {
      std::string key = "/" + pointer_escape(it.key());
      Points sub;
      if (!expand_into(it.value(), cptr + key, optr + key, limit, sub)) return false;
      if (sub.size() * out.size() > limit) return false;
      Points next;
      next.reserve(out.size() * sub.size());
      for (const auto& a : out) {
        for (const auto& b : sub) {
          SweepPoint p = a;
          p.doc[it.key()] = b.doc;
          p.origin.insert(p.origin.end(), b.origin.begin(), b.origin.end());
          next.push_back(std::move(p));
        }
      }
      out = std::move(next);
    }
    return true;
  }
  out.push_back({v, {}});
  return true;
}

// ---- enum parsing ------------------------------------------------------------------------------------

DataParallel strategy_from(const std::string& s) {
  if (s == "fsdp") return DataParallel::fsdp;
  if (s == "zero1") return DataParallel::zero1;
  if (s == "zero2") return DataParallel::zero2;
  if (s == "zero3") return DataParallel::zero3;
  return DataParallel::ddp;
}

// Looks up a catalog id, reporting an unknown one with the ids it may mean (unknown_id_hint).
template <class M>
const typename M::mapped_type* lookup(ObjectReader& r, const char* key, const M& map, const char* what,
                                      const char* list_kind, bool required) {
  auto id = r.string(key, required);
  if (!id) return nullptr;
  auto it = map.find(*id);
  if (it != map.end()) return &it->second;
  r.error(r.path(key), std::string("unknown ") + what + " id " + brief(json(*id)) + unknown_id_hint(*id, map, list_kind));
  return nullptr;
}

// ---- sections ------------------------------------------------------------------------------------------

struct Parser {
  const Catalog& cat;
  const std::string& file;
  Diagnostics& diags;

  void transformer_dims(ObjectReader& r, ModelSpec& m) {
    m.family = ModelFamily::gpt;
    m.dims.layers = static_cast<int>(r.integer("layers", true, 1, 100000).value_or(1));
    m.dims.d_model = static_cast<int>(r.integer("d_model", true, 1, 1 << 20).value_or(1));
    m.dims.heads = static_cast<int>(r.integer("heads", true, 1, 1 << 16).value_or(1));
    m.dims.vocab = static_cast<int>(r.integer("vocab", false, 1, 1 << 24).value_or(50304));
    m.dims.seq = static_cast<int>(r.integer("seq", false, 1, 1 << 24).value_or(1024));
    m.dims.d_ff = static_cast<int>(r.integer("d_ff", false, 1, 1 << 24).value_or(0));
    m.dims.tied_embeddings = r.boolean("tied_embeddings", false).value_or(true);
    if (m.dims.d_model % m.dims.heads != 0) {
      r.error(r.path("heads"), "must divide d_model (" + std::to_string(m.dims.d_model) + "), got " +
                                   std::to_string(m.dims.heads));
    }
    m.id = "transformer-L" + std::to_string(m.dims.layers) + "-d" + std::to_string(m.dims.d_model);
  }

  void generic_model(ObjectReader& r, ModelSpec& m) {
    m.family = ModelFamily::generic;
    m.id = r.string("name", false).value_or("generic");
    // Bounds far beyond any real model (100 T parameters, 1e18 FLOP and 1 TB of activations a sample, 10 GB
    // samples) that keep every derived time and byte count finite.
    m.params = r.number("params", true, 1, 1e14).value_or(1);
    m.fwd_flops_per_sample = r.number("fwd_flops_per_sample", true, 1, 1e18).value_or(1);
    m.activation_bytes_per_sample = Bytes(r.number("activation_bytes_per_sample", true, 1, 1e12).value_or(1));
    m.sample_bytes = Bytes(r.number("sample_bytes", false, 1, 1e10).value_or(0));
  }

  // /workload: the model, batch, run length, precision and optimizer. Needs dp to resolve global_batch.
  void workload(ObjectReader& r, JobConfig& job) {
    int given = r.has("model") + r.has("transformer") + r.has("generic");
    if (given != 1) {
      r.error(r.pointer(), given == 0 ? "must give the model: one of \"model\" (a catalog id), \"transformer\" "
                                        "(dimensions) or \"generic\" (parameters and FLOPs)"
                                      : "must give only one of \"model\", \"transformer\", \"generic\"");
    }
    ModelSpec m;
    if (r.has("model")) {
      if (const ModelSpec* spec = lookup(r, "model", cat.models, "model", "models", true)) m = *spec;
    } else if (const json* t = r.object("transformer", false)) {
      ObjectReader tr(t, file, r.path("transformer"), diags);
      transformer_dims(tr, m);
      tr.finish();
    } else if (const json* g = r.object("generic", false)) {
      ObjectReader gr(g, file, r.path("generic"), diags);
      generic_model(gr, m);
      gr.finish();
    }
    r.accept("model");
    r.accept("transformer");
    r.accept("generic");
    if (auto seq = r.integer("seq", false, 1, 1 << 24)) {
      if (m.family == ModelFamily::gpt) {
        m.dims.seq = static_cast<int>(*seq);
      } else {
        r.error(r.path("seq"), "applies only to transformer (gpt) models");
      }
    }
    // A vision model's image size, square as torchvision's transforms and ViT's image_size take it (catalog figures
    // are at 224; EfficientNet-B7 is trained at 600, ViTs fine-tuned at 384): the structure is built for it and the
    // sample copied to the GPU scales with its area. A number, so that a list of sizes is a sweep like any other.
    if (const auto side = r.integer("image_size", false, 32, 4096)) {
      if (m.family != ModelFamily::cnn && m.family != ModelFamily::vit && m.family != ModelFamily::swin) {
        r.error(r.path("image_size"), "applies only to the catalog's vision models (CNNs, ViT, Swin)");
      } else {
        const int hw = static_cast<int>(*side);
        const double base = m.input_shape.size() == 3 ? double(m.input_shape[1]) * m.input_shape[2] : 224.0 * 224.0;
        m.sample_bytes = Bytes(m.sample_bytes.value() * (double(hw) * hw / base));
        m.input_shape = {3, hw, hw};
      }
    }
    job.step.model = m;
    job.step.precision = parse_precision(r.choice("precision", false, {"fp32", "tf32", "bf16", "fp16"}).value_or("bf16"))
                               .value_or(Precision::bf16);
    std::vector<std::string> optimizer_names;
    for (const OptimizerKind o : kOptimizers) optimizer_names.emplace_back(to_string(o));
    job.step.optimizer =
        parse_optimizer(r.choice("optimizer", false, optimizer_names).value_or("adamw-fused")).value_or(
            OptimizerKind::adamw_fused);

    auto global = r.integer("global_batch", false, 1, kBigInt);
    auto micro = r.integer("micro_batch", false, 1, kMaxBatch);
    auto accum = r.integer("grad_accum", false, 1, kMaxAccum);
    const long long dp = job.parallel.dp;
    // tp x pp that does not divide the GPUs is reported on its own (consistency); the data-parallel size is then
    // no number to check the global batch against.
    const int mp = std::max(1, job.parallel.tp * job.parallel.pp);
    const bool dp_known = job.cluster.total_gpus() % mp == 0;
    if (!r.has("global_batch") && !r.has("micro_batch")) {
      r.error(r.pointer(), "must give \"global_batch\" or \"micro_batch\" (samples per GPU per micro-batch)");
    } else if (!global && !micro) {
      // Already reported as a wrong type or range.
    } else if (global) {
      long long mb = micro.value_or(0);
      long long ga = accum.value_or(0);
      if (mb == 0) mb = ga > 0 ? *global / (dp * ga) : *global / dp;
      if (ga == 0) ga = mb > 0 ? *global / (dp * mb) : 1;
      if (mb > kMaxBatch || ga > kMaxAccum) {
        r.error(r.path("global_batch"), "gives " + std::to_string(mb > kMaxBatch ? mb : ga) + (mb > kMaxBatch ? " samples a micro-batch" : " micro-batches a step") +
                                            ", more than " + std::to_string(mb > kMaxBatch ? kMaxBatch : kMaxAccum) + "; give micro_batch and grad_accum");
        mb = std::min(mb, kMaxBatch);
        ga = std::min(ga, kMaxAccum);
      } else if ((mb <= 0 || mb * ga * dp != *global) && dp_known) {
        r.error(r.path("global_batch"), "must equal micro_batch x grad_accum x data-parallel size (" +
                                            std::to_string(dp) + "), got " + std::to_string(*global));
        mb = std::max<long long>(mb, 1);
        ga = std::max<long long>(ga, 1);
      }
      job.step.micro_batch = static_cast<int>(mb);
      job.step.grad_accum = static_cast<int>(ga);
    } else {
      job.step.micro_batch = static_cast<int>(*micro);
      job.step.grad_accum = static_cast<int>(accum.value_or(1));
    }

    auto steps = r.integer("steps", false, 1, kBigInt);
    const json* ds = r.object("dataset", false);
    if (steps && ds) r.error(r.path("dataset"), "give either \"steps\" or \"dataset\", not both");
    // A "steps" of the wrong type or range is reported where it is; "must give" is only for a missing one.
    if (!r.has("steps") && !r.has("dataset"))
      r.error(r.pointer(), "must give the run length: \"steps\" or \"dataset\" {samples, epochs}");
    if (steps) job.length.steps = *steps;
    if (ds) {
      ObjectReader dr(ds, file, r.path("dataset"), diags);
      job.length.samples = dr.number("samples", true, 1, 1e15);
      job.length.epochs = dr.number("epochs", false, 1e-6, 1e6).value_or(1);
      // Each within its range, the product can still pass what a step count holds: 1e6 samples x 1e14 epochs
      // overflowed to a negative time and cost, recommended as the cheapest.
      const double global_batch = static_cast<double>(job.step.micro_batch) * job.step.grad_accum * std::max(dp, 1LL);
      if (job.length.samples && global_batch >= 1) {
        const double n = *job.length.samples * job.length.epochs / global_batch;
        if (n > static_cast<double>(kBigInt)) {
          char buf[160];
          std::snprintf(buf, sizeof buf, "samples x epochs / global batch is %.3g optimizer steps; at most %.3g",
                        n, static_cast<double>(kBigInt));
          r.error(r.path("dataset"), buf);
        }
      }
      dr.finish();
    }
  }

  void dataloader(ObjectReader& r, JobConfig& job) {
    auto& l = job.loader;
    auto src = r.choice("source", false, {"synthetic", "cpu"}).value_or("synthetic");
    l.synthetic = src == "synthetic";
    l.num_workers = static_cast<int>(r.integer("num_workers", false, 0, 1024).value_or(0));
    l.pin_memory = r.boolean("pin_memory", false).value_or(true);
    l.persistent_workers = r.boolean("persistent_workers", false).value_or(true);
    l.prefetch_factor = static_cast<int>(r.integer("prefetch_factor", false, 1, 1024).value_or(2));
    l.numa_binding = r.boolean("numa_binding", false).value_or(true);
    auto cost = r.number("sample_cpu_ms", !l.synthetic, 1e-6, 1e6);
    l.sample_cpu = Seconds::ms(cost.value_or(0));
    l.sample_cpu_cv = r.number("sample_cpu_cv", false, 0, 10).value_or(0.2);
    auto sb = r.number("sample_bytes", false, 1, 1e10);
    l.sample_bytes = Bytes(sb.value_or(job.step.model.sample_bytes.value()));
    if (!l.synthetic && l.sample_bytes.value() <= 0 && !r.has("sample_bytes")) {  // a bad value: reported above
      r.error(r.pointer(), "must give \"sample_bytes\" (bytes of one sample copied to the GPU): the model's "
                           "catalog entry has none");
    }
    l.worker_startup = Seconds(r.number("worker_startup_s", false, 0, 3600).value_or(0));
    if (!l.synthetic && l.num_workers > 0 && !r.has("worker_startup_s")) {
      r.error(r.pointer(), "must give \"worker_startup_s\" (seconds to start the DataLoader worker pool, whose "
                           "workers start together; the reference runs measured first_batch_s 0.8-1.4 s)");
    }
    if (l.num_workers == 0 && r.has("prefetch_factor")) {
      r.error(r.path("prefetch_factor"), "applies only when num_workers > 0 (as in torch.utils.data.DataLoader)");
    }
  }

  void software(ObjectReader& r, JobConfig& job) {
    if (const json* p = r.object("parallelism", false)) {
      ObjectReader pr(p, file, r.path("parallelism"), diags);
      job.parallel.strategy =
          strategy_from(pr.choice("strategy", false, {"ddp", "fsdp", "zero1", "zero2", "zero3"}).value_or("ddp"));
      job.parallel.tp = static_cast<int>(pr.integer("tp", false, 1, 1 << 20).value_or(1));
      job.parallel.pp = static_cast<int>(pr.integer("pp", false, 1, 1 << 20).value_or(1));
      job.parallel.sequence_parallel = pr.boolean("sequence_parallel", false).value_or(false);
      job.parallel.no_sync = pr.boolean("no_sync", false).value_or(true);
      // FSDP's MixedPrecision: the step computes on 16-bit parameters (checked with the strategy below).
      job.step.params_16bit = pr.boolean("fsdp_mixed_precision", false).value_or(false);
      pr.finish();
    }
    job.step.cuda_graphs = r.boolean("cuda_graphs", false).value_or(false);
    job.step.activation_checkpointing = r.boolean("activation_checkpointing", false).value_or(false);
    job.step.channels_last = r.boolean("channels_last", false).value_or(true);
    job.step.logits_kept = r.boolean("logits_kept", false).value_or(true);
    if (const json* n = r.object("nccl", false)) {
      ObjectReader nr(n, file, r.path("nccl"), diags);
      auto a = nr.choice("algorithm", false, {"auto", "ring", "tree", "hierarchical"}).value_or("auto");
      job.comm.algorithm = a == "ring"           ? CollectiveAlgo::ring
                           : a == "tree"         ? CollectiveAlgo::tree
                           : a == "hierarchical" ? CollectiveAlgo::hierarchical
                                                 : CollectiveAlgo::auto_select;
      job.comm.bucket = Bytes::mib(nr.number("bucket_mb", false, 0.01, 1e6).value_or(25));
      job.comm.overlap = nr.boolean("overlap", false).value_or(true);
      job.parallel.gradient_as_bucket_view = nr.boolean("gradient_as_bucket_view", false).value_or(false);
      job.parallel.broadcast_buffers = nr.boolean("broadcast_buffers", false).value_or(true);
      nr.finish();
    }
    r.accept("dataloader");  // read after the workload (needs the model's sample size)
  }

  void cluster(ObjectReader& r, JobConfig& job) {
    auto& c = job.cluster;
    const bool by_instance = r.has("instance");
    if (by_instance == r.has("gpu")) {
      r.error(r.pointer(), by_instance ? "give either \"instance\" or \"gpu\", not both"
                                       : "must give \"instance\" (a catalog id) or \"gpu\" with \"gpus_per_node\"");
    }
    const InstanceSpec* inst =
        by_instance ? lookup(r, "instance", cat.instances, "instance", "instances", true) : nullptr;
    r.accept("instance");
    if (inst) {
      c.instance = *inst;
      if (const GpuSpec* g = Catalog::find(cat.gpus, inst->gpu)) c.gpu = *g;
      c.gpus_per_node = inst->gpus;
      c.cpu_cores_per_node = inst->vcpus;  // logical CPUs, the unit of --cpus and of worker scheduling
      c.node_network_bw = inst->network_bw;
      if (const auto* ic = Catalog::find(cat.interconnects, inst->intra_node)) c.intra_node = *ic;
      if (const auto* net = Catalog::find(cat.interconnects, inst->network)) c.network = *net;
      for (const char* k : {"gpus_per_node", "intra_node", "network"}) {
        if (r.has(k)) r.error(r.path(k), "is set by the instance type; remove it or give \"gpu\" instead");
        r.accept(k);
      }
    } else if (r.has("gpu")) {
      if (const GpuSpec* g = lookup(r, "gpu", cat.gpus, "GPU", "gpus", true)) c.gpu = *g;
      c.gpus_per_node = static_cast<int>(r.integer("gpus_per_node", true, 1, 1024).value_or(1));
      if (const auto* ic = lookup(r, "intra_node", cat.interconnects, "interconnect", "interconnects", true))
        c.intra_node = *ic;
      if (const auto* net = lookup(r, "network", cat.interconnects, "interconnect", "interconnects", false)) {
        c.network = *net;
        c.node_network_bw = net->bw_per_gpu * static_cast<double>(net->ports_per_node);
      }
    }
    r.accept("gpu");
    if (auto cores = r.integer("cpu_cores_per_node", false, 1, 1 << 20)) c.cpu_cores_per_node = static_cast<int>(*cores);
    if (auto numa = r.integer("numa_nodes", false, 1, 64)) c.numa_nodes = static_cast<int>(*numa);
    if (auto s = r.number("host_cpu_scale", false, 0.05, 20)) c.host_cpu_scale = *s;
    auto nodes = r.integer("nodes", false, 1, 1 << 24);
    auto gpus = r.integer("gpus", false, 1, 1 << 30);
    if (nodes && gpus) r.error(r.path("gpus"), "give either \"nodes\" or \"gpus\", not both");
    if (gpus) {
      if (*gpus < c.gpus_per_node) {
        c.gpus_per_node = static_cast<int>(*gpus);  // a partial node: use only some of its GPUs
        c.nodes = 1;
      } else if (*gpus % c.gpus_per_node != 0) {
        r.error(r.path("gpus"), "must be a multiple of the GPUs per node (" + std::to_string(c.gpus_per_node) +
                                    "), got " + std::to_string(*gpus));
      } else {
        c.nodes = static_cast<int>(*gpus / c.gpus_per_node);
      }
    } else {
      c.nodes = static_cast<int>(nodes.value_or(1));
    }
    // An unknown instance or network is reported where it is named; this is for a network named nowhere.
    if (c.nodes > 1 && !c.network && !r.has("network") && !(r.has("instance") && !c.instance)) {
      r.error(r.pointer(), "spans " + std::to_string(c.nodes) + " nodes but names no \"network\" between them");
    }
    c.oversubscription = r.number("oversubscription", false, 1, 1000).value_or(1);
    c.gpus_per_pcie_switch = static_cast<int>(r.integer("gpus_per_pcie_switch", false, 1, 64).value_or(2));
    if (const StorageSpec* st = lookup(r, "storage", cat.storage, "storage", "storage", false)) c.storage = *st;
  }

  void container(ObjectReader& r, JobConfig& job) {
    if (const ImageSpec* im = lookup(r, "image", cat.images, "image", "images", true)) job.container.image = *im;
    // docker run --cpus takes multiples of 0.01; smaller would leave the simulated workers almost no CPU.
    if (auto cpus = r.number("cpus", false, 0.01, 1e5)) job.container.cpus = *cpus;
    if (auto mem = r.positive("memory_gib", false)) job.container.memory = Bytes::gib(*mem);
  }

  void checkpoint(ObjectReader& r, JobConfig& job) {
    auto& ck = job.checkpoint;
    ck.enabled = r.boolean("enabled", false).value_or(true);
    if (auto s = r.integer("every_steps", false, 1, kBigInt)) ck.every_steps = *s;
    if (auto m = r.number("every_minutes", false, 0.1, 1e7)) ck.every = Seconds(*m * 60);
    if (ck.enabled && !r.has("every_steps") && !r.has("every_minutes")) {  // a bad value: reported above
      r.error(r.pointer(), "must give \"every_steps\" or \"every_minutes\" (or \"enabled\": false)");
    }
    if (ck.every_steps && ck.every) r.error(r.path("every_minutes"), "give either every_steps or every_minutes");
    ck.async = r.boolean("async", false).value_or(false);
    if (const StorageSpec* st = lookup(r, "storage", cat.storage, "storage", "storage", false)) ck.storage = *st;
  }

  void pricing(ObjectReader& r, JobConfig& job) {
    auto& p = job.pricing;
    auto plan = r.choice("plan", false, {"on-demand", "reserved", "spot", "on-prem"}).value_or("on-demand");
    p.plan = plan == "reserved" ? PricingPlan::reserved
             : plan == "spot"   ? PricingPlan::spot
             : plan == "on-prem" ? PricingPlan::on_prem
                                 : PricingPlan::on_demand;
    if (auto v = r.number("price_per_gpu_hour", false, 1e-6, 1e4)) p.price_per_gpu_hour = Dollars(*v);
    const bool onprem = p.plan == PricingPlan::on_prem;
    if (auto v = r.number("capex_per_node_usd", onprem, 1, 1e9)) p.capex_per_node = Dollars(*v);
    p.depreciation_years = r.number("depreciation_years", false, 0.5, 30).value_or(p.depreciation_years);
    p.residual_fraction = r.number("residual_fraction", false, 0, 1).value_or(p.residual_fraction);
    if (auto v = r.number("electricity_usd_per_kwh", onprem, 1e-6, 100)) p.electricity_per_kwh = Dollars(*v);
    if (auto v = r.number("pue", onprem, 1.0, 5.0)) p.pue = *v;
    p.staff_per_year = Dollars(r.number("staff_usd_per_year", false, 0, kBig).value_or(0));
    const auto& cl = job.cluster;
    if (!p.price_per_gpu_hour && cl.instance) {
      const auto& pr = cl.instance->prices;
      if (p.plan == PricingPlan::reserved && !pr.reserved_per_hour) {
        r.error(r.path("plan"), "instance \"" + cl.instance->id + "\" has no reserved price in the catalog; give "
                                "\"price_per_gpu_hour\"");
      }
      if (p.plan == PricingPlan::spot && !pr.spot_per_hour) {
        r.error(r.path("plan"), "instance \"" + cl.instance->id + "\" has no spot price in the catalog; give "
                                "\"price_per_gpu_hour\"");
      }
    }
    if (!p.price_per_gpu_hour && !cl.instance && !cl.gpu.id.empty() && !onprem) {
      r.error(r.pointer(), "must give \"price_per_gpu_hour\" when the cluster is given by GPU type rather than "
                           "instance (or use \"plan\": \"on-prem\")");
    }
  }

  void reliability(ObjectReader& r, JobConfig& job) {
    auto& rl = job.reliability;
    rl.gpu_mtbf_hours = r.number("gpu_mtbf_hours", false, 1, 1e9).value_or(0);
    rl.node_mtbf_hours = r.number("node_mtbf_hours", false, 1, 1e9).value_or(0);
    bool failures = rl.gpu_mtbf_hours > 0 || rl.node_mtbf_hours > 0;
    rl.restart = Seconds(60 * r.number("restart_minutes", failures, 0, 1e6).value_or(0));
    rl.spot_interruptions_per_day = r.number("spot_interruptions_per_day", false, 0, 1e4).value_or(0);
  }

  void roi(ObjectReader& r, JobConfig& job) {
    auto& o = job.roi;
    if (auto v = r.positive("value_per_run_usd", false)) o.value_per_training_run = Dollars(*v);
    if (auto v = r.positive("runs_per_year", false)) o.runs_per_year = *v;
    o.discount_rate = r.number("discount_rate", false, 0, 1).value_or(o.discount_rate);
    o.horizon_years = r.number("horizon_years", false, 0.1, 50).value_or(o.horizon_years);
    if (auto v = r.positive("deadline_hours", false)) o.deadline_hours = *v;
  }

  // Cross-field checks that need several sections.
  void consistency(ObjectReader& root, JobConfig& job) {
    const int total = job.cluster.total_gpus();
    const int mp = job.parallel.tp * job.parallel.pp;
    if (mp > 0 && total % mp != 0) {
      root.error("/software/parallelism", "tp x pp (" + std::to_string(mp) + ") must divide the GPU count (" +
                                              std::to_string(total) + ")");
    }
    if (job.parallel.tp > job.cluster.gpus_per_node) {
      root.error("/software/parallelism/tp", "must not exceed the GPUs per node (" +
                                                 std::to_string(job.cluster.gpus_per_node) + "), got " +
                                                 std::to_string(job.parallel.tp));
    }
    // Any model given by transformer dimensions (a GPT or a ViT): the simulation times its tensor-parallel
    // all-reduces and splits its layers over stages from them (sim/job_inputs.cpp `transformer_layers`).
    const auto& dims = job.step.model.dims;
    const bool transformer = (job.step.model.family == ModelFamily::gpt || job.step.model.family == ModelFamily::vit) &&
                             dims.layers > 0 && dims.d_model > 0;
    // Tensor parallelism splits a transformer's attention and MLP matrices (Megatron); a CNN, a Swin or a generic
    // model has no dimensions to time its all-reduces by, and the step divided its compute by tp for free.
    if (!transformer && job.parallel.tp > 1) {
      root.error("/software/parallelism/tp", "applies to transformers given by their dimensions (a GPT, a ViT or "
                                             "workload.transformer), got " + std::to_string(job.parallel.tp) +
                                             " for a model without them: use data parallelism (tp 1)");
    }
    if (transformer && job.parallel.tp > 1 && dims.heads > 0 && dims.heads % job.parallel.tp) {
      root.error("/software/parallelism/tp", "must divide the attention heads (" +
                                                 std::to_string(job.step.model.dims.heads) + ")");
    }
    // FSDP's MixedPrecision casts the sharded parameters to the step's 16-bit dtype; other strategies keep a
    // whole copy of the weights and autocast, and an fp32 / tf32 step has no 16-bit dtype to cast to.
    if (job.step.params_16bit) {
      if (!shards_weights(job.parallel.strategy))
        root.error("/software/parallelism/fsdp_mixed_precision",
                   std::string("applies to the fsdp and zero3 strategies, got ") + to_string(job.parallel.strategy));
      else if (!is_autocast(job.step.precision))
        root.error("/software/parallelism/fsdp_mixed_precision",
                   std::string("needs a 16-bit workload.precision (bf16 or fp16), got ") +
                       to_string(job.step.precision));
    }
    // Stages are modelled as equal (1/pp of the layers each): a pp that does not divide the layers has a
    // stage with one layer more than that, which sets the pipeline's pace and its memory; refused rather than
    // silently averaged (24 layers on 16 stages ran as 1.5 layers a stage; the slowest holds 2).
    if (transformer && job.parallel.pp > 1 && dims.layers % job.parallel.pp) {
      root.error("/software/parallelism/pp", "must divide the layers (" +
                                                 std::to_string(job.step.model.dims.layers) + "), got " +
                                                 std::to_string(job.parallel.pp));
    }
    // Whether the document's section names `key` (then a problem with it was reported there).
    const json* doc = root.object_ptr();
    const auto names_key = [&](const char* section, const char* key) {
      return doc && doc->contains(section) && (*doc)[section].is_object() && (*doc)[section].contains(key);
    };
    if (job.checkpoint.enabled && !job.checkpoint.storage) {
      // A storage that was named but is unknown is reported where it is named; this is for none named at all.
      if (names_key("checkpoint", "storage") || names_key("cluster", "storage")) {
        // already reported
      } else if (job.cluster.storage.id.empty()) {
        root.error("/checkpoint", "must name \"storage\" (or the cluster must name one)");
      } else {
        job.checkpoint.storage = job.cluster.storage;
      }
    }
    // (An unknown instance is reported where it is named: its vCPUs are not missing, the instance is.)
    const bool unknown_instance = names_key("cluster", "instance") && !job.cluster.instance;
    if (!job.loader.synthetic && job.cluster.cpu_cores_per_node == 0 && !unknown_instance) {
      root.error("/cluster", "must give \"cpu_cores_per_node\" for a CPU data pipeline (the instance type has "
                             "no vCPU count)");
    }
    if (job.container.cpus && job.cluster.cpu_cores_per_node > 0 && *job.container.cpus > job.cluster.cpu_cores_per_node) {
      root.error("/container/cpus", "exceeds the node's CPUs");
    }
  }

  JobConfig parse(const json& doc) {
    JobConfig job;
    ObjectReader root(&doc, file, "", diags);
    if (!root.ok()) return job;
    root.string("name", false);
    root.string("description", false);
    job.seed = static_cast<std::uint64_t>(root.integer("seed", false, 0, kBigInt).value_or(1));
    root.accept("$schema");

    // Cluster first: the data-parallel size depends on it and on the parallelism.
    const json* cl = root.object("cluster", true);
    ObjectReader cr(cl, file, "/cluster", diags);
    if (cl) cluster(cr, job);
    cr.finish();

    const json* sw = root.object("software", false);
    ObjectReader sr(sw, file, "/software", diags);
    if (sw) software(sr, job);
    const int mp = std::max(1, job.parallel.tp * job.parallel.pp);
    job.parallel.dp = std::max(1, job.cluster.total_gpus() / mp);

    const json* wl = root.object("workload", true);
    ObjectReader wr(wl, file, "/workload", diags);
    if (wl) workload(wr, job);
    wr.finish();

    if (sw) {
      const json* dl = sr.object("dataloader", false);
      ObjectReader dr(dl, file, "/software/dataloader", diags);
      if (dl) dataloader(dr, job);
      dr.finish();
    }
    sr.finish();

    auto section = [&](const char* key, bool required, auto fn) {
      const json* s = root.object(key, required);
      ObjectReader r(s, file, std::string("/") + key, diags);
      if (s) (this->*fn)(r, job);
      r.finish();
    };
    section("container", false, &Parser::container);
    section("checkpoint", false, &Parser::checkpoint);
    section("pricing", false, &Parser::pricing);
    if (!root.has("pricing")) {
      json none = json::object();
      ObjectReader pr(&none, file, "/pricing", diags);
      pricing(pr, job);
    }
    section("reliability", false, &Parser::reliability);
    section("roi", false, &Parser::roi);
    consistency(root, job);
    root.finish();
    return job;
  }
};

}  // namespace

std::string SweepPoint::original_pointer(const std::string& p) const {
  const std::pair<std::string, std::string>* best = nullptr;
  for (const auto& kv : origin) {
    const auto& k = kv.first;
    bool prefix = p.compare(0, k.size(), k) == 0 && (p.size() == k.size() || p[k.size()] == '/');
    if (prefix && (!best || k.size() > best->first.size())) best = &kv;
  }
  if (!best) return p;
  return best->second + p.substr(best->first.size());
}

namespace {
// An unknown field is a key, not a value: when its value is a sweep's list it is named once, at the key (the pointer
// of each element was "/workload/channels_lst/0", "/1", ...); and when the readers know the key in another object,
// the message says which ("activation_checkpointing" under workload belongs in /software).
using FieldHomes = std::map<std::string, std::set<std::string>>;
void fix_unknown_field(const SweepPoint& pt, const FieldHomes& all, const Diagnostic& d, Diagnostic& fixed) {
  const bool swept = std::any_of(pt.origin.begin(), pt.origin.end(), [&](const auto& o) { return o.first == d.pointer; });
  if (swept) fixed.pointer = fixed.pointer.substr(0, fixed.pointer.rfind('/'));
  if (d.message != "unknown field") return;  // it already suggests a near name in this object
  const std::size_t slash = d.pointer.rfind('/');
  if (slash == std::string::npos) return;
  const std::string object = d.pointer.substr(0, slash);
  const std::string key = d.pointer.substr(slash + 1);  // as escaped in the pointer
  const auto homes = std::find_if(all.begin(), all.end(), [&](const auto& kv) { return pointer_escape(kv.first) == key; });
  if (homes == all.end()) return;
  std::vector<std::string> elsewhere;
  for (const std::string& h : homes->second)
    if (h != object) elsewhere.push_back(h.empty() ? "the top level" : pt.original_pointer(h));
  if (elsewhere.empty()) return;
  fixed.message += " here (it belongs in " + elsewhere.front();
  for (std::size_t i = 1; i < elsewhere.size(); ++i) fixed.message += " or " + elsewhere[i];
  fixed.message += ")";
}
// Where the parser reads each field: a parse of every object a scenario may have, each empty (its problems dropped).
FieldHomes skeleton_field_homes(const Catalog& catalog) {
  Diagnostics skeleton;
  skeleton.record_field_homes();
  Parser parser{catalog, "", skeleton};
  const json doc = {{"cluster", json::object()},
                    {"software",
                     {{"parallelism", json::object()}, {"nccl", json::object()}, {"dataloader", json::object()}}},
                    {"workload", {{"dataset", json::object()}}},
                    {"container", json::object()},
                    {"checkpoint", json::object()},
                    {"pricing", json::object()},
                    {"reliability", json::object()},
                    {"roi", json::object()}};
  parser.parse(doc);
  return skeleton.field_homes();
}
}  // namespace

std::optional<std::vector<SweepPoint>> expand_sweep(const json& doc, std::size_t limit) {
  Points out;
  if (!expand_into(doc, "", "", limit, out)) return std::nullopt;
  return out;
}

std::optional<Scenario> load_scenario_text(const std::string& text, const std::string& name,
                                           const Catalog& catalog, Diagnostics& diags) {
  auto doc = parse_json_text(text, name, diags);
  if (!doc) return std::nullopt;
  if (!doc->is_object()) {
    diags.add(name, "", "must be an object with \"workload\" and \"cluster\"");
    return std::nullopt;
  }
  std::vector<std::string> nested;
  nested_lists(*doc, "", nested);
  for (const auto& ptr : nested)
    diags.add(name, ptr, "a list inside a list: a sweep lists values or objects (write [1, 2, 4], not [[1, 2], 4])");
  if (!nested.empty()) return std::nullopt;
  // The title and the free text describe the whole run: as lists they multiplied every configuration into
  // identical copies and the title fell back to the file's path without a word.
  bool text_list = false;
  for (const char* key : {"name", "description"}) {
    if (!doc->contains(key) || !(*doc)[key].is_array()) continue;
    diags.add(name, std::string("/") + key,
              std::string("one ") + (key[0] == 'n' ? "title" : "description") +
                  " per scenario, not a list: it describes every configuration of the run, got a list");
    text_list = true;
  }
  if (text_list) return std::nullopt;
  auto points = expand_sweep(*doc, kMaxSweepConfigs);
  if (!points) {
    diags.add(name, "", "the sweep expands to more than " + std::to_string(kMaxSweepConfigs) +
                            " configurations; split the scenario");
    return std::nullopt;
  }
  if (points->size() > 1) diags.mark_sweep();
  Scenario sc;
  sc.path = name;
  sc.text = text;
  if (doc->contains("name") && (*doc)["name"].is_string()) sc.name = (*doc)["name"];
  if (doc->contains("description") && (*doc)["description"].is_string()) sc.description = (*doc)["description"];

  std::set<std::string> seen;
  // Pricing fields that a configuration's plan does not read: field -> (first pointer, read by some configuration).
  std::map<std::string, std::pair<std::string, bool>> plan_fields;
  std::set<std::optional<double>> deadlines;
  std::optional<FieldHomes> skeleton_homes;  // where each field belongs, for unknown fields (computed when one is)
  for (std::size_t i = 0; i < points->size(); ++i) {
    const SweepPoint& pt = (*points)[i];
    Diagnostics local;
    Parser parser{catalog, name, local};
    JobConfig job = parser.parse(pt.doc);
    deadlines.insert(job.roi.deadline_hours);
    if (const auto pricing = pt.doc.find("pricing"); pricing != pt.doc.end() && pricing->is_object()) {
      const bool onprem = job.pricing.plan == PricingPlan::on_prem;
      for (const char* key : {"price_per_gpu_hour", "capex_per_node_usd", "depreciation_years", "residual_fraction",
                              "electricity_usd_per_kwh", "pue", "staff_usd_per_year"}) {
        if (!pricing->contains(key)) continue;
        const bool read = (std::string(key) == "price_per_gpu_hour") != onprem;
        auto [it, fresh] = plan_fields.try_emplace(key, pt.original_pointer(std::string("/pricing/") + key), read);
        if (!fresh) it->second.second = it->second.second || read;
      }
    }
    // Spot interruptions are failures of the spot plan only: under another plan they were ignored without a word.
    if (const auto rel = pt.doc.find("reliability"); rel != pt.doc.end() && rel->is_object() &&
                                                     rel->contains("spot_interruptions_per_day")) {
      const bool read = job.pricing.plan == PricingPlan::spot;
      auto [it, fresh] = plan_fields.try_emplace("spot_interruptions_per_day",
                                                 pt.original_pointer("/reliability/spot_interruptions_per_day"), read);
      if (!fresh) it->second.second = it->second.second || read;
    }
    for (const auto& d : local.items()) {
      Diagnostic fixed = d;
      fixed.pointer = pt.original_pointer(d.pointer);
      if (d.message.rfind("unknown field", 0) == 0) {
        if (!skeleton_homes) skeleton_homes = skeleton_field_homes(catalog);  // once per scenario
        fix_unknown_field(pt, *skeleton_homes, d, fixed);
      }
      if (seen.insert(fixed.render()).second) diags.add(fixed.file, fixed.pointer, fixed.message);
    }
    char id[32];
    std::snprintf(id, sizeof id, "c%04zu", i);
    job.id = id;
    sc.configs.push_back(std::move(job));
    sc.concrete.push_back(pt.doc);
    for (const auto& [cptr, optr] : pt.origin) {
      std::string dotted;
      // "/workload/micro_batch" -> "workload.micro_batch" (RFC 6901 escapes undone).
      for (std::size_t at = 1; at <= cptr.size();) {
        std::size_t next = cptr.find('/', at);
        if (next == std::string::npos) next = cptr.size();
        std::string token = cptr.substr(at, next - at);
        for (std::size_t k; (k = token.find("~1")) != std::string::npos;) token.replace(k, 2, "/");
        for (std::size_t k; (k = token.find("~0")) != std::string::npos;) token.replace(k, 2, "~");
        dotted += (dotted.empty() ? "" : ".") + token;
        at = next + 1;
      }
      if (std::find(sc.sweep_dims.begin(), sc.sweep_dims.end(), dotted) == sc.sweep_dims.end())
        sc.sweep_dims.push_back(dotted);
    }
  }
  for (const auto& [key, where] : plan_fields) {
    if (where.second) continue;
    if (key == "spot_interruptions_per_day") {
      diags.add(name, where.first, "applies only to \"plan\": \"spot\" and no configuration of this scenario is on "
                                   "spot; remove it or set the plan");
    } else if (key == "price_per_gpu_hour") {
      diags.add(name, where.first, "does not apply to \"plan\": \"on-prem\", whose price is the TCO of "
                                   "\"capex_per_node_usd\", power and staff; remove it or choose another plan");
    } else {
      diags.add(name, where.first, "applies only to \"plan\": \"on-prem\" and no configuration of this scenario "
                                   "is on-prem; remove it or set the plan");
    }
  }
  if (deadlines.size() > 1) {
    const auto roi = doc->find("roi");
    const bool whole = roi != doc->end() && roi->is_array();
    diags.add(name, whole ? "/roi" : "/roi/deadline_hours",
              "one deadline per scenario, not a list: the recommendation is the cheapest configuration within "
              "it (run the scenario once per deadline)");
  }
  if (!diags.empty()) return std::nullopt;
  return sc;
}

std::optional<Scenario> load_scenario(const std::string& path, const Catalog& catalog, Diagnostics& diags) {
  std::string text;
  Diagnostics local;
  // Read the bytes first (the text is stored with each run), then parse from memory.
  if (!parse_json_file(path, local, &text) && text.empty()) {
    for (const auto& d : local.items()) diags.add(d.file, d.pointer, d.message);
    return std::nullopt;
  }
  return load_scenario_text(text, path, catalog, diags);
}

}  // namespace gp::app
