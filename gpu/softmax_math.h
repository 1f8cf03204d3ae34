// The per-row math of the f32 softmax and log-sum-exp kernels (gpu/softmax.cuh) as
// __host__ __device__ functions, so that a host test (tests/kernels/gpu_softmax_math_test.cc)
// runs the kernels' arithmetic and judges it against the exact reference on a machine without a
// device. Plain C++ when not compiled by nvcc; no CUDA header.
//
// Per row of n logits z (stored values widened exactly to f32), one block, fast/softmax.cc's
// rounding points:
//   m = max z, NaN-propagating (a maximum is exact in any order);
//   e_j = e^{z_j − m}: the difference rounded once in f32, expf (≤ 2 ulp, CUDA; from L,
//   gpu/f32_math.h);
//   S = Σ e_j in f32: each lane of the block sums its strided terms in ascending order
//   (strided_exp_sum), gpu/common.cuh's fixed tree adds the lanes' sums;
//   softmax: p_j = e_j/S, one IEEE f32 division (the term formed again, the same bits);
//   log-sum-exp: m + log S formed in double (CUDA's log: 1 ulp of double) and rounded once to
//   f32, as fast/ forms it; an infinite m is returned as is (the reference's logsumexp).
// Special rows follow from IEEE arithmetic in that order, as the reference's: a NaN logit makes
// m, every term, S and every output NaN; a +inf logit makes m = +inf, its own term
// e^{inf − inf} = NaN, so p = NaN and log Z = +inf; a row of −inf gives m = −inf, terms
// e^{−inf + inf} = NaN, p = NaN and log Z = −inf.
#pragma once

#include <cstdint>

#include "gpu/activation_f32.h"
#include "gpu/f32_math.h"
#include "gpu/f32_ops.h"

