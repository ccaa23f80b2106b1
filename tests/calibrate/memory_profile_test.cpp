// Peak memory of torchvision training steps against torch.cuda's own figures on the H200
// (tools/profile_memory.py, calibrate/probes/results/memory-h200-2026-12-03.jsonl): the saved-activation rules of
// models/vision_ops.cpp (in-place ReLU kept only when no saving op takes its output, a branch input saved once,
// ReLU6 keeping a copy) checked on ten networks of different shapes. Then one data-parallel or tensor-parallel rank
// measured on PyTorch's fake process group (tools/measure_dp_memory.py): its peak memory, and for FSDP its step time
// and profiled kernels with the collectives taking no time.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <utility>

#include "app/catalog_io.hpp"
#include "app/diagnostics.hpp"
#include "calibrate/check.hpp"
#include "calibrate/fit.hpp"
#include "calibrate/profile_io.hpp"
#include "calibrate/reference_runs.hpp"
#include "models/profile_derive.hpp"
#include "models/step_ops.hpp"
#include "models/vision_ops.hpp"
#include "tests/support/gpt_step.hpp"

using namespace gp;
using namespace gp::calibrate;

TEST_CASE("calibrate::memory: peak memory of ten torchvision steps as torch.cuda measured it", "[calibrate]") {
  const std::string src = GPUPLAN_SOURCE_DIR;
  std::ifstream in(src + "/calibrate/probes/results/memory-h200-2026-12-03.jsonl");
  REQUIRE(in);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) {
    const auto m = nlohmann::json::parse(l);
    // The same step as a train record: bf16 autocast, channels-last, SGD with momentum, measured peak.
    nlohmann::json r = {{"id", m["model"].get<std::string>()}, {"kind", "train"}, {"model", m["model"]},
                        {"batch", m["batch"]}, {"precision", "bf16"}, {"channels_last", true},
                        {"optimizer", "sgd-momentum"}, {"data", "synthetic-on-gpu"}, {"step_ms", 1.0},
                        {"peak_mem_gib", m["peak_gib"]}, {"image_hw", {224, 224}}};
    lines.push_back(r.dump());
  }
  std::vector<std::string> errors;
  const auto runs = parse_runs(lines, "memory", errors);
  auto p = load_profile(src + "/calibrate/profiles/h200.json", errors);
  auto c = load_constants(src + "/calibrate/profiles/fit-h200.json", errors);
  INFO((errors.empty() ? std::string() : errors.front()));
  REQUIRE(errors.empty());
  REQUIRE(runs.size() == 10);
  const CheckReport rep = run_check(runs, *p, *c, 100.0);
  double sum = 0;
  for (const auto& r : rep.records) {
    INFO(r.record->id);
    REQUIRE(r.mem_err_pct);
    sum += std::abs(*r.mem_err_pct);
    CHECK(std::abs(*r.mem_err_pct) <= 15.0);
    if (r.record->id == "mobilenet_v2") CHECK(std::abs(*r.mem_err_pct) <= 5.0);  // ReLU6's copy (was -33%)
    // The classifier's gradients appear while nearly all activations are alive (the backward walk):
    // VGG-16-BN was -8.4% and AlexNet -24.3% at the start of backward.
    if (r.record->id == "vgg16_bn") CHECK(std::abs(*r.mem_err_pct) <= 3.0);
  }
  CHECK(sum / static_cast<double>(rep.records.size()) <= 8.0);
}

TEST_CASE("calibrate::memory: the backward walk lies between the activations and activations plus gradients",
          "[calibrate]") {
  for (const char* id : {"resnet50", "vgg16", "alexnet", "densenet121", "mobilenet_v2"}) {
    INFO(id);
    StepConfig s;
    s.model.id = id;
    s.model.family = ModelFamily::cnn;
    s.micro_batch = 32;
    const StepOps ops = build_step_ops(s);
    CHECK(ops.backward_walk_peak.value() >= ops.activations.value());
    CHECK(ops.backward_walk_peak.value() <= ops.activations.value() + 4.0 * ops.params);
  }
  // VGG-16's classifier holds 124 of its 138 M parameters: its walk adds nearly all of their gradients.
  StepConfig v;
  v.model.id = "vgg16";
  v.model.family = ModelFamily::cnn;
  v.micro_batch = 32;
  const StepOps vgg = build_step_ops(v);
  CHECK(vgg.backward_walk_peak.value() - vgg.activations.value() > 4.0 * 119e6);
}

