// The row kernels of fast/softmax.h and fast/cross_entropy.h. Highway skeleton: compiled once
// per target (see fast/targets.cc).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fast/softmax.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "fast/cross_entropy.h"
#include "fast/exp_lockstep-inl.h"
#include "fast/math-inl.h"
#include "fast/reduce-inl.h"
#include "fast/softmax.h"
#include "fast/storage-inl.h"
#include "fast/threads.h"

HWY_BEFORE_NAMESPACE();
namespace lmo::fast {
namespace HWY_NAMESPACE {

// The terms are formed as e^{z' − m}·2^kSumBias (ExpNonPosTimes2Pow64F): every term that
// matters next to the sum (≥ 1, i.e. ≥ 2^kSumBias scaled) is then a normal number, so p_j =
// term·(1/Σ) (see SoftmaxRows) keeps full relative accuracy down to p_j ≈ 2^-100, and the
// exponent is built in one step.
constexpr int kSumBias = 64;

template <class D, class V>
HWY_INLINE V ScaledExpF(D d, V x) {
  return ExpNonPosTimes2Pow64F(d, x);
}

struct RowStats {
  bool finite;  // every logit finite (else the scalar path handles the row)
  float m;      // max of z' (z' = the capped logits)
  float sum;    // Σ e^{z' − m}·2^kSumBias, in f32 lanes
  // Σ e^{z' − m} (exact: a power-of-two scaling of a float).
  double unscaled_sum() const { return std::ldexp(static_cast<double>(sum), -kSumBias); }
};

// A per-thread row of f32 scratch, at least n + one vector long: the terms a row's reduction
// computed, kept for the pass that writes the output instead of computed twice. The row is
// touched again right away, so it is still in cache.
inline float* Scratch(size_t n) {
  thread_local std::vector<float> row;
  if (row.size() < n + HWY_MAX_BYTES / sizeof(float)) row.resize(n + HWY_MAX_BYTES / sizeof(float));
  return row.data();
}

// One term of the row's sum: e^{z' − m}·2^kSumBias. When kKeep it is stored to e + i, times
// cap'(z) for capped gradient rows (kGrad): the output pass then needs one product per element
// and one scratch row, not two. A function rather than a lambda so that it is always inlined (an
// out-of-line call spilled every constant of the exponential).
template <bool kCapped, bool kGrad, bool kKeep, class D, class V>
HWY_INLINE V Term(D d, V z, V vm, const SoftcapConsts<D>& cap, float* HWY_RESTRICT e, size_t i) {
  V zc = z, g;
  if constexpr (kCapped) zc = SoftcapGradF<kGrad>(d, z, cap, g);
  const V t = ScaledExpF(d, hn::Sub(zc, vm));
  if constexpr (kKeep) {
    if constexpr (kCapped && kGrad) {
      hn::StoreU(hn::Mul(t, g), d, e + i);
    } else {
      hn::StoreU(t, d, e + i);
    }
  }
  return t;
}

// A capped row's one read: max z and the integer max of |z|'s bit patterns (for |z| ≥ 0 their
// order is that of the values; NaN's lie above inf's). The tail's padding repeats z[0], neutral
// for both.
template <Storage S, class D>
HWY_INLINE void CappedRowRange(D d, const Elem<S>* HWY_RESTRICT z, size_t n, hn::Vec<D>& mx,
                               uint32_t& amax_bits) {
  const hn::RebindToSigned<D> di;
  const size_t N = hn::Lanes(d);
  const float z0 = load_f32(S, z, 0);
  auto m0 = hn::Set(d, z0), m1 = m0;
  auto hi0 = hn::BitCast(di, hn::Abs(m0)), hi1 = hi0;
  const auto step = [&](hn::Vec<D> v, hn::Vec<D>& m, hn::Vec<decltype(di)>& hi) HWY_ATTR {
    m = hn::Max(m, v);
    hi = hn::Max(hi, hn::BitCast(di, hn::Abs(v)));
  };
  size_t i = 0;
  for (; i + 2 * N <= n; i += 2 * N) {
    step(LoadF<S>(d, z + i), m0, hi0);
    step(LoadF<S>(d, z + i + N), m1, hi1);
  }
  for (; i + N <= n; i += N) step(LoadF<S>(d, z + i), m0, hi0);
  if (i < n) step(LoadTailF<S>(d, z + i, n - i, z0), m1, hi1);
  mx = hn::Max(m0, m1);
  amax_bits = static_cast<uint32_t>(hn::GetLane(hn::MaxOfLanes(di, hn::Max(hi0, hi1))));
}

// The row's max and sum. One read for the max of the raw logits together with a finiteness test:
// the integer max of |z|'s bit patterns (at least inf's 0x7F800000 iff some z is not finite, else
// the bits of max |z|; CappedRowRange for capped rows), or Σ 0·z for f16 rows (NaN iff some z is
// not finite). z' is monotone in z (see SoftcapF), so m = z'(max z) (an ulp's step back would only
// make a term e^{+ulp}, harmless to the sum). Then Σ e^{z' − m} (scaled), with Term's stores; the
// padding lanes of the last vector are stored too (the scratch has room for them). Rows whose range
// makes per-vector tests idle (small_row: no clamp of the exponential, and for capped rows no
// branch test or sign fix) run the four-vector loop without them: the same values (but for the sign
// of a zero z', which enters only as z' − m). The exponential pass prefetches `next` (the next row,
// or null; see RowPrefetch).
template <Storage S, bool kCapped, bool kGrad, bool kKeep, class D>
RowStats Stats(D d, const Elem<S>* HWY_RESTRICT z, size_t n, float cap, float* HWY_RESTRICT e,
               const Elem<S>* next) {
  using V = hn::Vec<D>;
  const SoftcapConsts<D> vcap(d, kCapped ? cap : 1.0f);
  const V zero = hn::Zero(d);
  const float ninf = -std::numeric_limits<float>::infinity();
  V mx, bad;
  RowStats st{};
  bool small_row = false;
  if constexpr (kCapped) {
    uint32_t amax_bits;
    CappedRowRange<S>(d, z, n, mx, amax_bits);
    st.finite = amax_bits < 0x7F800000u;
    // Every lane's |z| is below the soft-cap's limit iff max |z| is (the same comparison on |z| itself).
    // Tiny z need no test of their own: z + z·q rounds to z there (see SoftcapF). With cap ≤ 64
    // every |z'| ≤ tanh(0.625)·cap < 36, so z' − m > −72 and the exponential's clamp at −128
    // never acts. Such rows leave the per-vector tests out.
    float amax;
    std::memcpy(&amax, &amax_bits, sizeof amax);
    small_row = st.finite && amax < hn::GetLane(vcap.limit) && cap <= 64.0f;
  } else if constexpr (S != Storage::f16) {
    // The integer max of |z|'s bit patterns as for capped rows: two integer operations per
    // vector where Σ 0·z took one FMA, and the clamp below leaves the exponential (one
    // operation less there): in cache on one AVX2 thread f32 rows ran 5 % faster, bf16 1 %;
    // f16 rows (F16C's conversion beside it) 2.5 % slower, so they keep Σ 0·z.
    const hn::RebindToSigned<D> di;
    const auto max_bits = [&](auto a, auto b) HWY_ATTR {
      return hn::BitCast(d, hn::Max(hn::BitCast(di, a), hn::BitCast(di, b)));
    };
    RowFold2<S>(
        d, z, n, ninf, hn::Set(d, ninf), [](auto a, auto v) { return hn::Max(a, v); },
        [](auto a, auto b) { return hn::Max(a, b); }, 0.0f, zero,
        [&](auto a, auto v) HWY_ATTR { return max_bits(a, hn::Abs(v)); }, max_bits, mx, bad);
    const int32_t amax_bits = hn::GetLane(hn::MaxOfLanes(di, hn::BitCast(di, bad)));
    st.finite = amax_bits < 0x7F800000;
    // max |z| ≤ 64: every z − m ≥ −128, and the exponential's clamp never acts.
    small_row = st.finite && amax_bits <= 0x42800000;  // 64.0f
  } else {
    RowFold2<S>(
        d, z, n, ninf, hn::Set(d, ninf), [](auto a, auto v) { return hn::Max(a, v); },
        [](auto a, auto b) { return hn::Max(a, b); }, 0.0f, zero,
        [&](auto a, auto v) { return hn::MulAdd(v, zero, a); },
        [](auto a, auto b) { return hn::Add(a, b); }, mx, bad);
    st.finite = !std::isnan(hn::GetLane(hn::SumOfLanes(d, bad)));
  }
  if (!st.finite) return st;
  V vm = hn::MaxOfLanes(d, mx);
  if constexpr (kCapped) vm = SoftcapF(d, vm, vcap);
  st.m = hn::GetLane(vm);
  const size_t N = hn::Lanes(d);
  V a0 = zero, a1 = zero, a2 = zero, a3 = zero;
  RowPrefetch prefetch(next, n * sizeof(Elem<S>), n / (4 * N));
  size_t i = 0;
  const auto blocks = [&](auto small_tag) HWY_ATTR {
    constexpr bool kSmall = decltype(small_tag)::value;
    for (; i + 4 * N <= n; i += 4 * N) {
      prefetch.step();
      V x[4], g[4];
      for (size_t k = 0; k < 4; ++k) {
        V zc = LoadF<S>(d, z + i + k * N);
        if constexpr (kCapped) zc = SoftcapGradF<kGrad, kSmall>(d, zc, vcap, g[k]);
        x[k] = hn::Sub(zc, vm);
      }
      ExpNonPosTimes2Pow64Lockstep<!kSmall>(d, x);
      if constexpr (kKeep) {
        for (size_t k = 0; k < 4; ++k) {
          if constexpr (kCapped && kGrad) {
            hn::StoreU(hn::Mul(x[k], g[k]), d, e + i + k * N);
          } else {
            hn::StoreU(x[k], d, e + i + k * N);
          }
        }
      }
      a0 = hn::Add(a0, x[0]);
      a1 = hn::Add(a1, x[1]);
      a2 = hn::Add(a2, x[2]);
      a3 = hn::Add(a3, x[3]);
    }
  };
  if (small_row) {
    blocks(std::true_type{});
  } else {
    blocks(std::false_type{});
  }
  for (; i + N <= n; i += N) {
    a0 = hn::Add(a0, Term<kCapped, kGrad, kKeep>(d, LoadF<S>(d, z + i), vm, vcap, e, i));
  }
  if (i < n) {
    const V t = Term<kCapped, kGrad, kKeep>(d, LoadTailF<S>(d, z + i, n - i, 0.0f), vm, vcap, e, i);
    a1 = hn::Add(a1, hn::IfThenElseZero(hn::FirstN(d, n - i), t));
  }
  st.sum = hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3))));
  return st;
}

