// Special floating-point values in test inputs: signed zeros, infinities, NaN and the extremes
// of each format, placed either at chosen indices or as a deterministic random mix over an
// ordinary input tensor.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "oracle/core/inputs.h"
#include "reference/formats.h"
#include "reference/tensor.h"

namespace lmo::oracle {

enum class Special : uint8_t {
  pos_zero,
  neg_zero,
  pos_inf,  // not in e4m3 (no infinity): requesting it there throws
  neg_inf,  // likewise
  nan,      // the format's canonical quiet NaN (ref::nan_bits)
  min_subnormal,
  neg_min_subnormal,
  min_normal,
  max_finite,
  neg_max_finite,
};
inline constexpr Special kAllSpecials[] = {
    Special::pos_zero,   Special::neg_zero,       Special::pos_inf,           Special::neg_inf,
    Special::nan,        Special::min_subnormal,  Special::neg_min_subnormal, Special::min_normal,
    Special::max_finite, Special::neg_max_finite,
};

std::string_view special_name(Special s);
// True when format f has the value (only e4m3 lacks any: its infinities).
bool has_special(ref::Format f, Special s);
// Storage bits of s in format f; throws std::invalid_argument, naming the format, when f
// lacks it.
uint64_t special_bits(ref::Format f, Special s);

struct SpecialAt {
  int64_t index;  // flat row-major element index
  Special kind;
};
// Overwrites the listed elements of a floating tensor. Validates every entry (index in range,
// kind exists in the format) before writing any, so a throw leaves t unchanged.
void place_specials(ref::Tensor& t, std::span<const SpecialAt> at);

// A random mix: each element independently becomes special with probability `fraction`, the
// kind drawn uniformly from `kinds`.
struct SpecialMix {
  std::vector<Special> kinds;
  double fraction = 0;  // in [0, 1]
};

// Which elements a SpecialMix makes special, as a pure function of (seed, name, index). It
// uses its own stream, InputStream(seed, name + "#specials"), so it is independent of the values
// drawn for `name` itself: with r = draw(i) of that stream, element i is special iff
// r0 < floor(fraction * 2^32), and its kind is kinds[floor(r1 * kinds.size() / 2^32)].
class SpecialChooser {
 public:
  // Throws std::invalid_argument for a fraction outside [0, 1], an empty kinds list with a
  // nonzero fraction, or a kind that format f lacks (e.g. an infinity in e4m3).
  SpecialChooser(uint64_t seed, std::string_view name, ref::Format f, SpecialMix mix);
  std::optional<Special> at(uint64_t index) const;

 private:
  InputStream stream_;
  SpecialMix mix_;
  uint64_t threshold_;  // r0 < threshold_ makes an element special; up to 2^32
};

// `base` (a floating tensor, typically from uniform() or normal() with the same seed and name)
// with the elements chosen by SpecialChooser(seed, name, format of base, mix) replaced.
ref::Tensor special_mix(ref::Tensor base, uint64_t seed, std::string_view name,
                        const SpecialMix& mix);

}  // namespace lmo::oracle
