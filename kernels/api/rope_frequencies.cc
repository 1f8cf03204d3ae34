// The frequencies θ_k of fast/rope.h, once per call (r/2 values), in long double: every rule of
// reference/rope_scaling.h step for step, so that the thresholds (YaRN's floor/ceil of the
// correction dimensions, Llama 3.1's wavelength bands) fall where the exact reference puts them
// except for parameters within ~2^-60 of a threshold.
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/api/rope_frequencies.h"
#include "kernels/api/turns.h"

namespace lmo::kernels {
namespace {

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument("rope: " + what); }

void check(const RopeFrequencies& f, int64_t r) {
  if (!(f.base > 1.0) || !std::isfinite(f.base)) {
    fail("base is " + std::to_string(f.base) + ", expected a finite base > 1");
  }
  if (f.scaling == RopeScaling::none) return;
  if (!(f.factor > 0.0) || !std::isfinite(f.factor)) {
    fail("factor is " + std::to_string(f.factor) + ", expected a finite factor > 0");
  }
  if (f.scaling == RopeScaling::ntk && r <= 2) {
    fail("rotary_dims is " + std::to_string(r) + ", expected more than 2 for NTK scaling");
  }
  if ((f.scaling == RopeScaling::yarn || f.scaling == RopeScaling::llama31) &&
      f.original_context < 1) {
    fail("original_context is " + std::to_string(f.original_context) + ", expected >= 1");
  }
  if (f.scaling == RopeScaling::yarn &&
      (!(f.beta_fast > 0.0) || !(f.beta_slow > 0.0) || !std::isfinite(f.beta_fast) ||
       !std::isfinite(f.beta_slow))) {
    fail("beta_fast and beta_slow are " + std::to_string(f.beta_fast) + " and " +
         std::to_string(f.beta_slow) + ", expected finite values > 0");
  }
  if (f.scaling == RopeScaling::llama31 &&
      !(0.0 < f.low_freq_factor && f.low_freq_factor < f.high_freq_factor &&
        std::isfinite(f.high_freq_factor))) {
    fail("low_freq_factor and high_freq_factor are " + std::to_string(f.low_freq_factor) + " and " +
         std::to_string(f.high_freq_factor) +
         ", expected 0 < low_freq_factor < high_freq_factor (finite)");
  }
}

}  // namespace

std::vector<long double> inverse_powers(long double base, int64_t n, int64_t d) {
  // exp(−e·ln base) rather than powl: glibc's powl takes microseconds (its exact fallback), and
  // this costs ln base·2^-64 relative (≈ 2^-60 for base 5·10^5), the conditioning of pow itself.
  const long double log_base = std::log(base);
  std::vector<long double> inv(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    const long double e = static_cast<long double>(2 * k) / static_cast<long double>(d);
    inv[static_cast<size_t>(k)] = std::exp(-e * log_base);
  }
  return inv;
}

namespace {

// θ_k = 1 / base^(2k/r) (reference rope_inv_freq).
std::vector<long double> plain(int64_t r, long double base) {
  return inverse_powers(base, r / 2, r);
}

// reference rope_inv_freq_yarn with truncate = true (the released code).
void yarn(std::vector<long double>& inv, int64_t r, long double base, long double s,
          long double length, long double beta_fast, long double beta_slow) {
  const long double dims = static_cast<long double>(r);
  const long double two_log_base = 2.0L * std::log(base);
  const auto correction_dim = [&](long double turns) {
    return dims * std::log(length / (turns * kTwoPiL)) / two_log_base;
  };
  long double lo = std::floor(correction_dim(beta_fast));
  long double hi = std::ceil(correction_dim(beta_slow));
  if (lo < 0.0L) lo = 0.0L;
  if (hi > dims - 1.0L) hi = dims - 1.0L;
  if (lo == hi) hi = hi + 0.001L;
  for (size_t k = 0; k < inv.size(); ++k) {
    long double ramp = (static_cast<long double>(k) - lo) / (hi - lo);
    if (ramp < 0.0L) ramp = 0.0L;
    if (ramp > 1.0L) ramp = 1.0L;
    const long double theta = inv[k];
    inv[k] = theta / s * ramp + theta * (1.0L - ramp);
  }
}

// reference rope_inv_freq_llama3.
void llama31(std::vector<long double>& inv, long double factor, long double low, long double high,
             long double length) {
  const long double low_wavelength = length / low, high_wavelength = length / high;
  for (long double& theta : inv) {
    const long double wavelength = kTwoPiL / theta;
    if (wavelength < high_wavelength) continue;
    if (wavelength > low_wavelength) {
      theta = theta / factor;
      continue;
    }
    const long double smooth = (length / wavelength - low) / (high - low);
    theta = (1.0L - smooth) * (theta / factor) + smooth * theta;
  }
}

}  // namespace

std::vector<long double> rope_inv_freq(int64_t rotary_dims, const RopeFrequencies& f) {
  if (rotary_dims < 2 || rotary_dims % 2 != 0) {
    fail("rotary_dims is " + std::to_string(rotary_dims) + ", expected an even number >= 2");
  }
  check(f, rotary_dims);
  const long double base = f.base, s = f.factor;
  const long double length = static_cast<long double>(f.original_context);
  std::vector<long double> inv;
  switch (f.scaling) {
    case RopeScaling::none:
      return plain(rotary_dims, base);
    case RopeScaling::pi:
      inv = plain(rotary_dims, base);
      for (long double& v : inv) v = v / s;
      return inv;
    case RopeScaling::ntk: {
      const long double r = static_cast<long double>(rotary_dims);
      return plain(rotary_dims, base * std::pow(s, r / (r - 2.0L)));
    }
    case RopeScaling::yarn:
      inv = plain(rotary_dims, base);
      yarn(inv, rotary_dims, base, s, length, f.beta_fast, f.beta_slow);
      return inv;
    case RopeScaling::llama31:
      inv = plain(rotary_dims, base);
      llama31(inv, s, f.low_freq_factor, f.high_freq_factor, length);
      return inv;
  }
  fail("unknown scaling rule " + std::to_string(static_cast<int>(f.scaling)));
}

long double rope_cos_sin_factor(const RopeFrequencies& f) {
  if (f.scaling != RopeScaling::yarn || !f.attention_factor) return 1.0L;
  check(f, 4);
  const long double s = f.factor;
  return s > 1.0L ? 0.1L * std::log(s) + 1.0L : 1.0L;
}

}  // namespace lmo::kernels
