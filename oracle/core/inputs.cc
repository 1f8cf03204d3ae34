#include "oracle/core/inputs.h"

#include <boost/math/constants/constants.hpp>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "oracle/core/normal_pair.h"
#include "oracle/core/philox.h"
#include "reference/ball_rounding.h"

namespace lmo::oracle {

using ref::DType;
using ref::Format;
using ref::mp;

namespace {

std::string num(double v) {
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}

// "[lo, hi)". Built with a stream: GCC 12 warns falsely (-Wrestrict, its bug 105329) on
// "literal" + std::string.
template <class T>
std::string interval(T lo, T hi) {
  std::ostringstream s;
  s.precision(17);
  s << '[' << lo << ", " << hi << ')';
  return s.str();
}

[[noreturn]] void fail(std::string_view what, const std::string& why) {
  throw std::invalid_argument(std::string(what) + ": " + why);
}

Format float_format(std::string_view what, DType dtype) {
  if (!ref::is_float(dtype)) {
    fail(what, "storage dtype " + std::string(ref::dtype_name(dtype)) + " is not floating");
  }
  return ref::dtype_format(dtype);
}

// 64 random bits of a draw: words lo | hi << 32.
uint64_t word64(uint32_t lo, uint32_t hi) { return uint64_t{lo} | (uint64_t{hi} << 32); }

// Bits of the format value adjacent to a finite one, toward +inf (up) or -inf. Formats are
// sign-magnitude, so this steps the magnitude field; zero of either sign steps to the smallest
// subnormal of the direction's sign. The caller guarantees the step stays finite.
uint64_t step(Format f, uint64_t bits, bool up) {
  const ref::FormatSpec& s = ref::spec(f);
  const uint64_t p = (bits >> s.shift) & s.pattern_mask();
  const uint64_t sign = uint64_t{1} << (s.exp_bits + s.frac_bits);
  const uint64_t mag = p & ~sign;
  const bool neg = (p & sign) != 0;
  uint64_t q;
  if (mag == 0) {
    q = up ? 1 : (sign | 1);
  } else if (neg == up) {  // toward zero
    q = (p & sign) | (mag - 1);
  } else {
    q = (p & sign) | (mag + 1);
  }
  return q << s.shift;
}

}  // namespace

uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

InputStream::InputStream(uint64_t seed, std::string_view name)
    : seed_(seed), name_hash_(fnv1a64(name)) {}

std::array<uint32_t, 4> InputStream::draw(uint64_t index) const {
  const PhiloxCounter ctr = {static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32),
                             static_cast<uint32_t>(name_hash_),
                             static_cast<uint32_t>(name_hash_ >> 32)};
  const PhiloxKey key = {static_cast<uint32_t>(seed_), static_cast<uint32_t>(seed_ >> 32)};
  return philox4x32_10(ctr, key);
}

UniformReal::UniformReal(InputStream stream, DType dtype, double a, double b)
    : stream_(stream), dtype_(dtype), format_(float_format("uniform", dtype)), a_(a), b_(b) {
  const std::string range = interval(a, b);
  if (!std::isfinite(a) || !std::isfinite(b)) {
    fail("uniform", "bounds must be finite, got " + range);
  }
  if (!(a < b)) fail("uniform", "need a < b, got " + range);
  const double max = ref::decode<double>(format_, ref::max_finite_bits(format_));
  const std::string fname(ref::format_name(format_));
  if (a < -max || b > max) {
    fail("uniform", range + " exceeds the finite range of " + fname + " (max " + num(max) + ")");
  }
  mp_a_ = mp(a);
  mp_width_ = mp(b) - mp(a);
  ball_a_ = ref::Ball(a);
  ball_width_ = ref::Ball(b) - ball_a_;  // exact: a double-word difference (2Sum)
  // a and b are within range, so neither saturating encode nor the single step can overflow.
  lowest_bits_ = ref::encode(format_, a, ref::Overflow::kSaturate);
  if (ref::decode<double>(format_, lowest_bits_) < a) {
    lowest_bits_ = step(format_, lowest_bits_, true);
  }
  highest_bits_ = ref::encode(format_, b, ref::Overflow::kSaturate);
  if (ref::decode<double>(format_, highest_bits_) >= b) {
    highest_bits_ = step(format_, highest_bits_, false);
  }
  if (ref::decode<double>(format_, lowest_bits_) > ref::decode<double>(format_, highest_bits_)) {
    fail("uniform", fname + " has no value in " + range);
  }
}

