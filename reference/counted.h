// Counted<T>: a number type that computes exactly as T and counts its operations, for the
// instrumented runs behind C18 (the F23 FLOP and memory formulas equal the operation counts of a
// reference run). Any reference template runs on it unchanged: Counted<T> has T's arithmetic,
// comparisons, the functions generic code calls unqualified (exp, log, sqrt, tanh, …) and
// std::numeric_limits.
//
// What is counted: `+` and binary `−` as adds; `*`; `/`; fma (one fused operation); comparisons;
// every elementary function (exp, log, sqrt, …) as one call. Unary minus, copies and conversions
// are free. Stored elements are not visible to a number type: the code under measurement reports
// them through count_stored(n).
//
// The counters are process-wide atomics (relaxed), so work spread by parallel_for is counted in
// full and the totals do not depend on the thread count. Take differences with OpCountScope.
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "reference/numeric.h"

namespace lmo::ref {

struct OpCounts {
  int64_t add = 0;     // + and binary −
  int64_t mul = 0;     // *
  int64_t div = 0;     // /
  int64_t fma = 0;     // fused multiply-add
  int64_t cmp = 0;     // ==, !=, <, <=, >, >=, max, min
  int64_t func = 0;    // exp, log, sqrt, tanh, erf, sin, cos, pow, …
  int64_t stored = 0;  // elements reported through count_stored

  OpCounts operator-(const OpCounts& o) const {
    return {add - o.add, mul - o.mul,   div - o.div,      fma - o.fma,
            cmp - o.cmp, func - o.func, stored - o.stored};
  }
  OpCounts operator+(const OpCounts& o) const {
    return {add + o.add, mul + o.mul,   div + o.div,      fma + o.fma,
            cmp + o.cmp, func + o.func, stored + o.stored};
  }
  friend bool operator==(const OpCounts&, const OpCounts&) = default;
};

namespace counted_detail {

struct Counters {
  std::atomic<int64_t> add{0}, mul{0}, div{0}, fma{0}, cmp{0}, func{0}, stored{0};
};
inline Counters counters;

inline void tick(std::atomic<int64_t>& c, int64_t n = 1) {
  c.fetch_add(n, std::memory_order_relaxed);
}

}  // namespace counted_detail

// The totals since the program started (or since reset_op_counts).
inline OpCounts op_counts() {
  auto& c = counted_detail::counters;
  return {c.add.load(), c.mul.load(),  c.div.load(),   c.fma.load(),
          c.cmp.load(), c.func.load(), c.stored.load()};
}

inline void reset_op_counts() {
  auto& c = counted_detail::counters;
  for (auto* a : {&c.add, &c.mul, &c.div, &c.fma, &c.cmp, &c.func, &c.stored}) a->store(0);
}

// The explicit hook for memory: the measured code reports n elements written to memory that
// the count should include (an activation, a cache entry).
inline void count_stored(int64_t n) { counted_detail::tick(counted_detail::counters.stored, n); }

// Operations counted between construction and counts().
class OpCountScope {
 public:
  OpCountScope() : start_(op_counts()) {}
  OpCounts counts() const { return op_counts() - start_; }

 private:
  OpCounts start_;
};

template <class T>
class Counted {
 public:
  using value_type = T;

  Counted() : v_(0) {}
  explicit Counted(const T& v) : v_(v) {}
  template <class U>
  requires(std::is_arithmetic_v<U> && !std::is_same_v<U, T>) explicit Counted(U u) : v_(T(u)) {}
  explicit Counted(const mp& x) requires(!std::is_same_v<T, mp>) : v_(from_mp<T>(x)) {}

  const T& value() const { return v_; }
  explicit operator double() const { return static_cast<double>(v_); }

  friend Counted operator+(const Counted& a, const Counted& b) {
    counted_detail::tick(counted_detail::counters.add);
    return Counted(T(a.v_ + b.v_));
  }
  friend Counted operator-(const Counted& a, const Counted& b) {
    counted_detail::tick(counted_detail::counters.add);
    return Counted(T(a.v_ - b.v_));
  }
  friend Counted operator*(const Counted& a, const Counted& b) {
    counted_detail::tick(counted_detail::counters.mul);
    return Counted(T(a.v_ * b.v_));
  }
  friend Counted operator/(const Counted& a, const Counted& b) {
    counted_detail::tick(counted_detail::counters.div);
    return Counted(T(a.v_ / b.v_));
  }
  Counted operator-() const { return Counted(T(-v_)); }
  Counted operator+() const { return *this; }
  Counted& operator+=(const Counted& o) { return *this = *this + o; }
  Counted& operator-=(const Counted& o) { return *this = *this - o; }
  Counted& operator*=(const Counted& o) { return *this = *this * o; }
  Counted& operator/=(const Counted& o) { return *this = *this / o; }

#define LMO_COUNTED_CMP(op)                                     \
  friend bool operator op(const Counted& a, const Counted& b) { \
    counted_detail::tick(counted_detail::counters.cmp);         \
    return a.v_ op b.v_;                                        \
  }                                                             \
  friend bool operator op(const Counted& a, int b) {            \
    counted_detail::tick(counted_detail::counters.cmp);         \
    return a.v_ op T(b);                                        \
  }
  LMO_COUNTED_CMP(==)
  LMO_COUNTED_CMP(!=)
  LMO_COUNTED_CMP(<)
  LMO_COUNTED_CMP(<=)
  LMO_COUNTED_CMP(>)
  LMO_COUNTED_CMP(>=)
#undef LMO_COUNTED_CMP

