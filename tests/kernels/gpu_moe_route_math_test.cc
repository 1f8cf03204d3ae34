// gpu/moe_route.h on the host, where no device is needed: TokenRouter is the very code the GPU
// router kernel (gpu/moe_router.cuh) runs per token, compiled here by the host compiler, fed the
// configuration through the same chain as the gpu backend (op_adapters::router_config into
// gpu::RouterConfig, moe::route_shape) and its gates rounded as the kernel rounds them (to f32,
// then to the storage, nearest-even). Against the exact reference (reference/moe.h through the
// oracle's moe_router op, mp): selections judged as sets with the policy table's top-k row, and
// exactly the reference's on exact ties and special logits (its tie rule: larger score, then
// lower index; NaN first); gates judged with the naive_relative row; the f32 affinities
// correctly rounded. Configurations of tests/support/moe_cases.h: DeepSeek-V3, DeepSeek-V2,
// Switch, Mixtral, K = N, N = 1, one expert per group, all groups kept, K = every kept expert.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "fast/storage.h"
#include "gpu/api_moe.h"
#include "gpu/moe_route.h"
#include "oracle/backends/moe_adapters.h"
#include "oracle/judge/judge.h"
#include "oracle/ops/moe.h"
#include "tests/support/fast_cases.h"
#include "tests/support/moe_cases.h"