// Whether a call's output of rows × n elements is large enough to stream (see kStreamBytes).
template <Storage S>
bool StreamRows(int64_t rows, size_t n) {
  return static_cast<size_t>(rows) * n * sizeof(Elem<S>) >= kStreamBytes;
}

// The scalar double path for rows with a NaN or an infinite logit: the reference's formulas
// and special cases (row_max stops at the first NaN; logsumexp returns an infinite max as is).
struct ScalarRow {
  std::vector<double> zc;
  double lse;
};

template <Storage S>
ScalarRow ScalarStats(const Elem<S>* z, size_t n, float cap) {
  ScalarRow r{std::vector<double>(n), 0.0};
  for (size_t i = 0; i < n; ++i) {
    const double v = load_f32(S, z, static_cast<int64_t>(i));
    r.zc[i] = cap > 0.0f ? cap * std::tanh(v / cap) : v;
  }
  double m = r.zc[0];
  for (double v : r.zc) {
    if (std::isnan(v)) {
      m = v;
      break;
    }
    if (v > m) m = v;
  }
  if (std::isinf(m)) {
    r.lse = m;
    return r;
  }
  double s = 0;
  for (double v : r.zc) s += std::exp(v - m);
  r.lse = m + std::log(s);
  return r;
}

template <Storage S, bool kKeep>
void SoftmaxRows(const Elem<S>* z, Elem<S>* p, float* logz, int64_t rows, size_t n) {
  const hn::ScalableTag<float> d;
  const bool stream = kKeep && StreamRows<S>(rows, n);
  parallel_for(rows, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const Elem<S>* zr = z + static_cast<size_t>(r) * n;
      float* const e = kKeep ? Scratch(n) : nullptr;
      const RowStats st =
          Stats<S, false, false, kKeep>(d, zr, n, 0.0f, e, r + 1 < rows ? zr + n : nullptr);
      if (!st.finite) {
        const ScalarRow sr = ScalarStats<S>(zr, n, 0.0f);
        if (logz) logz[r] = static_cast<float>(sr.lse);
        if (kKeep) {
          double m = sr.zc[0];
          for (double v : sr.zc) {
            if (std::isnan(v)) {
              m = v;
              break;
            }
            if (v > m) m = v;
          }
          double total = 0;
          for (double v : sr.zc) total += std::exp(v - m);
          for (size_t i = 0; i < n; ++i) {
            store_f32(S, p + static_cast<size_t>(r) * n, static_cast<int64_t>(i),
                      static_cast<float>(std::exp(sr.zc[i] - m) / total));
          }
        }
        continue;
      }
      if (logz) logz[r] = static_cast<float>(st.m + std::log(st.unscaled_sum()));
      if constexpr (kKeep) {
        // p_j = e^{z_j − m}/Σ from the scaled terms t_j Stats kept and their scaled sum (its
        // padding lanes are read and dropped with the tail), as t_j·(r_hi + r_lo): 1/Σ in double
        // split into two f32 (r_hi = 1/Σ correctly rounded: double rounding is innocuous for a
        // quotient, 53 ≥ 2·24 + 2, and r_hi is normal as 2^64 ≤ Σ < 2^96; r_lo the residual
        // rounded, |r_lo| ≤ 2^-24·r_hi, its error ≤ 2^-48·r_hi even where it is subnormal) and
        // t·r_hi + t·r_lo by one FMA: the errors of r_hi + r_lo and of the small product are
        // together below 2^-47 relative, so p_j is t_j/Σ correctly rounded except within
        // that distance of a rounding midpoint (34 million random pairs at p ≥ 2^-100: every
        // one equal to the quotient; below, t·r_lo underflows and p_j ≤ 2^-100 carries an
        // absolute error below 2^-126). Zen 3's vdivps takes 3.5 cycles per vector, the two
        // products 1; one product by r_hi alone would be off by up to 1.5 ulp. Without FMA
        // (SSE4, SSSE3, scalar) the two products and the sum round separately: ≤ 1 ulp.
        const double inv = 1.0 / static_cast<double>(st.sum);
        const float inv_hi = static_cast<float>(inv);
        const auto vhi = hn::Set(d, inv_hi);
        const auto vlo = hn::Set(d, static_cast<float>(inv - static_cast<double>(inv_hi)));
        Elem<S>* const pr = p + static_cast<size_t>(r) * n;
        const auto at = [&](size_t j) HWY_ATTR {
          const auto t = hn::LoadU(d, e + j);
          return hn::MulAdd(t, vhi, hn::Mul(t, vlo));
        };
        const size_t i = StoreVectorsOrdered<S>(d, pr, n, stream, at);
        if (i < n) StoreTailF<S>(d, at(i), pr + i, n - i);
      }
    }
  });
}

