// Binary floating-point formats the project stores and simulates, and exact conversion between
// them and any binary number type (double, float128, mp).
//
// Rounding is done by one generic algorithm (`encode`): split |x| into exponent and significand
// with frexp/ldexp (exact in every binary type), round the significand to an integer with
// round-to-nearest-even, then apply the format's exponent range. Subnormals are kept.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <type_traits>

namespace lmo::ref {

enum class Format : uint8_t { f64, f32, tf32, bf16, f16, e4m3, e5m2 };
inline constexpr Format kAllFormats[] = {Format::f64,  Format::f32, Format::tf32, Format::bf16,
                                         Format::f16,  Format::e4m3, Format::e5m2};

// What happens to a finite value whose rounded magnitude exceeds the largest finite value.
enum class Overflow : uint8_t {
  kIeee,      // to ±inf; for e4m3 (no infinity, "FN") to NaN. ±inf input stays ±inf / NaN.
  kSaturate,  // to ±max finite; ±inf input also to ±max finite (the CUDA/OCP "satfinite" rule).
};

struct FormatSpec {
  Format id;
  std::string_view name;
  int exp_bits;
  int frac_bits;   // explicit fraction bits; precision is frac_bits + 1
  int bias;
  bool has_inf;    // false only for e4m3 (OCP "E4M3FN": exponent 1111 holds normal numbers)
  int container_bits;  // bits of the storage word
  int shift;       // the pattern sits in the high bits of the container (tf32: 19 of 32 bits)

