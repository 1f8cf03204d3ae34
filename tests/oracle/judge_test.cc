// The oracle's judge (oracle/judge/judge.h) and guarded output buffers (oracle/core/guarded_buffer.h),
// each check tripped by a deliberately broken backend: the judging order (NaN parity, then inf
// parity, then the policy), poison, guards, the ULP policy with and without the midpoint rule,
// the naive-relative policy, and the top-k set comparison. Correct results (the exact value
// correctly rounded) are never flagged.
#include "oracle/judge/judge.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <span>
#include <vector>

#include "oracle/ops/policy_table.h"
#include "reference/parallel.h"
#include "reference/softmax.h"

namespace lmo::oracle {
namespace {

using ref::DType;
using ref::Format;

mp pow2(int e) { return boost::multiprecision::ldexp(mp(1), e); }
const mp kNaN = std::numeric_limits<mp>::quiet_NaN();
const mp kInf = std::numeric_limits<mp>::infinity();

// A tensor holding the correctly rounded values of `exact`.
ref::Tensor rounded(DType d, const std::vector<mp>& exact) {
  ref::Tensor t(d, {static_cast<int64_t>(exact.size())});
  for (size_t i = 0; i < exact.size(); ++i) {
    t.set_bits(static_cast<int64_t>(i), ref::encode(ref::dtype_format(d), exact[i]));
  }
  return t;
}

// A "backend" writing correctly rounded values into a guarded buffer, elements [0, count).
void write_rounded(GuardedBuffer& buf, const std::vector<mp>& exact, int64_t count) {
  const Format f = ref::dtype_format(buf.dtype());
  const size_t sz = ref::dtype_size(buf.dtype());
  auto* p = static_cast<uint8_t*>(buf.data());
  for (int64_t i = 0; i < count; ++i) {
    const uint64_t b = ref::encode(f, exact[static_cast<size_t>(i)]);
    std::memcpy(p + static_cast<size_t>(i) * sz, &b, sz);
  }
}

// Options that give the naive-relative policy its naive values, every other field at its
// default (a designated initializer would leave the others unnamed, which GCC 12's
// -Wmissing-field-initializers reports).
JudgeOptions with_naive(std::span<const double> naive) {
  JudgeOptions o;
  o.naive = naive;
  return o;
}

const Policy kExact = ulp_policy(0, 0);
const Policy kHuge = ulp_policy(int64_t{1} << 60, int64_t{1} << 60);  // any finite value passes

// ---------------------------------------------------------------------------------------------
// Judging order: NaN parity, then ±inf parity, then the policy.

TEST(JudgeOrder, NanParityFailsEvenWhereThePolicyWouldPass) {
  // Reference NaN, backend finite: no ulp tolerance can pass it.
  ref::Tensor got(DType::f32, {2});
  got.set(0, 1.0);
  got.set(1, 1.0);
  Verdict v = judge(kHuge, std::vector<mp>{mp(1), kNaN}, got);
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.reason, FailReason::kNanParity);
  EXPECT_EQ(v.first_index, 1);
  // Backend NaN, reference finite.
  got.set_bits(0, 0x7FC00000);
  v = judge(kHuge, std::vector<mp>{mp(1), kNaN}, got);
  EXPECT_EQ(v.reason, FailReason::kNanParity);
  EXPECT_EQ(v.first_index, 0);
  // Under the naive policy with a naive run so poor that every finite value is within bound.
  ref::Tensor one(DType::bf16, {1});
  one.set(0, 1.0);
  const std::vector<double> naive = {1e30};
  v = judge(naive_policy(), std::vector<mp>{kNaN}, one, with_naive(naive));
  EXPECT_EQ(v.reason, FailReason::kNanParity);
  // Both NaN: passes without a policy check.
  got.set_bits(1, 0xFFC00001);  // any NaN
  got.set(0, 1.0);
  EXPECT_TRUE(judge(kExact, std::vector<mp>{mp(1), kNaN}, got).pass);
}

TEST(JudgeOrder, InfParityChecksTheSignAndComesBeforeThePolicy) {
  ref::Tensor got(DType::f32, {1});
  got.set(0, -std::numeric_limits<double>::infinity());
  Verdict v = judge(kHuge, std::vector<mp>{kInf}, got);
  EXPECT_EQ(v.reason, FailReason::kInfParity);
  // f32 overflow: 2^128 rounds to +inf; the largest finite value is 1 ulp away but not inf.
  got.set_bits(0, ref::max_finite_bits(Format::f32));
  v = judge(kHuge, std::vector<mp>{pow2(128)}, got);
  EXPECT_EQ(v.reason, FailReason::kInfParity);
  EXPECT_EQ(v.first_index, 0);
  // A backend infinity where the reference is finite.
  got.set_bits(0, ref::inf_bits(Format::f32));
  EXPECT_EQ(judge(kHuge, std::vector<mp>{mp(1)}, got).reason, FailReason::kInfParity);
  // The same infinity passes, with no metric measured.
  v = judge(kExact, std::vector<mp>{kInf}, got);
  EXPECT_TRUE(v.pass);
  EXPECT_EQ(v.metrics.compared, 0);
}

TEST(JudgeOrder, E4m3HasNoInfinityAnExactInfinityIsANanReference) {
  ref::Tensor got(DType::e4m3, {2});
  got.set_bits(0, ref::max_finite_bits(Format::e4m3));  // 448
  got.set_bits(1, ref::max_finite_bits(Format::e4m3));
  const std::vector<mp> exact = {kInf, mp(500)};  // 500 > 464 also overflows to NaN
  Verdict v = judge(kExact, exact, got);
  EXPECT_EQ(v.reason, FailReason::kNanParity);
  EXPECT_EQ(v.count(FailReason::kNanParity), 2);
  // A kernel that declares satfinite stores is judged against the saturated reference.
  JudgeOptions saturate;
  saturate.overflow = ref::Overflow::kSaturate;
  EXPECT_TRUE(judge(kExact, exact, got, saturate).pass);
  got.set_bits(0, 0x7F);  // NaN
  got.set_bits(1, 0x7F);
  EXPECT_TRUE(judge(kExact, exact, got).pass);
}

TEST(JudgeOrder, FirstFailureIsTheLowestIndexAndEachElementCountsOnce) {
  ref::Tensor got(DType::bf16, {5});
  got.set(0, 1.0);          // correct
  got.set_bits(1, 0x3F81);  // 1 ulp off: policy
  got.set(2, 2.0);          // reference NaN: NaN parity
  got.set(3, 4.0);          // reference inf: inf parity
  got.set_bits(4, 0x7FC0);  // NaN for a finite reference
  const std::vector<mp> exact = {mp(1), mp(1), kNaN, kInf, mp(3)};
  const Verdict v = judge(kExact, exact, got);
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.reason, FailReason::kPolicy);
  EXPECT_EQ(v.first_index, 1);
  EXPECT_EQ(v.elements, 5);
  EXPECT_EQ(v.failed, 4);
  EXPECT_EQ(v.count(FailReason::kPolicy), 1);
  EXPECT_EQ(v.count(FailReason::kNanParity), 2);
  EXPECT_EQ(v.count(FailReason::kInfParity), 1);
  EXPECT_NE(v.detail.find("element 1"), std::string::npos) << v.detail;
  EXPECT_EQ(v.metrics.compared, 2);
  EXPECT_EQ(v.metrics.max_ulps, 1);
}