void Softmax(Storage s, const void* z, void* p, float* logz, int64_t rows, int64_t n) {
  WithStorage(s, [&](auto tag) {
    constexpr Storage S = decltype(tag)::value;
    const auto* zs = static_cast<const Elem<S>*>(z);
    if (p) {
      SoftmaxRows<S, true>(zs, static_cast<Elem<S>*>(p), logz, rows, static_cast<size_t>(n));
    } else {
      SoftmaxRows<S, false>(zs, nullptr, logz, rows, static_cast<size_t>(n));
    }
  });
}

// cap'(z) = 4e/(1 + e)², e = e^{−2|z/cap|}, in double (the reference's softcap_grad).
inline double CapGradD(double z, float cap) {
  const double e = std::exp(-2 * std::fabs(z / static_cast<double>(cap)));
  return 4 * e / ((1 + e) * (1 + e));
}

// The target's gradient element, in double from the row's log Z and the f32 z'_t the loss
// uses: (p_t·(1 + 2λ log Z) − 1)·cap'(z_t), which cancels where p_t·(1 + 2λ log Z) is near 1 (a
// confident prediction) and so is formed once here rather than in f32 lanes.
inline double TargetGrad(double zct, double z, double lse, double scale, float cap, bool capped) {
  const double g = std::exp(zct - lse) * scale - 1;
  return capped ? g * CapGradD(z, cap) : g;
}

