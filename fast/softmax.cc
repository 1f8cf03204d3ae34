// The row kernels of fast/softmax.h and fast/cross_entropy.h. Highway skeleton: compiled once
// per target (see fast/targets.cc).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "fast/softmax.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <cmath>
#include <limits>
#include <vector>

#include "fast/cross_entropy.h"
#include "fast/math-inl.h"
#include "fast/reduce-inl.h"
#include "fast/softmax.h"
#include "fast/storage-inl.h"
#include "fast/threads.h"

HWY_BEFORE_NAMESPACE();
namespace lmo::fast {
namespace HWY_NAMESPACE {

// z' = cap·tanh(z/cap) (cap > 0) or z; with the derivative factor when asked.
template <class D, class V>
HWY_INLINE V CapF(D d, V z, V vcap, bool capped) {
  if (!capped) return z;
  return SoftcapF(d, z, vcap);
}

// cap·tanh(z/cap) and 4e/(1 + e)², e = e^{−2|z/cap|}, sharing e.
template <class D, class V>
HWY_INLINE V CapAndGrad(D d, V z, V vcap, V& grad) {
  const V t = hn::Div(z, vcap);
  const V at = hn::Abs(t);
  const V e = ExpF(d, hn::Mul(hn::Set(d, -2.0f), at));
  const V one_e = hn::Add(hn::Set(d, 1.0f), e);
  grad = hn::Div(hn::Mul(hn::Set(d, 4.0f), e), hn::Mul(one_e, one_e));
  const V y = hn::Mul(vcap, hn::CopySign(TanhAbs(d, at, e), t));
  return hn::IfThenElse(hn::Lt(hn::Abs(z), hn::Mul(vcap, hn::Set(d, 0x1p-40f))), z, y);
}

struct RowStats {
  bool finite;  // every logit finite (else the scalar path handles the row)
  float m;      // max of z' (z' = the capped logits)
  double sum;   // Σ e^{z' − m}
};

// A per-thread row of f32 scratch, at least n + one vector long (slot 0 or 1): the terms a
// row's reduction computed, kept for the pass that writes the output instead of computed twice.
// The row is touched again right away, so it is still in cache.
inline float* Scratch(int slot, size_t n) {
  thread_local std::vector<float> rows[2];
  std::vector<float>& v = rows[slot];
  if (v.size() < n + HWY_MAX_BYTES / sizeof(float)) v.resize(n + HWY_MAX_BYTES / sizeof(float));
  return v.data();
}

// The row's max and sum. One read for the max of the raw logits together with Σ 0·z (NaN iff
// some z is not finite); z' is monotone in z, so m = z'(max z). Then Σ e^{z' − m}, storing each
// term e^{z' − m} to e (when not null) and, when dcap is not null (capped rows only), cap'(z)
// there; the padding lanes of the last vector are stored too (the scratch has room for them).
// The exponential pass prefetches `next` (the next row, or null; see RowPrefetch).
template <Storage S, class D>
RowStats Stats(D d, const Elem<S>* HWY_RESTRICT z, size_t n, float cap, float* HWY_RESTRICT e,
               float* HWY_RESTRICT dcap, const Elem<S>* next) {
  const bool capped = cap > 0.0f;
  const auto vcap = hn::Set(d, cap);
  const auto zero = hn::Zero(d);
  const float ninf = -std::numeric_limits<float>::infinity();
  hn::Vec<D> mx, bad;
  RowFold2<S>(
      d, z, n, ninf, hn::Set(d, ninf), [](auto a, auto v) { return hn::Max(a, v); },
      [](auto a, auto b) { return hn::Max(a, b); }, 0.0f, zero,
      [&](auto a, auto v) { return hn::MulAdd(v, zero, a); },
      [](auto a, auto b) { return hn::Add(a, b); }, mx, bad);
  RowStats st{};
  st.finite = !std::isnan(hn::GetLane(hn::SumOfLanes(d, bad)));
  if (!st.finite) return st;
  st.m = hn::GetLane(CapF(d, hn::MaxOfLanes(d, mx), vcap, capped));
  const auto vm = hn::Set(d, st.m);
  const size_t N = hn::Lanes(d);
  auto a0 = zero, a1 = zero, a2 = zero, a3 = zero;
  const auto term = [&](auto v, size_t i) {
    hn::Vec<D> zc;
    if (dcap) {
      hn::Vec<D> g;
      zc = CapAndGrad(d, v, vcap, g);
      hn::StoreU(g, d, dcap + i);
    } else {
      zc = CapF(d, v, vcap, capped);
    }
    const auto t = ExpF(d, hn::Sub(zc, vm));
    if (e) hn::StoreU(t, d, e + i);
    return t;
  };
  RowPrefetch prefetch(next, n * sizeof(Elem<S>), n / (4 * N));
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    prefetch.step();
    a0 = hn::Add(a0, term(LoadF<S>(d, z + i), i));
    a1 = hn::Add(a1, term(LoadF<S>(d, z + i + N), i + N));
    a2 = hn::Add(a2, term(LoadF<S>(d, z + i + 2 * N), i + 2 * N));
    a3 = hn::Add(a3, term(LoadF<S>(d, z + i + 3 * N), i + 3 * N));
  }
  for (; i + N <= n; i += N) a0 = hn::Add(a0, term(LoadF<S>(d, z + i), i));
  if (i < n) {
    a1 = hn::Add(
        a1, hn::IfThenElseZero(hn::FirstN(d, n - i), term(LoadTailF<S>(d, z + i, n - i, 0.0f), i)));
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

template <Storage S>
void SoftmaxRows(const Elem<S>* z, Elem<S>* p, float* logz, int64_t rows, size_t n) {
  const hn::ScalableTag<float> d;
  const bool stream = p && StreamRows<S>(rows, n);
  parallel_for(rows, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const Elem<S>* zr = z + static_cast<size_t>(r) * n;
      float* const e = p ? Scratch(0, n) : nullptr;
      const RowStats st = Stats<S>(d, zr, n, 0.0f, e, nullptr, r + 1 < rows ? zr + n : nullptr);
      if (!st.finite) {
        const ScalarRow sr = ScalarStats<S>(zr, n, 0.0f);
        if (logz) logz[r] = static_cast<float>(sr.lse);
        if (p) {
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
      if (logz) logz[r] = static_cast<float>(st.m + std::log(st.sum));
      if (p) {
        // p_j = e^{z_j − m}/Σ from the terms Stats kept (its padding lanes are read and
        // dropped with the tail).
        const auto vs = hn::Set(d, static_cast<float>(st.sum));
        Elem<S>* const pr = p + static_cast<size_t>(r) * n;
        const auto at = [&](size_t j) { return hn::Div(hn::LoadU(d, e + j), vs); };
        const size_t i = StoreVectors<S>(d, pr, n, stream, at);
        if (i < n) StoreTailF<S>(d, at(i), pr + i, n - i);
      }
    }
  });
}

void Softmax(Storage s, const void* z, void* p, float* logz, int64_t rows, int64_t n) {
  WithStorage(s, [&](auto tag) {
    constexpr Storage S = decltype(tag)::value;
    SoftmaxRows<S>(static_cast<const Elem<S>*>(z), static_cast<Elem<S>*>(p), logz, rows,
                   static_cast<size_t>(n));
  });
}

template <Storage S>
void CrossEntropyRows(const Elem<S>* z, const int64_t* target, int64_t rows, size_t n,
                      float lambda, float cap, float* loss, float* logz, Elem<S>* grad) {
  const hn::ScalableTag<float> d;
  const bool capped = cap > 0.0f;
  const bool stream = grad && StreamRows<S>(rows, n);
  parallel_for(rows, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const Elem<S>* zr = z + static_cast<size_t>(r) * n;
      Elem<S>* gr = grad ? grad + static_cast<size_t>(r) * n : nullptr;
      const size_t t = static_cast<size_t>(target[r]);
      const double lam = lambda;
      float* const e = gr ? Scratch(0, n) : nullptr;
      float* const dc = gr && capped ? Scratch(1, n) : nullptr;
      const RowStats st = Stats<S>(d, zr, n, cap, e, dc, r + 1 < rows ? zr + n : nullptr);
      if (!st.finite) {
        const ScalarRow sr = ScalarStats<S>(zr, n, cap);
        const double lse = sr.lse;
        loss[r] = static_cast<float>(-sr.zc[t] + lse + lam * (lse * lse));
        logz[r] = static_cast<float>(lse);
        if (!gr) continue;
        const double coef = 2 * lam * lse;
        for (size_t j = 0; j < n; ++j) {
          const double pj = std::exp(sr.zc[j] - lse);
          double g = (j == t ? pj - 1 : pj) + coef * pj;
          if (capped) {
            const double e = std::exp(-2 * std::fabs(load_f32(S, zr, static_cast<int64_t>(j)) /
                                                     static_cast<double>(cap)));
            g *= 4 * e / ((1 + e) * (1 + e));
          }
          store_f32(S, gr, static_cast<int64_t>(j), static_cast<float>(g));
        }
        continue;
      }
      const double lse = st.m + std::log(st.sum);
      const auto vcap = hn::Set(d, cap);
      const float zt =
          hn::GetLane(CapF(d, hn::Set(d, load_f32(S, zr, static_cast<int64_t>(t))), vcap, capped));
      loss[r] = static_cast<float>(-static_cast<double>(zt) + lse + lam * (lse * lse));
      logz[r] = static_cast<float>(lse);
      if (!gr) continue;
      // g_j = (p_j·(1 + 2λ log Z) − [j = t])·cap'(z_j), p_j = e^{z'_j − m}/Σ.
      const auto inv = hn::Set(d, static_cast<float>(1.0 / st.sum));
      const auto scale = hn::Set(d, static_cast<float>(1.0 + 2.0 * lam * lse));
      const hn::RebindToSigned<decltype(d)> di;
      // From the terms e^{z'_j − m} and cap'(z_j) that Stats kept.
      const auto row_grad = [&](size_t i) {
        const auto pj = hn::Mul(hn::LoadU(d, e + i), inv);
        const auto hot = hn::RebindMask(
            d, hn::Eq(hn::Iota(di, static_cast<int32_t>(i)), hn::Set(di, static_cast<int32_t>(t))));
        const auto g = hn::Sub(hn::Mul(pj, scale), hn::IfThenElseZero(hot, hn::Set(d, 1.0f)));
        return capped ? hn::Mul(g, hn::LoadU(d, dc + i)) : g;
      };
      const size_t i = StoreVectors<S>(d, gr, n, stream, row_grad);
      if (i < n) StoreTailF<S>(d, row_grad(i), gr + i, n - i);
    }
  });
}

void CrossEntropy(Storage s, const void* z, const int64_t* target, int64_t rows, int64_t vocab,
                  float lambda, float cap, float* loss, float* logz, void* grad) {
  WithStorage(s, [&](auto tag) {
    constexpr Storage S = decltype(tag)::value;
    CrossEntropyRows<S>(static_cast<const Elem<S>*>(z), target, rows,
                        static_cast<size_t>(vocab), lambda, cap, loss, logz,
                        static_cast<Elem<S>*>(grad));
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace lmo::fast
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <stdexcept>
#include <string>

#include "fast/validate.h"

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