TEST(Judge, SignedZerosAreTheSameValue) {
  ref::Tensor got(DType::f16, {2});
  got.set_bits(0, 0x0000);
  got.set_bits(1, 0x8000);
  EXPECT_TRUE(judge(kExact, std::vector<mp>{mp(-0.0), mp(0)}, got).pass);
  EXPECT_TRUE(judge(kExact, std::vector<mp>{-pow2(-30), pow2(-30)}, got).pass);  // underflow
}

TEST(Judge, Tf32WordWithLowBitsSetIsNotATf32Value) {
  ref::Tensor got(DType::tf32, {1});
  got.set_bits(0, 0x3F800001);  // 1.0 in the tf32 bits, garbage below
  const Verdict v = judge(kHuge, std::vector<mp>{mp(1)}, got);
  EXPECT_EQ(v.reason, FailReason::kPolicy);
  EXPECT_NE(v.detail.find("bits set below"), std::string::npos) << v.detail;
}

TEST(Judge, RejectsInconsistentCalls) {
  ref::Tensor got(DType::f32, {2});
  EXPECT_THROW(judge(kExact, std::vector<mp>(3), got), std::invalid_argument);
  EXPECT_THROW(judge(naive_policy(), std::vector<mp>(2), got), std::invalid_argument);
  EXPECT_THROW(judge(topk_policy(0.01), std::vector<mp>(2), got), std::invalid_argument);
  ref::Tensor ints(DType::i32, {2});
  EXPECT_THROW(judge(kExact, std::vector<mp>(2), ints), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Poison and guards.

TEST(GuardedBuffer, PoisonIsADistinctNanAndThePayloadIsAligned) {
  for (Format f : ref::kAllFormats) {
    const DType d = ref::format_dtype(f);
    GuardedBuffer buf(d, {3, 5});
    SCOPED_TRACE(std::string(ref::format_name(f)));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buf.data()) % 64, 0u);
    EXPECT_EQ(buf.nbytes(), 15 * ref::dtype_size(d));
    EXPECT_TRUE(ref::bits_is_nan(f, buf.poison()));
    EXPECT_NE(buf.poison(), ref::nan_bits(f));  // never the format's own NaN
    EXPECT_TRUE(buf.guard_intact());
    for (int64_t i = 0; i < buf.numel(); ++i) EXPECT_TRUE(buf.is_poison(i));
    EXPECT_EQ(poison_is_distinctive(d), f != Format::e4m3 && f != Format::e5m2);
  }
  EXPECT_EQ(poison_bits(DType::f32), 0x7FE5A5A5u);
  EXPECT_EQ(poison_bits(DType::bf16), 0x7FE5u);
  EXPECT_LT(static_cast<int64_t>(poison_bits(DType::i64)), 0);
  EXPECT_LT(static_cast<int32_t>(poison_bits(DType::i32)), 0);
  // The region a device backend copies: both guards around the payload.
  GuardedBuffer r(DType::bf16, {3});
  EXPECT_EQ(r.region().size(), 6 + 2 * kGuardBytes);
  EXPECT_EQ(r.region().data() + kGuardBytes, r.data());
  r.region().back() = 0;  // the last guard byte, as a device-side overrun would
  EXPECT_EQ(*r.guard_breach(), 6 + static_cast<int64_t>(kGuardBytes) - 1);
  // A buffer survives a move with its payload in place.
  GuardedBuffer a(DType::f16, {4});
  const void* p = a.data();
  GuardedBuffer b = std::move(a);
  EXPECT_EQ(b.data(), p);
  EXPECT_TRUE(b.guard_intact());
}

