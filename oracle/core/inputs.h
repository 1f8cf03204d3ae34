// Deterministic test inputs. Every element is a pure function of (case seed, tensor name, flat
// element index, distribution, storage dtype): no state, no libm, no <random>. Values are
// computed exactly or in `mp` and rounded once to the storage format, so the bits are the same
// on every machine, compiler and thread split, and all backends read the very same inputs.
//
// Stream derivation (fixed; changing it changes every pinned input hash):
//   h       = FNV-1a 64 of the name's bytes (offset basis 0xcbf29ce484222325, prime 0x100000001b3)
//   key     = {seed & 0xffffffff, seed >> 32}
//   counter = {i & 0xffffffff, i >> 32, h & 0xffffffff, h >> 32}   for flat element index i
//   draw(i) = philox4x32_10(counter, key), 128 bits; r = draw(i) words r0..r3 below.
// Seed, name hash and index each occupy their own words, so distinct (seed, h, i) never share a
// Philox input; two names collide only if their 64-bit FNV-1a hashes do.
//
// The flat index is the row-major position, independent of the shape: a [2, 3] tensor holds the
// same bits as a [6] one, and elements [begin, end) can be generated alone.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "reference/ball.h"
#include "reference/number_types.h"
#include "reference/tensor.h"

namespace lmo::oracle {

// 64-bit FNV-1a (Fowler–Noll–Vo) over the bytes of s.
uint64_t fnv1a64(std::string_view s);

// The random bits of one tensor of one case.
class InputStream {
 public:
  InputStream(uint64_t seed, std::string_view name);
  std::array<uint32_t, 4> draw(uint64_t index) const;

 private:
  uint64_t seed_;
  uint64_t name_hash_;
};

// Uniform real in [a, b). u = (r0 | r1 << 32) / 2^64, an exact dyadic in [0, 1); the value
// a + (b - a) * u is evaluated in mp and rounded to nearest-even in the storage format (r2, r3
// are unused; the value is first evaluated on balls, whose bits are mp's wherever they decide). For
// ordinary bounds ([-1, 1), [0.5, 4), ...) the three mp operations are exact, so the stored value
// is the correctly rounded exact a + (b - a) * u. Rounding may land outside [a, b) (on b, or below
// an a that the format cannot represent); such values become the largest format value below b, or
// the smallest one not below a. The constructor throws std::invalid_argument unless dtype is
// floating, a and b are finite, a < b, both lie in
// [-max_finite, max_finite] of the format, and the format has a value in [a, b).
class UniformReal {
 public:
  UniformReal(InputStream stream, ref::DType dtype, double a, double b);
  ref::DType dtype() const { return dtype_; }
  uint64_t bits(uint64_t index) const;  // storage bits of element `index`

 private:
  InputStream stream_;
  ref::DType dtype_;
  ref::Format format_;
  double a_, b_;
  ref::mp mp_a_, mp_width_;
  ref::Ball ball_a_,
      ball_width_;  // the same on balls: the value's bits without MPFR where they decide
  uint64_t lowest_bits_, highest_bits_;  // smallest format value >= a, largest < b
};

// Normal(mean, stddev) by Box–Muller, both branches: elements 2j and 2j + 1 form the pair of
// draw(j) (j = index / 2),
//   u1 = ((r0 | r1 << 32) + 1) / 2^64 in (0, 1],  u2 = (r2 | r3 << 32) / 2^64 in [0, 1),
//   R = sqrt(-2 ln u1),  theta = 2 pi u2,
//   element 2j = mean + stddev * R cos(theta),  element 2j + 1 = mean + stddev * R sin(theta),
// every step in mp (MPFR: correctly rounded log, sqrt, sin/cos, pi), then rounded once to the
// storage format. Element i is still a pure function of (seed, name, i); using both branches
// halves the logarithms, the dominant cost. Since u1 >= 2^-64, |z| <= sqrt(128 ln 2) < 9.42;
// the constructor throws std::invalid_argument unless dtype is floating, mean and stddev are
// finite, stddev > 0, and |mean| + 9.42 stddev is within the format's max_finite (so no
// element can overflow).
class NormalReal {
 public:
  NormalReal(InputStream stream, ref::DType dtype, double mean, double stddev);
  ref::DType dtype() const { return dtype_; }
  uint64_t bits(uint64_t index) const;
  // Storage bits of elements 2j and 2j + 1 (one Box–Muller evaluation for both).
  std::array<uint64_t, 2> pair_bits(uint64_t j) const;
  // Elements 2j and 2j + 1 before their rounding: the same values in every storage format, so
  // a caller generating several formats may draw them once (pair_bits rounds these).
  std::array<ref::mp, 2> pair_values(uint64_t j) const;
  // The storage bits of such a value.
  uint64_t bits_of(const ref::mp& value) const;
  // The same pair as balls ([certified], reference/ball.h): intervals around the exact values of
  // the formula, in double-double arithmetic (5 to 10 times faster than MPFR). Where a ball
  // decides its rounding (ball_rounding.h) its bits are those of pair_values; bits_of(ball, j, k)
  // returns them, computing pair_values(j) only where it does not decide.
  std::array<ref::Ball, 2> pair_balls(uint64_t j) const;
  uint64_t bits_of(const ref::Ball& value, uint64_t j, int k) const;

 private:
  InputStream stream_;
  ref::DType dtype_;
  ref::Format format_;
  ref::mp mean_, stddev_, two_pi_;
  ref::Ball two_pi_ball_;
};

// Uniform integer in [lo, hi) for i64, i32 and u8 (token ids, positions). With k = r0 | r1 << 32
// and n = hi - lo, the value is lo + floor(k * n / 2^64) (the high word of a 64x64-bit product):
// exact integer arithmetic, no rejection. Each value has probability floor(2^64/n)/2^64 or
// ceil(2^64/n)/2^64, a relative bias below n / 2^64 (< 2^-32 for any n < 2^32). Throws
// std::invalid_argument unless lo < hi and both bounds fit the dtype ([lo, hi - 1] in range).
class UniformInt {
 public:
  UniformInt(InputStream stream, ref::DType dtype, int64_t lo, int64_t hi);
  ref::DType dtype() const { return dtype_; }
  uint64_t bits(uint64_t index) const;

 private:
  InputStream stream_;
  ref::DType dtype_;
  int64_t lo_;
  uint64_t width_;
};

// Stores gen.bits(i) into t for i in [begin, end) (for the three generators above). Generators
// are immutable, so threads may fill disjoint ranges of one tensor concurrently. Throws
// std::invalid_argument when t's dtype is not the generator's or the range is not within t.
template <class Gen>
void fill(ref::Tensor& t, const Gen& gen, int64_t begin, int64_t end);

// MPFR keeps per-thread caches (pi, cosine tables, memory pools) that a thread must release
// before it exits, or they leak; call this at the end of any worker thread that generated
// inputs. (The main thread's are freed at exit by Boost.)
void release_thread_mp_caches();

// Whole tensors. The (seed, name) pair selects the stream; see the derivation above.
ref::Tensor uniform(uint64_t seed, std::string_view name, ref::DType dtype,
                    std::vector<int64_t> shape, double a, double b);
ref::Tensor normal(uint64_t seed, std::string_view name, ref::DType dtype,
                   std::vector<int64_t> shape, double mean, double stddev);
ref::Tensor uniform_int(uint64_t seed, std::string_view name, ref::DType dtype,
                        std::vector<int64_t> shape, int64_t lo, int64_t hi);

}  // namespace lmo::oracle