namespace lmo::gpu {
namespace {

using namespace lmo::testdata;
using fast::Storage;
using oracle::RouterParams;
using ref::mp;

// TokenRouter's Row over the stored values, widened exactly (as the kernel's StoredRow).
struct HostRow {
  const double* z;
  const double* c;  // null: no bias
  double logit(int64_t i) const { return z[i]; }
  bool has_bias() const { return c != nullptr; }
  double bias(int64_t i) const { return c[i]; }
};

// The kernel's outputs for every token of r: experts and gates (in s), and f32 affinities.
struct HostRouted {
  oracle::GuardedBuffer gates, experts;
  std::vector<float> affinities;
};

HostRouted route_on_host(const Routed& r, Storage s) {
  const RouterParams& p = r.p;
  HostRouted out{oracle::GuardedBuffer(dtype_of(s), {p.tokens, p.top_k}),
                 oracle::GuardedBuffer(ref::DType::i64, {p.tokens, p.top_k}),
                 std::vector<float>(static_cast<size_t>(p.tokens * p.experts))};
  out.gates.arm();
  out.experts.arm();
  const moe::RouteShape sh = moe::route_shape(oracle::op_adapters::router_config<RouterConfig>(p));
  const std::vector<double> z = values_as<double>(r.in.at("logits"));
  const std::vector<double> c = p.bias ? values_as<double>(r.in.at("bias")) : std::vector<double>{};
  auto* experts = static_cast<int64_t*>(out.experts.data());
  for (int64_t t = 0; t < p.tokens; ++t) {
    const moe::TokenRouter<HostRow> router(
        HostRow{z.data() + t * p.experts, p.bias ? c.data() : nullptr}, sh);
    auto emit = [&](int64_t k, int64_t i, double gate) {
      experts[t * p.top_k + k] = i;
      fast::store_f32(s, out.gates.data(), t * p.top_k + k, static_cast<float>(gate));
    };
    router.emit(emit);
    for (int64_t i = 0; i < p.experts; ++i) {
      out.affinities[static_cast<size_t>(t * p.experts + i)] =
          static_cast<float>(router.affinity(i));
    }
  }
  return out;
}

// The f32 affinities against the reference's exact ones: NaN where it is NaN, else the correctly
// rounded f32 (an adjacent one only within 2^-45 relative of a midpoint: double's own errors).
void expect_affinities(const Routed& r, const std::vector<float>& got, const std::string& where) {
  const std::vector<ref::Routing<mp>> exact = oracle::route_case<mp>(r.p, r.in);
  for (int64_t t = 0; t < r.p.tokens; ++t) {
    for (int64_t i = 0; i < r.p.experts; ++i) {
      const double x = static_cast<double>(exact[static_cast<size_t>(t)].affinities[size_t(i)]);
      const float g = got[static_cast<size_t>(t * r.p.experts + i)];
      const std::string at = where + " token " + std::to_string(t) + " expert " + std::to_string(i);
      if (std::isnan(x)) {
        EXPECT_TRUE(std::isnan(g)) << at;
        continue;
      }
      const float want = static_cast<float>(x);
      if (g == want) continue;
      const double mid = (static_cast<double>(want) + std::nextafter(want, g)) / 2;
      EXPECT_TRUE(g == std::nextafter(want, g) && std::abs(x - mid) <= 0x1p-45 * std::abs(x))
          << at << ": got " << g << ", exact " << x;
    }
  }
}

void check_route(Storage s, const Routed& r, const std::string& what,
                 bool exact_selection = false) {
  const RouterParams& p = r.p;
  const oracle::MoeRouterOp op(p, false);
  const oracle::Outputs<mp> exact = op.exact(r.in);
  const oracle::Outputs<double> naive = op.simulated(ref::Format::f32, r.in);
  const HostRouted got = route_on_host(r, s);
  const std::string where = "host " + std::string(fast::storage_name(s)) + " " + what;
  expect_router_outputs(p, exact, naive, got.gates, got.experts, exact_selection, where);
  expect_affinities(r, got.affinities, where);
}

TEST(GpuMoeRoute, DeepSeekRoutings) {
  for (Storage s : fast::kAllStorages) {
    check_route(s, draw_router(deepseek_v3(96), s, 501), "deepseek-v3");
    check_route(s, draw_router(deepseek_v2(64), s, 502), "deepseek-v2");
  }
}

TEST(GpuMoeRoute, FlatRoutings) {
  for (Storage s : fast::kAllStorages) {
    for (const NamedRouting& c : flat_routings(s, 40)) check_route(s, c.r, c.what);
  }
}

TEST(GpuMoeRoute, GroupShapes) {
  for (Storage s : fast::kAllStorages) {
    for (const NamedRouting& c : group_routings(s, true)) check_route(s, c.r, c.what);
  }
}

TEST(GpuMoeRoute, ExactTiesFollowTheReferenceRule) {
  for (Storage s : fast::kAllStorages) {
    for (const NamedRouting& c : tied_routings(s, true)) {
      check_route(s, c.r, c.what, c.exact_selection);
    }
  }
}

TEST(GpuMoeRoute, SpecialLogitsRankAsTheReference) {
  for (Storage s : fast::kAllStorages) {
    for (const auto& [what, r] : special_routers(s)) check_route(s, r, what, true);
  }
}

// The ranking rule itself, on the cases that decide it: NaN first, NaNs by index, equal scores
// by index, −0 equal to +0.
TEST(GpuMoeRoute, RankingRule) {
  const double nan = std::nan("");
  EXPECT_TRUE(moe::ranks_before(2.0, 5, 1.0, 0));
  EXPECT_FALSE(moe::ranks_before(1.0, 0, 2.0, 5));
  EXPECT_TRUE(moe::ranks_before(1.0, 3, 1.0, 4));
  EXPECT_FALSE(moe::ranks_before(1.0, 4, 1.0, 3));
  EXPECT_TRUE(moe::ranks_before(nan, 9, INFINITY, 0));
  EXPECT_FALSE(moe::ranks_before(INFINITY, 0, nan, 9));
  EXPECT_TRUE(moe::ranks_before(nan, 1, nan, 2));
  EXPECT_TRUE(moe::ranks_before(-0.0, 1, 0.0, 2));
  EXPECT_FALSE(moe::ranks_before(0.0, 2, -0.0, 1));
  EXPECT_FALSE(moe::ranks_before(1.0, 3, 1.0, 3));
}

}  // namespace
}  // namespace lmo::gpu
