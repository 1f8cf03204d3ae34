#include "oracle/core/specials.h"

#include <stdexcept>
#include <string>

namespace lmo::oracle {

using ref::Format;

std::string_view special_name(Special s) {
  switch (s) {
    case Special::pos_zero:
      return "pos_zero";
    case Special::neg_zero:
      return "neg_zero";
    case Special::pos_inf:
      return "pos_inf";
    case Special::neg_inf:
      return "neg_inf";
    case Special::nan:
      return "nan";
    case Special::min_subnormal:
      return "min_subnormal";
    case Special::neg_min_subnormal:
      return "neg_min_subnormal";
    case Special::min_normal:
      return "min_normal";
    case Special::max_finite:
      return "max_finite";
    case Special::neg_max_finite:
      return "neg_max_finite";
  }
  return "?";
}

bool has_special(Format f, Special s) {
  return ref::spec(f).has_inf || (s != Special::pos_inf && s != Special::neg_inf);
}

uint64_t special_bits(Format f, Special s) {
  if (!has_special(f, s)) {
    throw std::invalid_argument("special value " + std::string(special_name(s)) +
                                " requested, but format " + std::string(ref::format_name(f)) +
                                " has no infinity");
  }
  const ref::FormatSpec& sp = ref::spec(f);
  const uint64_t sign = uint64_t{1} << (sp.exp_bits + sp.frac_bits + sp.shift);
  switch (s) {
    case Special::pos_zero:
      return 0;
    case Special::neg_zero:
      return sign;
    case Special::pos_inf:
      return ref::inf_bits(f, false);
    case Special::neg_inf:
      return ref::inf_bits(f, true);
    case Special::nan:
      return ref::nan_bits(f);
    case Special::min_subnormal:
      return ref::min_subnormal_bits(f);
    case Special::neg_min_subnormal:
      return ref::min_subnormal_bits(f) | sign;
    case Special::min_normal:
      return ref::detail::assemble(sp, false, 1, 0);
    case Special::max_finite:
      return ref::max_finite_bits(f, false);
    case Special::neg_max_finite:
      return ref::max_finite_bits(f, true);
  }
  throw std::invalid_argument("special_bits: unknown Special");
}

namespace {

Format float_format(std::string_view what, const ref::Tensor& t) {
  if (!ref::is_float(t.dtype())) {
    throw std::invalid_argument(std::string(what) + ": tensor dtype " +
                                std::string(ref::dtype_name(t.dtype())) + " is not floating");
  }
  return ref::dtype_format(t.dtype());
}

}  // namespace

void place_specials(ref::Tensor& t, std::span<const SpecialAt> at) {
  const Format f = float_format("place_specials", t);
  std::vector<uint64_t> bits;
  bits.reserve(at.size());
  for (const SpecialAt& s : at) {
    if (s.index < 0 || s.index >= t.numel()) {
      throw std::invalid_argument("place_specials: index " + std::to_string(s.index) +
                                  " is outside a tensor of " + std::to_string(t.numel()) +
                                  " elements");
    }
    bits.push_back(special_bits(f, s.kind));
  }
  for (size_t k = 0; k < at.size(); ++k) t.set_bits(at[k].index, bits[k]);
}

SpecialChooser::SpecialChooser(uint64_t seed, std::string_view name, Format f, SpecialMix mix)
    : stream_(seed, std::string(name) + "#specials"), mix_(std::move(mix)) {
  if (!(mix_.fraction >= 0 && mix_.fraction <= 1)) {
    throw std::invalid_argument("special_mix: fraction must be in [0, 1], got " +
                                std::to_string(mix_.fraction));
  }
  if (mix_.kinds.empty() && mix_.fraction > 0) {
    throw std::invalid_argument("special_mix: no kinds of special value given");
  }
  for (Special s : mix_.kinds) (void)special_bits(f, s);       // throws for a kind f lacks
  threshold_ = static_cast<uint64_t>(mix_.fraction * 0x1p32);  // exact scaling, then floor
}

std::optional<Special> SpecialChooser::at(uint64_t index) const {
  const std::array<uint32_t, 4> r = stream_.draw(index);
  if (r[0] >= threshold_) return std::nullopt;
  const uint64_t k = (uint64_t{r[1]} * mix_.kinds.size()) >> 32;  // in [0, kinds.size())
  return mix_.kinds[k];
}

ref::Tensor special_mix(ref::Tensor base, uint64_t seed, std::string_view name,
                        const SpecialMix& mix) {
  const Format f = float_format("special_mix", base);
  const SpecialChooser chooser(seed, name, f, mix);
  for (int64_t i = 0; i < base.numel(); ++i) {
    if (std::optional<Special> s = chooser.at(static_cast<uint64_t>(i))) {
      base.set_bits(i, special_bits(f, *s));
    }
  }
  return base;
}

}  // namespace lmo::oracle