TEST_CASE("calibrate::memory: a transformer block saves what autograd measured, per token and width", "[calibrate]") {
  // tools/measure_saved_tensors.py summed the distinct storages autograd saved in one block's forward
  // (calibrate/probes/results/saved-tensors-2026-12-04.jsonl): GPT and ViT-B 36.1 bytes per token and width under
  // bf16 autocast, GPT 64.1 in TF32, ViT-B 68.1 in TF32 (the memory-efficient kernel behind nn.MultiheadAttention
  // writes head-major, so its output is copied for the projection). The model's per-block bytes: one layer more,
  // the activations' difference over tokens x width.
  const std::string src = GPUPLAN_SOURCE_DIR;
  std::ifstream in(src + "/calibrate/probes/results/saved-tensors-2026-12-04.jsonl");
  REQUIRE(in);
  int n = 0;
  for (std::string l; std::getline(in, l);) {
    const auto m = nlohmann::json::parse(l);
    INFO(m["id"].get<std::string>());
    StepConfig s;
    s.precision = m["precision"] == "bf16" ? Precision::bf16 : Precision::tf32;
    const double d = m["d_model"].get<double>();
    double tokens = 0;
    if (m["model"] == "gpt") {
      s.model.id = "gpt";
      s.model.family = ModelFamily::gpt;
      s.model.dims.d_model = static_cast<int>(d);
      s.model.dims.heads = static_cast<int>(d) / 64;
      s.model.dims.seq = 1024;
      s.model.dims.vocab = 50304;
      s.micro_batch = 4;
      tokens = 4 * 1024;
    } else {
      s.model.id = "vit_b_16";
      s.model.family = ModelFamily::vit;
      s.model.dims = *vit_dims("vit_b_16");
      s.micro_batch = 32;
      tokens = 32 * 197;
    }
    REQUIRE(m["tokens"].get<double>() == tokens);
    s.model.dims.layers = 1;
    const double one = build_step_ops(s).activations.value();
    s.model.dims.layers = 2;
    const double two = build_step_ops(s).activations.value();
    CHECK((two - one) / (tokens * d) == Approx(m["saved_bytes_per_token_dim"].get<double>()).epsilon(0.01));
    ++n;
  }
  CHECK(n == 5);
}

TEST_CASE("calibrate::fit: the out-of-memory rule by hand", "[calibrate]") {
  // Capacity 120 for all. x = peak + k x largest - 120: ran (100, 10) -> -20 + 10k, ran (110, 2) -> -10 + 2k,
  // out of memory (105, 20) -> -15 + 20k and (118, 0) -> -2. The gap min(oom) - max(ran) is -5 + 18k up to
  // k = 0.65 (where -15 + 20k meets -2) and 8 - 2k after: widest at k = 0.65, 6.7 wide, between -8.7 and -2,
  // so the reserve is 5.35 and nothing is misclassified.
  std::vector<OomRow> rows = {{100, 10, 120, false}, {110, 2, 120, false}, {105, 20, 120, true}, {118, 0, 120, true}};
  auto f = fit_oom_rule(rows);
  REQUIRE(f);
  CHECK(f->largest_block_share == Approx(0.65));
  CHECK(f->reserve == Approx(5.35));
  CHECK(f->margin == Approx(6.7));
  CHECK(f->misclassified == 0);
  CHECK(f->records == 4);
  CHECK(f->oom_records == 2);
  // A step that ran above every out-of-memory one cannot be separated: the rule keeps the others right and
  // counts it.
  rows.push_back({125, 0, 120, false});
  f = fit_oom_rule(rows);
  REQUIRE(f);
  CHECK(f->misclassified == 1);
  CHECK(f->margin < 0);
  // Verdicts of one kind only: nothing to fit.
  CHECK_FALSE(fit_oom_rule({{100, 10, 120, false}, {110, 2, 120, false}}));
}

TEST_CASE("calibrate::memory: steps at the memory limit, held-out sets 15 and 16", "[calibrate][holdout]") {
  // calibrate/probes/results/h200-holdout15-2026-12-04.jsonl and -holdout16-: steps within a few percent of the
  // H200's limit on either side (set 16 defined after the rule was fitted to set 15, and measured blind: 16 of 20
  // verdicts right). The default constants' rule is fitted to both (calibrate fit --oom-runs): 3 of their 47
  // verdicts stay wrong, and each of those needs within 4% of the device's memory. Every measured peak above 100 GiB is
  // within 3% (the small accumulating steps, about 3 GiB, within 4%).
  const std::string src = GPUPLAN_SOURCE_DIR;
  std::vector<std::string> errors;
  auto p = load_profile(src + "/calibrate/profiles/h200.json", errors);
  auto c = load_constants(src + "/calibrate/profiles/fit-h200.json", errors);
  std::vector<RunRecord> runs;
  for (const char* f : {"h200-holdout15-2026-12-04.jsonl", "h200-holdout16-2026-12-04.jsonl"}) {
    auto r = load_runs(src + "/calibrate/probes/results/" + f, errors);
    runs.insert(runs.end(), r.begin(), r.end());
  }
  INFO((errors.empty() ? std::string() : errors.front()));
  REQUIRE(errors.empty());
  const CheckReport rep = run_check(runs, *p, *c, 100.0);
  int wrong = 0, n = 0;
  for (const auto& r : rep.records) {
    INFO(r.record->id);
    ++n;
    if (r.mem_err_pct) CHECK(std::abs(*r.mem_err_pct) <= (*r.record->measured.peak_mem_gib > 100 ? 3.0 : 4.0));
    if (!r.oom_agrees.value_or(true)) {
      ++wrong;
      const double ratio = r.prediction.memory.needed.value() / r.prediction.memory.capacity.value();
      CHECK(ratio > 0.96);
      CHECK(ratio < 1.04);
    }
  }
  CHECK(n == 47);
  CHECK(wrong <= 3);
}

