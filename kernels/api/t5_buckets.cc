#include "kernels/api/t5_buckets.h"

#include <algorithm>
#include <boost/multiprecision/cpp_int.hpp>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace lmo::kernels {
namespace {

constexpr int64_t kMaxBuckets = 4096;
constexpr int64_t kMax53 = int64_t{1} << 53;

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument(what); }

// c^E ≥ md^m · me^(E − m), exactly: ⌊ln(c/me)/ln(md/me)·E⌋ ≥ m, multiplied out (as the
// reference's t5_relative_position_bucket does).
bool reaches(int64_t c, int64_t e, int64_t m, int64_t md, int64_t me) {
  using boost::multiprecision::cpp_int;
  using boost::multiprecision::pow;
  return pow(cpp_int(c), static_cast<unsigned>(e)) >=
         pow(cpp_int(md), static_cast<unsigned>(m)) *
             pow(cpp_int(me), static_cast<unsigned>(e - m));
}

}  // namespace

// The threshold t_m = ⌈me·(md/me)^(m/E)⌉ is the least integer n with n^E ≥ md^m·me^(E−m). It is
// estimated in long double, x = me·exp(ln(md/me)·m/E): a few roundings and the libm functions'
// ulp or two, amplified by |ln(md/me)| ≤ 37 (md ≤ 2^53), about 100 ulps of x in all; allowed
// for: 4096 ulps (2^-51 relative on x86's 80-bit long double). Where [x − δ, x + δ] holds no
// integer, ⌈x⌉ is t_m; where it does (the exact ties such as 30 = 18·(50/18)^(1/2) among them),
// t_m is the least candidate in [⌈x − δ⌉, ⌈x + δ⌉] that passes the exact integer test. So a
// float only narrows the search; the decision is always exact.
T5Buckets::T5Buckets(int64_t num_buckets, int64_t max_distance, bool bidirectional)
    : bidirectional_(bidirectional) {
  const char* fn = "t5_bias";
  if (num_buckets > kMaxBuckets) {
    fail(std::string(fn) + ": num_buckets is " + std::to_string(num_buckets) +
         ", expected <= 4096");
  }
  buckets_ = bidirectional ? num_buckets / 2 : num_buckets;
  max_exact_ = buckets_ / 2;
  if (max_exact_ < 1) {
    fail(std::string(fn) + ": num_buckets is " + std::to_string(num_buckets) +
         ", expected >= " + (bidirectional ? "4 (bidirectional)" : "2 (causal)"));
  }
  if (max_distance <= max_exact_ || max_distance > kMax53) {
    fail(std::string(fn) + ": max_distance is " + std::to_string(max_distance) +
         ", expected max_exact = " + std::to_string(max_exact_) +
         " < max_distance <= 2^53 (max_exact = num_buckets/4 bidirectional, num_buckets/2 causal)");
  }
  max_distance_ = max_distance;
  const int64_t me = max_exact_, md = max_distance, e = buckets_ - me;
  using LD = long double;
  const LD log_ratio = std::log(static_cast<LD>(md) / static_cast<LD>(me));
  const LD rel = 4096 * std::numeric_limits<LD>::epsilon();
  thresholds_.resize(static_cast<size_t>(e - 1));
  for (int64_t m = 1; m < e; ++m) {
    const LD x =
        static_cast<LD>(me) * std::exp(log_ratio * static_cast<LD>(m) / static_cast<LD>(e));
    const LD delta = x * rel;
    // me < t_m ≤ md always (md^E ≥ md^m·me^(E−m) > me^E): clamp the candidates there.
    int64_t lo = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(x - delta)), me + 1, md);
    const int64_t hi = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(x + delta)), lo, md);
    // Least c in [lo, hi] that reaches m; hi always does (hi ≥ the exact root).
    int64_t top = hi;
    while (lo < top) {
      const int64_t mid = lo + (top - lo) / 2;
      if (reaches(mid, e, m, md, me)) {
        top = mid;
      } else {
        lo = mid + 1;
      }
    }
    thresholds_[static_cast<size_t>(m - 1)] = lo;
  }
}

int64_t T5Buckets::operator()(int64_t relative_position) const {
  int64_t offset = 0;
  uint64_t n = 0;  // unsigned: |INT64_MIN| fits
  const uint64_t magnitude = relative_position < 0
                                 ? uint64_t{0} - static_cast<uint64_t>(relative_position)
                                 : static_cast<uint64_t>(relative_position);
  if (bidirectional_) {
    if (relative_position > 0) offset = buckets_;
    n = magnitude;
  } else {
    n = relative_position < 0 ? magnitude : 0;
  }
  if (n < static_cast<uint64_t>(max_exact_)) return offset + static_cast<int64_t>(n);
  if (n >= static_cast<uint64_t>(max_distance_)) return offset + buckets_ - 1;
  const auto passed =
      std::upper_bound(thresholds_.begin(), thresholds_.end(), static_cast<int64_t>(n)) -
      thresholds_.begin();
  return offset + max_exact_ + static_cast<int64_t>(passed);
}

}  // namespace lmo::kernels