TEST(Poison, BackendSkippingTheLastElementIsUnwritten) {
  const std::vector<mp> exact = {mp(1), mp("0.1"), mp(-3), mp("2.5e-3"), mp(7), mp("1e-2")};
  for (DType d : {DType::f32, DType::bf16, DType::f16, DType::f64, DType::e5m2, DType::e4m3}) {
    SCOPED_TRACE(std::string(ref::dtype_name(d)));
    GuardedBuffer buf(d, {6});
    write_rounded(buf, exact, 5);
    const Verdict v = judge(kExact, exact, buf);
    EXPECT_FALSE(v.pass);
    EXPECT_EQ(v.reason, FailReason::kUnwritten);
    EXPECT_EQ(v.first_index, 5);
    EXPECT_EQ(v.failed, 1);
    // Written in full, it passes; arm() poisons again for the next call.
    write_rounded(buf, exact, 6);
    EXPECT_TRUE(judge(kExact, exact, buf).pass);
    buf.arm();
    EXPECT_EQ(judge(kExact, exact, buf).count(FailReason::kUnwritten), 6);
  }
}

TEST(Poison, WrittenNanIsToldApartFromUnwrittenWhereTheFormatHasRoomForPayloads) {
  const std::vector<mp> exact = {kNaN, mp(1)};
  // f32: the reference is NaN; writing the canonical NaN passes, leaving the poison does not.
  GuardedBuffer buf(DType::f32, {2});
  write_rounded(buf, exact, 2);
  EXPECT_TRUE(judge(kExact, exact, buf).pass);
  buf.arm();
  std::memcpy(static_cast<uint8_t*>(buf.data()) + 4, "\x00\x00\x80\x3f", 4);  // element 1 = 1.0
  Verdict v = judge(kExact, exact, buf);
  EXPECT_EQ(v.reason, FailReason::kUnwritten);
  EXPECT_EQ(v.first_index, 0);
  // e5m2: too few NaN patterns; the poison where the reference is NaN is taken as a written NaN
  // (the documented limitation), where the reference is finite as unwritten.
  GuardedBuffer fp8(DType::e5m2, {2});
  v = judge(kExact, exact, fp8);
  EXPECT_EQ(v.count(FailReason::kUnwritten), 1);
  EXPECT_EQ(v.first_index, 1);
}

TEST(Guard, BackendWritingOnePastTheEndIsAnOverrun) {
  const std::vector<mp> exact = {mp(1), mp(2), mp(3), mp(4)};
  for (DType d : {DType::f32, DType::bf16, DType::e4m3, DType::f64}) {
    SCOPED_TRACE(std::string(ref::dtype_name(d)));
    GuardedBuffer buf(d, {4});
    std::vector<mp> five = exact;
    five.push_back(mp(5));
    // Write five elements into a four-element buffer: every element itself is right.
    const size_t sz = ref::dtype_size(d);
    auto* p = static_cast<uint8_t*>(buf.data());
    for (size_t i = 0; i < 5; ++i) {
      const uint64_t b = ref::encode(ref::dtype_format(d), five[i]);
      std::memcpy(p + i * sz, &b, sz);
    }
    const Verdict v = judge(kExact, exact, buf);
    EXPECT_FALSE(v.pass);
    EXPECT_EQ(v.reason, FailReason::kOverrun);
    EXPECT_EQ(v.first_index, 4);
    EXPECT_EQ(v.failed, 0);  // no element failed: the guard alone fails the case
    EXPECT_NE(v.detail.find("past the end"), std::string::npos) << v.detail;
  }
}

TEST(Guard, BackendWritingBeforeTheStartIsAnOverrunToo) {
  GuardedBuffer buf(DType::f16, {2});
  write_rounded(buf, {mp(1), mp(2)}, 2);
  static_cast<uint8_t*>(buf.data())[-1] = 0;
  const Verdict v = judge(kExact, std::vector<mp>{mp(1), mp(2)}, buf);
  EXPECT_EQ(v.reason, FailReason::kOverrun);
  EXPECT_EQ(v.first_index, -1);
  EXPECT_EQ(*buf.guard_breach(), -1);
  buf.arm();
  EXPECT_TRUE(buf.guard_intact());
}

// ---------------------------------------------------------------------------------------------
// Correct results are never flagged.

// ±m·2^e, m in [1, 2) with 124 random bits, e uniform from below the subnormal range to one
// binade above the largest finite value (so some values overflow: inf, or NaN in e4m3).
mp random_exact(Format f, std::mt19937_64& g) {
  const ref::FormatSpec& s = ref::spec(f);
  const mp m = 1 + mp(g() >> 2) * pow2(-62) + mp(g() >> 2) * pow2(-124);
  const int lo = s.emin() - s.frac_bits - 2;
  const int hi = s.emax() + 1;
  const int e = lo + static_cast<int>(g() % static_cast<uint64_t>(hi - lo + 1));
  const mp x = boost::multiprecision::ldexp(m, e);
  return (g() & 1) ? mp(-x) : x;
}

TEST(CorrectlyRounded, NeverFlaggedInAnyFormat) {
  std::mt19937_64 g(20240601);
  for (Format f : ref::kAllFormats) {
    SCOPED_TRACE(std::string(ref::format_name(f)));
    std::vector<mp> exact(10000);
    for (mp& x : exact) x = random_exact(f, g);
    const ref::Tensor got = rounded(ref::format_dtype(f), exact);
    Verdict v = judge(kExact, exact, got);
    EXPECT_TRUE(v.pass) << v.detail;
    EXPECT_EQ(v.forgiven, 0);
    EXPECT_EQ(v.metrics.max_ulps, 0);
    EXPECT_LE(v.metrics.compared, 10000);
    EXPECT_GT(v.metrics.compared, 9000);
    // Under the naive policy, with the naive run itself correctly rounded, and with the naive
    // term switched off (factor 0): the half-ulp term alone admits the correctly rounded result.
    std::vector<double> naive(exact.size());
    for (size_t i = 0; i < exact.size(); ++i) {
      naive[i] = ref::decode<double>(f, got.bits(static_cast<int64_t>(i)));
    }
    v = judge(naive_policy(), exact, got, with_naive(naive));
    EXPECT_TRUE(v.pass) << v.detail;
    v = judge(naive_policy(0, 0.5), exact, got, with_naive(naive));
    EXPECT_TRUE(v.pass) << v.detail;
  }
}

