// fast/storage.h, fast/convert.h (the SIMD loads and rounded stores), fast/threads.h and
// fast/target_scope.h. Truth: reference/formats.h encode/decode (exact, correctly rounded),
// exhaustively over all 65,536 bf16 and f16 patterns and every rounding midpoint between
// neighbouring patterns (with the f32 values just below and above it).
#include <gtest/gtest.h>

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
