// The no-false-alarm sweeps' machinery (oracle_false_alarm*_test.cc): Philox-driven random draws
// for case parameters (the same sweep on every run), and a sweep that builds that many random
// cases of one family, runs them through verify with the given backends and expects no failure.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "oracle/backends/backend.h"
#include "oracle/cases/case.h"
#include "oracle/core/inputs.h"
#include "oracle/verify/verify.h"

namespace lmo::testing {

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
  // Not for bool: std::vector<bool>'s elements are temporaries, the reference would dangle.
  template <class T>
  requires(!std::is_same_v<T, bool>) const T& pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(between(0, static_cast<int64_t>(v.size()) - 1))];
  }

 private:
  oracle::InputStream s_;
  uint64_t i_ = 0;
};

// Storage formats of a random case.
inline nlohmann::json sweep_formats(Draw& d) {
  static const std::vector<std::vector<std::string>> kChoices = {
      {"f32"}, {"bf16"}, {"f16"}, {"f32", "bf16"}, {"bf16", "f16"}, {"f32", "bf16", "f16"}};
  return d.pick(kChoices);
}

// `count` random cases from make, each with an id, a random seed and random formats, through
// verify with the named backends ({} for every backend of verify's default run): no row may fail,
// and at least `min_passed` rows must have run and passed.
inline void sweep(const std::string& family, int count,
                  const std::function<nlohmann::json(Draw&)>& make,
                  const std::vector<std::string>& backend_names, int64_t min_passed) {
  Draw d(family);
  std::vector<oracle::Case> cases;
  for (int i = 0; i < count; ++i) {
    nlohmann::json c = make(d);
    c["id"] = family + "/" + std::to_string(i);
    c["seed"] = d.bits();
    c["formats"] = sweep_formats(d);
    cases.push_back(oracle::parse_case(c, "<sweep " + family + ">", "case " + std::to_string(i)));
  }
  const auto all = oracle::available_backends();
  const std::vector<oracle::Backend*> backends = oracle::select_backends(all, backend_names);
  const oracle::VerifyReport r = oracle::verify(cases, backends, oracle::VerifyOptions{});
  EXPECT_EQ(r.cases, count);
  EXPECT_EQ(r.failed, 0);
  for (const oracle::VerifyRow& row : r.rows) {
    if (!row.pass) {
      ADD_FAILURE() << row.case_id << " [" << row.backend << ", " << ref::format_name(row.format)
                    << "]: " << row.detail;
    }
  }
  EXPECT_GE(r.passed, min_passed);
}

// The usual sweep: kCasesPerFamily cases, at least two passing rows per case.
inline constexpr int kCasesPerFamily = 1000;
inline void sweep(const std::string& family, const std::function<nlohmann::json(Draw&)>& make,
                  const std::vector<std::string>& backend_names) {
  sweep(family, kCasesPerFamily, make, backend_names, 2 * kCasesPerFamily);
}

}  // namespace lmo::testing
