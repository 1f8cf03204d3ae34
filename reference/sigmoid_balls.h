// The stable sigmoid of activations.h on many balls at once ([certified]): 1/(1 + e^(−s)) for
// s ≥ 0 and e^s/(1 + e^s) below, with every exponential taken together (ball.h's exp_many). The
// side is chosen by the midpoint's sign: the two forms are equal, so either encloses the exact
// value, and no comparison is left undecided. The elementwise SiLU and GELU-tanh enclosures
// (oracle/ops/activations.cc) read it.
#pragma once

#include <span>

#include "reference/ball.h"

namespace lmo::ref {

// s[j] ← sigmoid(s[j]) for every j.
void sigmoid_balls(std::span<Ball> s);

}  // namespace lmo::ref
