// cos and sin of the large angles of the position kernels (gpu/sinusoidal_pe.cuh), as a
// __host__ __device__ function so that a host test (tests/kernels/gpu_angles_math_test.cc) checks it against
// the exact reference on a machine without a device. Plain C++ when not compiled by nvcc; no
// CUDA header.
//
// It is fast/angles-inl.h's CosSinOfTurns on one double, operation for operation (each of its
// MulAdd/MulSub an fma, its Round a rint), so the GPU and the fast kernels on FMA targets give the
// same bits. The angle 2π·p·f is formed from an integer position p (exact in a double: |p| ≤
// 2^53) and the frequency in turns f = hi + lo (kernels/api/turns.h, rounded once in long double on the
// host):
//   1. p·f = P + e: P = p·hi rounded, e = (p·hi − P) (exact by one fma) + p·lo;
//   2. whole turns dropped: r = (P − rint(P)) + e, |r| ≤ ½ (P − rint(P) is exact, Sterbenz);
//   3. the quadrant q = rint(4r) ∈ {−2, …, 2}, z = r − q/4 exact, |z| ≤ 1/8 turn, x = 2π·z with
//      2π as a two-double sum, |x| ≤ π/4;
//   4. sin x and cos x by fdlibm's kernel polynomials (__kernel_sin / __kernel_cos, Sun
//      Microsystems 1993: minimax on [−π/4, π/4], error below 2^-58), then the quadrant's swap
//      and signs.
// CUDA's own sin/cos reduce any double argument correctly, but the argument p·θ in radians
// already carries p·θ's rounding (up to 2^-13 rad at p·θ ≈ 2^40); working in turns drops the
// whole turns exactly first. No a·b + c is left for a compiler's contraction to fuse: every
// product that meets a sum goes through an explicit fma, is exact (q·0.25), or is p·hi, whose
// rounded value step 1 needs (mul_rn: __dmul_rn on the device, never fused into an fma; the host
// test is built with -ffp-contract=off).
#pragma once

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define LMO_HD __host__ __device__
#else
#define LMO_HD
#endif

namespace lmo::gpu {

// a·b rounded to nearest, never contracted with a following sum.
LMO_HD inline double mul_rn(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

// cos and sin of 2π·p·(hi + lo).
LMO_HD inline void cos_sin_of_turns(double p, double hi, double lo, double& c, double& s) {
  const double prod = mul_rn(p, hi);
  const double e = ::fma(p, lo, ::fma(p, hi, -prod));
  const double r = (prod - ::rint(prod)) + e;
  const double q = ::rint(r * 4.0);
  const double z = r - q * 0.25;
  // 2π = 6.283185307179586 + 2.4492935982947064e-16 (the double nearest 2π and the remainder).
  const double x = ::fma(z, 6.283185307179586, z * 2.4492935982947064e-16);
  const double x2 = x * x;
  double ps = 1.58969099521155010221e-10;
  ps = ::fma(ps, x2, -2.50507602534068634195e-08);
  ps = ::fma(ps, x2, 2.75573137070700676789e-06);
  ps = ::fma(ps, x2, -1.98412698298579493134e-04);
  ps = ::fma(ps, x2, 8.33333333332248946124e-03);
  ps = ::fma(ps, x2, -1.66666666666666324348e-01);
  const double sin_x = ::fma(x * x2, ps, x);
  double pc = -1.13596475577881948265e-11;
  pc = ::fma(pc, x2, 2.08757232129817482790e-09);
  pc = ::fma(pc, x2, -2.75573143513906633035e-07);
  pc = ::fma(pc, x2, 2.48015872894767294178e-05);
  pc = ::fma(pc, x2, -1.38888888888741095749e-03);
  pc = ::fma(pc, x2, 4.16666666666666019037e-02);
  // cos x = 1 − x²/2 + x⁴·P(x²); 1 − x²/2 ≥ 0.69 on the interval, so the sum loses nothing.
  const double cos_x = ::fma(x2 * x2, pc, ::fma(-0.5, x2, 1.0));
  // angle = x + q·π/2: q = ±1 swaps sin and cos; sin is negated for q ∈ {−1, ±2}, cos for
  // q ∈ {1, ±2}.
  const bool odd = q == 1.0 || q == -1.0;
  const bool half_turn = q == 2.0 || q == -2.0;
  const double sv = odd ? cos_x : sin_x;
  const double cv = odd ? sin_x : cos_x;
  s = half_turn || q == -1.0 ? -sv : sv;
  c = half_turn || q == 1.0 ? -cv : cv;
}

}  // namespace lmo::gpu
