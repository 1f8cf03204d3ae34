// The RoPE kernels (fast/rope.h; gpu/api.h), one typed test over every kernel library
// (tests/support/kernel_libraries.h), against the exact reference of the oracle's ops rope,
// rope_table and sinusoidal_pe (oracle/ops/rope.h, oracle/ops/positional.h: reference/rope.h,
// rope_scaling.h and positional.h evaluated in mp on the same stored inputs), judged with the
// policy table's rows for those ops (naive-relative: the naive run is the reference in f32),
// through the backends' adapter (oracle/backends/rope_adapters.h), on every layout × scaling ×
// storage format and every variant of the library (each supported Highway target; the device).
// Beyond the policy, at positions up to 2^20 every output is checked against an f32-level
// absolute bound that the naive f32 kernel misses by orders of magnitude (its angle p·θ is off by
// up to 2^-5 rad there), and at 2^40 against each library's own angle bound; repeatability (thread
// counts on the CPU, a second run on the GPU), in-place use and argument validation (on the GPU
// before any CUDA call, so without a device too). The frequencies of kernels/api/, which both
// libraries use, against the reference's θ_k in mp: in the CPU build. The sinusoidal encoding's
// own cases and validation: positional_test.cc; here it shares the repeatability check.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/api/rope_frequencies.h"
#include "kernels/api/rope_shape.h"
#include "oracle/backends/positional_adapters.h"
#include "oracle/backends/rope_adapters.h"  // and oracle/ops/rope.h: RopeOp
#include "oracle/core/specials.h"
#include "tests/support/kernel_libraries.h"
#include "tests/support/oracle_harness.h"

namespace lmo::testdata {
namespace {

using fast::kAllStorages;
using fast::Storage;
using fast::storage_name;
using kernels::RopeFrequencies;
using kernels::RopeLayout;
using kernels::RopeScaling;
using kernels::RopeShape;
using nlohmann::json;
using oracle::op_adapters::kernel_rope_frequencies;
using oracle::op_adapters::kernel_rope_shape;
using ref::mp;

template <class Lib>
class KernelRope : public ::testing::Test {};
TYPED_TEST_SUITE(KernelRope, TestedKernels);

// One op case (the oracle's parameters) in storage s: its inputs (x optionally with special
// values mixed in), exact values and naive run.
struct Prepared {
  Prepared(const std::string& op, json params, Storage s, const oracle::SpecialMix& specials = {})
      : h(json{{"id", "kernels/" + op},
               {"op", op},
               {"seed", 7001},
               {"formats", {std::string(storage_name(s))}},
               {"params", std::move(params)}},
          format_of(s)) {
    for (const auto& [name, t] : h.inputs().all()) {
      inputs.add(name, name == "x" && specials.fraction > 0
                           ? oracle::special_mix(t, 7001, "x", specials)
                           : t);
    }
    exact = h.op().exact(inputs)[0].values;
    naive = h.op().simulated(ref::Format::f32, inputs)[0].values;
  }
  const void* in(const char* name) const { return inputs.at(name).bytes().data(); }
  const int64_t* positions() const { return static_cast<const int64_t*>(in("positions")); }
  const oracle::RopeParams& rope() const {
    return dynamic_cast<const oracle::RopeOp&>(h.op()).params();
  }

