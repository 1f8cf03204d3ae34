// A case's inputs with its normal values kept across its storage formats (NormalDraws, as verify
// makes them): every built-in case gets, in every format, the bits of drawing that format alone,
// with its specials placed and its derived inputs (RoPE tables) computed on that format's inputs.
#include "oracle/cases/case_inputs.h"

#include <gtest/gtest.h>

#include "oracle/cases/case.h"

namespace lmo::oracle {
namespace {

TEST(CaseInputs, NormalDrawsKeptAcrossFormatsGiveEachFormatItsOwnBits) {
  int shared = 0;  // (case, format) pairs after the first format: those reuse kept values
  for (const Case& c : load_case_dir(builtin_cases_dir())) {
    const std::unique_ptr<Op> op = make_op(c);
    int64_t elements = 0;
    bool normal = false;
    for (const InputDecl& d : case_inputs(c, *op)) {
      int64_t n = 1;
      for (int64_t e : d.shape) n *= e;
      elements += n;
      normal = normal || (!d.computed && !d.dtype && d.dist == Dist::kNormal);
    }
    if (elements > (int64_t{1} << 13)) continue;  // the large ones take seconds together
    NormalDraws draws;
    for (ref::Format f : c.formats) {
      const InputSet kept = make_inputs(c, *op, f, &draws);
      const InputSet alone = make_inputs(c, *op, f);
      ASSERT_EQ(kept.all().size(), alone.all().size()) << c.id;
      for (size_t k = 0; k < kept.all().size(); ++k) {
        const auto& [name, t] = kept.all()[k];
        EXPECT_EQ(name, alone.all()[k].first) << c.id;
        EXPECT_TRUE(t == alone.all()[k].second)
            << c.id << " " << name << " in " << ref::format_name(f);
      }
      shared += normal && f != c.formats.front();
    }
  }
  EXPECT_GT(shared, 30);
}

}  // namespace
}  // namespace lmo::oracle
