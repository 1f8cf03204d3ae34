#include "bench/flop_rate.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "bench/timing.h"
#include "fast/blas.h"

namespace lmo::bench {

FlopSample measure_flops(double flops, int repetitions, const std::function<void()>& kernel,
                         int64_t m, int64_t n, int64_t k) {
  if (!(flops > 0) || m < 1 || n < 1 || k < 1) {
    throw std::invalid_argument("measure_flops: flops and the sgemm dimensions must be positive");
  }
  if (repetitions < 1) throw std::invalid_argument("measure_flops: repetitions must be >= 1");
  // Ordinary values (the speed of sgemm does not depend on them, as long as none is subnormal).
  std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n)),
      c(static_cast<size_t>(m * n));
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 17) / 16.0f - 0.5f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 13) / 12.0f - 0.5f;
  fast::blas_single_threaded();
  const std::function<void()> gemm = [&] {
    fast::sgemm(m, n, k, 1.0f, a.data(), k, b.data(), n, false, 0.0f, c.data(), n);
  };
  kernel();
  gemm();
  std::vector<double> t_kernel, t_gemm;
  for (int r = 0; r < repetitions; ++r) {
    t_kernel.push_back(seconds_of(kernel));
    t_gemm.push_back(seconds_of(gemm));
  }
  FlopSample s;
  s.repetitions = repetitions;
  s.seconds = median(t_kernel);
  s.sgemm_seconds = median(t_gemm);
  s.flops_per_s = flops / s.seconds;
  s.sgemm_flops_per_s = sgemm_flops(m, n, k) / s.sgemm_seconds;
  s.ratio = s.flops_per_s / s.sgemm_flops_per_s;
  return s;
}

}  // namespace lmo::bench
