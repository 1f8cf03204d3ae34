// Known-answer data for the reference's tests: JSON files in tests/data/, each made by the
// mpmath script kept beside it. Numbers are strings: inputs as exact hexadecimal doubles
// (Python's float.hex(), read with strtod), expected values as 50-digit decimals.
#pragma once

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "reference/number_types.h"

namespace lmo::testdata {

inline nlohmann::json load(const std::string& file) {
  const std::string path = std::string(LMO_TEST_DATA_DIR) + "/" + file;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open test data " + path);
  return nlohmann::json::parse(in);
}

// An exact double from a hex-float string ("0x1.8p+1") or a decimal one.
inline double exact_double(const nlohmann::json& v) {
  if (v.is_number()) return v.get<double>();
  return std::strtod(v.get<std::string>().c_str(), nullptr);
}

inline std::vector<double> exact_doubles(const nlohmann::json& arr) {
  std::vector<double> out;
  for (const auto& v : arr) out.push_back(exact_double(v));
  return out;
}

// A 50-digit decimal expected value.
inline ref::mp expected(const nlohmann::json& v) { return ref::mp(v.get<std::string>()); }

inline std::vector<ref::mp> expected_vector(const nlohmann::json& arr) {
  std::vector<ref::mp> out;
  for (const auto& v : arr) out.push_back(expected(v));
  return out;
}

// |got − want| / |want| (or |got| when want is 0).
inline ref::mp relative_error(const ref::mp& got, const ref::mp& want) {
  const ref::mp d = abs(got - want);
  return want == 0 ? d : ref::mp(d / abs(want));
}

}  // namespace lmo::testdata
