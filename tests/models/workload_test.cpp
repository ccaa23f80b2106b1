#include <catch2/catch.hpp>

#include "models/workload.hpp"

using namespace gp;

TEST_CASE("models::workload: which data-parallel splits shard the gradients and which run DDP's reducer", "[models]") {
  // PyTorch: DDP all-reduces every gradient through its reducer's buckets; ZeroRedundancyOptimizer (ZeRO-1) runs inside
  // DDP; FSDP (FULL_SHARD, SHARD_GRAD_OP) and ZeRO-2/3 reduce-scatter the gradients instead. One rank has neither.
  ParallelConfig p;
  p.dp = 8;
  const struct {
    DataParallel d;
    int shards;
    DdpReducer reducer;
  } cases[] = {{DataParallel::ddp, 1, DdpReducer::copy},  {DataParallel::zero1, 1, DdpReducer::copy},
               {DataParallel::zero2, 8, DdpReducer::none}, {DataParallel::zero3, 8, DdpReducer::none},
               {DataParallel::fsdp, 8, DdpReducer::none}};
  for (const auto& c : cases) {
    INFO(to_string(c.d));
    p.strategy = c.d;
    p.gradient_as_bucket_view = false;
    CHECK(gradient_shards(p) == c.shards);
    CHECK(ddp_rank(p).reducer == c.reducer);
    CHECK(ddp_rank(p).broadcast_buffers == (c.reducer != DdpReducer::none));
    CHECK_FALSE(ddp_rank(p).sync_every_micro_batch);
    p.gradient_as_bucket_view = true;
    CHECK(ddp_rank(p).reducer == (c.reducer == DdpReducer::none ? DdpReducer::none : DdpReducer::view));
  }
  p.dp = 1;
  for (const auto& c : cases) {
    p.strategy = c.d;
    CHECK(gradient_shards(p) == 1);
    CHECK(ddp_rank(p).reducer == DdpReducer::none);
  }
}
