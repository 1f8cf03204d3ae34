// The MoE router kernels (fast/moe_router.h, gpu/api_moe.h) against reference/moe.h through the
// oracle's ops (oracle/ops/moe.h, moe_balance.h), one typed test over every kernel library
// (tests/support/kernel_libraries.h): the exact mp routing of the same stored logits and bias,
// gates judged with the policy table's naive_relative row (the naive run in f32 as yardstick),
// selections with its top-k set row, on every storage format. Configurations: DeepSeek-V3
// (sigmoid, bias, 8 groups by top-2 sums, top-4 groups, top-8, scale 2.5), DeepSeek-V2 (softmax,
// groups by their best, no renormalization), Switch, Mixtral, K = N, one expert per group, and
// the sigmoid router over more tokens than one GPU block's threads. Exact ties and NaN/±inf
// logits must give the reference's very selection (its tie rule: larger score, then lower
// index; NaN first). The load-balance loss and P_i through the backends' adapter
// (oracle/backends/moe_adapters.h), F22's bias update with its ulp row and bit for bit at
// balanced loads; repeatability (thread counts on the CPU, a second run on the GPU) and argument
// validation. The GPU router's per-token code on the host: gpu_moe_route_math_test.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "oracle/backends/moe_adapters.h"
#include "oracle/ops/moe.h"
#include "oracle/ops/moe_balance.h"
#include "tests/support/kernel_libraries.h"
#include "tests/support/moe_cases.h"

namespace lmo::testdata {
namespace {

using fast::Storage;
using oracle::RouterParams;
using ref::mp;

template <class Lib>
class KernelMoeRouter : public ::testing::Test {};
TYPED_TEST_SUITE(KernelMoeRouter, TestedKernels);

std::string label(Storage s, const std::string& what) {
  return std::string(fast::storage_name(s)) + " " + what;
}

// Routes on every variant of the library; judges gates and experts (with exact_selection, the
// experts must be the reference's own, in its ascending order); checks repeatability of the
// gates, experts and f32 affinities.
template <class Lib>
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
    Lib::moe_router(s, input_bytes(r.in, "logits"), bias_of(r), p.tokens,
                    oracle::op_adapters::router_config<typename Lib::RouterConfig>(p),
                    static_cast<int64_t*>(experts.data()), gates.data(), affinities.data());
    std::vector<uint8_t> b = bytes_of({&gates, &experts});
    const auto* a = reinterpret_cast<const uint8_t*>(affinities.data());
    b.insert(b.end(), a, a + affinities.size() * sizeof(float));
    return b;
  };
  Lib::for_each_variant([&](const std::string& variant) {
    run();
    expect_router_outputs(p, exact, naive, gates, experts, exact_selection,
                          variant + " " + label(s, what));
  });
  Lib::expect_repeatable(run, "moe_router " + label(s, what));
}

// The load-balance loss and P_i as the backends compute them (moe_router keeping the
// affinities, expert_balance, load_balance_loss), judged against the exact F21 of the reference
// routing.
template <class Lib>
void check_balance(Storage s, const Routed& r, const std::string& what) {
  const oracle::MoeRouterOp op(r.p, true);
  const oracle::Outputs<mp> exact = op.exact(r.in);
  const oracle::Outputs<double> naive = op.simulated(ref::Format::f32, r.in);
  std::vector<oracle::GuardedBuffer> out;
  out.emplace_back(dtype_of(s), std::vector<int64_t>{1});
  out.emplace_back(dtype_of(s), std::vector<int64_t>{r.p.experts});
  const auto run = [&] {
    for (oracle::GuardedBuffer& b : out) b.arm();
    oracle::op_adapters::run_load_balance_loss<Lib>(op, s, r.in, out);
    return bytes_of({&out[0], &out[1]});
  };
  Lib::for_each_variant([&](const std::string& variant) {
    run();
    const std::string where = variant + " " + label(s, what);
    expect_judged("load_balance_loss", "loss", exact[0].values, out[0], naive[0].values, where);
    expect_judged("load_balance_loss", "p", exact[1].values, out[1], naive[1].values, where);
  });
  Lib::expect_repeatable(run, "load_balance_loss " + label(s, what));
}