uint64_t UniformReal::bits(uint64_t index) const {
  const std::array<uint32_t, 4> r = stream_.draw(index);
  const uint64_t w = word64(r[0], r[1]);
  // On balls first (their bits are MPFR's wherever they decide, as NormalReal's), else in mp.
  const ref::Ball ball =
      ball_a_ + ball_width_ * ldexp(ref::Ball(static_cast<unsigned long>(w)), -64);
  const ref::Format one[] = {format_};
  const uint64_t out = ref::decides_rounding(ball, one)
                           ? ref::decided_bits(ball, format_)
                           : ref::encode(format_, mp_a_ + mp_width_ * ldexp(mp(w), -64));
  const double v = ref::decode<double>(format_, out);  // exact for every format
  if (v >= b_) return highest_bits_;
  if (v < a_) return lowest_bits_;
  return out;
}

NormalReal::NormalReal(InputStream stream, DType dtype, double mean, double stddev)
    : stream_(stream), dtype_(dtype), format_(float_format("normal", dtype)) {
  const std::string params = "mean " + num(mean) + ", stddev " + num(stddev);
  if (!std::isfinite(mean) || !std::isfinite(stddev)) fail("normal", "need finite " + params);
  if (!(stddev > 0)) fail("normal", "need stddev > 0, got " + params);
  const mp max = ref::decode<mp>(format_, ref::max_finite_bits(format_));
  if (abs(mp(mean)) + mp(stddev) * mp(9.42) > max) {
    fail("normal", params + " can exceed the finite range of " +
                       std::string(ref::format_name(format_)) + " (max " +
                       num(static_cast<double>(max)) + "; need |mean| + 9.42 stddev <= max)");
  }
  mean_ = mp(mean);
  stddev_ = mp(stddev);
  two_pi_ = 2 * boost::math::constants::pi<mp>();
  two_pi_ball_ = ref::Ball(two_pi_);
}

std::array<uint64_t, 2> NormalReal::pair_bits(uint64_t j) const {
  const std::array<ref::Ball, 2> b = pair_balls(j);
  const ref::Format one[] = {format_};
  if (ref::decides_rounding(b[0], one) && ref::decides_rounding(b[1], one)) {
    return {ref::decided_bits(b[0], format_), ref::decided_bits(b[1], format_)};
  }
  const std::array<mp, 2> v = pair_values(j);
  return {bits_of(v[0]), bits_of(v[1])};
}

uint64_t NormalReal::bits_of(const mp& value) const { return ref::encode(format_, value); }

// The formula of pair_values on balls. MPFR's pair differs from the exact one by a few roundings
// to 167 bits of the terms' size; a ball's radius is at least 2^-106 of the terms' size unless
// it is exact (then so are MPFR's operations), and decides_rounding widens it by 2^-40 of itself:
// MPFR's value lies in every ball that decides, and rounds as the ball does.
std::array<ref::Ball, 2> NormalReal::pair_balls(uint64_t j) const {
  using ref::Ball;
  const std::array<uint32_t, 4> r = stream_.draw(j);
  const Ball mean(static_cast<double>(mean_)), stddev(static_cast<double>(stddev_));
  // The same values on double-doubles with one bound each (normal_pair.h), ten times faster.
  if (const std::optional<std::array<Ball, 2>> fast =
          normal_pair_dd(word64(r[0], r[1]), word64(r[2], r[3]), mean.hi(), stddev.hi())) {
    return *fast;
  }
  const Ball u1 = ldexp(Ball(static_cast<unsigned long>(word64(r[0], r[1]))) + Ball(1.0), -64);
  const Ball u2 = ldexp(Ball(static_cast<unsigned long>(word64(r[2], r[3]))), -64);
  const Ball radius = sqrt(Ball(-2.0) * log(u1));
  const Ball theta = two_pi_ball_ * u2;
  const ref::BallSinCos sc = sin_cos(theta);
  return {mean + stddev * (radius * sc.cos), mean + stddev * (radius * sc.sin)};
}

uint64_t NormalReal::bits_of(const ref::Ball& value, uint64_t j, int k) const {
  const ref::Format one[] = {format_};
  if (ref::decides_rounding(value, one)) return ref::decided_bits(value, format_);
  return bits_of(pair_values(j)[static_cast<size_t>(k)]);
}

std::array<mp, 2> NormalReal::pair_values(uint64_t j) const {
  const std::array<uint32_t, 4> r = stream_.draw(j);
  const mp u1 = ldexp(mp(word64(r[0], r[1])) + 1, -64);  // exact; in (0, 1]
  const mp u2 = ldexp(mp(word64(r[2], r[3])), -64);      // exact; in [0, 1)
  const mp radius = sqrt(-2 * log(u1));
  const mp theta = two_pi_ * u2;
  // Boost has no joint sine/cosine; MPFR's computes both for little more than one of them.
  mp sin_theta, cos_theta;
  mpfr_sin_cos(sin_theta.backend().data(), cos_theta.backend().data(), theta.backend().data(),
               MPFR_RNDN);
  return {mean_ + stddev_ * (radius * cos_theta), mean_ + stddev_ * (radius * sin_theta)};
}