namespace lmo::gpu::softmax_math {

// max(a, b) with NaN propagation (fmax would drop a NaN): the reference's row_max returns a NaN
// as soon as it meets one.
LMO_HD inline float nan_max(float a, float b) {
  if (a != a) return a;
  if (b != b) return b;
  return a > b ? a : b;
}

// One lane's maximum over j = lane, lane + lanes, … < n (−inf for an empty share).
template <class V>
LMO_HD float strided_max(const V& z, int64_t n, int64_t lane, int64_t lanes) {
  float m = -INFINITY;
  for (int64_t j = lane; j < n; j += lanes) m = nan_max(m, z(j));
  return m;
}

// e^{z − m}.
template <class L = f32::CudaF32>
LMO_HD float term(float z, float m) {
  return L::exp(f32::sub(z, m));  // expf: ≤ 2 ulp (CUDA)
}

// One lane's Σ e^{z_j − m}, ascending.
template <class L = f32::CudaF32, class V>
LMO_HD float strided_exp_sum(const V& z, int64_t n, int64_t lane, int64_t lanes, float m) {
  float s = 0.0f;
  for (int64_t j = lane; j < n; j += lanes) s = f32::add(s, term<L>(z(j), m));
  return s;
}

// p = e^{z − m}/S.
template <class L = f32::CudaF32>
LMO_HD float probability(float z, float m, float s) {
  return f32::div(term<L>(z, m), s);
}

// log Z = m + log S in double, rounded once to f32; an infinite m as is.
template <class L = f32::CudaF32>
LMO_HD float log_sum_exp(float m, float s) {
  if (m == INFINITY || m == -INFINITY) return m;
  return static_cast<float>(static_cast<double>(m) +
                            L::log(static_cast<double>(s)));  // log: ≤ 1 ulp (double)
}

// ---- The fused cross-entropy (F14 soft-cap + F12 + F13 z-loss, and its gradient) ----
// Per row of n logits with target t, fast/softmax.cc's CrossEntropyRows rounding for rounding
// where every logit of the row is finite:
//   z'_j = cap·tanh(z_j/cap) as the f32 soft-cap kernel forms it (activation_f32.h's SoftcapFn:
//   tanh in double rounded once), or z_j without a cap;
//   m = max z'; S = Σ e^{z'_j − m} in f32 (expf, the lanes and the tree), as softmax's;
//   log Z = m + log S in double (CUDA's log: 1 ulp of double), rounded once for logz;
//   loss = −z'_t + log Z + λ·(log Z)² in double, rounded once;
//   grad_j (j ≠ t) = (e^{z'_j − m}·cap'(z_j))·k in f32, k = (1 + 2λ log Z)/S formed in double
//   and rounded once, cap'(z) = 4e/(1 + e)² with e = e^{−2|z/cap|} in double rounded once to f32
//   (no factor without a cap);
//   grad_t = (e^{z'_t − log Z}·(1 + 2λ log Z) − 1)·cap'(z_t) in double, rounded once (it cancels
//   where p_t·(1 + 2λ log Z) is near 1, so it is formed once, in double, as fast/ does).
// A row with a NaN or infinite logit takes the reference's formulas in double instead (fast/'s
// ScalarStats; the kernel's former evaluation): z'_j = cap·tanh(z_j/cap) in double, m and
// S = Σ e^{z'_j − m} in double over the lanes and the tree, log Z = m + log S (an infinite m as
// is), the loss and every gradient element in double, each rounded once.
// The double products that feed a sum are f32::dmul (__dmul_rn), never contracted into an fma.

// z' as the f32 path forms it.
template <class L = f32::CudaF32>
LMO_HD float capped(float z, float cap) {
  return cap > 0.0f ? f32::SoftcapFn<L>{cap}(z) : z;
}

// cap'(z) = 4e/(1 + e)², e = e^{−2|z/cap|} (the reference's softcap_grad), in double.
template <class L = f32::CudaF32>
LMO_HD double cap_grad(double z, double cap) {
  const double e = L::exp(-2.0 * ::fabs(z / cap));  // exp: ≤ 1 ulp (double)
  const double one_e = 1.0 + e;
  return (4.0 * e) / (one_e * one_e);
}

// The row's statistics from m and S (f32 path) or from the double path's m and S.
struct CrossEntropyRow {
  double lse;    // log Z
  double scale;  // 1 + 2λ log Z
};
template <class L = f32::CudaF32>
LMO_HD CrossEntropyRow cross_entropy_row(double m, double s, double lambda) {
  const double lse = (m == INFINITY || m == -INFINITY) ? m : m + L::log(s);  // ≤ 1 ulp (double)
  return {lse, 1.0 + f32::dmul(2.0 * lambda, lse)};
}

// loss = −z'_t + log Z + λ·(log Z)², rounded once.
LMO_HD inline float cross_entropy_loss(double zt, const CrossEntropyRow& row, double lambda) {
  return static_cast<float>(-zt + row.lse + f32::dmul(lambda, f32::dmul(row.lse, row.lse)));
}

// The f32 path's k = (1 + 2λ log Z)/S, rounded once.
LMO_HD inline float gradient_factor(const CrossEntropyRow& row, float s) {
  return static_cast<float>(row.scale / static_cast<double>(s));
}

// The f32 path's grad_j, j ≠ t: (e^{z'_j − m}·cap'(z_j))·k.
template <class L = f32::CudaF32>
LMO_HD float gradient(float z, float cap, float m, float k) {
  const float e = term<L>(capped<L>(z, cap), m);
  if (!(cap > 0.0f)) return f32::mul(e, k);
  const auto c = static_cast<float>(cap_grad<L>(z, cap));
  return f32::mul(f32::mul(e, c), k);
}

// grad_t in double (either path): (e^{z'_t − log Z}·(1 + 2λ log Z) − 1)·cap'(z_t).
template <class L = f32::CudaF32>
LMO_HD float target_gradient(double zt_capped, double zt, float cap, const CrossEntropyRow& row) {
  const double g = f32::dmul(L::exp(zt_capped - row.lse), row.scale) - 1.0;
  return static_cast<float>(cap > 0.0f ? g * cap_grad<L>(zt, cap) : g);
}

// The double path: z' = cap·tanh(z/cap) in double (the product rounded, __dmul_rn, so that every
// pass forms the same z'), or z.
template <class L = f32::CudaF32>
LMO_HD double capped_d(double z, double cap) {
  return cap > 0.0 ? f32::dmul(cap, L::tanh(z / cap)) : z;  // tanh: ≤ 1 ulp (double)
}

// The double path's grad_j, j ≠ t: p_j·(1 + 2λ log Z)·cap'(z_j), p_j = e^{z'_j − log Z}.
template <class L = f32::CudaF32>
LMO_HD float gradient_d(double z, double cap, const CrossEntropyRow& row) {
  const double g = f32::dmul(L::exp(capped_d<L>(z, cap) - row.lse), row.scale);
  return static_cast<float>(cap > 0.0 ? g * cap_grad<L>(z, cap) : g);
}

// The double path's lane folds: max z' (NaN-propagating) and Σ e^{z'_j − m}.
template <class V>
LMO_HD double strided_max_d(const V& zd, int64_t n, int64_t lane, int64_t lanes) {
  double m = -INFINITY;
  for (int64_t j = lane; j < n; j += lanes) {
    const double v = zd(j);
    m = m != m ? m : v != v ? v : (v > m ? v : m);
  }
  return m;
}
template <class L = f32::CudaF32, class V>
LMO_HD double strided_exp_sum_d(const V& zd, int64_t n, int64_t lane, int64_t lanes, double m) {
  double s = 0.0;
  for (int64_t j = lane; j < n; j += lanes) s += L::exp(zd(j) - m);  // exp: ≤ 1 ulp (double)
  return s;
}

// Whether v is neither NaN nor infinite.
LMO_HD inline bool finite(float v) { return v - v == 0.0f; }

// ---- The cross-entropy's rows split over several blocks ----
// A 128K-vocabulary row is too much for one block (4096 rows of 128256 logits used to run one
// block per row). Its logits are split into parts of kRowChunk consecutive logits, one block each
// (Liger-Kernel and QuACK split rows the same way), in three launches over the (row, part) blocks:
//   1. each part's maximum of z' and whether it holds a NaN or infinite logit;
//   2. the row's m = the maximum of the parts' maxima (exact in any order), and each part's
//      S_b = Σ e^{z'_j − m} over its logits (its lanes and the fixed tree, as one block's row);
//   3. S = S_0 + S_1 + … in ascending part order (parts_sum: f32 additions, the same in every
//      block of the row), then the loss, log Z and each part's gradient as one block's row.
// Every term is the one-block row's term (the row's own m); only the order of the f32 sum
// changes, by a fixed rule, so results are identical run to run and the strict recipe's bound
// (which holds for any order of the sum) is unchanged. A row with a NaN or infinite logit takes
// the double path whole, in the row's first block. A row of n ≤ kRowChunk is one part.
inline constexpr int64_t kRowChunk = 8192;

LMO_HD inline int64_t row_parts(int64_t n) {
  return n <= kRowChunk ? 1 : (n + kRowChunk - 1) / kRowChunk;
}

// The logits [begin, end) of part b of a row of n.
LMO_HD inline int64_t part_begin(int64_t b) { return b * kRowChunk; }
LMO_HD inline int64_t part_end(int64_t b, int64_t n) {
  return (b + 1) * kRowChunk < n ? (b + 1) * kRowChunk : n;
}

// The row's maximum from its parts' (NaN-propagating) and its sum from its parts' sums, ascending.
LMO_HD inline float parts_max(const float* m, int64_t parts) {
  float r = m[0];
  for (int64_t b = 1; b < parts; ++b) r = nan_max(r, m[b]);
  return r;
}
LMO_HD inline float parts_sum(const float* s, int64_t parts) {
  float r = s[0];
  for (int64_t b = 1; b < parts; ++b) r = f32::add(r, s[b]);
  return r;
}

}  // namespace lmo::gpu::softmax_math