TEST_CASE("calibrate::memory: held-out set 17 at the memory limit, measured after the rule was fitted",
          "[calibrate][holdout]") {
  // calibrate/probes/results/h200-holdout17-2026-12-04.jsonl: nine pairs about 4% apart on either side of the limit
  // as the default rule predicts it (defined in a commit before it was measured; nothing fitted to it). 17 of 18
  // verdicts right: Swin-T b2051 ran at 135.4 GiB where the rule needs 139.35 of 139.29 GiB. Peaks within 3%.
  const std::string src = GPUPLAN_SOURCE_DIR;
  std::vector<std::string> errors;
  auto p = load_profile(src + "/calibrate/profiles/h200.json", errors);
  auto c = load_constants(src + "/calibrate/profiles/fit-h200.json", errors);
  const auto runs = load_runs(src + "/calibrate/probes/results/h200-holdout17-2026-12-04.jsonl", errors);
  INFO((errors.empty() ? std::string() : errors.front()));
  REQUIRE(errors.empty());
  const CheckReport rep = run_check(runs, *p, *c, 100.0);
  int wrong = 0, oom = 0;
  for (const auto& r : rep.records) {
    INFO(r.record->id);
    if (r.record->measured.oom) ++oom;
    if (r.mem_err_pct) CHECK(std::abs(*r.mem_err_pct) <= 3.0);
    if (!r.oom_agrees.value_or(true)) ++wrong;
  }
  CHECK(rep.records.size() == 18);
  CHECK(oom == 8);
  CHECK(wrong <= 1);
}

namespace {

StepConfig fsdp_gpt(int layers, int d, int heads, int seq, int batch, int accum, bool ckpt) {
  StepConfig s = test::gpt_step(layers, d, heads, seq, batch);
  s.grad_accum = accum;
  s.activation_checkpointing = ckpt;
  s.logits_kept = false;  // tools/measure_holdout.py's GPT returns only the loss
  return s;
}

// One rank of tools/measure_dp_memory.py: its GPT step, built as gpuplan builds it.
struct MeasuredRank {
  nlohmann::json r;
  StepConfig step;
  StepOps ops;
  ParallelConfig par;
  double measured_gib = 0;
};

std::vector<MeasuredRank> measured_ranks(const std::string& file) {
  std::ifstream in(std::string(GPUPLAN_SOURCE_DIR) + "/calibrate/probes/results/" + file);
  std::vector<MeasuredRank> out;
  for (std::string l; std::getline(in, l);) {
    MeasuredRank m;
    m.r = nlohmann::json::parse(l);
    m.step = fsdp_gpt(m.r["layers"], m.r["d_model"], m.r["heads"], m.r["seq"], m.r["batch"], m.r["grad_accum"],
                      m.r["activation_checkpointing"]);
    m.step.model.dims.tied_embeddings = m.r.value("tied_embeddings", true);
    m.step.params_16bit = m.r.value("fsdp_mixed_precision", false);
    m.ops = build_step_ops(m.step);
    INFO(m.r["id"].get<std::string>());
    REQUIRE(m.ops.params == m.r["params"].get<double>());  // the record's model is the one built
    m.par.dp = m.r["world_size"];
    if (m.r.value("strategy", "") == "tp") {  // the whole world is one tensor-parallel group
      m.par.tp = m.r["tp"];
      m.par.dp = 1;
    }
    // FSDP1's FULL_SHARD and FSDP2's fully_shard are gpuplan's fsdp, SHARD_GRAD_OP its zero2; DDP records name
    // their strategy (ddp, or zero1 for ZeroRedundancyOptimizer inside DDP).
    const std::string sharding = m.r.value("sharding", ""), strategy = m.r.value("strategy", "");
    m.par.strategy = sharding == "SHARD_GRAD_OP" ? DataParallel::zero2
                     : !sharding.empty()         ? DataParallel::fsdp
                     : strategy == "zero1"       ? DataParallel::zero1
                                                 : DataParallel::ddp;
    m.par.gradient_as_bucket_view = m.r.value("gradient_as_bucket_view", false);
    m.measured_gib = m.r["max_memory_allocated_gib"].get<double>();
    out.push_back(std::move(m));
  }
  return out;
}

double peak_error_pct(const MeasuredRank& m, const MemoryPrediction& p) {
  return 100.0 * (p.peak_allocated.gib() - m.measured_gib) / m.measured_gib;
}

}  // namespace

