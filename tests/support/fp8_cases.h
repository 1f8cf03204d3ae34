// The fp8 tests' shared pieces (the reference and plain-float kernels in tests/oracle/fp8_test.cc,
// the kernel libraries in tests/kernels/fp8_test.cc): a case of one fp8 op in one format, and the
// values an output buffer holds.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "oracle/cases/case.h"
#include "oracle/core/guarded_buffer.h"
#include "reference/formats.h"

namespace lmo::testdata {

inline oracle::Case fp8_case(const std::string& op, ref::Format f, const nlohmann::json& params,
                             uint64_t seed = 7) {
  return oracle::parse_case({{"id", "fp8"},
                             {"op", op},
                             {"seed", seed},
                             {"formats", {std::string(ref::format_name(f))}},
                             {"params", params}},
                            "fp8_test", "case");
}

// The values of a buffer of fp8 patterns or f32s.
inline std::vector<double> fp8_values_of(const oracle::GuardedBuffer& b) {
  const ref::Tensor t = b.tensor();
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get(i));
  return v;
}

}  // namespace lmo::testdata
