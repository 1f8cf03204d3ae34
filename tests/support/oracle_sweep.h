// The no-false-alarm sweep (oracle_false_alarm*_test.cc): random cases of one op family, drawn
// from Philox (oracle/inputs.h's InputStream) so the sweep is the same on every run, run through
// verify with correct backends, none of which may be flagged.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "oracle/backend.h"
#include "oracle/case.h"
#include "oracle/inputs.h"
#include "oracle/verify.h"

namespace lmo::testing {

inline constexpr int kCasesPerFamily = 1000;

class Draw {
 public:
  explicit Draw(std::string_view family) : s_(20261122, family) {}
  uint64_t bits() {
    const auto r = s_.draw(i_++);
    return static_cast<uint64_t>(r[0]) | static_cast<uint64_t>(r[1]) << 32;
  }
  int64_t between(int64_t lo, int64_t hi) {  // [lo, hi]
    return lo + static_cast<int64_t>(bits() % static_cast<uint64_t>(hi - lo + 1));
  }
  double log_uniform(double lo, double hi) {  // lo·(hi/lo)^u
    const double u = static_cast<double>(bits() >> 11) * 0x1p-53;
    return lo * std::pow(hi / lo, u);
  }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(between(0, static_cast<int64_t>(v.size()) - 1))];
  }

 private:
  oracle::InputStream s_;
  uint64_t i_ = 0;
};

inline nlohmann::json random_formats(Draw& d) {
  static const std::vector<std::vector<std::string>> kChoices = {
      {"f32"}, {"bf16"}, {"f16"}, {"f32", "bf16"}, {"bf16", "f16"}, {"f32", "bf16", "f16"}};
  return d.pick(kChoices);
}

// kCasesPerFamily cases from make (op, params, inputs; id, seed and formats are added), run on
// the named backends ({} = every backend of verify's default run, fast-* included: those that do
// not support an op skip it). Every row must pass.
inline void sweep(const std::string& family, const std::function<nlohmann::json(Draw&)>& make,
                  const std::vector<std::string>& backend_names) {
  using namespace oracle;
  Draw d(family);
  std::vector<Case> cases;
  for (int i = 0; i < kCasesPerFamily; ++i) {
    nlohmann::json c = make(d);
    c["id"] = family + "/" + std::to_string(i);
    c["seed"] = d.bits();
    c["formats"] = random_formats(d);
    cases.push_back(parse_case(c, "<sweep " + family + ">", "case " + std::to_string(i)));
  }
  const auto all = available_backends();
  const std::vector<Backend*> backends = select_backends(all, backend_names);
  const VerifyReport r = verify(cases, backends, VerifyOptions{});
  EXPECT_EQ(r.cases, kCasesPerFamily);
  EXPECT_EQ(r.failed, 0);
  for (const VerifyRow& row : r.rows) {
    if (!row.pass)
      ADD_FAILURE() << row.case_id << " [" << row.backend << ", " << ref::format_name(row.format)
                    << "]: " << row.detail;
  }
  EXPECT_GE(r.passed, 2 * kCasesPerFamily);
}

}  // namespace lmo::testing
