// gpu/angles.h on the host, where no device is needed: cos_sin_of_turns is the very function the
// sinusoidal encoding kernel (gpu/sinusoidal_pe.cuh) runs per (token, pair), compiled here by the
// host compiler (with -ffp-contract=off, as the device's mul_rn/fma leave nothing to contract).
// Against independent truth:
//   - the exact cos and sin of 2π·p·(hi + lo) in mp for random positions up to 2^40 and
//     frequencies over the encoding's range: absolute error within 2^-50;
//   - exact values at quarter turns (every quadrant branch, negative positions included);
//   - the encoding of the oracle's sinusoidal_pe cases (its exact mp reference on the same
//     positions) with the frequencies formed as gpu/api_positional.cc forms them: every f32 value
//     the correctly rounded one except within 2^-36 of a rounding midpoint (the frequencies'
//     long-double error at positions ≤ 2^20), and each storage judged with the policy table's row.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fast/storage.h"
#include "gpu/angles.h"
#include "oracle/ops/positional.h"
#include "reference/numeric.h"
#include "tests/support/fast_cases.h"
#include "tests/support/oracle_harness.h"
#include "tests/support/splitmix.h"

namespace lmo::gpu {
namespace {

using namespace lmo::testdata;
using fast::Storage;
using nlohmann::json;
using ref::mp;

// A deterministic 64-bit mix for the random arguments (tests/support/splitmix.h).
uint64_t mix(uint64_t x) { return lmo::testing::splitmix64(x); }

TEST(GpuAngles, MatchesExactCosSinOfTurns) {
  const mp two_pi = 2 * boost::math::constants::pi<mp>();
  double worst = 0;
  for (uint64_t k = 0; k < 4000; ++k) {
    // Positions up to 2^40 (signed), frequencies 1/2π · base^(−e), e in [0, 1), base 10^4 … 10^6.
    const uint64_t a = mix(2 * k), b = mix(2 * k + 1);
    const int bits = static_cast<int>(a % 41);
    const auto p = static_cast<int64_t>((a >> 8) & ((uint64_t{1} << bits) - 1)) * (a & 1 ? -1 : 1);
    const long double e = static_cast<long double>(b >> 11) * 0x1p-53L;
    const long double base = 1e4L * std::pow(100.0L, static_cast<long double>(b % 997) / 997.0L);
    const fast::Turns t = fast::turns_of({std::pow(base, -e)});
    double c = 0, s = 0;
    cos_sin_of_turns(static_cast<double>(p), t.hi[0], t.lo[0], c, s);
    const mp angle = two_pi * mp(p) * (mp(t.hi[0]) + mp(t.lo[0]));
    const double ec = std::abs(static_cast<double>(mp(c) - cos(angle)));
    const double es = std::abs(static_cast<double>(mp(s) - sin(angle)));
    worst = std::max({worst, ec, es});
    ASSERT_LE(ec, 0x1p-50) << "cos, p=" << p << " f=" << t.hi[0];
    ASSERT_LE(es, 0x1p-50) << "sin, p=" << p << " f=" << t.hi[0];
  }
  RecordProperty("worst_abs_error_log2", std::to_string(std::log2(worst)));
}

// f = 1/4 turn: p·f lands on quarter turns, where cos and sin are 0 or ±1 exactly (x = 0, so
// only the quadrant logic decides), for every quadrant and for negative positions.
TEST(GpuAngles, QuarterTurnsAreExact) {
  const double expect_sin[4] = {0, 1, 0, -1}, expect_cos[4] = {1, 0, -1, 0};
  for (int64_t p = -9; p <= 9; ++p) {
    double c = 2, s = 2;
    cos_sin_of_turns(static_cast<double>(p), 0.25, 0.0, c, s);
    const int q = static_cast<int>(((p % 4) + 4) % 4);
    EXPECT_EQ(s, expect_sin[q]) << "p=" << p;
    EXPECT_EQ(c, expect_cos[q]) << "p=" << p;
  }
  // Position 0: sin +0 and cos 1 at every frequency.
  double c = 0, s = 1;
  cos_sin_of_turns(0.0, 0.123456789, 1e-20, c, s);
  EXPECT_EQ(c, 1.0);
  EXPECT_EQ(s, 0.0);
  EXPECT_FALSE(std::signbit(s));
}

// The encoding of one oracle case as the kernel computes it: f32 values, row-major [tokens, d].
struct Encoded {
  lmo::testing::Harness h;
  std::vector<mp> exact;
  std::vector<double> naive;
  std::vector<float> got;
};

Encoded encode(const json& params, Storage s) {
  Encoded e{lmo::testing::Harness(json{{"id", "gpu/angles"},
                                       {"op", "sinusoidal_pe"},
                                       {"seed", 7101},
                                       {"formats", {std::string(fast::storage_name(s))}},
                                       {"params", params}},
                                  format_of(s)),
            {},
            {},
            {}};
  e.exact = e.h.op().exact(e.h.inputs())[0].values;
  e.naive = e.h.op().simulated(ref::Format::f32, e.h.inputs())[0].values;
  const auto& p = dynamic_cast<const oracle::PositionalOp&>(e.h.op()).params();
  const std::vector<int64_t> pos = e.h.inputs().ints("positions");
  // The frequencies exactly as gpu/api_positional.cc forms them.
  const fast::Turns turns = fast::turns_of(fast::inverse_powers(p.base, p.d / 2, p.d));
  for (int64_t t = 0; t < p.tokens; ++t) {
    for (int64_t i = 0; i < p.d / 2; ++i) {
      double c = 0, sn = 0;
      cos_sin_of_turns(static_cast<double>(pos[static_cast<size_t>(t)]),
                       turns.hi[static_cast<size_t>(i)], turns.lo[static_cast<size_t>(i)], c, sn);
      e.got.push_back(static_cast<float>(sn));
      e.got.push_back(static_cast<float>(c));
    }
  }
  return e;
}

// Every value the correctly rounded f32 of the exact one, except where the exact value lies
// within `margin` of the midpoint between the two neighbours; returns how many were forgiven.
int64_t expect_correctly_rounded(const Encoded& e, double margin, const std::string& where) {
  int64_t forgiven = 0;
  for (size_t k = 0; k < e.got.size(); ++k) {
    const double x = static_cast<double>(e.exact[k]);
    const float want = static_cast<float>(x);
    if (e.got[k] == want) continue;
    const float next = std::nextafter(want, e.got[k]);
    const double mid = (static_cast<double>(want) + static_cast<double>(next)) / 2;
    EXPECT_TRUE(e.got[k] == next && std::abs(x - mid) <= margin)
        << where << " element " << k << ": got " << e.got[k] << ", correctly rounded " << want
        << " (exact " << x << ")";
    ++forgiven;
  }
  return forgiven;
}

TEST(GpuAngles, EncodingCorrectlyRoundedToF32) {
  const std::vector<std::pair<std::string, json>> cases = {
      {"d=512", {{"tokens", 64}, {"d", 512}, {"max_position", 1 << 20}}},
      {"d=130", {{"tokens", 32}, {"d", 130}, {"max_position", 1 << 20}}},
      {"d=2", {{"tokens", 64}, {"d", 2}, {"max_position", 1 << 20}}},
      {"long context",
       {{"tokens", 32}, {"d", 512}, {"min_position", 1 << 19}, {"max_position", 1 << 20}}},
      {"base 500000", {{"tokens", 32}, {"d", 128}, {"base", 500000}, {"max_position", 1 << 20}}},
  };
  for (const auto& [what, params] : cases) {
    const Encoded e = encode(params, Storage::f32);
    const int64_t forgiven = expect_correctly_rounded(e, 0x1p-36, what);
    EXPECT_LE(forgiven, 2) << what;
    RecordProperty("forgiven " + what,
                   std::to_string(forgiven) + " of " + std::to_string(e.got.size()));
  }
}

// Stored in each format (f32, then the storage, nearest-even) and judged with the op's policy,
// long-context positions to 2^40 included.
TEST(GpuAngles, EncodingPassesThePolicyInEveryStorage) {
  const std::vector<std::pair<std::string, json>> cases = {
      {"d=130", {{"tokens", 8}, {"d", 130}, {"max_position", 1 << 20}}},
      {"base 500000, positions to 2^40",
       {{"tokens", 4}, {"d", 64}, {"base", 500000}, {"max_position", int64_t{1} << 40}}},
  };
  for (const auto& [what, params] : cases) {
    for (Storage s : fast::kAllStorages) {
      const Encoded e = encode(params, s);
      oracle::GuardedBuffer y(dtype_of(s), e.h.op().outputs()[0].shape);
      y.arm();
      for (size_t k = 0; k < e.got.size(); ++k) {
        fast::store_f32(s, y.data(), static_cast<int64_t>(k), e.got[k]);
      }
      expect_judged("sinusoidal_pe", "", e.exact, y, e.naive,
                    std::string(fast::storage_name(s)) + " " + what);
    }
  }
}

}  // namespace
}  // namespace lmo::gpu
