#include <set>
#include <tuple>

#include "gemm_probe.hpp"

namespace gp::probe {
namespace {

constexpr long kVocab = 50304;  // GPT-2 vocabulary padded to a multiple of 64, as in the reference runs

// The 12 distinct GEMMs of one GPT block and head for width d and t tokens, as C[m,n] = A[m,k] B[k,n]:
// forward x W^T, backward dX = dY W and dW = dY^T X.
void add_gpt_shapes(std::vector<GemmShape>& out, GemmDtype dt, long d, long t) {
  const std::string p = "gpt-d" + std::to_string(d) + "-t" + std::to_string(t) + "-";
  const struct { long out, in; const char* name; } lin[] = {
      {3 * d, d, "qkv"}, {d, d, "proj"}, {4 * d, d, "fc1"}, {d, 4 * d, "fc2"}, {kVocab, d, "head"}};
  for (const auto& l : lin) {
    out.push_back({dt, t, l.out, l.in, p + l.name + "-fwd"});
    out.push_back({dt, t, l.in, l.out, p + l.name + "-dx"});
    out.push_back({dt, l.out, l.in, t, p + l.name + "-dw"});
  }
}

void add_reference_shapes(std::vector<GemmShape>& out, GemmDtype dt) {
  const long ref[][3] = {{8192, 3072, 768}, {8192, 768, 3072}, {16384, 8192, 2048}, {16384, 2048, 8192},
                         {4096, 50304, 768}};
  for (const auto& r : ref) out.push_back({dt, r[0], r[1], r[2], "ref-micro"});
}

void add_squares(std::vector<GemmShape>& out, GemmDtype dt, long max_side) {
  for (long s : {256L, 512L, 768L, 1024L, 1536L, 2048L, 3072L, 4096L, 6144L, 8192L, 12288L, 16384L})
    if (s <= max_side) out.push_back({dt, s, s, s, "square"});
}

void add_token_sweep(std::vector<GemmShape>& out, GemmDtype dt, long max_tokens) {
  for (long t = 512; t <= max_tokens; t *= 2) out.push_back({dt, t, 4096, 4096, "tokens-n4096-k4096"});
}

std::vector<GemmShape> grid_for(GemmDtype dt, bool quick) {
  std::vector<GemmShape> g;
  if (quick) {
    for (long s : {1024L, 4096L}) g.push_back({dt, s, s, s, "square"});
    add_gpt_shapes(g, dt, 768, 2048);
    return g;
  }
  const bool wide = dt == GemmDtype::bf16 || dt == GemmDtype::fp16 || dt == GemmDtype::fp8;
  add_squares(g, dt, wide ? 16384 : 8192);
  add_reference_shapes(g, dt);
  add_token_sweep(g, dt, wide ? 65536 : 16384);
  const std::vector<long> widths = wide ? std::vector<long>{256, 512, 768, 1024, 1536, 2048, 2560, 4096}
                                        : std::vector<long>{256, 768, 2048};
  const std::vector<long> tokens = wide ? std::vector<long>{1024, 8192} : std::vector<long>{2048};
  for (long d : widths)
    for (long t : tokens) add_gpt_shapes(g, dt, d, t);
  if (wide) add_gpt_shapes(g, dt, 1024, 32768);
  // Drop duplicates (the same m,n,k reached from two sources), keeping the first tag.
  std::set<std::tuple<long, long, long>> seen;
  std::vector<GemmShape> unique;
  for (auto& s : g)
    if (seen.insert({s.m, s.n, s.k}).second) unique.push_back(s);
  return unique;
}

}  // namespace

const char* dtype_name(GemmDtype d) {
  switch (d) {
    case GemmDtype::bf16: return "bf16";
    case GemmDtype::fp16: return "fp16";
    case GemmDtype::tf32: return "tf32";
    case GemmDtype::fp32: return "fp32";
    case GemmDtype::fp8: return "fp8";
  }
  return "?";
}

std::vector<GemmShape> gemm_grid(bool quick, bool with_fp8) {
  std::vector<GemmShape> all;
  std::vector<GemmDtype> dts = {GemmDtype::bf16, GemmDtype::fp16, GemmDtype::tf32, GemmDtype::fp32};
  if (with_fp8) dts.push_back(GemmDtype::fp8);
  for (auto dt : dts) {
    auto g = grid_for(dt, quick);
    all.insert(all.end(), g.begin(), g.end());
  }
  return all;
}

}  // namespace gp::probe
