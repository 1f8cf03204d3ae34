// F01 LayerNorm and F02 RMSNorm (and Gemma's 1 + γ weight) over the rows of a (rows × d) array,
// on plain pointers: x, the weights and y all in storage s, computed in f32 and rounded to
// nearest-even at the store. Mirrors reference/norms.h:
//   rmsnorm:   y = x / sqrt(mean(x²) + ε) · w,  w = γ, or 1 + γ (formed in f32) when one_plus_gamma;
//   layernorm: y = (x − μ) / sqrt(σ² + ε) · γ + β, the population variance of the two-pass
//              definition (mean first, then the mean of squared deviations).
// Sums accumulate in f32 vector lanes; the per-row scalars (mean, 1/sqrt) are formed in double.
// Rows whose largest |x| lies outside [2^-40, 2^40] are scaled by a power of two first, so
// that squares neither overflow nor vanish (the result is unchanged in exact arithmetic).
// Rows run in parallel (fast/threads.h); each row's result is independent of the thread count.
#pragma once

#include <cstdint>

#include "fast/storage.h"

namespace lmo::fast {

// Throws std::invalid_argument for rows < 0, d < 1, a null pointer, or eps negative or not
// finite.
void rmsnorm(Storage s, const void* x, const void* gamma, void* y, int64_t rows, int64_t d,
             float eps, bool one_plus_gamma = false);

void layernorm(Storage s, const void* x, const void* gamma, const void* beta, void* y,
               int64_t rows, int64_t d, float eps);

// Residual add fused with RMSNorm (vLLM's and FlashInfer's fused_add_rmsnorm): h = x + residual
// formed in f32 and stored once rounded to residual_out (which may alias residual: each element
// is read before it is written); y = h / sqrt(mean(h²) + ε) · γ from the f32 h. Same errors as
// rmsnorm.
void fused_add_rmsnorm(Storage s, const void* x, const void* residual, const void* gamma,
                       void* residual_out, void* y, int64_t rows, int64_t d, float eps);

}  // namespace lmo::fast