TEST_CASE("calibrate::memory: FSDP's gathered units by hand (GPT-6.7B)", "[calibrate]") {
  // Block: 2 LayerNorms 4d + QKV 3d^2+3d + projection d^2+d + MLP 2*d*4d + 4d + d = 201,379,840 at d 4096.
  // Root: vocab 50304 x d + positions 1024 x d + final LayerNorm 2d = 210,247,680. FSDP holds the root, the block
  // it computes, the prefetched block and the computed block's unsharded gradient, at 4 bytes each.
  StepConfig s = fsdp_gpt(32, 4096, 32, 1024, 2, 8, true);
  const StepOps ops = build_step_ops(s);
  REQUIRE(ops.params == 6654402560.0);
  CHECK(ops.block_params == 201379840.0);
  ParallelConfig p;
  p.dp = 32;
  p.strategy = DataParallel::fsdp;
  const auto m = predict_memory_from_ops(ops, s, p, Bytes::gib(80), Bytes::gib(0.5));
  CHECK(m.gathered.value() == Approx(4.0 * (210247680.0 + 3 * 201379840.0)));
  p.strategy = DataParallel::zero3;
  CHECK(predict_memory_from_ops(ops, s, p, Bytes::gib(80), Bytes::gib(0.5)).gathered.value() ==
        Approx(m.gathered.value()));
  // One rank alone gathers nothing.
  ParallelConfig alone;
  alone.strategy = DataParallel::fsdp;
  CHECK(predict_memory_from_ops(ops, s, alone, Bytes::gib(80), Bytes::gib(0.5)).gathered.value() == 0.0);
  // Tensor parallelism splits each block (and the root) over its ranks.
  p.tp = 2;
  CHECK(predict_memory_from_ops(ops, s, p, Bytes::gib(80), Bytes::gib(0.5)).gathered.value() ==
        Approx(m.gathered.value() / 2));
  for (DataParallel d : {DataParallel::ddp, DataParallel::zero1, DataParallel::zero2}) {
    p.strategy = d;
    CHECK(predict_memory_from_ops(ops, s, p, Bytes::gib(80), Bytes::gib(0.5)).gathered.value() == 0.0);
  }
}

TEST_CASE("models::memory: FSDP's MixedPrecision gathers 16-bit units and makes no autocast copies", "[calibrate]") {
  // GPT-6.7B without checkpointing, FULL_SHARD over 32 ranks. Under autocast (no MixedPrecision) the rank holds
  // fp32 gathered units and autocast's bf16 copy of every weight it used, 2 B x 6,654,402,560 = 12.4 GiB; with
  // MixedPrecision(param_dtype=bf16, reduce_dtype=bf16) the units and their unsharded gradients are bf16 and the
  // forward uses them directly.
  StepConfig s = fsdp_gpt(32, 4096, 32, 1024, 2, 8, false);
  const StepOps ops = build_step_ops(s);
  ParallelConfig p;
  p.dp = 32;
  p.strategy = DataParallel::fsdp;
  const auto autocast = predict_memory_from_ops(ops, s, p, Bytes::gib(80), Bytes::gib(0.5));
  StepConfig s16 = s;
  s16.params_16bit = true;
  const auto mixed = predict_memory_from_ops(ops, s16, p, Bytes::gib(80), Bytes::gib(0.5));
  const double units = 210247680.0 + 3 * 201379840.0;
  CHECK(autocast.gathered.value() == Approx(4.0 * units));
  CHECK(mixed.gathered.value() == Approx(2.0 * units));
  CHECK(autocast.autocast_copies.value() == Approx(2.0 * 6654402560.0));
  CHECK(mixed.autocast_copies.value() == 0.0);
  // The sharded fp32 weights, gradients and optimizer states do not change.
  CHECK(mixed.weights.value() == autocast.weights.value());
  CHECK(mixed.grads.value() == autocast.grads.value());
  CHECK(mixed.optimizer_states.value() == autocast.optimizer_states.value());
  // Both peak at the start of backward. The residual stream is 16-bit too: of the two fp32 LayerNorm inputs each
  // of the 32 blocks saves and the final LayerNorm's input, 4 B x (2 x 32 + 1) x N d, half goes; N = 2 x 1,024.
  const double Nd = 2 * 1024.0 * 4096;
  REQUIRE(autocast.peak_at == "start of backward");
  REQUIRE(mixed.peak_at == "start of backward");
  CHECK(autocast.peak_allocated.value() - mixed.peak_allocated.value() ==
        Approx(2.0 * units + 2.0 * 6654402560.0 + 2.0 * (2 * 32 + 1) * Nd));
  CHECK(autocast.fsdp_mixed_precision_saving.value() ==
        Approx(autocast.peak_device.value() - mixed.peak_device.value()));
  CHECK(mixed.fsdp_mixed_precision_saving.value() == 0.0);
  // DDP keeps a whole replica and autocasts: the option does not apply to it.
  p.strategy = DataParallel::ddp;
  const auto ddp = predict_memory_from_ops(ops, s16, p, Bytes::gib(80), Bytes::gib(0.5));
  CHECK(ddp.autocast_copies.value() == Approx(2.0 * 6654402560.0));
}

