// Measures the soft-cap kernels' f32 errors against a long-double reference on dense sweeps, on
// every target this CPU supports: the figures of the error analyses in fast/math-inl.h
// (SoftcapF, SoftcapGradF). Not a test (minutes of CPU): a measurement to read and report.
//
//  - softcap (fast/softcap.h): every `stride`-th f32 z in (0, 20·cap] for caps 30, 7.3 and 1, the
//    largest error in ulps of z' = cap·tanh(z/cap) (tanhl of z/cap in long double, 64-bit
//    significand), split at |z| = 0.625·cap (the polynomial and the exponential branch); and
//    whether z' is monotone over every f32 of that range (stride 1, the kernel alone).
//  - cross_entropy's soft-cap gradient (SoftcapGradF, through fast/softmax.cc), through rows
//    [z, z] with target 1 and λ = 0: ∂loss/∂z_0 = p_0·cap'(z) with p_0 = 1/2 exactly (the kept
//    term 2^64 and the factor 2^-65 are powers of two), so 2·grad_0 = cap'(z) as the kernel
//    computed it, judged against 1/cosh²(z/cap) in long double, on every `ce_stride`-th f32 of
//    the same range.
// Usage: softcap_error_sweep [stride = 7] [ce_stride = 61] [target names, e.g. AVX2 SSE4: all]
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fast/cross_entropy.h"
#include "fast/softcap.h"
#include "tools/error_sweep.h"

namespace {

using lmo::tools::from_bits;
using lmo::tools::to_bits;
using lmo::tools::ulps;
using lmo::tools::Worst;

void sweep_softcap(float cap, uint32_t stride) {
  const uint32_t top = to_bits(20.0f * cap);
  std::vector<float> z, y;
  for (uint32_t u = 1; u <= top; u += stride) z.push_back(from_bits(u));
  y.resize(z.size());
  Worst small, big;
  lmo::fast::softcap(lmo::fast::Storage::f32, z.data(), y.data(), static_cast<int64_t>(z.size()),
                     cap);
  const long double lc = cap;
  for (size_t i = 0; i < z.size(); ++i) {
    const long double exact = lc * std::tanh(static_cast<long double>(z[i]) / lc);
    (z[i] < 0.625f * cap ? small : big).add(ulps(y[i], exact), z[i]);
  }
  // Monotonicity over every f32 in (0, 20·cap], in chunks.
  uint64_t drops = 0;
  float prev = 0, first_drop = 0;
  const uint32_t chunk = 1u << 22;
  z.resize(chunk);
  y.resize(chunk);
  for (uint32_t u = 1; u <= top; u += chunk) {
    const uint32_t n = std::min<uint32_t>(chunk, top - u + 1);
    for (uint32_t k = 0; k < n; ++k) z[k] = from_bits(u + k);
    lmo::fast::softcap(lmo::fast::Storage::f32, z.data(), y.data(), n, cap);
    for (uint32_t k = 0; k < n; ++k) {
      if (y[k] < prev && drops++ == 0) first_drop = z[k];
      prev = y[k];
    }
  }
  std::printf(
      "  softcap cap %-4g |z| < 0.625·cap: %.3f ulp (z = %.9g); beyond: %.3f ulp (z = %.9g);"
      " monotone drops: %llu",
      cap, small.err, small.at, big.err, big.at, static_cast<unsigned long long>(drops));
  if (drops) std::printf(", the first at z = %.9g", first_drop);
  std::printf("\n");
}

void sweep_cross_entropy(float cap, uint32_t stride) {
  const uint32_t top = to_bits(20.0f * cap);
  std::vector<float> z;
  for (uint32_t u = 1; u <= top; u += stride) {
    z.push_back(from_bits(u));
    z.push_back(from_bits(u));
  }
  const int64_t rows = static_cast<int64_t>(z.size() / 2);
  std::vector<int64_t> target(static_cast<size_t>(rows), 1);
  std::vector<float> loss(static_cast<size_t>(rows)), logz(loss.size()), grad(z.size());
  lmo::fast::cross_entropy(lmo::fast::Storage::f32, z.data(), target.data(), rows, 2, 0.0f, cap,
                           loss.data(), logz.data(), grad.data());
  Worst gs, gb;
  const long double lc = cap;
  for (int64_t r = 0; r < rows; ++r) {
    const float zr = z[2 * static_cast<size_t>(r)];
    const long double c = std::cosh(static_cast<long double>(zr) / lc);
    const long double exact = 1.0L / (c * c);
    if (exact < 0x1p-126L) continue;  // subnormal cap': judged by the tests, not in ulps here
    (zr < 0.625f * cap ? gs : gb).add(ulps(2.0f * grad[2 * static_cast<size_t>(r)], exact), zr);
  }
  std::printf(
      "  cross_entropy cap %-4g cap' |z| < 0.625·cap: %.3f ulp (z = %.9g); beyond: %.3f"
      " ulp (z = %.9g)\n",
      cap, gs.err, gs.at, gb.err, gb.at);
}

}  // namespace

int main(int argc, char** argv) {
  const uint32_t stride = argc > 1 ? static_cast<uint32_t>(std::atoi(argv[1])) : 7;
  const uint32_t ce_stride = argc > 2 ? static_cast<uint32_t>(std::atoi(argv[2])) : 61;
  if (stride < 1 || ce_stride < 1) {
    std::fprintf(stderr, "softcap_error_sweep: strides must be ≥ 1\n");
    return 2;
  }
  lmo::tools::for_each_chosen_target(argc, argv, 3, [&] {
    for (float cap : {30.0f, 7.3f, 1.0f}) {
      sweep_softcap(cap, stride);
      sweep_cross_entropy(cap, ce_stride);
    }
  });
  return 0;
}
