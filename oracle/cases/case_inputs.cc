#include "oracle/cases/case_inputs.h"

#include <algorithm>
#include <stdexcept>

#include "oracle/cases/case_specials.h"
#include "oracle/core/inputs.h"
#include "reference/parallel.h"

namespace lmo::oracle {
namespace {

// Elements per parallel slice: large enough that the slices' overhead vanishes.
constexpr int64_t kSlice = 8192;

template <class Gen>
void fill_parallel(ref::Tensor& t, const Gen& gen) {
  const int64_t n = t.numel();
  const int64_t slices = (n + kSlice - 1) / kSlice;
  ref::parallel_for(slices, [&](int64_t s) {
    fill(t, gen, s * kSlice, std::min(n, (s + 1) * kSlice));
  });
}

// Rounds the kept Box–Muller values to gen's format: element i is value i % 2 of pair i / 2, as
// in fill().
void fill_from_pairs(ref::Tensor& t, const NormalReal& gen,
                     const std::vector<std::array<ref::Ball, 2>>& pairs) {
  const int64_t n = t.numel();
  const int64_t slices = (n + kSlice - 1) / kSlice;
  ref::parallel_for(slices, [&](int64_t s) {
    for (int64_t i = s * kSlice; i < std::min(n, (s + 1) * kSlice); ++i) {
      const auto j = static_cast<uint64_t>(i / 2);
      const int k = static_cast<int>(i % 2);
      t.set_bits(i, gen.bits_of(pairs[static_cast<size_t>(j)][static_cast<size_t>(k)], j, k));
    }
  });
}

}  // namespace

const std::vector<std::array<ref::Ball, 2>>& NormalDraws::pairs(uint64_t seed, const InputDecl& d,
                                                                const NormalReal& gen, int64_t n) {
  auto key = std::make_tuple(seed, d.name, d.a, d.b, n);
  auto it = kept_.find(key);
  if (it != kept_.end()) return it->second;
  std::vector<std::array<ref::Ball, 2>> pairs(static_cast<size_t>((n + 1) / 2));
  const auto count = static_cast<int64_t>(pairs.size());
  const int64_t slices = (count + kSlice / 2 - 1) / (kSlice / 2);
  ref::parallel_for(slices, [&](int64_t s) {
    for (int64_t j = s * (kSlice / 2); j < std::min(count, (s + 1) * (kSlice / 2)); ++j) {
      pairs[static_cast<size_t>(j)] = gen.pair_balls(static_cast<uint64_t>(j));
    }
  });
  return kept_.emplace(std::move(key), std::move(pairs)).first->second;
}

InputSet make_inputs(const Case& c, const Op& op, ref::Format storage, NormalDraws* draws) {
  InputSet set;
  for (const InputDecl& d : case_inputs(c, op)) {
    const ref::DType dtype =
        d.dtype ? *d.dtype : ref::format_dtype(c.input_format.value_or(storage));
    try {
      ref::Tensor t(dtype, d.shape);
      if (d.computed) {
        d.computed(set, t);
        set.add(d.name, std::move(t));
        continue;
      }
      const InputStream stream(c.seed, d.name);
      switch (d.dist) {
        case Dist::kNormal: {
          const NormalReal gen(stream, dtype, d.a, d.b);
          if (draws) {
            fill_from_pairs(t, gen, draws->pairs(c.seed, d, gen, t.numel()));
          } else {
            fill_parallel(t, gen);
          }
          break;
        }
        case Dist::kUniform:
          fill_parallel(t, UniformReal(stream, dtype, d.a, d.b));
          break;
        case Dist::kUniformInt:
          fill_parallel(t, UniformInt(stream, dtype, static_cast<int64_t>(d.a),
                                      static_cast<int64_t>(d.b)));
          break;
      }
      // Special values over the drawn ones (checked when the case was read; real inputs only).
      const std::vector<SpecialAt> specials = case_input_specials(c, d);
      if (!specials.empty()) place_specials(t, specials);
      set.add(d.name, std::move(t));
    } catch (const std::invalid_argument& e) {
      throw InputError(c.file, c.path + ".inputs." + d.name,
                       "cannot generate it in " + std::string(ref::dtype_name(dtype)) + ": " +
                           e.what());
    }
  }
  return set;
}

}  // namespace lmo::oracle
