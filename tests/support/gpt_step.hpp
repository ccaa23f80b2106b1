// A GPT training step given by its dimensions, for tests that build operators or memory from it.
#pragma once

#include "models/workload.hpp"

namespace gp::test {

inline StepConfig gpt_step(int layers, int d, int heads, int seq, int batch) {
  StepConfig s;
  s.model.id = "gpt";
  s.model.family = ModelFamily::gpt;
  s.model.dims.layers = layers;
  s.model.dims.d_model = d;
  s.model.dims.heads = heads;
  s.model.dims.seq = seq;
  s.micro_batch = batch;
  return s;
}

}  // namespace gp::test
