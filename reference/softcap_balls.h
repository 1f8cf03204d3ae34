// F14 soft-capping on balls, for a vector of doubles at once ([certified]): z'_j =
// cap·tanh(z_j/cap) and, when asked, its derivative 1 − tanh²(z_j/cap), as softmax.h's softcap and
// softcap_grad compute them (tanh as ball.h's: (1 − e)/(1 + e) with z_j's sign, the derivative
// 4e/(1 + e)², e = e^(−2|z_j/cap|)). The exponential is taken once for both and for all elements
// together (ball.h's exp_many): the soft-capped cross-entropy (cross_entropy_enclosure.cc) and the
// elementwise soft cap (oracle/ops/activations.cc) read it.
#pragma once

#include <span>

#include "reference/ball.h"

namespace lmo::ref {

// capped[j] (and grad[j] when grad is not empty) for every z[j]; capped and grad as long as z.
// cap > 0 (checked by the callers' parameters).
void softcap_balls(std::span<const double> z, double cap, std::span<Ball> capped,
                   std::span<Ball> grad);

}  // namespace lmo::ref
