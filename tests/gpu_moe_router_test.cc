// gpu/api_moe.h against reference/moe.h through the oracle's ops (oracle/ops/moe.h,
// moe_balance.h), as fast_moe_router_test does for fast/: the exact mp routing of the same stored
// logits and bias, selections judged with the policy table's top-k set row (and exactly the
// reference's on exact ties and special logits), gates with the naive_relative row, on every
// storage format; the load-balance loss and P_i through the gpu backend's adapter; F22's bias
// update with its ulp row, and bit for bit at balanced loads; run-twice bitwise identity of
// every output. Needs a CUDA device (skipped with the reason otherwise); argument validation
// runs everywhere. The router's per-token code on the host: gpu_moe_route_test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/api.h"
#include "oracle/backend_gpu_moe.h"
#include "oracle/backend_moe_adapters.h"
#include "oracle/ops/moe.h"
#include "oracle/ops/moe_balance.h"
#include "tests/support/fast_cases.h"
#include "tests/support/gpu_cases.h"
#include "tests/support/moe_cases.h"

namespace lmo::gpu {
namespace {

using namespace lmo::testdata;
using fast::Storage;
using oracle::RouterParams;
using ref::mp;

std::string where_of(Storage s, const std::string& what) {
  return "gpu " + std::string(fast::storage_name(s)) + " " + what;
}

void check_router(Storage s, const Routed& r, const std::string& what,
                  bool exact_selection = false) {
  const RouterParams& p = r.p;
  const oracle::MoeRouterOp op(p, false);
  const oracle::Outputs<mp> exact = op.exact(r.in);
  const oracle::Outputs<double> naive = op.simulated(ref::Format::f32, r.in);
  oracle::GuardedBuffer gates(dtype_of(s), {p.tokens, p.top_k});
  oracle::GuardedBuffer experts(ref::DType::i64, {p.tokens, p.top_k});
  std::vector<float> affinities(static_cast<size_t>(p.tokens * p.experts));
  const auto run = [&] {
    gates.arm();
    experts.arm();
    moe_router(gpu_storage(s), input_bytes(r.in, "logits"), bias_of(r), p.tokens,
               oracle::op_adapters::router_config<RouterConfig>(p),
               static_cast<int64_t*>(experts.data()), gates.data(), affinities.data());
    std::vector<uint8_t> b = bytes_of({&gates, &experts});
    const auto* a = reinterpret_cast<const uint8_t*>(affinities.data());
    b.insert(b.end(), a, a + affinities.size() * sizeof(float));
    return b;
  };
  run();
  const std::string where = where_of(s, what);
  const oracle::Verdict v =
      oracle::judge_topk(oracle::policy_for("moe_router", "experts"), exact[1].values, p.experts,
                         exact[1].indices, experts);
  EXPECT_TRUE(v.pass) << where << " experts: " << v.detail;
  if (exact_selection) {
    EXPECT_EQ(indices_of(experts), exact[1].indices) << where;
  }
  expect_judged("moe_router", "gates", exact[0].values, gates, naive[0].values, where);
  expect_deterministic(run, "moe_router " + where);
}

// The load-balance loss and P_i through the gpu backend's adapter (moe_router keeping the
// affinities, expert_balance, load_balance_loss), judged against the exact F21.
void check_balance(Storage s, const Routed& r, const std::string& what) {
  const oracle::MoeRouterOp op(r.p, true);
  const oracle::Outputs<mp> exact = op.exact(r.in);
  const oracle::Outputs<double> naive = op.simulated(ref::Format::f32, r.in);
  std::vector<oracle::GuardedBuffer> out;
  out.emplace_back(dtype_of(s), std::vector<int64_t>{1});
  out.emplace_back(dtype_of(s), std::vector<int64_t>{r.p.experts});
  const auto run = [&] {
    for (oracle::GuardedBuffer& b : out) b.arm();
    oracle::run_gpu_load_balance_loss(op, gpu_storage(s), r.in, out);
    return bytes_of({&out[0], &out[1]});
  };
  run();
  const std::string where = where_of(s, what);
  expect_judged("load_balance_loss", "loss", exact[0].values, out[0], naive[0].values, where);
  expect_judged("load_balance_loss", "p", exact[1].values, out[1], naive[1].values, where);
  expect_deterministic(run, "load_balance_loss " + where);
}

TEST(GpuMoeRouter, DeepSeekRoutings) {
  LMO_REQUIRE_GPU();
  for (Storage s : fast::kAllStorages) {
    check_router(s, draw_router(deepseek_v3(96), s, 501), "deepseek-v3");
    check_router(s, draw_router(deepseek_v2(64), s, 502), "deepseek-v2");
  }
}

TEST(GpuMoeRouter, FlatRoutingsAndGroupShapes) {
  LMO_REQUIRE_GPU();
  using ref::RouterScore;
  for (Storage s : fast::kAllStorages) {
    check_router(s, draw_router(flat_router(64, 128, 1, RouterScore::kSoftmax, false), s, 503),
                 "switch");
    check_router(s, draw_router(flat_router(64, 8, 2, RouterScore::kSoftmax, true), s, 504),
                 "mixtral");
    // More tokens than one block's threads, an odd N.
    check_router(s, draw_router(flat_router(300, 37, 5, RouterScore::kSigmoid, true, true), s, 505),
                 "sigmoid with bias, odd N");
    check_router(s, draw_router(flat_router(9, 6, 6, RouterScore::kSigmoid, true), s, 506),
                 "K = N");
    check_router(s, draw_router(flat_router(3, 1, 1, RouterScore::kSoftmax, true), s, 507),
                 "N = 1");
    RouterParams p = deepseek_v3(24);
    p.experts = 24;
    p.n_group = 24;  // one expert per group, scored by its best
    p.topk_group = 5;
    p.top_k = 3;
    p.group_score = ref::GroupScore::kMax;
    check_router(s, draw_router(p, s, 508), "one expert per group");
    p = deepseek_v3(24);
    p.top_k = 128;  // every expert of the 4 kept groups
    check_router(s, draw_router(p, s, 510), "K = the kept groups' experts");
  }
}

TEST(GpuMoeRouter, ExactTiesAndSpecialsFollowTheReference) {
  LMO_REQUIRE_GPU();
  for (Storage s : fast::kAllStorages) {
    check_router(s, tied_router(deepseek_v3(48), s, 511), "ties, deepseek-v3", true);
    check_router(s, tied_router(deepseek_v2(48), s, 513), "ties, deepseek-v2", true);
    check_router(s, tied_router(flat_router(48, 16, 4, ref::RouterScore::kSigmoid, true), s, 514),
                 "ties, flat", true);
    for (const auto& [what, r] : special_routers(s)) check_router(s, r, what, true);
  }
}

TEST(GpuMoeBalance, LoadBalanceLoss) {
  LMO_REQUIRE_GPU();
  for (Storage s : fast::kAllStorages) {
    check_balance(s, draw_router(deepseek_v3(64), s, 521), "deepseek-v3 sequence");
    check_balance(s, draw_router(deepseek_v2(40), s, 522), "deepseek-v2");
    check_balance(s,
                  draw_router(flat_router(64, 128, 1, ref::RouterScore::kSoftmax, false), s, 523),
                  "switch");
    // More experts than one block's chunk of 32, more tokens than its 8 slices.
    check_balance(
        s, draw_router(flat_router(333, 70, 3, ref::RouterScore::kSigmoid, true, true), s, 524),
        "sigmoid, 70 experts");
  }
}

// C25: perfectly balanced routing with uniform affinities gives L = α exactly.
TEST(GpuMoeBalance, BalancedUniformRoutingGivesAlpha) {
  LMO_REQUIRE_GPU();
  const int64_t tokens = 8, n = 8, k = 2;
  std::vector<int64_t> experts;
  for (int64_t t = 0; t < tokens; ++t) {
    experts.push_back((2 * t) % n);
    experts.push_back((2 * t + 1) % n);
  }
  const std::vector<float> aff(static_cast<size_t>(tokens * n), 0.25f);
  std::vector<int64_t> counts(static_cast<size_t>(n));
  std::vector<float> p(static_cast<size_t>(n));
  expert_balance(tokens, n, k, experts.data(), aff.data(), true, counts.data(), p.data());
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(counts[static_cast<size_t>(i)], 2);
    EXPECT_EQ(p[static_cast<size_t>(i)], 0.125f);
  }
  EXPECT_EQ(load_balance_loss(counts.data(), p.data(), tokens, n, k, 0.375f), 0.375f);
}

void check_aux_free(Storage s, int64_t n, int64_t max_load, double gamma, uint64_t seed) {
  const oracle::AuxFreeParams p{.experts = n, .gamma = gamma, .max_load = max_load};
  oracle::InputSet in;
  in.add("bias", fast_normal(seed, "bias", s, {n}, 0.0, p.bias_std));
  in.add("load", oracle::uniform_int(seed, "load", ref::DType::i64, {n}, 0, max_load));
  const oracle::AuxFreeUpdateOp op(p);
  const oracle::Outputs<mp> exact = op.exact(in);
  oracle::GuardedBuffer out(dtype_of(s), {n});
  const auto run = [&] {
    out.arm();
    aux_free_update(gpu_storage(s), input_bytes(in, "bias"), in.at("load").as<int64_t>().data(), n,
                    static_cast<float>(gamma), out.data());
    return bytes_of(out);
  };
  run();
  const std::string where = where_of(s, "N=" + std::to_string(n));
  expect_judged("aux_free_update", "", exact[0].values, out, {}, where, exact[0].condition);
  expect_deterministic(run, "aux_free_update " + where);
}

TEST(GpuMoeAuxFree, UpdateStep) {
  LMO_REQUIRE_GPU();
  for (Storage s : fast::kAllStorages) {
    check_aux_free(s, 256, 128, 0.001, 531);  // DeepSeek-V3's N and γ
    check_aux_free(s, 37, 5, 0.01, 532);      // an odd N, loads often at the mean
    check_aux_free(s, 5000, 3, 1e-4, 533);    // several blocks
  }
}

// Loads all at the mean leave every c_i as it is, bit for bit (−0 and NaN included); in place.
TEST(GpuMoeAuxFree, BalancedLoadsLeaveTheBiasAsItIs) {
  LMO_REQUIRE_GPU();
  for (Storage s : fast::kAllStorages) {
    ref::Tensor c = fast_normal(534, "bias", s, {9}, 0.0, 0.05);
    const std::vector<oracle::SpecialAt> sp = {{2, oracle::Special::neg_zero},
                                               {5, oracle::Special::nan}};
    oracle::place_specials(c, sp);
    const std::vector<int64_t> load(9, 7);
    ref::Tensor y = c;
    aux_free_update(gpu_storage(s), y.bytes().data(), load.data(), 9, 0.001f, y.bytes().data());
    EXPECT_TRUE(std::equal(y.bytes().begin(), y.bytes().end(), c.bytes().begin()))
        << fast::storage_name(s);
  }
}

// Every check throws before any CUDA call, so these run without a device.
TEST(GpuMoeRouter, Validation) {
  const gpu::Storage f32 = gpu::Storage::f32;
  float z[8] = {0, 1, 2, 3, 4, 5, 6, 7}, g[8];
  int64_t e[8] = {};
  RouterConfig c;
  c.experts = 8;
  c.top_k = 2;
  EXPECT_NO_THROW(moe_router(f32, nullptr, nullptr, 0, c, nullptr, nullptr));
  EXPECT_THROW(moe_router(f32, z, nullptr, -1, c, e, g), std::invalid_argument);
  EXPECT_THROW(moe_router(f32, nullptr, nullptr, 1, c, e, g), std::invalid_argument);
  EXPECT_THROW(moe_router(f32, z, nullptr, 1, c, nullptr, g), std::invalid_argument);
  EXPECT_THROW(moe_router(f32, z, nullptr, 1, c, e, nullptr), std::invalid_argument);
  EXPECT_THROW(moe_router(static_cast<gpu::Storage>(9), z, nullptr, 1, c, e, g),
               std::invalid_argument);
  RouterConfig bad = c;
  bad.top_k = 9;
  EXPECT_THROW(moe_router(f32, z, nullptr, 1, bad, e, g), std::invalid_argument);
  bad = c;
  bad.n_group = 3;
  EXPECT_THROW(moe_router(f32, z, nullptr, 1, bad, e, g), std::invalid_argument);
  bad = c;
  bad.n_group = 4;
  bad.topk_group = 5;
  EXPECT_THROW(moe_router(f32, z, nullptr, 1, bad, e, g), std::invalid_argument);
  bad = c;
  bad.n_group = 8;  // groups of one expert cannot take a top-2 sum
  bad.topk_group = 2;
  EXPECT_THROW(moe_router(f32, z, nullptr, 1, bad, e, g), std::invalid_argument);
  bad = c;
  bad.n_group = 4;
  bad.topk_group = 1;
  bad.top_k = 3;  // more than the 2 experts of the one kept group
  EXPECT_THROW(moe_router(f32, z, nullptr, 1, bad, e, g), std::invalid_argument);
  bad = c;
  bad.routed_scale = INFINITY;
  EXPECT_THROW(moe_router(f32, z, nullptr, 1, bad, e, g), std::invalid_argument);
  bad = c;
  bad.score = static_cast<RouterScore>(5);
  EXPECT_THROW(moe_router(f32, z, nullptr, 1, bad, e, g), std::invalid_argument);

  const int64_t sel[4] = {0, 1, 2, 2};  // token 1 repeats expert 2
  const float aff[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  int64_t counts[4];
  float p[4];
  EXPECT_THROW(expert_balance(2, 4, 2, sel, aff, true, counts, p), std::invalid_argument);
  const int64_t out_of_range[2] = {0, 4};
  EXPECT_THROW(expert_balance(1, 4, 2, out_of_range, aff, true, counts, p), std::invalid_argument);
  EXPECT_THROW(expert_balance(0, 4, 2, sel, aff, true, counts, p), std::invalid_argument);
  EXPECT_THROW(expert_balance(1, 4, 5, sel, aff, true, counts, p), std::invalid_argument);
  EXPECT_THROW(expert_balance(1, 4, 2, sel, nullptr, true, counts, p), std::invalid_argument);
  EXPECT_THROW(load_balance_loss(counts, p, 1, 4, 2, NAN), std::invalid_argument);
  EXPECT_THROW(load_balance_loss(nullptr, p, 1, 4, 2, 1), std::invalid_argument);
  EXPECT_THROW(load_balance_loss(counts, p, 0, 4, 2, 1), std::invalid_argument);
  const int64_t loads[2] = {1, -1};
  EXPECT_THROW(aux_free_update(f32, z, loads, 2, 0.001f, g), std::invalid_argument);
  const int64_t huge[2] = {int64_t{1} << 61, int64_t{1} << 61};
  EXPECT_THROW(aux_free_update(f32, z, huge, 2, 0.001f, g), std::invalid_argument);
  EXPECT_THROW(aux_free_update(f32, z, e, 2, NAN, g), std::invalid_argument);
  EXPECT_THROW(aux_free_update(f32, z, e, 0, 0.001f, g), std::invalid_argument);
  EXPECT_THROW(aux_free_update(f32, z, e, 2, 0.001f, nullptr), std::invalid_argument);
}

}  // namespace
}  // namespace lmo::gpu
