// The project's number types. `mp` is the arbiter: MPFR is correctly rounded, and 50 decimal
// digits (~167 bits) leave room for error growth in long compositions while every result is
// rounded once to a target format. Simulated low-precision formats live in sim_float.h.
#pragma once

#include <boost/multiprecision/float128.hpp>
#include <boost/multiprecision/mpfr.hpp>

namespace lmo::ref {

// Expression templates are off: generic formula code may then use `auto` safely on mp too,
// and temporaries never alias their operands. The limbs live inside the object
// (allocate_stack: 50 digits need three 64-bit limbs) instead of on the heap: the values are the
// same bits, but the reference and the judge create and destroy millions of temporaries, and
// with heap limbs malloc/free took a quarter of verify's judging time.
using mp = boost::multiprecision::number<
    boost::multiprecision::mpfr_float_backend<50, boost::multiprecision::allocate_stack>,
    boost::multiprecision::et_off>;
using float128 = boost::multiprecision::float128;

}  // namespace lmo::ref