// ---------------------------------------------------------------------------------------------
// Policy (1): truncation in bf16 (Highway 1.0.3's DemoteTo) is caught.

TEST(UlpPolicy, Bf16TruncationIsCaught) {
  std::mt19937_64 g(7);
  const int64_t n = 20000;
  std::vector<mp> exact(n);
  ref::Tensor truncated(DType::bf16, {n});
  int64_t differ = 0;
  int64_t first_differ = -1;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t b = static_cast<uint32_t>(g());
    if (((b >> 23) & 0xFF) == 0xFF) b &= 0xBFFFFFFF;  // no inf/NaN inputs
    exact[i] = ref::decode<mp>(Format::f32, b);
    truncated.set_bits(i, b >> 16);  // round toward zero: keep the top half
    if (ref::encode(Format::bf16, exact[i]) != (b >> 16)) {
      ++differ;
      if (first_differ < 0) first_differ = i;
    }
  }
  ASSERT_GT(differ, n / 3);  // about half of all values round up under nearest-even
  Verdict v = judge(kExact, exact, truncated);
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.first_index, first_differ);
  EXPECT_EQ(v.failed, differ);  // exactly the elements where truncation differs
  // Under the table's policy for an activation (narrow: k = 0 with the midpoint margin) the
  // only elements forgiven are those within 2^-8 ulp of a midpoint: about 1 % of the flips.
  v = judge(policy_for("silu"), exact, truncated);
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.failed + v.forgiven, differ);
  EXPECT_LT(v.forgiven, differ / 50);
}

// ---------------------------------------------------------------------------------------------
// Policy (3): one ulp off is forgiven only near a midpoint, and only toward it.

TEST(MidpointRule, OffByOneForgivenOnlyNearTheMidpoint) {
  const Policy strict = ulp_policy(0, 0);
  const Policy forgiving = ulp_policy(0, 0, 1.0 / 256);
  ref::Tensor got(DType::bf16, {1});
  got.set_bits(0, 0x3F81);  // 1 + 2^-7
  // 1 + 2^-8 − 2^-20: rounds to 1, and lies 2^-13 ulp below the midpoint of 1 and 1 + 2^-7.
  const std::vector<mp> near = {1 + pow2(-8) - pow2(-20)};
  ASSERT_EQ(ref::encode(Format::bf16, near[0]), 0x3F80u);
  Verdict v = judge(strict, near, got);
  EXPECT_EQ(v.reason, FailReason::kPolicy);
  v = judge(forgiving, near, got);
  EXPECT_TRUE(v.pass) << v.detail;
  EXPECT_EQ(v.forgiven, 1);
  // 1 + 2^-10: 3/8 ulp from that midpoint, the same off-by-one is a bug.
  const std::vector<mp> far = {1 + pow2(-10)};
  v = judge(forgiving, far, got);
  EXPECT_EQ(v.reason, FailReason::kPolicy);
  EXPECT_NE(v.detail.find("from the midpoint"), std::string::npos) << v.detail;
  // Near the upper midpoint but rounded down past the reference: the wrong side, not forgiven.
  got.set_bits(0, 0x3F7F);
  EXPECT_EQ(judge(forgiving, near, got).reason, FailReason::kPolicy);
  // Two ulps off is never forgiven at k = 0.
  got.set_bits(0, 0x3F82);
  EXPECT_EQ(judge(forgiving, near, got).reason, FailReason::kPolicy);
}

TEST(MidpointRule, AtKOneTheRuleForgivesTwoUlpsTowardTheMidpoint) {
  const Policy p = ulp_policy(1, 1, 1.0 / 256);
  ref::Tensor got(DType::f16, {1});
  const mp x = 1 + pow2(-11) + pow2(-24);  // just above the midpoint of 1 and 1 + 2^-10
  ASSERT_EQ(ref::encode(Format::f16, x), 0x3C01u);
  got.set_bits(0, 0x3BFF);  // 2 ulp below the reference, toward that midpoint's other side
  Verdict v = judge(p, std::vector<mp>{x}, got);
  EXPECT_TRUE(v.pass) << v.detail;
  EXPECT_EQ(v.forgiven, 1);
  got.set_bits(0, 0x3C03);  // 2 ulp above: the far side
  EXPECT_FALSE(judge(p, std::vector<mp>{x}, got).pass);
  // Wide formats use their own k: 1 ulp of f32 passes under (wide 1, narrow 0).
  ref::Tensor w(DType::f32, {1});
  w.set_bits(0, 0x3F800001);
  EXPECT_TRUE(judge(ulp_policy(1, 0), std::vector<mp>{mp(1)}, w).pass);
  EXPECT_FALSE(judge(ulp_policy(0, 1), std::vector<mp>{mp(1)}, w).pass);
}

// ---------------------------------------------------------------------------------------------
// Policy (2): max|y − x| ≤ 2·max|naive − x| + ulp/2.

std::vector<mp> exact_softmax(const std::vector<double>& z) {
  std::vector<mp> zm(z.begin(), z.end());
  return ref::softmax<mp>(std::span<const mp>(zm));
}