uint64_t NormalReal::bits(uint64_t index) const { return pair_bits(index / 2)[index % 2]; }

UniformInt::UniformInt(InputStream stream, DType dtype, int64_t lo, int64_t hi)
    : stream_(stream), dtype_(dtype), lo_(lo) {
  const std::string range = interval(lo, hi);
  int64_t min = 0, max = 0;
  switch (dtype) {
    case DType::i64:
      min = std::numeric_limits<int64_t>::min();
      max = std::numeric_limits<int64_t>::max();
      break;
    case DType::i32:
      min = std::numeric_limits<int32_t>::min();
      max = std::numeric_limits<int32_t>::max();
      break;
    case DType::u8:
      max = 255;
      break;
    default:
      fail("uniform_int",
           "storage dtype " + std::string(ref::dtype_name(dtype)) + " is not an integer dtype");
  }
  if (!(lo < hi)) fail("uniform_int", "need lo < hi, got " + range);
  if (lo < min || hi - 1 > max) {
    fail("uniform_int", range + " does not fit " + std::string(ref::dtype_name(dtype)));
  }
  width_ = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);  // modulo 2^64: exact, > 0
}

uint64_t UniformInt::bits(uint64_t index) const {
  const std::array<uint32_t, 4> r = stream_.draw(index);
  const unsigned __int128 prod = static_cast<unsigned __int128>(word64(r[0], r[1])) * width_;
  const uint64_t offset = static_cast<uint64_t>(prod >> 64);  // in [0, width)
  const uint64_t v = static_cast<uint64_t>(lo_) + offset;     // two's complement, wraps exactly
  const size_t bytes = ref::dtype_size(dtype_);
  return bytes == 8 ? v : v & ((uint64_t{1} << (8 * bytes)) - 1);
}

template <class Gen>
void fill(ref::Tensor& t, const Gen& gen, int64_t begin, int64_t end) {
  if (t.dtype() != gen.dtype()) {
    throw std::invalid_argument("fill: tensor dtype " + std::string(ref::dtype_name(t.dtype())) +
                                " differs from the generator's " +
                                std::string(ref::dtype_name(gen.dtype())));
  }
  if (begin < 0 || begin > end || end > t.numel()) {
    throw std::invalid_argument("fill: range " + interval(begin, end) +
                                " is not within the tensor");
  }
  int64_t i = begin;
  if constexpr (std::is_same_v<Gen, NormalReal>) {  // whole pairs at once: half the work
    if (i % 2 == 1 && i < end) {
      t.set_bits(i, gen.bits(static_cast<uint64_t>(i)));
      ++i;
    }
    for (; i + 1 < end; i += 2) {
      const std::array<uint64_t, 2> p = gen.pair_bits(static_cast<uint64_t>(i / 2));
      t.set_bits(i, p[0]);
      t.set_bits(i + 1, p[1]);
    }
  }
  for (; i < end; ++i) t.set_bits(i, gen.bits(static_cast<uint64_t>(i)));
}

template void fill(ref::Tensor&, const UniformReal&, int64_t, int64_t);
template void fill(ref::Tensor&, const NormalReal&, int64_t, int64_t);
template void fill(ref::Tensor&, const UniformInt&, int64_t, int64_t);

void release_thread_mp_caches() { mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE); }

namespace {
template <class Gen>
ref::Tensor whole(const Gen& gen, std::vector<int64_t> shape) {
  ref::Tensor t(gen.dtype(), std::move(shape));
  fill(t, gen, 0, t.numel());
  return t;
}
}  // namespace

ref::Tensor uniform(uint64_t seed, std::string_view name, DType dtype, std::vector<int64_t> shape,
                    double a, double b) {
  return whole(UniformReal(InputStream(seed, name), dtype, a, b), std::move(shape));
}

ref::Tensor normal(uint64_t seed, std::string_view name, DType dtype, std::vector<int64_t> shape,
                   double mean, double stddev) {
  return whole(NormalReal(InputStream(seed, name), dtype, mean, stddev), std::move(shape));
}

ref::Tensor uniform_int(uint64_t seed, std::string_view name, DType dtype,
                        std::vector<int64_t> shape, int64_t lo, int64_t hi) {
  return whole(UniformInt(InputStream(seed, name), dtype, lo, hi), std::move(shape));
}

}  // namespace lmo::oracle