TEST_CASE("calibrate::memory: one FSDP rank's peak as torch.cuda measured it (fake process group, H100)",
          "[calibrate]") {
  // calibrate/probes/results/fsdp-memory-h100-2026-12-07.jsonl (tools/measure_dp_memory.py): rank 0 of 8 to 32,
  // GPT-1.3B and GPT-6.7B, FULL_SHARD with bf16 autocast and fused AdamW, with and without checkpointing. Without
  // the gathered units the checkpointed GPT-6.7B steps were 19-39% under the measurement (8.72 GiB measured, 5.33
  // predicted at b2 x 8). SHARD_GRAD_OP holds the unsharded parameters from forward to the end of backward, as
  // gpuplan's zero2 holds them throughout. One step ran with FSDP's MixedPrecision (bf16 parameters and reductions,
  // no autocast): 5.94 GiB against 8.72 under autocast.
  int n = 0;
  double sum = 0;
  for (MeasuredRank& m : measured_ranks("fsdp-memory-h100-2026-12-07.jsonl")) {
    INFO(m.r["id"].get<std::string>());
    const auto p = predict_memory_from_ops(m.ops, m.step, m.par, Bytes::gib(80), Bytes::gib(0.5));
    const double err = peak_error_pct(m, p);
    CHECK(std::abs(err) <= 10.0);
    sum += std::abs(err);
    ++n;
  }
  CHECK(n == 9);
  CHECK(sum / n <= 5.0);
}

TEST_CASE("calibrate::memory: FSDP's MixedPrecision and FSDP2, one rank's peak as torch.cuda measured it (fake "
          "process group, H100)",
          "[calibrate]") {
  // calibrate/probes/results/fsdp-mp-memory-h100-2026-12-07.jsonl: FSDP1 FULL_SHARD with MixedPrecision(bf16, bf16),
  // no autocast; fsdp2-memory-h100-2026-12-07.jsonl: FSDP2 (fully_shard per block, then the root), under autocast or
  // with MixedPrecisionPolicy(bf16, fp32). Under the autocast-only terms the MixedPrecision steps were 15-118% over.
  int n = 0;
  double sum = 0;
  for (const char* f : {"fsdp-mp-memory-h100-2026-12-07.jsonl", "fsdp2-memory-h100-2026-12-07.jsonl"}) {
    for (MeasuredRank& m : measured_ranks(f)) {
      INFO(m.r["id"].get<std::string>());
        REQUIRE(m.par.strategy == DataParallel::fsdp);
      const auto p = predict_memory_from_ops(m.ops, m.step, m.par, Bytes::gib(80), Bytes::gib(0.5));
      const double err = peak_error_pct(m, p);
      // Not modelled: FSDP2 checkpointed under autocast. GPT-6.7B b2 x 8 held 10.4 GiB more than FSDP1 did in the
      // same step (19.09 against 8.72 GiB): autocast's cached casts of FSDP2's leaf parameters alive at the end of
      // the forward (docs/calibration.md section 5; confirmed by the next test); the model can only be under there.
      if (m.r["sharding"] == "fully_shard" && m.r["autocast"].get<bool>() &&
          m.r["activation_checkpointing"].get<bool>()) {
        CHECK(err < 0.0);
        continue;
      }
      CHECK(std::abs(err) <= 10.0);
      sum += std::abs(err);
      ++n;
    }
  }
  CHECK(n == 9);
  CHECK(sum / n <= 5.0);
}