template <class T>
std::vector<double> naive_softmax(const std::vector<double>& z) {
  std::vector<T> zt;
  for (double v : z) zt.push_back(T(v));
  std::vector<double> out;
  for (const T& p : ref::softmax<T>(std::span<const T>(zt))) out.push_back(static_cast<double>(p));
  return out;
}

ref::Tensor scaled(DType d, const std::vector<mp>& exact, const mp& s) {
  std::vector<mp> y;
  for (const mp& x : exact) y.push_back(x * s);
  return rounded(d, y);
}

// f32 output, naive f32 run (a kernel that computes and stores in f32): the naive error is a
// few f32 ulps (~1e-8), a 1 % scale error is six orders of magnitude above the bound.
TEST(NaivePolicy, ScaleErrorOfOnePercentCaughtInF32) {
  std::vector<double> z;
  for (int i = 0; i < 64; ++i) z.push_back(static_cast<float>((i * 37 % 101) / 10.0 - 5));
  const std::vector<mp> exact = exact_softmax(z);
  const std::vector<double> naive = naive_softmax<float>(z);
  const Policy p = policy_for("softmax");
  Verdict v = judge(p, exact, rounded(DType::f32, exact), with_naive(naive));
  EXPECT_TRUE(v.pass) << v.detail;
  EXPECT_LT(v.naive_bound, 1e-7);
  v = judge(p, exact, scaled(DType::f32, exact, mp("1.01")), with_naive(naive));
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.reason, FailReason::kPolicy);
  EXPECT_GT(v.failed, 32);  // every element above ~2e-5 fails
}

// bf16 output, naive bf16 run, a short row z = (2, 1, 0.5, −1): the naive kernel's largest error
// is 5.8e-4, 0.094 % of the largest probability 0.609, so the bound 2·5.8e-4 + ulp/2 = 3.1e-3 is
// half of the 1 % scale error (6.1e-3) and that error is caught. The test checks the premise
// from the numbers it computes.
TEST(NaivePolicy, ScaleErrorOfOnePercentCaughtInBf16WhenTheNaiveErrorIsSmall) {
  const std::vector<double> z = {2, 1, 0.5, -1};
  const std::vector<mp> exact = exact_softmax(z);
  const std::vector<double> naive = naive_softmax<ref::bfloat16>(z);
  mp naive_max = 0;
  for (size_t i = 0; i < z.size(); ++i)
    naive_max = std::max(naive_max, abs(mp(naive[i]) - exact[i]));
  const mp largest = exact[0];
  const mp bound = 2 * naive_max + ulp_at(Format::bf16, largest) / 2;
  // Premise: 1 % of the largest probability, less the output's own half ulp, exceeds the bound.
  ASSERT_GT(largest / 100 - ulp_at(Format::bf16, largest) / 2, bound)
      << "naive max error " << static_cast<double>(naive_max);
  const Policy p = policy_for("softmax");
  EXPECT_TRUE(judge(p, exact, rounded(DType::bf16, exact), with_naive(naive)).pass);
  const Verdict v = judge(p, exact, scaled(DType::bf16, exact, mp("1.01")), with_naive(naive));
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.reason, FailReason::kPolicy);
  EXPECT_EQ(v.first_index, 0);
}

// The rule's limit, stated as a test: on a 64-element bf16 row (z = (i mod 17)/16) the naive
// kernel's bf16 row sum drifts, and its largest error is 1.2 % of the largest probability
// (3.1e-4 against 0.0253), so the bound is 2.5 % of it and a 1 % scale error passes. Policy (2)
// judges a kernel only against what naive arithmetic in its own format would do.
TEST(NaivePolicy, CannotSeeErrorsBelowTheNaiveKernels) {
  std::vector<double> z;
  for (int i = 0; i < 64; ++i) z.push_back(static_cast<double>(ref::bfloat16((i % 17) / 16.0)));
  const std::vector<mp> exact = exact_softmax(z);
  const std::vector<double> naive = naive_softmax<ref::bfloat16>(z);
  const Verdict v = judge(policy_for("softmax"), exact, scaled(DType::bf16, exact, mp("1.01")),
                          with_naive(naive));
  EXPECT_TRUE(v.pass) << v.detail;
  const double largest = static_cast<double>(exact[16]);  // z = 1
  EXPECT_GT(v.naive_bound, 0.02 * largest);
}

TEST(NaivePolicy, NonFiniteNaiveValuesDoNotWidenTheBound) {
  const std::vector<mp> exact = {mp(1), mp(2)};
  ref::Tensor got(DType::f32, {2});
  got.set(0, 1.0);
  got.set(1, 2.5);
  const std::vector<double> naive = {std::numeric_limits<double>::infinity(), 2.0};
  const Verdict v = judge(naive_policy(), exact, got, with_naive(naive));
  EXPECT_EQ(v.naive_excluded, 1);
  EXPECT_EQ(v.naive_bound, 0.0);
  EXPECT_EQ(v.reason, FailReason::kPolicy);
  EXPECT_EQ(v.first_index, 1);
}