  constexpr int precision() const { return frac_bits + 1; }
  constexpr int emin() const { return 1 - bias; }
  // Largest exponent of a finite value. IEEE reserves the all-ones exponent field; E4M3FN
  // reserves only the single all-ones pattern S.1111.111 for NaN.
  constexpr int emax() const {
    int top = (1 << exp_bits) - 1;
    return (has_inf ? top - 1 : top) - bias;
  }
  // Largest finite significand (as an integer in units of the last place, precision bits).
  constexpr uint64_t max_significand() const {
    uint64_t all = (uint64_t{1} << precision()) - 1;
    return has_inf ? all : all - 1;
  }
  constexpr uint64_t pattern_mask() const {
    int bits = 1 + exp_bits + frac_bits;
    return bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  }
};

constexpr FormatSpec kFormatSpecs[] = {
    {Format::f64, "f64", 11, 52, 1023, true, 64, 0},
    {Format::f32, "f32", 8, 23, 127, true, 32, 0},
    {Format::tf32, "tf32", 8, 10, 127, true, 32, 13},
    {Format::bf16, "bf16", 8, 7, 127, true, 16, 0},
    {Format::f16, "f16", 5, 10, 15, true, 16, 0},
    {Format::e4m3, "e4m3", 4, 3, 7, false, 8, 0},
    {Format::e5m2, "e5m2", 5, 2, 15, true, 8, 0},
};

constexpr const FormatSpec& spec(Format f) { return kFormatSpecs[static_cast<int>(f)]; }
constexpr std::string_view format_name(Format f) { return spec(f).name; }
std::optional<Format> parse_format(std::string_view name);

// Named bit patterns of a format (in container position).
uint64_t max_finite_bits(Format f, bool negative = false);
uint64_t inf_bits(Format f, bool negative = false);  // e4m3 has none: returns NaN
uint64_t nan_bits(Format f);                         // canonical quiet NaN, sign clear
uint64_t min_subnormal_bits(Format f);
// Inline: decode, the simulated formats and judging ask these of every element.
inline bool bits_is_nan(Format f, uint64_t bits) {
  const FormatSpec& s = spec(f);
  const uint64_t p = (bits >> s.shift) & s.pattern_mask();
  const uint64_t exp_all = (uint64_t{1} << s.exp_bits) - 1;
  const uint64_t frac_all = (uint64_t{1} << s.frac_bits) - 1;
  const uint64_t bexp = (p >> s.frac_bits) & exp_all;
  const uint64_t frac = p & frac_all;
  if (!s.has_inf) return bexp == exp_all && frac == frac_all;  // E4M3FN: S.1111.111 only
  return bexp == exp_all && frac != 0;
}
inline bool bits_is_inf(Format f, uint64_t bits) {
  const FormatSpec& s = spec(f);
  if (!s.has_inf) return false;
  const uint64_t p = (bits >> s.shift) & s.pattern_mask();
  const uint64_t exp_all = (uint64_t{1} << s.exp_bits) - 1;
  return ((p >> s.frac_bits) & exp_all) == exp_all && (p & ((uint64_t{1} << s.frac_bits) - 1)) == 0;
}

namespace detail {
inline uint64_t assemble(const FormatSpec& s, bool negative, int biased_exp, uint64_t frac) {
  uint64_t p = (uint64_t{negative} << (s.exp_bits + s.frac_bits)) |
               (static_cast<uint64_t>(biased_exp) << s.frac_bits) | frac;
  return p << s.shift;
}

// encode() of an MPFR value (`mpfr` points to its mpfr_t; void so that this header does not pull
// in mpfr.h), through its nearest double: the generic algorithm costs about ten MPFR calls per
// value, this two. Sets `done` false, and returns nothing useful, where the double is outside
// [2^-1000, 2^1000] (zero, overflow or the double subnormals), which the generic path takes.
uint64_t encode_mpfr(Format f, const void* mpfr, Overflow overflow, bool& done);

// encode() and decode() of a double: the generic algorithm below done on the double's bits
// (integer shifts instead of frexp, ldexp and floor), the same bits and values for every input
// (tests/reference/formats_test.cc compares them). Every simulated operation calls both; inline,
// so that a constant format (Sim<F>) folds its fields.
// Encoding step by step: |x| = sig·2^(e−52) with sig of 53 bits; the exponent clamped to emin
// for subnormals; k = the bits below the format's quantum 2^(exp − frac_bits), dropped with
// round-to-nearest-even.
[[gnu::noinline]] inline uint64_t encode_double_slow(Format f, double x, Overflow overflow) {
  const FormatSpec& s = spec(f);
  const auto raw = std::bit_cast<uint64_t>(x);
  const bool neg = (raw >> 63) != 0;
  const int biased = static_cast<int>((raw >> 52) & 0x7FF);
  const uint64_t mant = raw & ((uint64_t{1} << 52) - 1);
  const auto overflowed = [&] {
    return overflow == Overflow::kSaturate ? max_finite_bits(f, neg) : inf_bits(f, neg);
  };
  if (biased == 0x7FF) return mant != 0 ? nan_bits(f) : overflowed();
  if (f == Format::f64) return raw;  // every other double is an f64 value, −0 and subnormals too
  // The other formats' smallest subnormal is 2^-149 or more: a double subnormal or zero is
  // below half of it and rounds to a signed zero.
  if (biased == 0) return assemble(s, neg, 0, 0);
  const int e = biased - 1023;  // |x| in [2^e, 2^(e+1))
  const int exp = std::max(e, s.emin());
  if (exp > s.emax() + 1) return overflowed();
  const uint64_t sig53 = (uint64_t{1} << 52) | mant;
  const int k = 52 - s.frac_bits + (exp - e);  // ≥ 29
  uint64_t sig = 0;
  // k ≥ 55: |x| < 2^-2 of the quantum, below half of it: rounds to zero.
  if (k < 55) {
    sig = sig53 >> k;
    const uint64_t rem = sig53 & ((uint64_t{1} << k) - 1);
    const uint64_t half = uint64_t{1} << (k - 1);
    if (rem > half || (rem == half && (sig & 1))) ++sig;
  }
  int out_exp = exp;
  if (sig >> s.precision()) {  // carried into the next binade
    sig >>= 1;
    ++out_exp;
  }
  if (out_exp > s.emax() || (out_exp == s.emax() && sig > s.max_significand())) {
    return overflowed();
  }
  const uint64_t hidden = uint64_t{1} << s.frac_bits;
  if (sig < hidden) return assemble(s, neg, 0, sig);  // subnormal (or zero)
  return assemble(s, neg, out_exp + s.bias, sig - hidden);
}

// decode<T>'s cases, with the double built from its fields instead of ldexp.
[[gnu::noinline]] inline double decode_double_slow(Format f, uint64_t bits) {
  const FormatSpec& s = spec(f);
  if (f == Format::f64) {
    if (bits_is_nan(f, bits)) {  // decode's NaN: the quiet NaN, with the pattern's sign
      const double q = std::numeric_limits<double>::quiet_NaN();
      return (bits >> 63) != 0 ? -q : q;
    }
    return std::bit_cast<double>(bits);
  }
  const uint64_t p = (bits >> s.shift) & s.pattern_mask();
  const bool neg = ((p >> (s.exp_bits + s.frac_bits)) & 1) != 0;
  const int bexp = static_cast<int>((p >> s.frac_bits) & ((uint64_t{1} << s.exp_bits) - 1));
  const uint64_t frac = p & ((uint64_t{1} << s.frac_bits) - 1);
  double v = 0;
  if (bits_is_nan(f, bits)) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (bits_is_inf(f, bits)) {
    v = std::numeric_limits<double>::infinity();
  } else if (bexp == 0) {
    // frac·2^(emin − frac_bits): the power of two is a normal double (≥ 2^-149), the product
    // exact (frac < 2^23).
    const auto scale =
        std::bit_cast<double>(static_cast<uint64_t>(s.emin() - s.frac_bits + 1023) << 52);
    v = static_cast<double>(frac) * scale;
  } else {
    v = std::bit_cast<double>((static_cast<uint64_t>(bexp - s.bias + 1023) << 52) |
                              (frac << (52 - s.frac_bits)));
  }
  return neg ? -v : v;
}

// The two above (kept out of line) behind a fast path small enough to inline into every
// simulated operation.
[[gnu::always_inline]] inline uint64_t encode_double(Format f, double x, Overflow overflow) {
  // f32, the naive kernels' compute format (most of `check`'s time at real shapes): the
  // hardware's conversion is the same rounding to nearest-even where its result is a normal
  // number or an infinity. Zero and subnormal results (which an FP environment's flush-to-zero
  // would alter), NaN and |x| ≥ 2^128 take encode_double_slow.
  if (f == Format::f32 && overflow == Overflow::kIeee && std::fabs(x) < 0x1p128) {
    const auto b = std::bit_cast<uint32_t>(static_cast<float>(x));
    if ((b & 0x7F800000u) != 0) return b;
  }
  // bf16 and f16 (golden files and inputs at real shapes): x at least f's smallest normal, its
  // rounding a normal finite value of f. Then f's quantum is 2^(e − frac_bits) for x's own
  // exponent e, and round-to-nearest-even on the double's bits (adding half a quantum less one,
  // plus the kept last bit) carries into the exponent field as the value does.
  if ((f == Format::bf16 || f == Format::f16) && overflow == Overflow::kIeee) {
    const FormatSpec& s = spec(f);
    const auto raw = std::bit_cast<uint64_t>(x);
    const uint64_t mag = raw & ~(uint64_t{1} << 63);
    const int k = 52 - s.frac_bits;
    const int64_t field_before = static_cast<int64_t>(mag >> 52) - 1023 + s.bias;
    const uint64_t t = (mag + (uint64_t{1} << (k - 1)) - 1 + ((mag >> k) & 1)) >> k;
    const int64_t field = static_cast<int64_t>(t >> s.frac_bits) - 1023 + s.bias;
    if (field_before >= 1 && field <= (int64_t{1} << s.exp_bits) - 2) {
      return assemble(s, (raw >> 63) != 0, static_cast<int>(field),
                      t & ((uint64_t{1} << s.frac_bits) - 1));
    }
  }
  return encode_double_slow(f, x, overflow);
}
[[gnu::always_inline]] inline double decode_double(Format f, uint64_t bits) {
  if (f == Format::f32) {  // a normal f32 or ±inf: the hardware's exact widening
    const uint32_t e = static_cast<uint32_t>(bits) & 0x7F800000u;
    if (e != 0 && (e != 0x7F800000u || (bits & 0x7FFFFFu) == 0)) {
      return static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(bits)));
    }
  }
  if (f == Format::bf16 || f == Format::f16) {  // a normal value: its fields moved into a double's
    const FormatSpec& s = spec(f);
    const uint64_t field = (bits >> s.frac_bits) & ((uint64_t{1} << s.exp_bits) - 1);
    if (field != 0 && field != (uint64_t{1} << s.exp_bits) - 1) {
      const uint64_t sign = (bits >> (s.exp_bits + s.frac_bits)) & 1;
      return std::bit_cast<double>(
          (sign << 63) | ((field - static_cast<uint64_t>(s.bias) + 1023) << 52) |
          ((bits & ((uint64_t{1} << s.frac_bits) - 1)) << (52 - s.frac_bits)));
    }
  }
  return decode_double_slow(f, bits);
}

