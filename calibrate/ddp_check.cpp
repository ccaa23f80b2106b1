#include "calibrate/ddp_check.hpp"

#include <vector>

#include "sim/step_sim.hpp"

namespace gp::calibrate {

int record_gpus(const RunRecord& rec) {
  const auto it = rec.input.find("gpus");
  // Validated on reading as a whole number in [1, 2^20]; 8.0 is 8 GPUs, not one.
  return it != rec.input.end() && it->is_number() ? static_cast<int>(it->get<double>()) : 1;
}

std::optional<std::string> multi_gpu_problem(const std::vector<RunRecord>& runs, const std::string& file) {
  const RunRecord* first = nullptr;
  int count = 0, train = 0;
  for (const RunRecord& r : runs) {
    if (r.kind != "train") continue;
    ++train;
    if (record_gpus(r) <= 1) continue;
    if (!first) first = &r;
    ++count;
  }
  if (!first) return std::nullopt;
  return file + ":" + std::to_string(first->line) + ":/gpus: expected one-GPU train records, got " +
         std::to_string(record_gpus(*first)) + " GPUs (" + std::to_string(count) + " of " + std::to_string(train) +
         " train records): a data-parallel step includes its gradient all-reduce; compare such records with "
         "`gpuplan calibrate ddp`";
}

std::optional<ClusterConfig> single_node_cluster(const Catalog& cat, const std::string& instance_id, int gpus,
                                                 std::string& error) {
  const InstanceSpec* inst = Catalog::find(cat.instances, instance_id);
  if (!inst) {
    error = "unknown instance \"" + instance_id + "\"";
    return std::nullopt;
  }
  const GpuSpec* gpu = Catalog::find(cat.gpus, inst->gpu);
  const InterconnectSpec* intra = Catalog::find(cat.interconnects, inst->intra_node);
  if (!gpu || (!intra && inst->gpus > 1)) {
    error = "instance \"" + instance_id + "\" names an unknown GPU or intra-node link";
    return std::nullopt;
  }
  if (gpus < 1 || gpus > inst->gpus) {
    error = "instance \"" + instance_id + "\" has " + std::to_string(inst->gpus) + " GPUs, asked for " +
            std::to_string(gpus);
    return std::nullopt;
  }
  ClusterConfig c;
  c.gpu = *gpu;
  c.instance = *inst;
  c.gpus_per_node = gpus;
  c.nodes = 1;
  c.cpu_cores_per_node = inst->vcpus;
  if (intra) c.intra_node = *intra;
  c.intra_node.nvls_efficiency = 0;
  return c;
}

namespace {

JobConfig ddp_job(const RunRecord& rec, const ClusterConfig& node, int gpus, double bucket_mib) {
  JobConfig job;
  job.id = rec.id;
  job.step = rec.step;
  job.parallel.dp = gpus;
  job.parallel.strategy = DataParallel::ddp;
  job.cluster = node;
  job.cluster.gpus_per_node = gpus;
  job.cluster.nodes = 1;
  job.comm.bucket = Bytes::mib(bucket_mib);
  job.comm.overlap = true;
  job.loader.synthetic = true;
  job.length.steps = 1;
  return job;
}

// Why the record is not a single-node DDP record this predictor handles; empty when it is.
std::string unsupported(const RunRecord& rec, int gpus, const ClusterConfig& node) {
  const auto& in = rec.input;
  if (in.value("parallel", std::string("ddp")) != "ddp") return "parallel other than ddp";
  // Validated on reading as a whole number; 1.0 is one node, as record_gpus reads 8.0 as 8 GPUs.
  if (in.contains("nodes") && in["nodes"].is_number() && in["nodes"].get<double>() != 1)
    return "more than one node";
  if (gpus < 1) return "gpus must be a positive integer";
  if (node.instance && gpus > node.instance->gpus) return "more GPUs than the node has";
  if (rec.data != "synthetic-on-gpu") return "DDP with a CPU data pipeline";
  return "";
}

}  // namespace

DdpPrediction predict_ddp_record(const RunRecord& rec, const DeviceModel& dev, const GpuProfile& profile,
                                 const FitConstants& constants, const ClusterConfig& node,
                                 const sim::SimConstants& k, int steps) {
  DdpPrediction d;
  d.gpus = record_gpus(rec);
  if (rec.input.contains("bucket_cap_mb") && rec.input["bucket_cap_mb"].is_number())
    d.bucket_mib = rec.input["bucket_cap_mb"].get<double>();
  // The rank's step carries DDP's reducer (models/step_ops.cpp): a copy of the record with it set.
  RunRecord on_rank = rec;
  if (d.gpus > 1) {
    auto flag = [&](const char* key, bool absent) {
      const auto it = rec.input.find(key);
      return it != rec.input.end() && it->is_boolean() ? it->get<bool>() : absent;
    };
    ParallelConfig par;
    par.dp = d.gpus;
    par.gradient_as_bucket_view = flag("gradient_as_bucket_view", false);
    par.broadcast_buffers = flag("broadcast_buffers", true);
    on_rank.step.ddp = ddp_rank(par);
  }
  d.base = predict_train_record(on_rank, dev, profile, constants);
  if (!d.base.step_ms) {
    d.reason = d.base.reason;
    return d;
  }
  if (const std::string why = unsupported(rec, d.gpus, node); !why.empty()) {
    d.reason = why;
    return d;
  }
  const JobConfig job = ddp_job(rec, node, d.gpus, d.bucket_mib);
  std::vector<std::string> notes;
  const sim::StepSimInput in = sim::make_step_input(job, d.base.step, profile, k, notes);
  sim::StepSimOptions opt;
  opt.steps = steps;
  opt.seed = 1;
  const sim::StepSimResult st = sim::simulate_steps(in, opt);
  d.step_ms = st.step_time.ms();
  d.compute = st.compute;
  d.comm_exposed = st.comm_exposed;
  d.comm_hidden = st.comm_hidden;
  d.comm_total = st.comm_total;
  return d;
}

}  // namespace gp::calibrate