// F22 against the exact update, judged with the policy table's ulp row (γ's f32 rounding is
// covered through the exact run's condition numbers).
template <class Lib>
void check_aux_free(Storage s, int64_t n, int64_t max_load, double gamma, uint64_t seed) {
  const AuxFreeCase ac = aux_free_case(s, n, max_load, gamma, seed);
  const oracle::InputSet& in = ac.in;
  const oracle::Outputs<mp> exact = oracle::AuxFreeUpdateOp(ac.p).exact(in);
  oracle::GuardedBuffer out(dtype_of(s), {n});
  const auto run = [&] {
    out.arm();
    Lib::aux_free_update(s, input_bytes(in, "bias"), in.at("load").as<int64_t>().data(), n,
                         static_cast<float>(gamma), out.data());
    return bytes_of(out);
  };
  const std::string what = "N=" + std::to_string(n);
  Lib::for_each_variant([&](const std::string& variant) {
    run();
    expect_judged("aux_free_update", "", exact[0].values, out, {}, variant + " " + label(s, what),
                  exact[0].condition);
  });
  Lib::expect_repeatable(run, "aux_free_update " + label(s, what));
}

TYPED_TEST(KernelMoeRouter, DeepSeekRoutings) {
  LMO_REQUIRE_KERNELS(TypeParam);
  for (Storage s : fast::kAllStorages) {
    check_router<TypeParam>(s, draw_router(deepseek_v3(96), s, 501), "deepseek-v3");
    check_router<TypeParam>(s, draw_router(deepseek_v2(64), s, 502), "deepseek-v2");
  }
}

// The sigmoid router over 40 tokens and over more than one GPU block's 256 threads, odd N.
TYPED_TEST(KernelMoeRouter, FlatRoutings) {
  LMO_REQUIRE_KERNELS(TypeParam);
  for (Storage s : fast::kAllStorages) {
    for (const int64_t tokens : {40, 300}) {
      for (const NamedRouting& c : flat_routings(s, tokens)) {
        if (tokens == 300 && c.what.find("odd N") == std::string::npos) continue;  // the same
        check_router<TypeParam>(s, c.r, c.what + ", " + std::to_string(tokens) + " tokens");
      }
    }
  }
}

TYPED_TEST(KernelMoeRouter, GroupShapes) {
  LMO_REQUIRE_KERNELS(TypeParam);
  for (Storage s : fast::kAllStorages) {
    for (const NamedRouting& c : group_routings(s, true)) check_router<TypeParam>(s, c.r, c.what);
  }
}

TYPED_TEST(KernelMoeRouter, ExactTiesFollowTheReferenceRule) {
  LMO_REQUIRE_KERNELS(TypeParam);
  for (Storage s : fast::kAllStorages) {
    for (const NamedRouting& c : tied_routings(s, true)) {
      check_router<TypeParam>(s, c.r, c.what, c.exact_selection);
    }
  }
}

TYPED_TEST(KernelMoeRouter, SpecialLogitsRankAsTheReference) {
  LMO_REQUIRE_KERNELS(TypeParam);
  for (Storage s : fast::kAllStorages) {
    for (const auto& [what, r] : special_routers(s)) check_router<TypeParam>(s, r, what, true);
  }
}