template <Storage S, bool kCapped, bool kGrad>
void CrossEntropyRows(const Elem<S>* z, const int64_t* target, int64_t rows, size_t n, float lambda,
                      float cap, float* loss, float* logz, Elem<S>* grad) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const bool stream = kGrad && StreamRows<S>(rows, n);
  parallel_for(rows, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const Elem<S>* zr = z + static_cast<size_t>(r) * n;
      Elem<S>* gr = kGrad ? grad + static_cast<size_t>(r) * n : nullptr;
      const size_t t = static_cast<size_t>(target[r]);
      const double lam = lambda;
      float* const e = kGrad ? Scratch(n) : nullptr;
      const RowStats st =
          Stats<S, kCapped, kGrad, kGrad>(d, zr, n, cap, e, r + 1 < rows ? zr + n : nullptr);
      if (!st.finite) {
        const ScalarRow sr = ScalarStats<S>(zr, n, cap);
        const double lse = sr.lse;
        loss[r] = static_cast<float>(-sr.zc[t] + lse + lam * (lse * lse));
        logz[r] = static_cast<float>(lse);
        if (!kGrad) continue;
        const double coef = 2 * lam * lse;
        for (size_t j = 0; j < n; ++j) {
          const double pj = std::exp(sr.zc[j] - lse);
          double g = (j == t ? pj - 1 : pj) + coef * pj;
          if (kCapped) g *= CapGradD(load_f32(S, zr, static_cast<int64_t>(j)), cap);
          store_f32(S, gr, static_cast<int64_t>(j), static_cast<float>(g));
        }
        continue;
      }
      const double lse = st.m + std::log(st.unscaled_sum());
      const float zt_raw = load_f32(S, zr, static_cast<int64_t>(t));
      float zt = zt_raw;
      if constexpr (kCapped) {
        zt = hn::GetLane(SoftcapF(d, hn::Set(d, zt), SoftcapConsts<hn::ScalableTag<float>>(d, cap)));
      }
      loss[r] = static_cast<float>(-static_cast<double>(zt) + lse + lam * (lse * lse));
      logz[r] = static_cast<float>(lse);
      if constexpr (kGrad) {
        // g_j = p_j·(1 + 2λ log Z)·cap'(z_j) for j ≠ t, p_j = e^{z'_j − m}/Σ: the kept
        // term·cap'(z_j) times (1 + 2λ log Z)/Σ, formed in double and rounded once (Σ ≤ n·2^64,
        // so the factor is a normal f32). The target's element is written afterwards.
        const double scale = 1.0 + 2.0 * lam * lse;
        const V k = hn::Set(d, static_cast<float>(scale / static_cast<double>(st.sum)));
        const auto at = [&](size_t j) HWY_ATTR { return hn::Mul(hn::LoadU(d, e + j), k); };
        const size_t i = StoreVectorsOrdered<S>(d, gr, n, stream, at);
        if (i < n) StoreTailF<S>(d, at(i), gr + i, n - i);
        store_f32(S, gr, static_cast<int64_t>(t),
                  static_cast<float>(TargetGrad(zt, zt_raw, lse, scale, cap, kCapped)));
      }
    }
  });
}