// The error scale S (policy.h, rule (2)): with a naive sample of error 0, an f32 output at x = 1
// may be the rounding of any value within error_scale·2^-24·S (plus the 2 compute ulps' floor).
// S = 2^10, error_scale 4: 2^-12 = 2^11 ulps of 1 (ulp 2^-23), so 1 + 2040 ulps passes and
// 1 + 2060 ulps fails, and without S the 2060-ulp output fails by the floor alone. Where twice the
// naive sample is the larger, it alone counts: the two are not added.
TEST(NaivePolicy, ErrorScaleIsALowerBoundOnTheSampledPart) {
  const std::vector<mp> exact = {mp(1), mp(1)};
  const std::vector<double> naive = {1.0, 1.0};  // a lucky naive run: no error at all
  const std::vector<double> scale = {1024.0, 0.0};
  const Policy p = naive_policy(2, 0.5, 2, 4);
  ref::Tensor got(DType::f32, {2});
  got.set(0, 1.0 + 2040 * 0x1p-23);
  got.set(1, 1.0);
  JudgeOptions o = with_naive(naive);
  o.error_scale = scale;
  Verdict v = judge(p, exact, got, o);
  EXPECT_TRUE(v.pass) << v.detail;
  got.set(0, 1.0 + 2060 * 0x1p-23);
  v = judge(p, exact, got, o);
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.first_index, 0);
  EXPECT_NE(v.detail.find("max(2·max|naive − x|, 4·u·S) (S = 1024)"), std::string::npos)
      << v.detail;
  // Element 1 (S = 0) keeps the bound without it: 2 compute ulps.
  got.set(0, 1.0);
  got.set(1, 1.0 + 3 * 0x1p-23);
  v = judge(p, exact, got, o);
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.first_index, 1);
  // A policy without error_scale ignores S.
  got.set(0, 1.0 + 2040 * 0x1p-23);
  got.set(1, 1.0);
  EXPECT_FALSE(judge(naive_policy(), exact, got, o).pass);
  // A naive sample of 2^-12 (2·2^-12 = 4096 ulps) with S = 2^10 (2048 ulps): 4096 + 2 ulps, not
  // 6144 + 2.
  const std::vector<double> unlucky_no_more = {1.0 + 0x1p-12, 1.0};
  JudgeOptions big = with_naive(unlucky_no_more);
  big.error_scale = scale;
  got.set(0, 1.0 + 4090 * 0x1p-23);
  EXPECT_TRUE(judge(p, exact, got, big).pass);
  got.set(0, 1.0 + 5000 * 0x1p-23);
  EXPECT_FALSE(judge(p, exact, got, big).pass);
  // An infinite or NaN S says nothing: the bound falls back to the sample.
  const std::vector<double> no_scale = {std::numeric_limits<double>::infinity(),
                                        std::numeric_limits<double>::quiet_NaN()};
  JudgeOptions none = with_naive(naive);
  none.error_scale = no_scale;
  got.set(0, 1.0 + 3 * 0x1p-23);
  got.set(1, 1.0);
  EXPECT_FALSE(judge(p, exact, got, none).pass);
  got.set(0, 1.0);
  got.set(1, 1.0 + 3 * 0x1p-23);
  EXPECT_FALSE(judge(p, exact, got, none).pass);
  // S must have one value per element.
  const std::vector<double> short_scale = {1.0};
  o.error_scale = short_scale;
  EXPECT_THROW(judge(p, exact, got, o), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// A JudgeReference shared by several outputs (verify's backends): each gets the verdict a fresh
// judge gives it, whichever outputs filled the shared metrics before.

void expect_same_verdict(const Verdict& a, const Verdict& b) {
  EXPECT_EQ(a.pass, b.pass);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(a.first_index, b.first_index);
  EXPECT_EQ(a.detail, b.detail);
  EXPECT_EQ(a.elements, b.elements);
  EXPECT_EQ(a.failed, b.failed);
  EXPECT_EQ(a.by_reason, b.by_reason);
  EXPECT_EQ(a.forgiven, b.forgiven);
  EXPECT_EQ(a.naive_bound, b.naive_bound);
  EXPECT_EQ(a.naive_excluded, b.naive_excluded);
  EXPECT_EQ(a.metrics.compared, b.metrics.compared);
  EXPECT_EQ(a.metrics.max_ulps, b.metrics.max_ulps);
  EXPECT_EQ(a.metrics.max_ulps_index, b.metrics.max_ulps_index);
  EXPECT_EQ(a.metrics.max_abs, b.metrics.max_abs);
  EXPECT_EQ(a.metrics.max_rel, b.metrics.max_rel);
  EXPECT_EQ(a.metrics.min_significant_bits, b.metrics.min_significant_bits);
  EXPECT_EQ(a.metrics.nmse, b.metrics.nmse);
}

// The judge spreads its elements over the reference's threads in fixed blocks: the verdict
// (first failure, counts, metrics) is the same for any thread count, and the first failure is
// the lowest failing index even when it lies in a later block than other failures' threads.
TEST(JudgeReference, VerdictDoesNotDependOnTheThreadCount) {
  std::vector<mp> exact;
  for (int i = 0; i < 5000; ++i) exact.push_back(mp(i - 2500) / 7);
  ref::Tensor got = rounded(DType::bf16, exact);
  const auto bump = [&](int64_t i, int ulps) { got.set_bits(i, got.bits(i) + ulps); };
  bump(1700, 1);  // the first failure, in the fourth block of 512
  bump(4999, 3);  // the largest error, in the last block
  bump(2600, 3);  // the same size earlier: max_ulps_index is the first of them
  bump(3000, 2);
  const int before = ref::reference_threads();
  std::vector<Verdict> v;
  for (const int threads : {1, 2, 5}) {
    ref::set_reference_threads(threads);
    v.push_back(judge(kExact, exact, got));
  }
  ref::set_reference_threads(before);
  EXPECT_FALSE(v[0].pass);
  EXPECT_EQ(v[0].first_index, 1700);
  EXPECT_EQ(v[0].failed, 4);
  EXPECT_EQ(v[0].metrics.max_ulps, 3);
  EXPECT_EQ(v[0].metrics.max_ulps_index, 2600);
  EXPECT_EQ(v[0].metrics.compared, 5000);
  expect_same_verdict(v[0], v[1]);
  expect_same_verdict(v[0], v[2]);
}

TEST(JudgeReference, NaivePolicyOutputsInAnyOrderGetTheirOwnVerdicts) {
  std::vector<double> z;
  for (int i = 0; i < 64; ++i) z.push_back(static_cast<float>((i * 37 % 101) / 10.0 - 5));
  const std::vector<mp> exact = exact_softmax(z);
  const std::vector<double> naive = naive_softmax<float>(z);
  const Policy p = policy_for("softmax");
  const ref::Tensor right = rounded(DType::f32, exact);
  const ref::Tensor wrong = scaled(DType::f32, exact, mp("1.01"));
  // Even elements right, odd ones 1 % off: half the elements reuse the shared metrics.
  ref::Tensor mixed = right;
  for (int64_t i = 1; i < 64; i += 2) mixed.set_bits(i, wrong.bits(i));
  JudgeReference shared(p, exact, Format::f32, with_naive(naive));
  for (const ref::Tensor* got :
       std::vector<const ref::Tensor*>{&wrong, &mixed, &right, &mixed, &right}) {
    const Verdict v = shared.judge(*got);
    expect_same_verdict(v, judge(p, exact, *got, with_naive(naive)));
    if (got == &right) {
      EXPECT_TRUE(v.pass) << v.detail;
      EXPECT_EQ(v.metrics.max_ulps, 0);
    } else {
      EXPECT_EQ(v.reason, FailReason::kPolicy);
      EXPECT_EQ(v.first_index, got == &mixed ? 1 : 0);
      EXPECT_GT(v.failed, got == &mixed ? 16 : 32);  // every element above ~2e-5 fails
    }
  }
}

TEST(JudgeReference, UlpPolicyWithArgErrorAndMidpointsGetsTheFreshVerdicts) {
  // bf16 values near the midpoint of 1 and 1 + 2^-7 (as in MidpointRule above), each with its
  // own condition number: the allowance differs per element.
  const std::vector<mp> exact = {1 + pow2(-8) - pow2(-20), 1 + pow2(-10), mp(0), -3 - pow2(-9)};
  const std::vector<double> kappa = {0, 1, 5, 2e4};
  JudgeOptions o;
  o.condition = kappa;
  const Policy p = ulp_policy(0, 0, 1.0 / 256, 1.0);
  const ref::Tensor right = rounded(DType::bf16, exact);
  ref::Tensor up = right;  // every element one ulp up
  for (int64_t i = 0; i < 4; ++i) {
    up.set_bits(i, from_ordinal(Format::bf16, ordinal(Format::bf16, right.bits(i)) + 1));
  }
  JudgeReference shared(p, exact, Format::bf16, o);
  for (const ref::Tensor* got : std::vector<const ref::Tensor*>{&right, &up, &right, &up}) {
    const Verdict v = shared.judge(*got);
    expect_same_verdict(v, judge(p, exact, *got, o));
    if (got == &right) {
      EXPECT_TRUE(v.pass) << v.detail;
    }
  }
  const Verdict v = shared.judge(up);
  // Element 0 lies 2^-13 ulp from the midpoint: forgiven. Element 1 (3/8 ulp from it, κ = 1)
  // and element 2 (0: no argument error) fail; so does element 3, whose κ widens the margin to
  // 1/256 + 2e4·2^-24·|x|/2^-6 ≈ 0.23 ulp, but "up" is toward zero, 0.75 ulp from that midpoint.
  EXPECT_EQ(v.forgiven, 1);
  EXPECT_EQ(v.first_index, 1);
  EXPECT_EQ(v.failed, 3);
}

TEST(JudgeReference, RefusesOutputsOfAnotherFormatOrSize) {
  const std::vector<mp> exact = {mp(1), mp(2)};
  JudgeReference shared(kExact, exact, Format::f32);
  EXPECT_THROW(shared.judge(rounded(DType::bf16, exact)), std::invalid_argument);
  EXPECT_THROW(shared.judge(rounded(DType::f32, {mp(1)})), std::invalid_argument);
  EXPECT_TRUE(shared.judge(rounded(DType::f32, exact)).pass);
  EXPECT_THROW(JudgeReference(topk_policy(0.01), exact, Format::f32), std::invalid_argument);
  EXPECT_THROW(JudgeReference(naive_policy(), exact, Format::f32), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Policy (4): top-k sets with ties within a margin.

ref::Tensor indices(DType d, const std::vector<int64_t>& v) {
  ref::Tensor t(d, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.set(static_cast<int64_t>(i), static_cast<double>(v[i]));
  return t;
}

TEST(TopKSet, SetsCompareInAnyOrderWithTiesWithinTheMargin) {
  // One token, 6 experts, top-2. Experts 1 and 2 are a near-tie (2e-4 apart, margin 1 % of 0.9).
  const std::vector<mp> scores = {mp("0.9"), mp("0.5"), mp("0.5002"), mp("0.3"), mp("0.1"), -kInf};
  const std::vector<int64_t> expected = {0, 2};
  const Policy p = topk_policy(0.01);
  EXPECT_TRUE(judge_topk(p, scores, 6, expected, indices(DType::i64, {2, 0})).pass);
  Verdict v = judge_topk(p, scores, 6, expected, indices(DType::i32, {1, 0}));
  EXPECT_TRUE(v.pass) << v.detail;
  // Expert 3 is 0.2 below expert 2: not a tie.
  v = judge_topk(p, scores, 6, expected, indices(DType::i64, {0, 3}));
  EXPECT_EQ(v.reason, FailReason::kPolicy);
  EXPECT_NE(v.detail.find("expert 3"), std::string::npos) << v.detail;
  // With a zero margin even the near-tie is a wrong choice.
  EXPECT_FALSE(judge_topk(topk_policy(0), scores, 6, expected, indices(DType::i64, {0, 1})).pass);
  // An excluded expert (−inf) never ties; the infinite score does not widen the margin either.
  EXPECT_FALSE(judge_topk(p, scores, 6, expected, indices(DType::i64, {0, 5})).pass);
  // Invalid selections.
  EXPECT_FALSE(judge_topk(p, scores, 6, expected, indices(DType::i64, {0, 0})).pass);
  EXPECT_FALSE(judge_topk(p, scores, 6, expected, indices(DType::i64, {0, 6})).pass);
  EXPECT_FALSE(judge_topk(p, scores, 6, expected, indices(DType::i64, {-1, 0})).pass);
}

TEST(TopKSet, AGroupLimitAdmitsANearlyTiedGroupOnly) {
  // 8 experts in 4 groups of 2, 2 kept by the sum of their top two scores; top-3. Group scores:
  // 1.7, 0.9, 0.899, 0.2; groups 1 and 2 tie within the group margin (2 · 0.01 · 0.9 = 0.018).
  const std::vector<mp> scores = {mp("0.9"),  mp("0.8"),   mp("0.5"), mp("0.4"),
                                  mp("0.45"), mp("0.449"), mp("0.1"), mp("0.1")};
  const std::vector<int64_t> expected = {0, 1, 2};
  const Policy p = topk_policy(0.01);
  const TopkGroups limit{4, 2, true};
  // A kernel that kept group 2 instead of group 1 and took its best expert, or its second one
  // (0.001 below the best, within the expert margin).
  EXPECT_TRUE(judge_topk(p, scores, 8, expected, indices(DType::i64, {0, 1, 4}), limit).pass);
  EXPECT_TRUE(judge_topk(p, scores, 8, expected, indices(DType::i64, {5, 1, 0}), limit).pass);
  // Without the limit, expert 4 is 0.05 below expert 2: no tie.
  EXPECT_FALSE(judge_topk(p, scores, 8, expected, indices(DType::i64, {0, 1, 4})).pass);
  // Group 3 is far below the kept groups.
  Verdict v = judge_topk(p, scores, 8, expected, indices(DType::i64, {0, 1, 6}), limit);
  EXPECT_FALSE(v.pass);
  EXPECT_NE(v.detail.find("groups 0, 3"), std::string::npos) << v.detail;
  // Groups 1 and 2 kept, group 0 (1.7) dropped: no admissible set holds both without group 0.
  EXPECT_FALSE(judge_topk(p, scores, 8, expected, indices(DType::i64, {2, 3, 4}), limit).pass);
  // Within a kept group the expert margin still holds: expert 3 (0.4) for expert 2 (0.5).
  EXPECT_FALSE(judge_topk(p, scores, 8, expected, indices(DType::i64, {0, 1, 3}), limit).pass);
  // A group limit that does not divide the experts is a caller's error.
  EXPECT_THROW(judge_topk(p, scores, 8, expected, indices(DType::i64, {0, 1, 2}), {3, 2, true}),
               std::invalid_argument);
}

TEST(TopKSet, NanScoresNeverTie) {
  const std::vector<mp> scores = {kNaN, mp("0.5"), mp("0.5")};
  EXPECT_FALSE(
      judge_topk(topk_policy(1.0), scores, 3, std::vector<int64_t>{0}, indices(DType::i64, {1}))
          .pass);
}

TEST(TopKSet, PerTokenVerdictWithPoisonAndGuard) {
  // Two tokens of 4 experts, top-1.
  const std::vector<mp> scores = {mp(1), mp(2), mp(3), mp(4), mp(4), mp(3), mp(2), mp(1)};
  const std::vector<int64_t> expected = {3, 0};
  const Policy p = policy_for("moe_router", "experts");
  GuardedBuffer buf(DType::i64, {2, 1});
  int64_t* out = static_cast<int64_t*>(buf.data());
  out[0] = 3;  // token 1 left unwritten
  Verdict v = judge_topk(p, scores, 4, expected, buf);
  EXPECT_EQ(v.reason, FailReason::kUnwritten);
  EXPECT_EQ(v.first_index, 1);
  out[1] = 1;  // a wrong expert for token 1
  v = judge_topk(p, scores, 4, expected, buf);
  EXPECT_EQ(v.reason, FailReason::kPolicy);
  EXPECT_EQ(v.first_index, 1);
  out[1] = 0;
  EXPECT_TRUE(judge_topk(p, scores, 4, expected, buf).pass);
  out[2] = 0;  // one past the end
  v = judge_topk(p, scores, 4, expected, buf);
  EXPECT_EQ(v.reason, FailReason::kOverrun);
  EXPECT_EQ(v.first_index, 2);
  // Inconsistent sizes and wrong policies are caller errors.
  EXPECT_THROW(judge_topk(p, scores, 3, expected, buf.tensor()), std::invalid_argument);
  EXPECT_THROW(judge_topk(kExact, scores, 4, expected, buf.tensor()), std::invalid_argument);
  EXPECT_THROW(judge_topk(p, scores, 4, std::vector<int64_t>{3, 3, 1}, buf.tensor()),
               std::invalid_argument);
  EXPECT_THROW(judge_topk(p, scores, 4, expected, indices(DType::f32, {3, 0})),
               std::invalid_argument);
}

}  // namespace
}  // namespace lmo::oracle