TEST_CASE("calibrate::memory: FSDP2's extra memory under autocast is autocast's weight cache", "[calibrate]") {
  // calibrate/probes/results/fsdp2-diag-h100-2026-12-08.jsonl: GPT-6.7B b2, checkpointed, FSDP2 under autocast on 32
  // fake ranks. With autocast's cache off the step holds what FSDP1 holds and the model predicts; without
  // accumulation but with the cache it still holds about 10 GiB more, so the accumulation is not the cause.
  int n = 0;
  for (MeasuredRank& m : measured_ranks("fsdp2-diag-h100-2026-12-08.jsonl")) {
    INFO(m.r["id"].get<std::string>());
    REQUIRE(m.r["sharding"] == "fully_shard");
    const auto p = predict_memory_from_ops(m.ops, m.step, m.par, Bytes::gib(80), Bytes::gib(0.5));
    const double err = peak_error_pct(m, p);
    INFO(err << "%");
    if (m.r["autocast_cache"].get<bool>()) {
      CHECK(m.measured_gib - p.peak_allocated.gib() > 8.0);
    } else {
      CHECK(std::abs(err) <= 10.0);
    }
    ++n;
  }
  CHECK(n == 2);
}

TEST_CASE("calibrate::memory: one tensor-parallel rank's peak as torch.cuda measured it (fake process group, H100)",
          "[calibrate]") {
  // calibrate/probes/results/tp-memory-h100-2026-12-08.jsonl (tools/measure_dp_memory.py --prefix tp): GPT-1.3B with
  // untied embeddings, Megatron-style column / row parallel linears, a vocabulary-parallel embedding and head, no
  // sequence parallelism, bf16 autocast, b8 x 1,024 tokens. Predicted blind in tp-memory-predictions-2026-12-07.txt
  // (12.644, 8.635 and 4.180 GiB); measured 13.043, 8.894 and 4.761.
  int n = 0;
  double sum = 0;
  for (MeasuredRank& m : measured_ranks("tp-memory-h100-2026-12-08.jsonl")) {
    INFO(m.r["id"].get<std::string>());
    REQUIRE(m.par.tp == m.r["world_size"].get<int>());
    const auto p = predict_memory_from_ops(m.ops, m.step, m.par, Bytes::gib(80), Bytes::gib(0.5));
    const double err = peak_error_pct(m, p);
    INFO(err << "%");
    CHECK(std::abs(err) <= 15.0);
    sum += std::abs(err);
    ++n;
  }
  CHECK(n == 3);
  CHECK(sum / n <= 7.0);
}

TEST_CASE("calibrate::memory: one DDP rank holds its all-reduce buckets (fake process group, H100)", "[calibrate]") {
  // calibrate/probes/results/dp-memory-h100-2026-12-07.jsonl (tools/measure_dp_memory.py --prefix ddp, then zero1):
  // rank 0 of 8, DDP with 25 MiB buckets (an in-place hook stands in for the fake group's all-reduce), bf16 autocast,
  // fused AdamW; ZeroRedundancyOptimizer inside DDP for zero1. Between steps GPT-1.3B held 19.64 GiB: W 4.89 +
  // S 9.79 + the buckets 4.89 (4 bytes x 1,313,722,368). Without the buckets the predictions were 8-35% under.
  int n = 0;
  double sum = 0;
  for (MeasuredRank& m : measured_ranks("dp-memory-h100-2026-12-07.jsonl")) {
    INFO(m.r["id"].get<std::string>());
    const auto p = predict_memory_from_ops(m.ops, m.step, m.par, Bytes::gib(80), Bytes::gib(0.5));
    CHECK(p.grad_buckets.value() == 4.0 * m.ops.params);
    const Bytes resident = p.weights + p.optimizer_states + p.grad_buckets + p.workspace;
    CHECK(resident.gib() == Approx(m.r["allocated_between_steps_gib"].get<double>()).epsilon(0.01));
    const double err = peak_error_pct(m, p);
    CHECK(std::abs(err) <= 10.0);
    sum += std::abs(err);
    ++n;
  }
  CHECK(n == 6);
  CHECK(sum / n <= 6.0);
}

TEST_CASE("models::memory: DDP's buckets only with more than one rank, and bucket views hold no second copy",
          "[calibrate]") {
  StepConfig s = fsdp_gpt(24, 2048, 16, 1024, 4, 4, false);  // accumulating: the gradients live from the start
  const StepOps ops = build_step_ops(s);
  ParallelConfig one;
  const auto single = predict_memory_from_ops(ops, s, one, Bytes::gib(80), Bytes::gib(0.5));
  CHECK(single.grad_buckets.value() == 0.0);
  ParallelConfig p;
  p.dp = 8;
  const auto ddp = predict_memory_from_ops(ops, s, p, Bytes::gib(80), Bytes::gib(0.5));
  CHECK(ddp.peak_allocated.value() == Approx(single.peak_allocated.value() + 4.0 * ops.params));
  p.gradient_as_bucket_view = true;
  const auto view = predict_memory_from_ops(ops, s, p, Bytes::gib(80), Bytes::gib(0.5));
  CHECK(view.peak_allocated.value() == Approx(single.peak_allocated.value()));
  for (DataParallel d : {DataParallel::zero2, DataParallel::zero3, DataParallel::fsdp}) {
    p.strategy = d;
    CHECK(predict_memory_from_ops(ops, s, p, Bytes::gib(80), Bytes::gib(0.5)).grad_buckets.value() == 0.0);
  }
}