void CrossEntropy(Storage s, const void* z, const int64_t* target, int64_t rows, int64_t vocab,
                  float lambda, float cap, float* loss, float* logz, void* grad) {
  WithStorage(s, [&](auto tag) {
    constexpr Storage S = decltype(tag)::value;
    const auto* zs = static_cast<const Elem<S>*>(z);
    auto* gs = static_cast<Elem<S>*>(grad);
    const size_t n = static_cast<size_t>(vocab);
    if (cap > 0.0f) {
      if (gs) {
        CrossEntropyRows<S, true, true>(zs, target, rows, n, lambda, cap, loss, logz, gs);
      } else {
        CrossEntropyRows<S, true, false>(zs, target, rows, n, lambda, cap, loss, logz, gs);
      }
    } else if (gs) {
      CrossEntropyRows<S, false, true>(zs, target, rows, n, lambda, cap, loss, logz, gs);
    } else {
      CrossEntropyRows<S, false, false>(zs, target, rows, n, lambda, cap, loss, logz, gs);
    }
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace lmo::fast
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <stdexcept>
#include <string>

#include "fast/kernel_api.h"

namespace lmo::fast {
HWY_EXPORT(Softmax);
HWY_EXPORT(CrossEntropy);

namespace {
void check_rows(const char* fn, Storage s, const void* z, int64_t rows, int64_t n) {
  detail::check_storage(fn, s);
  detail::check_count(fn, "rows", rows, 0);
  detail::check_count(fn, "n", n, 1);
  detail::check_ptr(fn, "z", z, rows > 0);
  if (n > (int64_t{1} << 31) - 1) {
    throw std::invalid_argument(std::string(fn) + ": n is " + std::to_string(n) +
                                ", expected < 2^31");
  }
}
}  // namespace

void softmax(Storage s, const void* z, void* p, int64_t rows, int64_t n) {
  check_rows("softmax", s, z, rows, n);
  detail::check_ptr("softmax", "p", p, rows > 0);
  HWY_DYNAMIC_DISPATCH(Softmax)(s, z, p, nullptr, rows, n);
}

void logsumexp(Storage s, const void* z, float* logz, int64_t rows, int64_t n) {
  check_rows("logsumexp", s, z, rows, n);
  detail::check_ptr("logsumexp", "logz", logz, rows > 0);
  HWY_DYNAMIC_DISPATCH(Softmax)(s, z, nullptr, logz, rows, n);
}

void cross_entropy(Storage s, const void* z, const int64_t* target, int64_t rows, int64_t vocab,
                   float lambda, float cap, float* loss, float* logz, void* grad) {
  const char* fn = "cross_entropy";
  check_rows(fn, s, z, rows, vocab);
  detail::check_ptr(fn, "target", target, rows > 0);
  detail::check_ptr(fn, "loss", loss, rows > 0);
  detail::check_ptr(fn, "logz", logz, rows > 0);
  detail::check_lambda(fn, lambda);
  if (cap != 0.0f) detail::check_cap(fn, cap);
  detail::check_targets(fn, target, rows, vocab);
  HWY_DYNAMIC_DISPATCH(CrossEntropy)(s, z, target, rows, vocab, lambda, cap, loss, logz, grad);
}
}  // namespace lmo::fast
#endif  // HWY_ONCE
