#include "reference/formats.h"

namespace lmo::ref {

std::optional<Format> parse_format(std::string_view name) {
  for (const FormatSpec& s : kFormatSpecs) {
    if (s.name == name) return s.id;
  }
  return std::nullopt;
}

namespace detail {
uint64_t assemble(const FormatSpec& s, bool negative, int biased_exp, uint64_t frac) {
  uint64_t p = (uint64_t{negative} << (s.exp_bits + s.frac_bits)) |
               (static_cast<uint64_t>(biased_exp) << s.frac_bits) | frac;
  return p << s.shift;
}
}  // namespace detail

uint64_t max_finite_bits(Format f, bool negative) {
  const FormatSpec& s = spec(f);
  const uint64_t hidden = uint64_t{1} << s.frac_bits;
  return detail::assemble(s, negative, s.emax() + s.bias, s.max_significand() - hidden);
}

uint64_t nan_bits(Format f) {
  const FormatSpec& s = spec(f);
  const int top = (1 << s.exp_bits) - 1;
  if (!s.has_inf) return detail::assemble(s, false, top, (uint64_t{1} << s.frac_bits) - 1);
  return detail::assemble(s, false, top, uint64_t{1} << (s.frac_bits - 1));  // quiet bit
}

uint64_t inf_bits(Format f, bool negative) {
  const FormatSpec& s = spec(f);
  if (!s.has_inf) return nan_bits(f);
  return detail::assemble(s, negative, (1 << s.exp_bits) - 1, 0);
}

uint64_t min_subnormal_bits(Format f) { return detail::assemble(spec(f), false, 0, 1); }

bool bits_is_nan(Format f, uint64_t bits) {
  const FormatSpec& s = spec(f);
  uint64_t p = (bits >> s.shift) & s.pattern_mask();
  const uint64_t exp_all = (uint64_t{1} << s.exp_bits) - 1;
  const uint64_t frac_all = (uint64_t{1} << s.frac_bits) - 1;
  const uint64_t bexp = (p >> s.frac_bits) & exp_all;
  const uint64_t frac = p & frac_all;
  if (!s.has_inf) return bexp == exp_all && frac == frac_all;
  return bexp == exp_all && frac != 0;
}

bool bits_is_inf(Format f, uint64_t bits) {
  const FormatSpec& s = spec(f);
  if (!s.has_inf) return false;
  uint64_t p = (bits >> s.shift) & s.pattern_mask();
  const uint64_t exp_all = (uint64_t{1} << s.exp_bits) - 1;
  return ((p >> s.frac_bits) & exp_all) == exp_all && (p & ((uint64_t{1} << s.frac_bits) - 1)) == 0;
}

}  // namespace lmo::ref
