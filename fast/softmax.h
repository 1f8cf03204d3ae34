// F12 softmax and log-sum-exp over the rows of a (rows × n) array of logits in storage s,
// numerically stable (the row maximum m is subtracted first), mirroring reference/softmax.h:
//   softmax:   p_i = e^{z_i − m} / Σ_j e^{z_j − m}   (outputs in s, rounded to nearest-even);
//   logsumexp: log Z = m + log Σ_j e^{z_j − m}       (one f32 per row).
// The sum accumulates in f32 vector lanes; log and the per-row scalars are formed in double.
// Special rows follow the reference: any NaN gives NaN; otherwise a +inf logit makes log Z = +inf
// and every p NaN (e^{inf − inf}); a row of −inf gives log Z = −inf and p NaN.
#pragma once

#include <cstdint>

#include "fast/storage.h"

namespace lmo::fast {

// Throw std::invalid_argument for rows < 0, n < 1 or a null pointer.
void softmax(Storage s, const void* z, void* p, int64_t rows, int64_t n);
void logsumexp(Storage s, const void* z, float* logz, int64_t rows, int64_t n);

}  // namespace lmo::fast
