#include "oracle/case_inputs.h"

#include <algorithm>
#include <stdexcept>

#include "oracle/case_specials.h"
#include "oracle/inputs.h"
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

}  // namespace

InputSet make_inputs(const Case& c, const Op& op, ref::Format storage) {
  InputSet set;
  for (const InputDecl& d : case_inputs(c, op)) {
    const ref::DType dtype = d.dtype ? *d.dtype : ref::format_dtype(storage);
    try {
      ref::Tensor t(dtype, d.shape);
      if (d.computed) {
        d.computed(set, t);
        set.add(d.name, std::move(t));
        continue;
      }
      const InputStream stream(c.seed, d.name);
      switch (d.dist) {
        case Dist::kNormal:
          fill_parallel(t, NormalReal(stream, dtype, d.a, d.b));
          break;
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