namespace {

// The H100 as `run` and `calibrate check --gpu h100-sxm` see it: the H200 profile derived to the H100's datasheet.
DeviceModel derived_h100() {
  std::vector<std::string> errors;
  const std::string src = GPUPLAN_SOURCE_DIR;
  const auto base = load_profile(src + "/calibrate/profiles/h200.json", errors);
  REQUIRE(base);
  app::Diagnostics diags;
  const Catalog cat = app::load_catalogs(src + "/catalogs", {}, diags);
  const GpuSpec* h200 = Catalog::find(cat.gpus, "h200-sxm");
  const GpuSpec* h100 = Catalog::find(cat.gpus, "h100-sxm");
  REQUIRE(h200);
  REQUIRE(h100);
  return make_device_model(derive_profile(*base, *h200, *h100));
}

ComputeConstants default_compute_constants() {
  std::vector<std::string> errors;
  const auto c = load_constants(std::string(GPUPLAN_SOURCE_DIR) + "/calibrate/profiles/fit-h200.json", errors);
  REQUIRE(c);
  return c->compute;
}

// GPU time of the operators whose names start with `prefix`, over a whole step.
double ops_ms(const StepOps& ops, const StepConfig& s, const DeviceModel& dev, const ComputeConstants& c,
              const std::string& prefix) {
  StepOps only = ops;
  only.micro.clear();
  only.optimizer.clear();
  for (const Op& o : ops.micro)
    if (o.name.rfind(prefix, 0) == 0) only.micro.push_back(o);
  StepConfig one = s;
  one.grad_accum = 1;  // no accumulation term: the selected operators alone, times the micro-batches
  return 1e3 * predict_step_from_ops(only, one, dev, c).gpu_busy.value() * s.grad_accum;
}

}  // namespace

