// fast/moe_router.h against reference/moe.h through the oracle's ops (oracle/ops/moe.h): the
// exact mp routing of the same stored logits and bias, its gates judged with the policy table's
// naive_relative row (the naive run in f32 as yardstick) and its selections with the top-k set
// row, on every storage format and supported target; the load-balance loss and P_i likewise.
// Configurations: DeepSeek-V3 (sigmoid, bias, 8 groups by top-2 sums, top-4 groups, top-8,
// scale 2.5), DeepSeek-V2 (softmax, groups by their best, no renormalization), Switch, Mixtral,
// K = N, one expert per group. Exact ties and NaN/±inf logits must give the reference's very
// selection (its tie rule: larger score, then lower index; NaN first). F22's bias update judged
// with its ulp row. Thread invariance and argument validation.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "fast/moe_router.h"
#include "oracle/backends/fast_adapters.h"
#include "oracle/backends/fast_moe.h"
#include "oracle/ops/moe.h"
#include "oracle/ops/moe_balance.h"
#include "tests/support/fast_cases.h"
#include "tests/support/moe_cases.h"

namespace lmo::fast {
namespace {

using namespace lmo::testdata;
using oracle::RouterParams;
using ref::mp;

// Runs moe_router on every target; judges gates and experts; checks thread invariance. With
// exact_selection, the experts must be the reference's own (in its ascending order).
void check_router(Storage s, const Routed& r, const std::string& what,
                  bool exact_selection = false) {
  const RouterParams& p = r.p;
  const oracle::MoeRouterOp op(p, false);
  const oracle::Outputs<mp> exact = op.exact(r.in);
  const oracle::Outputs<double> naive = op.simulated(ref::Format::f32, r.in);
  oracle::GuardedBuffer gates(dtype_of(s), {p.tokens, p.top_k});
  oracle::GuardedBuffer experts(ref::DType::i64, {p.tokens, p.top_k});
  const auto run = [&] {
    gates.arm();
    experts.arm();
    moe_router(s, input_bytes(r.in, "logits"), bias_of(r), p.tokens,
               oracle::fast_adapters::router_config(p), static_cast<int64_t*>(experts.data()),
               gates.data());
  };
  for_each_target([&](const std::string& target) {
    run();
    expect_router_outputs(p, exact, naive, gates, experts, exact_selection,
                          target + " " + std::string(storage_name(s)) + " " + what);
  });
  expect_thread_invariant(
      [&] {
        run();
        return bytes_of({&gates, &experts});
      },
      "moe_router " + std::string(storage_name(s)) + " " + what);
}

// The load-balance loss and P_i through the fast backend's adapter (moe_router keeping the
// affinities, expert_balance, load_balance_loss), judged against the exact F21 of the reference
// routing.
void check_balance(Storage s, const Routed& r, const std::string& what) {
  const RouterParams& p = r.p;
  const oracle::MoeRouterOp op(p, true);
  const oracle::Outputs<mp> exact = op.exact(r.in);
  const oracle::Outputs<double> naive = op.simulated(ref::Format::f32, r.in);
  std::vector<oracle::GuardedBuffer> out;
  out.emplace_back(dtype_of(s), std::vector<int64_t>{1});
  out.emplace_back(dtype_of(s), std::vector<int64_t>{p.experts});
  const oracle::GuardedBuffer &loss = out[0], &pout = out[1];
  const auto run = [&] {
    for (oracle::GuardedBuffer& b : out) b.arm();
    oracle::fast_adapters::run_load_balance_loss(op, s, r.in, out);
  };
  for_each_target([&](const std::string& target) {
    run();
    const std::string where = target + " " + std::string(storage_name(s)) + " " + what;
    expect_judged("load_balance_loss", "loss", exact[0].values, loss, naive[0].values, where);
    expect_judged("load_balance_loss", "p", exact[1].values, pout, naive[1].values, where);
  });
  expect_thread_invariant(
      [&] {
        run();
        return bytes_of({&loss, &pout});
      },
      "load_balance " + std::string(storage_name(s)) + " " + what);
}

TEST(FastMoeRouter, DeepSeekV3GroupRouting) {
  for (Storage s : kAllStorages)
    check_router(s, draw_router(deepseek_v3(96), s, 501), "deepseek-v3");
}

TEST(FastMoeRouter, DeepSeekV2SoftmaxGroupsByBest) {
  for (Storage s : kAllStorages)
    check_router(s, draw_router(deepseek_v2(64), s, 502), "deepseek-v2");
}

TEST(FastMoeRouter, FlatRoutings) {
  for (Storage s : kAllStorages) {
    for (const NamedRouting& c : flat_routings(s, 40)) check_router(s, c.r, c.what);
  }
}

TEST(FastMoeRouter, GroupShapes) {
  for (Storage s : kAllStorages) {
    for (const NamedRouting& c : group_routings(s, true)) check_router(s, c.r, c.what);
  }
}

TEST(FastMoeRouter, ExactTiesFollowTheReferenceRule) {
  for (Storage s : kAllStorages) {
    for (const NamedRouting& c : tied_routings(s, true)) {
      check_router(s, c.r, c.what, c.exact_selection);
    }
  }
}

TEST(FastMoeRouter, SpecialLogitsRankAsTheReference) {
  for (Storage s : kAllStorages) {
    for (const auto& [what, r] : special_routers(s)) check_router(s, r, what, true);
  }
}

TEST(FastMoeBalance, LoadBalanceLoss) {
  for (Storage s : kAllStorages) {
    for (const NamedRouting& c : balance_routings(s, 33, 37, "sigmoid, odd N")) {
      check_balance(s, c.r, c.what);
    }
  }
}

// C25 on the fast path: perfectly balanced routing with uniform affinities gives L = α exactly.
TEST(FastMoeBalance, BalancedUniformRoutingGivesAlpha) {
  const BalancedRouting b = balanced_routing();
  std::vector<int64_t> counts(static_cast<size_t>(b.n));
  std::vector<float> p(static_cast<size_t>(b.n));
  for_each_target([&](const std::string& target) {
    expert_balance(b.tokens, b.n, b.k, b.experts.data(), b.affinities.data(), true, counts.data(),
                   p.data());
    for (int64_t i = 0; i < b.n; ++i) {
      EXPECT_EQ(counts[static_cast<size_t>(i)], 2) << target;
      EXPECT_EQ(p[static_cast<size_t>(i)], 0.125f) << target;
    }
    EXPECT_EQ(load_balance_loss(counts.data(), p.data(), b.tokens, b.n, b.k, 0.375f), 0.375f)
        << target;
  });
}

// F22 against the exact update, judged with the policy table's ulp row (γ's f32 rounding is
// covered through the exact run's condition numbers), on every storage format and target.
void check_aux_free(Storage s, int64_t n, int64_t max_load, double gamma, uint64_t seed) {
  const AuxFreeCase ac = aux_free_case(s, n, max_load, gamma, seed);
  const oracle::InputSet& in = ac.in;
  const oracle::Outputs<mp> exact = oracle::AuxFreeUpdateOp(ac.p).exact(in);
  oracle::GuardedBuffer out(dtype_of(s), {n});
  const auto run = [&] {
    out.arm();
    aux_free_update(s, input_bytes(in, "bias"), in.at("load").as<int64_t>().data(), n,
                    static_cast<float>(gamma), out.data());
  };
  for_each_target([&](const std::string& target) {
    run();
    const std::string where =
        target + " " + std::string(storage_name(s)) + " N=" + std::to_string(n);
    expect_judged("aux_free_update", "", exact[0].values, out, {}, where, exact[0].condition);
  });
  expect_thread_invariant(
      [&] {
        run();
        return bytes_of(out);
      },
      "aux_free_update " + std::string(storage_name(s)));
}

TEST(FastMoeAuxFree, UpdateStep) {
  for (Storage s : kAllStorages) {
    check_aux_free(s, 256, 128, 0.001, 531);  // DeepSeek-V3's N and γ
    check_aux_free(s, 37, 5, 0.01, 532);      // an odd N, loads often at the mean
    check_aux_free(s, 5000, 3, 1e-4, 533);    // several parallel chunks
  }
}

// Loads all at the mean leave every c_i as it is, bit for bit (−0 and NaN included); in place.
TEST(FastMoeAuxFree, BalancedLoadsLeaveTheBiasAsItIs) {
  for (Storage s : kAllStorages) {
    ref::Tensor c = fast_normal(534, "bias", s, {9}, 0.0, 0.05);
    const std::vector<oracle::SpecialAt> sp = {{2, oracle::Special::neg_zero},
                                               {5, oracle::Special::nan}};
    oracle::place_specials(c, sp);
    const std::vector<int64_t> load(9, 7);
    ref::Tensor y = c;
    for_each_target([&](const std::string& target) {
      aux_free_update(s, y.bytes().data(), load.data(), 9, 0.001f, y.bytes().data());
      EXPECT_TRUE(std::equal(y.bytes().begin(), y.bytes().end(), c.bytes().begin()))
          << target << " " << storage_name(s);
    });
  }
}

// A valid call routes (the two largest of 8 logits); every bad argument is refused.
TEST(FastMoeRouter, Validation) {
  float z[8] = {0, 1, 2, 3, 4, 5, 6, 7}, g[8];
  int64_t e[8];
  RouterConfig c;
  c.experts = 8;
  c.top_k = 2;
  EXPECT_NO_THROW(moe_router(Storage::f32, z, nullptr, 1, c, e, g));
  EXPECT_EQ(e[0], 6);
  EXPECT_EQ(e[1], 7);
  expect_moe_argument_checks<oracle::fast_adapters::FastMoe>();
}

}  // namespace
}  // namespace lmo::fast
