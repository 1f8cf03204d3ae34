// Fused F14 + F12 + F13 training loss over the rows of a (rows × vocab) array of logits in
// storage s, mirroring reference/softmax.h softmax_cross_entropy:
//   z' = cap·tanh(z/cap) when cap > 0 (else z' = z),   log Z = logsumexp(z'),
//   loss = −z'_t + log Z + λ·(log Z)²,
//   ∂loss/∂z_j = (p_j − [j = t] + 2λ·log Z·p_j)·∂z'_j/∂z_j,   p_j = e^{z'_j − log Z},
//   ∂z'_j/∂z_j = 4e/(1 + e)², e = e^{−2|z_j/cap|} (the reference's softcap_grad), or 1; the
//   kernel evaluates it as 1 − tanh²(z_j/cap) where |z_j/cap| < 0.625 (no cancellation there).
// One kernel call per row: the row is read once from memory and re-read from cache (a pass for
// the maximum, one for the sum that keeps each term·∂z'_j/∂z_j in a scratch row, one for the
// gradient; the soft-cap is monotone, so the maximum of z' is the cap of the maximum of z). The
// target's gradient element is formed in double. loss and log Z are f32 (per-row scalars formed
// in double); the gradient is in storage s. A row with a NaN or infinite logit takes a scalar
// double path that follows the reference's special cases exactly.
#pragma once

#include <cstdint>

#include "fast/storage.h"

namespace lmo::fast {

// z: rows × vocab in s; target: rows int64 in [0, vocab); loss, logz: rows floats; grad: rows ×
// vocab in s, or null to skip the gradient. cap: 0 for no soft-cap, else finite > 0. Throws
// std::invalid_argument for rows < 0, vocab < 1, a null pointer (other than grad), a target
// outside [0, vocab) (naming the row), a negative or non-finite cap, or a non-finite lambda.
void cross_entropy(Storage s, const void* z, const int64_t* target, int64_t rows, int64_t vocab,
                   float lambda, float cap, float* loss, float* logz, void* grad);

}  // namespace lmo::fast
