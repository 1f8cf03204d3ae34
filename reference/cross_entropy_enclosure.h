// F12 + F13 + F14 fused cross-entropy on balls at real vocabularies ([certified]): intervals
// around the exact loss, log Z and ∂loss/∂z of softmax_cross_entropy (softmax.h) without a soft
// cap, at one double-double exponential and one double-double product per logit instead of
// about seven ball operations; with a soft cap, one more batched exponential and a few ball
// operations per logit instead of four exponentials and twenty. The derivation is in
// cross_entropy_enclosure.cc. At Llama 3's 128256-entry vocabulary and 4096 rows this is what
// brings a golden file within minutes (docs/certified.md).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "reference/ball.h"

namespace lmo::ref {

struct LossEnclosure {
  std::vector<Ball> loss;  // per row: −z_t + log Z + λ·(log Z)²
  std::vector<Ball> logz;  // per row: log Σ_j e^(z_j)
  std::vector<Ball> grad;  // rows × n: (1 + 2λ·log Z)·e^(z_j)/Z − [j = t]
};

// z: rows × n logits (row-major), target: one class per row (0 ≤ t < n, checked), lambda: the
// z-loss coefficient, cap: the soft cap (0: none; the outputs are then those of the capped
// logits, the gradient with respect to the raw ones, as softmax_cross_entropy's). nullopt where
// this path does not apply and softmax_cross_entropy<Ball> must run: a non-finite logit or λ, a
// logit more than 400 below its row's largest (its exponential's product would lose the relative
// bound near underflow), a row longer than 2^24, or a factor 1 + 2λ·log Z whose interval reaches 0,
// or a cap that is negative or not finite.
std::optional<LossEnclosure> cross_entropy_enclosure(std::span<const double> z,
                                                     std::span<const int64_t> target, int64_t rows,
                                                     int64_t n, double lambda, double cap = 0);

}  // namespace lmo::ref
