// fast/storage.h, fast/convert.h (the SIMD loads and rounded stores), fast/threads.h and
// fast/target_scope.h. Truth: reference/formats.h encode/decode (exact, correctly rounded),
// exhaustively over all 65,536 bf16 and f16 patterns, every rounding midpoint between
// neighbouring patterns (with the f32 values just below and above it), and all 2^32 f32 patterns
// stored through each target's SIMD path.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "fast/convert.h"
#include "fast/storage.h"
#include "fast/target_scope.h"
#include "fast/targets.h"
#include "fast/threads.h"
#include "reference/formats.h"

namespace lmo::fast {
namespace {

using ref::Format;

Format format_of(Storage s) { return s == Storage::bf16 ? Format::bf16 : Format::f16; }

uint16_t encode16(Storage s, float v) {
  return s == Storage::bf16 ? bf16_from_f32(v) : f16_from_f32(v);
}
float decode16(Storage s, uint16_t b) {
  return s == Storage::bf16 ? f32_from_bf16(b) : f32_from_f16(b);
}

// The f32 values whose rounding is most delicate: every 16-bit value, every midpoint between
// neighbouring values (including the one above the largest finite value), the f32 neighbours
// of each midpoint, ±0, ±inf, NaNs with high and low payloads, f32 extremes.
std::vector<float> rounding_cases(Storage s) {
  const Format f = format_of(s);
  std::vector<float> v;
  for (uint32_t p = 0; p < 0x10000; ++p) {
    if (ref::bits_is_nan(f, p)) continue;
    const double x = ref::decode<double>(f, p);
    v.push_back(static_cast<float>(x));
    if (std::isinf(x)) continue;
    const bool neg = std::signbit(x);
    const uint32_t next_bits = p + 1;  // next larger magnitude, same sign
    double next = (next_bits & 0x7FFF) == 0 ? 0 : ref::decode<double>(f, next_bits);
    if (ref::bits_is_inf(f, next_bits)) {
      // The midpoint between the largest finite value and the would-be next one.
      next = x + (x - ref::decode<double>(f, p - 1));
    }
    if (ref::bits_is_nan(f, next_bits) || (next_bits & 0x7FFF) == 0) continue;
    const float mid = static_cast<float>((x + next) / 2);  // exact in f32
    EXPECT_EQ(static_cast<double>(mid), (x + next) / 2);
    v.push_back(mid);
    v.push_back(std::nextafter(mid, 0.0f));
    v.push_back(std::nextafter(mid, neg ? -INFINITY : INFINITY));
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (float x : {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::max(),
                  -std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min(),
                  std::numeric_limits<float>::min(), 1e-30f, -1e-30f}) {
    v.push_back(x);
  }
  for (uint32_t nan : {0x7FC00000u, 0x7F800001u, 0xFF800001u, 0x7FBFFFFFu, 0xFFC00001u,
                       0x7F80FFFFu, 0x7F802000u}) {
    v.push_back(std::bit_cast<float>(nan));
  }
  return v;
}

void expect_encoded(Storage s, float x, uint16_t got) {
  const Format f = format_of(s);
  const uint64_t want = ref::encode(f, static_cast<double>(x));
  if (std::isnan(x)) {
    EXPECT_TRUE(ref::bits_is_nan(f, got)) << std::hex << std::bit_cast<uint32_t>(x) << " -> "
                                          << got;
    return;
  }
  EXPECT_EQ(got, want) << storage_name(s) << " of " << std::hexfloat << x;
}

TEST(FastStorage, DecodeEveryPatternExactly) {
  for (Storage s : {Storage::bf16, Storage::f16}) {
    const Format f = format_of(s);
    for (uint32_t p = 0; p < 0x10000; ++p) {
      const float got = decode16(s, static_cast<uint16_t>(p));
      const double want = ref::decode<double>(f, p);
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(got)) << storage_name(s) << " pattern " << p;
      } else {
        ASSERT_EQ(static_cast<double>(got), want) << storage_name(s) << " pattern " << p;
        ASSERT_EQ(std::signbit(got), std::signbit(want));
      }
    }
  }
}

TEST(FastStorage, EncodeRoundsToNearestEvenAtEveryMidpoint) {
  for (Storage s : {Storage::bf16, Storage::f16}) {
    for (float x : rounding_cases(s)) expect_encoded(s, x, encode16(s, x));
  }
}

TEST(FastStorage, Bf16RoundsNotTruncates) {
  // 1 + 2^-8 + 2^-16 is above the midpoint between 1 and 1 + 2^-7: rounds up (truncation gives
  // 1); 1 + 2^-8 exactly is a tie and goes to the even 1; 1 + 3·2^-8 ties up to 1 + 2^-6.
  EXPECT_EQ(bf16_from_f32(1.0f + 0x1p-8f + 0x1p-16f), 0x3F81);
  EXPECT_EQ(bf16_from_f32(1.0f + 0x1p-8f), 0x3F80);
  EXPECT_EQ(bf16_from_f32(1.0f + 3 * 0x1p-8f), 0x3F82);
  EXPECT_EQ(bf16_from_f32(std::numeric_limits<float>::max()), 0x7F80);  // overflows to inf
}

TEST(FastStorage, ParseAndNames) {
  for (Storage s : kAllStorages) EXPECT_EQ(parse_storage(storage_name(s)), s);
  EXPECT_FALSE(parse_storage("fp8").has_value());
  EXPECT_EQ(storage_bytes(Storage::f32), 4u);
  EXPECT_EQ(storage_bytes(Storage::bf16), 2u);
}

// The SIMD path, on every compiled target this CPU supports, over the same cases, at lengths
// that exercise whole vectors and tails.
TEST(FastStorage, SimdConversionsOnEveryTarget) {
  for (const SimdTarget& t : compiled_targets()) {
    if (!t.supported) continue;
    ScopedTarget scope(t);
    SCOPED_TRACE(t.name);
    for (Storage s : {Storage::bf16, Storage::f16}) {
      const std::vector<float> in = rounding_cases(s);
      std::vector<uint16_t> out(in.size(), 0xDEAD);
      convert(Storage::f32, in.data(), s, out.data(), static_cast<int64_t>(in.size()));
      for (size_t i = 0; i < in.size(); ++i) expect_encoded(s, in[i], out[i]);
      // Decoding every pattern.
      std::vector<uint16_t> all(0x10000);
      for (uint32_t p = 0; p < 0x10000; ++p) all[p] = static_cast<uint16_t>(p);
      std::vector<float> back(all.size());
      convert(s, all.data(), Storage::f32, back.data(), static_cast<int64_t>(all.size()));
      for (uint32_t p = 0; p < 0x10000; ++p) {
        const double want = ref::decode<double>(format_of(s), p);
        if (std::isnan(want)) {
          ASSERT_TRUE(std::isnan(back[p])) << storage_name(s) << " pattern " << p;
        } else {
          ASSERT_EQ(static_cast<double>(back[p]), want) << storage_name(s) << " pattern " << p;
          ASSERT_EQ(std::signbit(back[p]), std::signbit(want));
        }
      }
      // Short arrays: only the tail path; nothing past n is written.
      for (int64_t n = 0; n < 20; ++n) {
        std::vector<uint16_t> o(32, 0xBEEF);
        convert(Storage::f32, in.data() + 100, s, o.data(), n);
        for (int64_t i = 0; i < n; ++i) expect_encoded(s, in[100 + i], o[i]);
        for (int64_t i = n; i < 32; ++i) EXPECT_EQ(o[i], 0xBEEF);
      }
    }
  }
}

// Every f32 bit pattern, stored through the SIMD path of every supported target, against the
// correctly rounded result. The truth is a step function derived from the reference alone: the
// rounded magnitude of a non-NaN |x| is the number of midpoints between neighbouring format
// values (ref::decode, exact) that lie below |x|, and at a midpoint itself ref::encode's tie to
// even. f32 patterns of one sign are ordered like their magnitudes, so one walk over a block of
// consecutive patterns finds each pattern's step. A NaN must come out a quiet NaN of the same sign
// (bf16: also its upper payload, fast/storage.h's pattern; F16C keeps the f16 payload bits).
class RoundingSteps {
 public:
  explicit RoundingSteps(Storage s) : f_(format_of(s)) {
    const uint32_t inf = static_cast<uint32_t>(ref::inf_bits(f_));
    for (uint32_t q = 0; q < inf; ++q) {
      const double v = ref::decode<double>(f_, q);
      const double next =
          q + 1 < inf ? ref::decode<double>(f_, q + 1) : v + (v - ref::decode<double>(f_, q - 1));
      const float m = static_cast<float>((v + next) / 2);  // exact in f32
      mid_.push_back(std::bit_cast<uint32_t>(m));
      tie_.push_back(static_cast<uint16_t>(ref::encode(f_, static_cast<double>(m))));
    }
  }