// The generic algorithm (the file's head) on any binary type.
template <class T>
uint64_t encode_generic(Format f, const T& x, Overflow overflow) {
  using std::floor;
  using std::frexp;
  using std::isinf;
  using std::isnan;
  using std::ldexp;
  using std::signbit;
  const FormatSpec& s = spec(f);
  if (isnan(x)) return nan_bits(f);
  const bool neg = signbit(x);
  if (isinf(x)) return overflow == Overflow::kSaturate ? max_finite_bits(f, neg) : inf_bits(f, neg);
  T a = neg ? T(-x) : x;
  if (a == 0) return detail::assemble(s, neg, 0, 0);
  int e = 0;
  (void)frexp(a, &e);          // a = m * 2^e, m in [0.5, 1)
  int exp = e - 1;             // a in [2^exp, 2^(exp+1))
  if (exp < s.emin()) exp = s.emin();  // subnormal range: fixed quantum 2^(emin - frac)
  if (exp > s.emax() + 1) {    // far beyond the range: no need to scale (avoids overflow in T)
    return overflow == Overflow::kSaturate ? max_finite_bits(f, neg) : inf_bits(f, neg);
  }
  T scaled = ldexp(a, s.frac_bits - exp);  // exact: a power-of-two scaling
  T q = floor(scaled);
  T rem = scaled - q;                      // exact: q and scaled share the same exponent range
  uint64_t sig = static_cast<uint64_t>(q);
  const T half = T(0.5);  // exact in every binary T (a division costs a call in mp)
  if (rem > half || (rem == half && (sig & 1))) ++sig;
  if (sig >> s.precision()) {              // carried into the next binade
    sig >>= 1;
    ++exp;
  }
  if (exp > s.emax() || (exp == s.emax() && sig > s.max_significand())) {
    return overflow == Overflow::kSaturate ? max_finite_bits(f, neg) : inf_bits(f, neg);
  }
  const uint64_t hidden = uint64_t{1} << s.frac_bits;
  if (sig < hidden) return assemble(s, neg, 0, sig);  // subnormal (or zero)
  return assemble(s, neg, exp + s.bias, sig - hidden);
}
}  // namespace detail

