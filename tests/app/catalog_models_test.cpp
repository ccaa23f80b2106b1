// The vision models of catalogs/models.json against the layer structures gpuplan builds for the same ids: the
// catalog's figures come from torchvision itself (tools/torchvision_params_flops.py), the structures from the
// architecture definitions, so agreeing parameter counts check both.
#include <catch2/catch.hpp>

#include <string>

#include "app/catalog_io.hpp"
#include "app/diagnostics.hpp"
#include "models/step_ops.hpp"

// The forward FLOPs per 224x224 image too: the catalog's are torchvision's (flop_counter, or the model docs' GFLOPS x 2
// where flop_counter missed nn.MultiheadAttention's fused path: ViT-L/16, L/32, H/14 were 35% short); the structures
// count their GEMMs and convolutions from the architecture. Within 1% for all (GoogLeNet +0.6%).
TEST_CASE("app::catalogs: every vision model's parameters and forward FLOPs match the structure built for it",
          "[app][catalogs]") {
  gp::app::Diagnostics diags;
  const gp::Catalog cat = gp::app::load_catalogs(std::string(GPUPLAN_SOURCE_DIR) + "/catalogs", {}, diags);
  INFO(diags.render());
  REQUIRE(diags.empty());
  int vision = 0;
  for (const auto& [id, m] : cat.models) {
    if (m.family != gp::ModelFamily::cnn && m.family != gp::ModelFamily::vit && m.family != gp::ModelFamily::swin)
      continue;
    ++vision;
    INFO(id);
    gp::StepConfig s;
    s.model = m;
    s.micro_batch = 1;
    const gp::StepOps ops = gp::build_step_ops(s);
    REQUIRE(ops.not_expressible.empty());
    CHECK(ops.params == Approx(m.params).epsilon(0.001));
    CHECK(gp::forward_flops(ops).value() == Approx(m.fwd_flops_per_sample).epsilon(0.01));
    if (m.family == gp::ModelFamily::vit) {
      // (224 / patch)^2 patches + the class token.
      REQUIRE(m.dims.patch > 0);
      CHECK(m.dims.seq == (224 / m.dims.patch) * (224 / m.dims.patch) + 1);
    }
  }
  CHECK(vision >= 79);  // every torchvision classification model but MaxViT (generic)
}