TYPED_TEST(KernelMoeRouter, LoadBalanceLoss) {
  LMO_REQUIRE_KERNELS(TypeParam);
  for (Storage s : fast::kAllStorages) {
    // An odd N; then more experts than one GPU block's chunk of 32 and more tokens than its 8
    // slices.
    for (const NamedRouting& c : balance_routings(s, 33, 37, "sigmoid, odd N")) {
      check_balance<TypeParam>(s, c.r, c.what);
    }
    const NamedRouting wide = balance_routings(s, 333, 70, "sigmoid, 70 experts").back();
    check_balance<TypeParam>(s, wide.r, wide.what);
  }
}

// C25: perfectly balanced routing with uniform affinities gives L = α exactly.
TYPED_TEST(KernelMoeRouter, BalancedUniformRoutingGivesAlpha) {
  LMO_REQUIRE_KERNELS(TypeParam);
  const BalancedRouting b = balanced_routing();
  std::vector<int64_t> counts(static_cast<size_t>(b.n));
  std::vector<float> p(static_cast<size_t>(b.n));
  TypeParam::for_each_variant([&](const std::string& variant) {
    TypeParam::expert_balance(b.tokens, b.n, b.k, b.experts.data(), b.affinities.data(), true,
                              counts.data(), p.data());
    for (int64_t i = 0; i < b.n; ++i) {
      EXPECT_EQ(counts[static_cast<size_t>(i)], 2) << variant;
      EXPECT_EQ(p[static_cast<size_t>(i)], 0.125f) << variant;
    }
    EXPECT_EQ(TypeParam::load_balance_loss(counts.data(), p.data(), b.tokens, b.n, b.k, 0.375f),
              0.375f)
        << variant;
  });
}

TYPED_TEST(KernelMoeRouter, AuxFreeUpdateStep) {
  LMO_REQUIRE_KERNELS(TypeParam);
  for (Storage s : fast::kAllStorages) {
    check_aux_free<TypeParam>(s, 256, 128, 0.001, 531);  // DeepSeek-V3's N and γ
    check_aux_free<TypeParam>(s, 37, 5, 0.01, 532);      // an odd N, loads often at the mean
    check_aux_free<TypeParam>(s, 5000, 3, 1e-4, 533);    // several chunks (CPU) and blocks (GPU)
  }
}

// Loads all at the mean leave every c_i as it is, bit for bit (−0 and NaN included); in place.
TYPED_TEST(KernelMoeRouter, BalancedLoadsLeaveTheBiasAsItIs) {
  LMO_REQUIRE_KERNELS(TypeParam);
  for (Storage s : fast::kAllStorages) {
    ref::Tensor c = fast_normal(534, "bias", s, {9}, 0.0, 0.05);
    const std::vector<oracle::SpecialAt> sp = {{2, oracle::Special::neg_zero},
                                               {5, oracle::Special::nan}};
    oracle::place_specials(c, sp);
    const std::vector<int64_t> load(9, 7);
    ref::Tensor y = c;
    TypeParam::for_each_variant([&](const std::string& variant) {
      TypeParam::aux_free_update(s, y.bytes().data(), load.data(), 9, 0.001f, y.bytes().data());
      EXPECT_TRUE(std::equal(y.bytes().begin(), y.bytes().end(), c.bytes().begin()))
          << variant << " " << fast::storage_name(s);
    });
  }
}

// A valid call routes (the two largest of 8 logits) where the library runs; every bad argument
// is refused, before any CUDA call on the GPU (so that part runs without a device).
TYPED_TEST(KernelMoeRouter, Validation) {
  if (TypeParam::unavailable().empty()) {
    float z[8] = {0, 1, 2, 3, 4, 5, 6, 7}, g[8];
    int64_t e[8];
    typename TypeParam::RouterConfig c;
    c.experts = 8;
    c.top_k = 2;
    EXPECT_NO_THROW(TypeParam::moe_router(Storage::f32, z, nullptr, 1, c, e, g, nullptr));
    EXPECT_EQ(e[0], 6);
    EXPECT_EQ(e[1], 7);
  }
  expect_moe_argument_checks<TypeParam>();
}

}  // namespace
}  // namespace lmo::testdata
