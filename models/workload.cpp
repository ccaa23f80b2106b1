#include "models/workload.hpp"

namespace gp {

const char* to_string(Precision p) {
  switch (p) {
    case Precision::fp32: return "fp32";
    case Precision::tf32: return "tf32";
    case Precision::bf16: return "bf16";
    case Precision::fp16: return "fp16";
  }
  return "?";
}

std::optional<Precision> parse_precision(std::string_view s) {
  for (const Precision p : {Precision::fp32, Precision::tf32, Precision::bf16, Precision::fp16})
    if (s == to_string(p)) return p;
  return std::nullopt;
}

bool shards_states(DataParallel d) { return d != DataParallel::ddp; }
bool shards_grads(DataParallel d) {
  return d == DataParallel::zero2 || d == DataParallel::zero3 || d == DataParallel::fsdp;
}
bool shards_weights(DataParallel d) { return d == DataParallel::zero3 || d == DataParallel::fsdp; }

int gradient_shards(const ParallelConfig& p) { return shards_grads(p.strategy) && p.dp > 1 ? p.dp : 1; }

StepConfig::Ddp ddp_rank(const ParallelConfig& p) {
  StepConfig::Ddp d;
  if (p.dp <= 1 || (p.strategy != DataParallel::ddp && p.strategy != DataParallel::zero1)) return d;
  d.reducer = p.gradient_as_bucket_view ? DdpReducer::view : DdpReducer::copy;
  d.broadcast_buffers = p.broadcast_buffers;
  d.sync_every_micro_batch = !p.no_sync;
  return d;
}

std::optional<OptimizerKind> parse_optimizer(std::string_view s) {
  for (const OptimizerKind o : kOptimizers)
    if (s == to_string(o)) return o;
  return std::nullopt;
}

const char* to_string(OptimizerKind o) {
  switch (o) {
    case OptimizerKind::adamw: return "adamw";
    case OptimizerKind::adamw_fused: return "adamw-fused";
    case OptimizerKind::adam: return "adam";
    case OptimizerKind::adam_fused: return "adam-fused";
    case OptimizerKind::sgd: return "sgd";
    case OptimizerKind::sgd_momentum: return "sgd-momentum";
  }
  return "?";
}

const char* to_string(DataParallel d) {
  switch (d) {
    case DataParallel::ddp: return "ddp";
    case DataParallel::fsdp: return "fsdp";
    case DataParallel::zero1: return "zero1";
    case DataParallel::zero2: return "zero2";
    case DataParallel::zero3: return "zero3";
  }
  return "?";
}

}  // namespace gp