TEST_CASE("calibrate::compute: one FSDP rank's step with instant collectives, timed and profiled on an H100",
          "[calibrate]") {
  // tools/measure_dp_memory.py on the fake process group (its collectives take no time; calibrate/probes/results/
  // fsdp-time-h100-2026-12-08.jsonl): step_ms_instant_collectives is the rank's own work. Predicted: the GPU's
  // busy time, forward and backward of every micro-batch and the optimizer over the rank's 1/dp shard, on the
  // derived H100 profile. Blind predictions before FSDP's gradient path was modelled (fsdp-time-predictions-
  // 2026-12-08.txt) were 13.5% and 8.7% under for GPT-6.7B b2 x 8 without and with MixedPrecision.
  const DeviceModel dev = derived_h100();
  const ComputeConstants c = default_compute_constants();
  int n = 0;
  std::map<std::string, std::pair<double, double>> by_id;  // id -> (predicted, measured) ms
  for (MeasuredRank& m : measured_ranks("fsdp-time-h100-2026-12-08.jsonl")) {
    INFO(m.r["id"].get<std::string>());
    m.step.grad_shards = gradient_shards(m.par);
    REQUIRE(m.step.grad_shards == m.r["world_size"].get<int>());
    const StepOps ops = build_step_ops(m.step);
    const StepPrediction p = predict_step_from_ops(ops, m.step, dev, c);
    REQUIRE(p.cpu_issue.value() < p.gpu_busy.value());  // GPU-bound in the model
    const double predicted = 1e3 * ((p.gpu_forward + p.gpu_backward).value() + p.gpu_optimizer.value() / m.par.dp);
    const double measured = m.r["step_ms_instant_collectives"].get<double>();
    by_id[m.r["id"].get<std::string>()] = {predicted, measured};
    const double err = 100.0 * (predicted - measured) / measured;
    INFO("predicted " << predicted << " ms, measured " << measured << " ms, " << err << "%");
    if (m.step.activation_checkpointing) {
      // Not modelled: checkpointed FSDP steps are paced by the host. GPT-6.7B b2 x 8 with MixedPrecision ran its
      // kernels in 1,381 ms (profiled) in a step of 1,828 ms, and of 2,214 ms in another process on the same
      // machine; the model's host time for it is 662 ms (likely FSDP's own hooks, which run again in each
      // recomputed forward; not measured apart).
      CHECK(predicted < measured);
      continue;
    }
    CHECK(std::abs(err) <= 15.0);
    ++n;
  }
  CHECK(n == 4);
  // What MixedPrecision saves (the figure `run`'s advice quotes), against what it saved: GPT-6.7B 21.3% of the step,
  // GPT-1.3B 11.5%. Within 5 points each.
  for (const std::string id : {"fsdp/gpt-6.7b-dp32-b2x8-s1024", "fsdp/gpt-1.3b-dp16-b8x1-s2048"}) {
    INFO(id);
    REQUIRE(by_id.count(id));
    REQUIRE(by_id.count(id + "-mp"));
    const auto [p32, m32] = by_id[id];
    const auto [p16, m16] = by_id[id + "-mp"];
    CHECK(100.0 * (1 - p16 / p32) == Approx(100.0 * (1 - m16 / m32)).margin(5.0));
  }

  // The gradient path by itself, against the profiled kernels (calibrate/probes/results/fsdp-kernels-h100-
  // 2026-12-08.jsonl, one step under torch.profiler): the flat gradient's cat (CatArrayBatchedCopy) and the
  // pre-divide (a BUnaryFunctor kernel per unit, and one for the loss / accumulation) of GPT-6.7B's 8 micro-batches.
  int k = 0;
  for (MeasuredRank& m : measured_ranks("fsdp-kernels-h100-2026-12-08.jsonl")) {
    INFO(m.r["id"].get<std::string>());
    if (m.step.activation_checkpointing) continue;
    m.step.grad_shards = gradient_shards(m.par);
    double cat = 0, div = 0;
    for (const auto& t : m.r["kernels"]["top"]) {
      const std::string name = t["name"];
      if (name.find("CatArrayBatchedCopy") != std::string::npos) cat += t["ms"].get<double>();
      if (name.find("BUnaryFunctor") != std::string::npos) div += t["ms"].get<double>();
    }
    REQUIRE(cat > 0);
    REQUIRE(div > 0);
    const double predicted = ops_ms(build_step_ops(m.step), m.step, dev, c, "fsdp.grad_");
    INFO("predicted " << predicted << " ms, profiled " << cat + div << " ms (cat " << cat << ", divide " << div << ")");
    CHECK(predicted == Approx(cat + div).epsilon(0.10));
    ++k;
  }
  CHECK(k == 2);
}

TEST_CASE("calibrate::compute: LayerNorm on MixedPrecision's 16-bit stream, profiled on an H100", "[calibrate]") {
  // The same profile: the LayerNorm kernels (forward, backward's input gradient, and gamma / beta) of GPT-6.7B's 8
  // micro-batches read and write fp32 under autocast and bf16 with MixedPrecision. Measured 70.0 and 31.4 ms a
  // step. The model counts the stream's bytes at 4 and 2 an element.
  const DeviceModel dev = derived_h100();
  const ComputeConstants c = default_compute_constants();
  std::map<bool, std::pair<double, double>> by_mp;  // MixedPrecision -> (predicted, profiled) ms
  for (MeasuredRank& m : measured_ranks("fsdp-kernels-h100-2026-12-08.jsonl")) {
    if (m.step.activation_checkpointing) continue;
    INFO(m.r["id"].get<std::string>());
    double ln = 0;
    for (const auto& t : m.r["kernels"]["top"]) {
      const std::string name = t["name"];
      if (name.find("layer_norm") != std::string::npos || name.find("GammaBeta") != std::string::npos)
        ln += t["ms"].get<double>();
    }
    REQUIRE(ln > 0);
    m.step.grad_shards = gradient_shards(m.par);
    by_mp[m.step.params_16bit] = {ops_ms(build_step_ops(m.step), m.step, dev, c, "ln"), ln};
  }
  REQUIRE(by_mp.size() == 2);
  const auto [p32, m32] = by_mp[false];
  const auto [p16, m16] = by_mp[true];
  INFO("fp32 stream: predicted " << p32 << " ms, profiled " << m32 << "; 16-bit: " << p16 << ", " << m16);
  // The 16-bit stream's share of the fp32 one: measured 0.45, the model 0.57. Before the probed fp32 rates were
  // read at the 16-bit row's bytes (Op::norm_elem_bytes) the model gave 1.0: the same 50.1 ms for both.
  CHECK(m16 / m32 < 0.5);
  CHECK(p16 / p32 < 0.6);
  // Each within 35%: the 16-bit one is 9.5% under, the fp32 one 28% under (2,048 rows a micro-batch lie below the
  // probe's grid, which starts at 4,096).
  CHECK(p16 == Approx(m16).epsilon(0.35));
  CHECK(p32 == Approx(m32).epsilon(0.35));
}