  lmo::testing::Harness h;
  oracle::InputSet inputs;
  std::vector<mp> exact;
  std::vector<double> naive;
};

// The library's kernel of the prepared case (rope, rope_table or sinusoidal_pe) into y (armed
// first), through the backends' adapter; returns y's bytes.
template <class Lib>
std::vector<uint8_t> run(const Prepared& c, Storage s, std::vector<oracle::GuardedBuffer>& y) {
  namespace a = oracle::op_adapters;
  y[0].arm();
  if (c.h.c().op == "sinusoidal_pe") {
    a::run_sinusoidal_pe<Lib>(c.h.op(), s, c.inputs, y);
  } else {
    a::run_rope<Lib>(c.h.op(), s, c.inputs, y);
  }
  return bytes_of(y[0]);
}

std::vector<int64_t> output_shape(const Prepared& c) { return c.h.op().outputs()[0].shape; }

// The op's one output, armed by run.
std::vector<oracle::GuardedBuffer> output_of(const Prepared& c, Storage s) {
  std::vector<oracle::GuardedBuffer> y;
  y.emplace_back(dtype_of(s), output_shape(c));
  return y;
}

// The kernel on every variant of the library, judged with the op's policy.
template <class Lib>
void expect_passes(const std::string& op, const json& params, Storage s, const std::string& what,
                   const oracle::SpecialMix& specials = {}) {
  const Prepared c(op, params, s, specials);
  std::vector<oracle::GuardedBuffer> y = output_of(c, s);
  Lib::for_each_variant([&](const std::string& variant) {
    run<Lib>(c, s, y);
    expect_judged(op, "", c.exact, y[0], c.naive,
                  variant + " " + std::string(storage_name(s)) + " " + what);
  });
}

const std::vector<std::pair<std::string, json>>& scalings() {
  static const std::vector<std::pair<std::string, json>> v = {
      {"none", json::object()},
      {"pi", {{"scaling", "pi"}, {"factor", 4}}},
      {"ntk", {{"scaling", "ntk"}, {"factor", 8}}},
      {"yarn", {{"scaling", "yarn"}, {"factor", 40}, {"original_context", 4096}}},
      {"yarn-mscale",
       {{"scaling", "yarn"},
        {"factor", 16},
        {"original_context", 4096},
        {"beta_fast", 24},
        {"beta_slow", 2},
        {"attention_factor", true}}},
      {"llama31", {{"scaling", "llama31"}, {"factor", 8}, {"original_context", 8192}}},
  };
  return v;
}

// Full rotary (64 of 64) and partial rotary (36 of 72: 18 pairs, so both layouts end in a
// partial vector on every target).
json rope_params(const char* layout, bool partial, const json& scaling, double base) {
  json p = {{"tokens", 6},
            {"heads", 2},
            {"head_dim", partial ? 72 : 64},
            {"rotary_dims", partial ? 36 : 64},
            {"layout", layout},
            {"base", base},
            {"max_position", 1 << 20}};
  p.update(scaling);
  return p;
}

TYPED_TEST(KernelRope, AnglesEveryLayoutScalingAndStorage) {
  LMO_REQUIRE_KERNELS(TypeParam);
  for (const char* layout : {"interleaved", "half_split"}) {
    for (bool partial : {false, true}) {
      for (const auto& [name, scaling] : scalings()) {
        for (Storage s : kAllStorages) {
          expect_passes<TypeParam>("rope", rope_params(layout, partial, scaling, 500000), s,
                                   std::string(layout) + (partial ? " partial " : " ") + name);
        }
      }
    }
  }
}

TYPED_TEST(KernelRope, TableEveryLayoutScalingAndStorage) {
  LMO_REQUIRE_KERNELS(TypeParam);
  for (const char* layout : {"interleaved", "half_split"}) {
    for (bool partial : {false, true}) {
      for (const auto& [name, scaling] : scalings()) {
        for (const char* table : {"f32", "storage"}) {
          for (Storage s : kAllStorages) {
            json p = rope_params(layout, partial, scaling, 10000);
            p["table"] = table;
            expect_passes<TypeParam>(
                "rope_table", p, s,
                std::string(layout) + (partial ? " partial " : " ") + name + " table " + table);
          }
        }
      }
    }
  }
}

// The preset heads of the built-in cases: Llama 3.1 at 1M positions, DeepSeek-V3's YaRN, many
// tokens (several parallel chunks, several GPU blocks).
TYPED_TEST(KernelRope, PresetShapesAtLongContext) {
  LMO_REQUIRE_KERNELS(TypeParam);
  const json llama = {{"tokens", 64},
                      {"heads", 8},
                      {"layout", "half_split"},
                      {"head_dim", 128},
                      {"base", 500000},
                      {"min_position", 131072},
                      {"max_position", 1 << 20},
                      {"scaling", "llama31"},
                      {"factor", 8}};
  const json deepseek = {
      {"tokens", 64},           {"heads", 4},        {"head_dim", 64}, {"layout", "interleaved"},
      {"max_position", 131072}, {"scaling", "yarn"}, {"factor", 40},   {"original_context", 4096}};
  for (Storage s : {Storage::f32, Storage::bf16}) {
    expect_passes<TypeParam>("rope", llama, s, "llama3.1 1M");
    expect_passes<TypeParam>("rope", deepseek, s, "deepseek-v3 yarn");
  }
}

// x with ±0, ±inf, NaN, subnormals and ±max mixed in (one element in 8), at positions from 0 (where
// sin is exactly 0, so inf·sin is NaN in the exact reference as in IEEE arithmetic): NaN and
// infinity parity with the exact values, the rest under the policy.
TYPED_TEST(KernelRope, SpecialValuesFollowTheReference) {
  LMO_REQUIRE_KERNELS(TypeParam);
  const oracle::SpecialMix mix{std::vector<oracle::Special>(std::begin(oracle::kAllSpecials),
                                                            std::end(oracle::kAllSpecials)),
                               0.125};
  for (const char* layout : {"interleaved", "half_split"}) {
    json p = rope_params(layout, true, json::object(), 10000);
    p["tokens"] = 16;
    p["max_position"] = 4;
    // The case has what the test is about: a position 0, and NaN among the exact values.
    const Prepared c("rope", p, Storage::f32, mix);
    const int64_t* pos = c.positions();
    EXPECT_TRUE(std::count(pos, pos + 16, 0) > 0);
    EXPECT_TRUE(std::any_of(c.exact.begin(), c.exact.end(), [](const mp& v) { return isnan(v); }));
    for (Storage s : kAllStorages) {
      expect_passes<TypeParam>("rope", p, s, std::string(layout) + " specials", mix);
      expect_passes<TypeParam>("rope_table", p, s, std::string(layout) + " specials", mix);
    }
  }
}

// The largest |x| of the case, for absolute bounds.
double max_abs_x(const Prepared& c) {
  const ref::Tensor& x = c.inputs.at("x");
  double m = 0;
  for (int64_t i = 0; i < x.numel(); ++i) m = std::max(m, std::abs(x.get(i)));
  return m;
}

// f32 outputs at positions up to 2^20: y_a = x_a·c − x_b·s with c and s within 2^-25 (+ the
// angle's ~2^-37 rad) of exact, two products, an FMA and the store, each ≤ 2^-25 relative: at
// most 2.7·2^-24·max|x| (fast/; gpu/ forms the angle, c, s and the rotation in double, ~2^-32
// rad at 2^20, and rounds once: at most 2·2^-24·max|x|). The bound is 4·2^-24·max|x|; the naive
// f32 kernel (angle p·θ in f32) must exceed it 1000-fold, or the check would have no teeth.
TYPED_TEST(KernelRope, AnglesAreAccurateToF32AtLongContext) {
  LMO_REQUIRE_KERNELS(TypeParam);
  for (const char* layout : {"interleaved", "half_split"}) {
    const json p = {{"tokens", 16},
                    {"heads", 1},
                    {"head_dim", 128},
                    {"layout", layout},
                    {"base", 500000},
                    {"min_position", 1 << 19},
                    {"max_position", 1 << 20},
                    {"scaling", "llama31"},
                    {"factor", 8}};
    const Prepared c("rope", p, Storage::f32);
    const double bound = 4 * 0x1p-24 * max_abs_x(c);
    EXPECT_GT(max_error(c.exact, c.naive), 1000 * bound) << "the naive f32 run is not off";
    std::vector<oracle::GuardedBuffer> y = output_of(c, Storage::f32);
    TypeParam::for_each_variant([&](const std::string& variant) {
      run<TypeParam>(c, Storage::f32, y);
      EXPECT_LE(max_error(c.exact, values_of(y[0], static_cast<int64_t>(c.exact.size()))), bound)
          << variant << " " << layout;
    });
  }
}

// The library's angle error at |p·θ_k| up to 2^40 rad, where long double has x87's 64-bit
// significand (2^-8 where it is double: θ_k to 2^-52 relative, p·θ up to 2^40). Both libraries
// form p·θ_k exactly in turns (fast/rope.h; gpu/rope_math.h, the same arithmetic): the error is
// θ_k's, ~|p·θ|·2^-59 ≈ 2^-19 rad, while an f32 angle is meaningless (error ≫ 1).
constexpr double kAngleErrorAt2To40 = 0x1p-16;

// Positions up to 2^40 (the oracle's largest): every output within 2·angle error·max|x| of the
// exact one (a rotation by a wrong angle moves a pair by at most √2·error·max|x|), and under the
// policy.
TYPED_TEST(KernelRope, AnglesStayAccurateAt2To40) {
  LMO_REQUIRE_KERNELS(TypeParam);
  const json p = {{"tokens", 8},
                  {"heads", 1},
                  {"head_dim", 64},
                  {"layout", "interleaved"},
                  {"min_position", int64_t{1} << 39},
                  {"max_position", int64_t{1} << 40}};
  const Prepared c("rope", p, Storage::f32);
  const double angle = std::numeric_limits<long double>::digits >= 64 ? kAngleErrorAt2To40 : 0x1p-8;
  const double bound = 2 * angle * max_abs_x(c);
  std::vector<oracle::GuardedBuffer> y = output_of(c, Storage::f32);
  TypeParam::for_each_variant([&](const std::string& variant) {
    run<TypeParam>(c, Storage::f32, y);
    EXPECT_LE(max_error(c.exact, values_of(y[0], static_cast<int64_t>(c.exact.size()))), bound)
        << variant;
    expect_judged("rope", "", c.exact, y[0], c.naive, variant + " 2^40");
  });
}

#ifndef LMO_TESTED_KERNELS_GPU
// θ_k of every rule (kernels/api/rope_frequencies.h, which both libraries take their frequencies
// from) against the reference's rope_frequencies in mp (oracle/ops/rope.h).
TEST(KernelsRopeFrequencies, MatchTheReference) {
  const double tol = std::numeric_limits<long double>::digits >= 64 ? 0x1p-58 : 0x1p-48;
  for (const auto& [name, scaling] : scalings()) {
    for (int64_t r : {64, 128, 24}) {
      json p = rope_params("half_split", false, scaling, 500000);
      p["head_dim"] = r;
      p["rotary_dims"] = r;
      const Prepared c("rope", p, Storage::f32);
      const std::vector<mp> want = oracle::rope_frequencies<mp>(c.rope());
      const std::vector<long double> got =
          kernels::rope_inv_freq(r, kernel_rope_frequencies(c.rope()));
      ASSERT_EQ(got.size(), want.size());
      for (size_t k = 0; k < got.size(); ++k) {
        const mp rel = abs(mp(got[k]) - want[k]) / want[k];
        EXPECT_LE(rel, mp(tol)) << name << " r=" << r << " k=" << k;
      }
      const mp m = oracle::rope_cos_sin_factor<mp>(c.rope());
      EXPECT_LE(abs(mp(kernels::rope_cos_sin_factor(kernel_rope_frequencies(c.rope()))) - m) / m,
                mp(tol))
          << name;
    }
  }
}
#endif

// Enough tokens for several parallel chunks (about 8192 elements each) and GPU blocks: the bytes
// written with 1, 2 and 7 threads, or by a second run on the device, are identical.
TYPED_TEST(KernelRope, Repeatable) {
  const json rope_p = {{"tokens", 300},           {"heads", 3},
                       {"head_dim", 40},          {"rotary_dims", 24},
                       {"layout", "interleaved"}, {"max_position", 1 << 20},
                       {"scaling", "yarn"},       {"factor", 8},
                       {"original_context", 2048}};
  json table_p = rope_p;
  table_p["layout"] = "half_split";
  const json pe_p = {{"tokens", 300}, {"d", 96}, {"max_position", 1 << 20}};
  // A full-width bf16 head at Llama's shape. Built before the library check, so that its
  // parameters are checked without a device too (a missing one once went unseen until a GPU run).
  const json wide_p = {{"tokens", 33},
                       {"heads", 4},
                       {"head_dim", 128},
                       {"max_position", 100000},
                       {"layout", "half_split"}};
  const Prepared wide("rope", wide_p, Storage::bf16);
  LMO_REQUIRE_KERNELS(TypeParam);
  std::vector<oracle::GuardedBuffer> wide_y = output_of(wide, Storage::bf16);
  TypeParam::expect_repeatable([&] { return run<TypeParam>(wide, Storage::bf16, wide_y); },
                               "rope bf16 33x4x128");
  for (Storage s : kAllStorages) {
    for (const auto& [op, p] : {std::pair<std::string, json>{"rope", rope_p},
                                {"rope_table", table_p},
                                {"sinusoidal_pe", pe_p}}) {
      const Prepared c(op, p, s);
      std::vector<oracle::GuardedBuffer> y = output_of(c, s);
      TypeParam::expect_repeatable([&] { return run<TypeParam>(c, s, y); },
                                   op + " " + std::string(storage_name(s)));
    }
  }
}

// y = x (in place) writes the same bytes as a separate output.
TYPED_TEST(KernelRope, InPlace) {
  LMO_REQUIRE_KERNELS(TypeParam);
  for (const char* layout : {"interleaved", "half_split"}) {
    for (Storage s : kAllStorages) {
      const Prepared c("rope", rope_params(layout, true, json::object(), 10000), s);
      std::vector<oracle::GuardedBuffer> y = output_of(c, s);
      const std::vector<uint8_t> separate = run<TypeParam>(c, s, y);
      std::vector<uint8_t> inplace(c.inputs.at("x").bytes().begin(),
                                   c.inputs.at("x").bytes().end());
      TypeParam::rope(s, inplace.data(), c.positions(), inplace.data(), kernel_rope_shape(c.rope()),
                      kernel_rope_frequencies(c.rope()));
      EXPECT_TRUE(inplace == separate) << layout << " " << storage_name(s);
    }
  }
}

// Both libraries reject the same arguments (kernels/api/validate_positional.h, and
// rope_inv_freq for the frequency rule) before touching any element: here without a device too.
TYPED_TEST(KernelRope, Validation) {
  const bool runs = TypeParam::unavailable().empty();
  const auto rope = TypeParam::rope;
  const auto rope_table = TypeParam::rope_table;
  float x[8] = {}, y[8] = {}, table[4] = {};
  const int64_t pos[2] = {0, 1};
  const RopeShape ok{1, 1, 8, 4, RopeLayout::half_split};
  const RopeFrequencies plain;
  if (runs) {
    EXPECT_NO_THROW(rope(Storage::f32, x, pos, y, ok, plain));
    EXPECT_NO_THROW(rope_table(Storage::f32, x, Storage::f32, table, y, ok));
  }
  const auto bad_shape = [&](RopeShape sh) {
    EXPECT_THROW(rope(Storage::f32, x, pos, y, sh, plain), std::invalid_argument);
    EXPECT_THROW(rope_table(Storage::f32, x, Storage::f32, table, y, sh), std::invalid_argument);
  };
  bad_shape({-1, 1, 8, 4, RopeLayout::half_split});
  bad_shape({1, 0, 8, 4, RopeLayout::half_split});
  bad_shape({1, 1, 8, 3, RopeLayout::half_split});   // odd rotary_dims
  bad_shape({1, 1, 8, 10, RopeLayout::half_split});  // rotary_dims > head_dim
  bad_shape({1, 1, 8, 0, RopeLayout::half_split});
  bad_shape({1, 1, 8, 4, static_cast<RopeLayout>(7)});
  EXPECT_THROW(rope(Storage::f32, nullptr, pos, y, ok, plain), std::invalid_argument);
  EXPECT_THROW(rope(Storage::f32, x, nullptr, y, ok, plain), std::invalid_argument);
  EXPECT_THROW(rope_table(Storage::f32, x, Storage::f32, nullptr, y, ok), std::invalid_argument);
  EXPECT_THROW(rope_table(Storage::f32, x, static_cast<Storage>(9), table, y, ok),
               std::invalid_argument);
  EXPECT_THROW(rope(static_cast<Storage>(9), x, pos, y, ok, plain), std::invalid_argument);
  const int64_t far[1] = {(int64_t{1} << 53) + 1};
  EXPECT_THROW(rope(Storage::f32, x, far, y, ok, plain), std::invalid_argument);
  // Frequency parameters outside their rules' domains.
  const auto bad_freq = [&](RopeFrequencies f) {
    EXPECT_THROW(rope(Storage::f32, x, pos, y, ok, f), std::invalid_argument);
  };
  RopeFrequencies f;
  f.base = 1.0;
  bad_freq(f);
  f = {};
  f.base = INFINITY;
  bad_freq(f);
  f = {};
  f.scaling = RopeScaling::pi;
  f.factor = 0;
  bad_freq(f);
  f = {};
  f.scaling = RopeScaling::yarn;
  f.factor = 4;
  bad_freq(f);  // original_context missing
  f.original_context = 4096;
  f.beta_slow = 0;
  bad_freq(f);
  f = {};
  f.scaling = RopeScaling::llama31;
  f.factor = 8;
  f.original_context = 8192;
  f.low_freq_factor = 4;
  f.high_freq_factor = 1;
  bad_freq(f);
  f = {};
  f.scaling = RopeScaling::ntk;
  f.factor = 2;
  EXPECT_THROW(rope(Storage::f32, x, pos, y, {1, 1, 2, 2, RopeLayout::half_split}, f),
               std::invalid_argument);  // NTK needs r > 2
  // Zero tokens touch nothing.
  EXPECT_NO_THROW(rope(Storage::f32, nullptr, nullptr, nullptr, {0, 1, 8, 4}, plain));
  EXPECT_NO_THROW(rope_table(Storage::f32, nullptr, Storage::f32, nullptr, nullptr, {0, 1, 8, 4}));
}

}  // namespace
}  // namespace lmo::testdata