  // Expected patterns for the f32 patterns first, first + 1, … (one sign, no wrap).
  void expect_block(uint32_t first, size_t n, std::vector<uint16_t>& out) const {
    const uint32_t sign = first & 0x80000000u;
    const uint16_t sign16 = static_cast<uint16_t>(sign >> 16);
    uint32_t u = first & 0x7FFFFFFFu;
    size_t k = static_cast<size_t>(std::lower_bound(mid_.begin(), mid_.end(), u) - mid_.begin());
    out.resize(n);
    for (size_t i = 0; i < n; ++i, ++u) {
      while (k < mid_.size() && mid_[k] < u) ++k;
      const uint16_t mag = k < mid_.size() && mid_[k] == u ? tie_[k] : static_cast<uint16_t>(k);
      out[i] = u > 0x7F800000u ? 0 : static_cast<uint16_t>(sign16 | mag);  // NaN: checked apart
    }
  }

  const std::vector<uint32_t>& midpoints() const { return mid_; }

  // Whether got is the right result for the f32 pattern b (expected: from expect_block).
  bool ok(uint32_t b, uint16_t expected, uint16_t got) const {
    if ((b & 0x7FFFFFFFu) <= 0x7F800000u) return got == expected;
    const uint16_t sign16 = static_cast<uint16_t>((b >> 16) & 0x8000u);
    if (f_ == Format::bf16) return got == static_cast<uint16_t>((b >> 16) | 0x0040u);
    return ref::bits_is_nan(f_, got) && (got & 0x8000u) == sign16 && (got & 0x0200u) != 0;
  }

