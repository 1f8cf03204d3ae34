# Precompiled headers for the sources that include Boost.Multiprecision (every reference formula
# does), nlohmann/json and GoogleTest: parsing those headers was about a third of a test file's
# compile time (tests/reference/norms_test.cc 19.4 s → 13.3 s with them precompiled, measured 2026-11-24
# on the 2-core machine), and the release build's time is mostly such files. The Highway kernels
# (fast/) are left out: their headers are re-included once per SIMD target.
option(LMO_PCH "Precompile the headers the oracle, the command line and the tests share" ON)

set(LMO_PCH_HEADERS
  <boost/multiprecision/float128.hpp> <boost/multiprecision/mpfr.hpp>
  <boost/math/constants/constants.hpp> <nlohmann/json.hpp>
  <algorithm> <cmath> <cstdint> <limits> <optional> <span> <stdexcept> <string> <vector>)

# `target`'s own precompiled header of LMO_PCH_HEADERS (and the extra headers given).
function(lmo_precompile_headers target)
  if(LMO_PCH)
    target_precompile_headers(${target} PRIVATE ${LMO_PCH_HEADERS} ${ARGN})
  endif()
endfunction()
