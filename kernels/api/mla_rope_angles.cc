#include "kernels/api/mla_rope_angles.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/api/rope_frequencies.h"  // rope_inv_freq

namespace lmo::kernels {

std::vector<double> mla_rope_angles(const char* fn, const MlaDecodeArgs& a) {
  const RopeFrequencies& f = a.rope;
  if (!(f.base > 0) || std::isinf(f.base)) {
    throw std::invalid_argument(std::string(fn) + ": rope.base is " + std::to_string(f.base) +
                                ", expected a finite base > 0");
  }
  if (f.attention_factor) {
    throw std::invalid_argument(
        std::string(fn) +
        ": rope.attention_factor is set, expected false (YaRN's "
        "temperature on MLA multiplies the softmax scale: pass it in scale)");
  }
  const int64_t half = a.rope_dim / 2;
  const double position = static_cast<double>(a.cache_len - 1);
  std::vector<double> angle(static_cast<size_t>(half));
  if (f.scaling == RopeScaling::none) {
    // F10 in double; rope_inv_freq would reject the bases in (0, 1] this kernel has always taken.
    for (int64_t k = 0; k < half; ++k) {
      angle[static_cast<size_t>(k)] =
          position *
          std::pow(f.base, -static_cast<double>(2 * k) / static_cast<double>(a.rope_dim));
    }
    return angle;
  }
  std::vector<long double> inv;
  try {
    inv = rope_inv_freq(a.rope_dim, f);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string(fn) + ": " + e.what());
  }
  for (int64_t k = 0; k < half; ++k) {
    angle[static_cast<size_t>(k)] =
        static_cast<double>(static_cast<long double>(position) * inv[static_cast<size_t>(k)]);
  }
  return angle;
}

}  // namespace lmo::kernels