 private:
  Format f_;
  std::vector<uint32_t> mid_;  // f32 pattern of the midpoint just above magnitude pattern q
  std::vector<uint16_t> tie_;  // ref::encode of that midpoint
};

// Stores in (consecutive runs of f32 patterns, one sign each) through convert on every
// supported target and checks each result against want (RoundingSteps::expect_block).
void expect_stores_on_every_target(Storage s, const RoundingSteps& steps,
                                   const std::vector<float>& in,
                                   const std::vector<uint16_t>& want) {
  std::vector<uint16_t> got(in.size());
  for (const SimdTarget& t : compiled_targets()) {
    if (!t.supported) continue;
    ScopedTarget scope(t);
    convert(Storage::f32, in.data(), s, got.data(), static_cast<int64_t>(in.size()));
    for (size_t i = 0; i < in.size(); ++i) {
      const uint32_t b = std::bit_cast<uint32_t>(in[i]);
      ASSERT_TRUE(steps.ok(b, want[i], got[i]))
          << storage_name(s) << " on " << t.name << ": f32 pattern " << std::hex << b
          << " stored as " << got[i] << ", expected " << want[i];
    }
  }
}

// Appends the n consecutive f32 patterns around center (moved to stay within center's sign) and
// their expected stores.
void add_run(const RoundingSteps& steps, uint32_t center, uint32_t n, std::vector<float>& in,
             std::vector<uint16_t>& want) {
  const uint32_t sign = center & 0x80000000u, mag = center & 0x7FFFFFFFu;
  const uint32_t first = sign | std::min(mag - std::min(mag, n / 2), 0x80000000u - n);
  std::vector<uint16_t> w;
  steps.expect_block(first, n, w);
  for (uint32_t i = 0; i < n; ++i) in.push_back(std::bit_cast<float>(first + i));
  want.insert(want.end(), w.begin(), w.end());
}

// Every rounding boundary's neighbourhood (16 patterns around each midpoint, of both signs), the
// neighbourhoods of every bf16 pattern and of its midpoint to the next (also where that is NaN or
// inf), and a dense deterministic sample: a run of 1024 patterns in every 2^20, at a varying
// offset. About 7.3 million patterns per format and target; SimdStoresEveryF32Pattern (disabled:
// about 3 minutes of CPU) covers all 2^32.
TEST(FastStorage, SimdStoresRoundEveryBoundaryAndASampleOnEveryTarget) {
  for (Storage s : {Storage::bf16, Storage::f16}) {
    const RoundingSteps steps(s);
    std::vector<float> in;
    std::vector<uint16_t> want;
    for (uint32_t sign : {0u, 0x80000000u}) {
      for (uint32_t m : steps.midpoints()) add_run(steps, sign | m, 16, in, want);
      for (uint32_t h = 0; h < 0x8000; ++h) {
        add_run(steps, sign | h << 16, 16, in, want);
        add_run(steps, sign | h << 16 | 0x8000u, 16, in, want);
      }
    }
    for (uint64_t j = 0; j < 4096; ++j) {
      const uint32_t offset = static_cast<uint32_t>(j * 2654435761u) & 0xFFC00u;
      add_run(steps, static_cast<uint32_t>(j << 20) | offset | 512u, 1024, in, want);
    }
    expect_stores_on_every_target(s, steps, in, want);
    // The scalar conversions of fast/storage.h on the same patterns.
    for (size_t i = 0; i < in.size(); ++i) {
      ASSERT_TRUE(steps.ok(std::bit_cast<uint32_t>(in[i]), want[i], encode16(s, in[i])))
          << storage_name(s) << " scalar: f32 pattern " << std::hex
          << std::bit_cast<uint32_t>(in[i]);
    }
  }
}

// All 2^32 f32 patterns (run with --gtest_also_run_disabled_tests; about 3 minutes of CPU for
// both formats on the four targets of an AVX2 machine).
TEST(FastStorage, DISABLED_SimdStoresEveryF32Pattern) {
  constexpr uint32_t kBlock = uint32_t{1} << 20;
  for (Storage s : {Storage::bf16, Storage::f16}) {
    const RoundingSteps steps(s);
    for (uint64_t first = 0; first < (uint64_t{1} << 32); first += kBlock) {
      std::vector<float> in;
      std::vector<uint16_t> want;
      add_run(steps, static_cast<uint32_t>(first) + kBlock / 2, kBlock, in, want);
      expect_stores_on_every_target(s, steps, in, want);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(FastStorage, ConvertValidates) {
  float a = 0;
  EXPECT_THROW(convert(Storage::f32, &a, Storage::bf16, nullptr, 1), std::invalid_argument);
  EXPECT_THROW(convert(Storage::f32, &a, Storage::bf16, &a, -1), std::invalid_argument);
  EXPECT_NO_THROW(convert(Storage::f32, nullptr, Storage::bf16, nullptr, 0));
}

TEST(FastThreads, SetThreadsValidates) {
  const int old = threads();
  EXPECT_THROW(set_threads(0), std::invalid_argument);
  EXPECT_THROW(set_threads(1025), std::invalid_argument);
  set_threads(3);
  EXPECT_EQ(threads(), 3);
  set_threads(old);
}

TEST(FastThreads, ChunksAreFixedAndCoverEveryIndexOnce) {
  const int old = threads();
  for (int nt : {1, 2, 7}) {
    set_threads(nt);
    for (int64_t n : {0, 1, 5, 64, 1000}) {
      for (int64_t grain : {1, 3, 64, 5000}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        std::atomic<int> bad_chunks{0};
        parallel_for(n, grain, [&](int64_t b, int64_t e) {
          if (b % grain != 0 || e != std::min(n, b + grain)) ++bad_chunks;
          for (int64_t i = b; i < e; ++i) ++hits[static_cast<size_t>(i)];
        });
        EXPECT_EQ(bad_chunks.load(), 0);
        for (auto& h : hits) EXPECT_EQ(h.load(), 1);
      }
    }
  }
  set_threads(old);
}

TEST(FastThreads, RethrowsAndNests) {
  const int old = threads();
  set_threads(4);
  EXPECT_THROW(parallel_for(100, 1,
                            [](int64_t b, int64_t) {
                              if (b == 57) throw std::runtime_error("chunk 57");
                            }),
               std::runtime_error);
  std::atomic<int64_t> total{0};
  parallel_for(8, 1, [&](int64_t, int64_t) {
    parallel_for(10, 2, [&](int64_t b, int64_t e) { total += e - b; });
  });
  EXPECT_EQ(total.load(), 80);
  EXPECT_THROW(parallel_for(-1, 1, [](int64_t, int64_t) {}), std::invalid_argument);
  EXPECT_THROW(parallel_for(1, 0, [](int64_t, int64_t) {}), std::invalid_argument);
  set_threads(old);
}

TEST(FastTargets, ScopedTargetForcesDispatchAndRestores) {
  const std::string best = dispatched_target();
  int supported = 0;
  for (const SimdTarget& t : compiled_targets()) {
    if (!t.supported) {
      EXPECT_THROW(ScopedTarget{t}, std::invalid_argument) << t.name;
      continue;
    }
    ++supported;
    {
      ScopedTarget scope(t);
      EXPECT_EQ(dispatched_target(), t.name);
    }
    EXPECT_EQ(dispatched_target(), best);
  }
  EXPECT_GE(supported, 1);
  EXPECT_THROW(ScopedTarget{int64_t{3}}, std::invalid_argument);  // two bits: not a target
}

}  // namespace
}  // namespace lmo::fast
