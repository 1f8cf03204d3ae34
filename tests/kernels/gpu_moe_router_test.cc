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
#include "oracle/backends/gpu_moe.h"
#include "oracle/backends/moe_adapters.h"
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
  expect_router_outputs(p, exact, naive, gates, experts, exact_selection, where);
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

// The sigmoid router over more tokens than one block's threads, with an odd N.
TEST(GpuMoeRouter, FlatRoutingsAndGroupShapes) {
  LMO_REQUIRE_GPU();
  for (Storage s : fast::kAllStorages) {
    for (const NamedRouting& c : flat_routings(s, 300)) check_router(s, c.r, c.what);
    for (const NamedRouting& c : group_routings(s, false)) check_router(s, c.r, c.what);
  }
}

TEST(GpuMoeRouter, ExactTiesAndSpecialsFollowTheReference) {
  LMO_REQUIRE_GPU();
  for (Storage s : fast::kAllStorages) {
    for (const NamedRouting& c : tied_routings(s, false)) {
      check_router(s, c.r, c.what, c.exact_selection);
    }
    for (const auto& [what, r] : special_routers(s)) check_router(s, r, what, true);
  }
}

TEST(GpuMoeBalance, LoadBalanceLoss) {
  LMO_REQUIRE_GPU();
  for (Storage s : fast::kAllStorages) {
    // More experts than one block's chunk of 32, more tokens than its 8 slices.
    for (const NamedRouting& c : balance_routings(s, 333, 70, "sigmoid, 70 experts")) {
      check_balance(s, c.r, c.what);
    }
  }
}

// C25: perfectly balanced routing with uniform affinities gives L = α exactly.
TEST(GpuMoeBalance, BalancedUniformRoutingGivesAlpha) {
  LMO_REQUIRE_GPU();
  const BalancedRouting b = balanced_routing();
  std::vector<int64_t> counts(static_cast<size_t>(b.n));
  std::vector<float> p(static_cast<size_t>(b.n));
  expert_balance(b.tokens, b.n, b.k, b.experts.data(), b.affinities.data(), true, counts.data(),
                 p.data());
  for (int64_t i = 0; i < b.n; ++i) {
    EXPECT_EQ(counts[static_cast<size_t>(i)], 2);
    EXPECT_EQ(p[static_cast<size_t>(i)], 0.125f);
  }
  EXPECT_EQ(load_balance_loss(counts.data(), p.data(), b.tokens, b.n, b.k, 0.375f), 0.375f);
}

void check_aux_free(Storage s, int64_t n, int64_t max_load, double gamma, uint64_t seed) {
  const AuxFreeCase ac = aux_free_case(s, n, max_load, gamma, seed);
  const oracle::InputSet& in = ac.in;
  const oracle::Outputs<mp> exact = oracle::AuxFreeUpdateOp(ac.p).exact(in);
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
TEST(GpuMoeRouter, Validation) { expect_moe_argument_checks<oracle::GpuMoe>(); }

}  // namespace
}  // namespace lmo::gpu
