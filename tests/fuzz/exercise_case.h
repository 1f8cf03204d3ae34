// What the case-level fuzz targets do with a parsed case: everything the program does before it
// allocates a tensor (the op with its parameters, the input overrides, the declared shapes and
// the cost estimate). InputError escapes to the caller, as in the program.
#pragma once

#include <memory>

#include "oracle/cases/case.h"

namespace lmo::fuzz {

inline void exercise_case(const oracle::Case& c) {
  const std::unique_ptr<oracle::Op> op = oracle::make_op(c);
  volatile double cost = op->cost();
  (void)cost;
  for (const oracle::InputDecl& d : oracle::case_inputs(c, *op)) (void)d.shape.size();
  for (const oracle::OutputDecl& d : op->outputs()) (void)d.shape.size();
}

}  // namespace lmo::fuzz