// Round x (any binary type with frexp/ldexp/floor/isnan/isinf/signbit found by ADL or in std)
// to nearest-even in format f, and return the container bit pattern.
template <class T>
[[gnu::always_inline]] inline uint64_t encode(Format f, const T& x,
                                              Overflow overflow = Overflow::kIeee) {
  // The double path alone, so that Sim<F>'s operations inline it.
  if constexpr (std::is_same_v<T, double>) {
    return detail::encode_double(f, x, overflow);
  } else {
    if constexpr (requires(const T& t) { t.backend().data()[0]._mpfr_d; }) {  // mp
      bool done = false;
      const uint64_t bits = detail::encode_mpfr(f, x.backend().data(), overflow, done);
      if (done) return bits;
    }
    return detail::encode_generic(f, x, overflow);
  }
}

namespace detail {
// decode()'s algorithm on any binary type with ldexp.
template <class T>
T decode_generic(Format f, uint64_t bits) {
  using std::ldexp;
  const FormatSpec& s = spec(f);
  uint64_t p = (bits >> s.shift) & s.pattern_mask();
  const bool neg = (p >> (s.exp_bits + s.frac_bits)) & 1;
  const int bexp = static_cast<int>((p >> s.frac_bits) & ((uint64_t{1} << s.exp_bits) - 1));
  const uint64_t frac = p & ((uint64_t{1} << s.frac_bits) - 1);
  T v;
  if (bits_is_nan(f, bits)) {
    v = std::numeric_limits<T>::quiet_NaN();
  } else if (bits_is_inf(f, bits)) {
    v = std::numeric_limits<T>::infinity();
  } else if (bexp == 0) {
    v = ldexp(T(frac), s.emin() - s.frac_bits);
  } else {
    v = ldexp(T(frac | (uint64_t{1} << s.frac_bits)), bexp - s.bias - s.frac_bits);
  }
  return neg ? T(-v) : v;
}
}  // namespace detail

// Exact value of a bit pattern as T (every format here fits exactly in double and wider).
template <class T>
[[gnu::always_inline]] inline T decode(Format f, uint64_t bits) {
  // The double path alone, so that Sim<F>::value() inlines it.
  if constexpr (std::is_same_v<T, double>) {
    return detail::decode_double(f, bits);
  } else {
    return detail::decode_generic<T>(f, bits);
  }
}

}  // namespace lmo::ref