 private:
  T v_;
};

template <class T>
inline constexpr bool is_counted_v = false;
template <class T>
inline constexpr bool is_counted_v<Counted<T>> = true;

// Exact, like to_mp of T (found by argument-dependent lookup from convert()).
template <class T>
mp to_mp(const Counted<T>& x) {
  return to_mp(x.value());
}

// Functions found by argument-dependent lookup from generic code. Inside each, the `using`
// declaration and T's own namespace (mp, float128, Sim<F>) supply the function for T.
#define LMO_COUNTED_UNARY(name)                          \
  template <class T>                                     \
  Counted<T> name(const Counted<T>& x) {                 \
    using std::name;                                     \
    counted_detail::tick(counted_detail::counters.func); \
    return Counted<T>(T(name(x.value())));               \
  }
LMO_COUNTED_UNARY(exp)
LMO_COUNTED_UNARY(expm1)
LMO_COUNTED_UNARY(log)
LMO_COUNTED_UNARY(log1p)
LMO_COUNTED_UNARY(tanh)
LMO_COUNTED_UNARY(erf)
LMO_COUNTED_UNARY(sin)
LMO_COUNTED_UNARY(cos)
LMO_COUNTED_UNARY(atan)
LMO_COUNTED_UNARY(sqrt)
LMO_COUNTED_UNARY(floor)
#undef LMO_COUNTED_UNARY

// |x| and sign handling are free, like unary minus.
template <class T>
Counted<T> abs(const Counted<T>& x) {
  using std::abs;
  return Counted<T>(T(abs(x.value())));
}
template <class T>
Counted<T> fabs(const Counted<T>& x) {
  return abs(x);
}
template <class T>
Counted<T> pow(const Counted<T>& a, const Counted<T>& b) {
  using std::pow;
  counted_detail::tick(counted_detail::counters.func);
  return Counted<T>(T(pow(a.value(), b.value())));
}
template <class T>
Counted<T> fma(const Counted<T>& a, const Counted<T>& b, const Counted<T>& c) {
  using std::fma;
  counted_detail::tick(counted_detail::counters.fma);
  return Counted<T>(T(fma(a.value(), b.value(), c.value())));
}
template <class T>
Counted<T> max(const Counted<T>& a, const Counted<T>& b) {
  return a < b ? b : a;
}
template <class T>
Counted<T> min(const Counted<T>& a, const Counted<T>& b) {
  return b < a ? b : a;
}
template <class T>
Counted<T> ldexp(const Counted<T>& x, int e) {
  using std::ldexp;
  return Counted<T>(T(ldexp(x.value(), e)));
}
template <class T>
bool isnan(const Counted<T>& x) {
  using std::isnan;
  return isnan(x.value());
}
template <class T>
bool isinf(const Counted<T>& x) {
  using std::isinf;
  return isinf(x.value());
}
template <class T>
bool isfinite(const Counted<T>& x) {
  using std::isfinite;
  return isfinite(x.value());
}
template <class T>
bool signbit(const Counted<T>& x) {
  using std::signbit;
  return signbit(x.value());
}

}  // namespace lmo::ref

template <class T>
class std::numeric_limits<lmo::ref::Counted<T>> {
  using C = lmo::ref::Counted<T>;
  using L = std::numeric_limits<T>;

 public:
  static constexpr bool is_specialized = L::is_specialized;
  static constexpr bool is_signed = L::is_signed;
  static constexpr bool is_integer = L::is_integer;
  static constexpr bool is_exact = L::is_exact;
  static constexpr bool has_infinity = L::has_infinity;
  static constexpr bool has_quiet_NaN = L::has_quiet_NaN;
  static constexpr bool has_signaling_NaN = L::has_signaling_NaN;
  static constexpr std::float_round_style round_style = L::round_style;
  static constexpr bool is_iec559 = L::is_iec559;
  static constexpr bool is_bounded = L::is_bounded;
  static constexpr int digits = L::digits;
  static constexpr int digits10 = L::digits10;
  static constexpr int max_digits10 = L::max_digits10;
  static constexpr int radix = L::radix;
  static constexpr int min_exponent = L::min_exponent;
  static constexpr int max_exponent = L::max_exponent;
  static C min() { return C(T(L::min())); }
  static C max() { return C(T(L::max())); }
  static C lowest() { return C(T(L::lowest())); }
  static C epsilon() { return C(T(L::epsilon())); }
  static C round_error() { return C(T(L::round_error())); }
  static C infinity() { return C(T(L::infinity())); }
  static C quiet_NaN() { return C(T(L::quiet_NaN())); }
  static C denorm_min() { return C(T(L::denorm_min())); }
};
