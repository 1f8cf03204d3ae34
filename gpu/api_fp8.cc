// gpu/api_fp8.h on top of gpu/launch_fp8.h: fast/fp8.cc's and fast/fp8_linear.cc's validation
// (kernels/api/fp8_args.h, validate.h), then copy in, launch, wait, copy out (gpu/host_call.h).
#include "gpu/api_fp8.h"

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

#include "gpu/api_checks.h"
#include "gpu/host_call.h"
#include "gpu/launch_fp8.h"
#include "kernels/api/validate.h"

namespace lmo::gpu {
namespace {

using detail::bytes_of;

size_t bytes_of_f32(int64_t count) { return static_cast<size_t>(count) * sizeof(float); }
size_t bytes_of_u8(int64_t count) { return static_cast<size_t>(count); }

void check_tiled(const char* fn, Storage s, const Fp8Tiling& t, Fp8Format f) {
  detail::check_storage(fn, s);
  kernels::detail::check_fp8_tiling(fn, t);
  kernels::detail::check_fp8_format(fn, f);
}

}  // namespace

void fp8_quantize(Storage s, const void* x, uint8_t* q, float* scales, const Fp8Tiling& t,
                  Fp8Format f, bool pow2_scales, double amax_floor) {
  constexpr const char* fn = "gpu::fp8_quantize";
  check_tiled(fn, s, t, f);
  if (!(amax_floor >= 0) || std::isinf(amax_floor)) {
    throw std::invalid_argument(std::string(fn) + ": amax_floor is " + std::to_string(amax_floor) +
                                ", expected finite and >= 0");
  }
  const bool any = t.rows > 0 && t.cols > 0;
  detail::check_ptrs(fn, any, {{"x", x}, {"q", q}, {"scales", scales}});
  if (!any) return;
  const int64_t n = t.rows * t.cols;
  detail::Call call(fn);
  const void* dx = call.upload(x, bytes_of(s, n));
  auto* dq = static_cast<uint8_t*>(call.alloc(bytes_of_u8(n)));
  auto* ds = static_cast<float*>(call.alloc(bytes_of_f32(t.scales())));
  call.run(
      [=] { return launch_fp8_quantize(s, dx, dq, ds, t, f, pow2_scales, amax_floor, nullptr); });
  call.download(q, dq, bytes_of_u8(n));
  call.download(scales, ds, bytes_of_f32(t.scales()));
  call.finish();
}

void fp8_dequantize(Storage s, const uint8_t* q, const float* scales, void* x, const Fp8Tiling& t,
                    Fp8Format f) {
  constexpr const char* fn = "gpu::fp8_dequantize";
  check_tiled(fn, s, t, f);
  const bool any = t.rows > 0 && t.cols > 0;
  detail::check_ptrs(fn, any, {{"q", q}, {"scales", scales}, {"x", x}});
  if (!any) return;
  const int64_t n = t.rows * t.cols;
  detail::Call call(fn);
  const auto* dq = static_cast<const uint8_t*>(call.upload(q, bytes_of_u8(n)));
  const auto* ds = static_cast<const float*>(call.upload(scales, bytes_of_f32(t.scales())));
  void* dx = call.alloc(bytes_of(s, n));
  call.run([=] { return launch_fp8_dequantize(s, dq, ds, dx, t, f, nullptr); });
  call.download(x, dx, bytes_of(s, n));
  call.finish();
}

void fp8_linear(Storage s, const uint8_t* a, const float* a_scales, const uint8_t* w,
                const float* w_scales, void* y, int64_t m, int64_t n, int64_t k, int64_t block,
                Fp8Format f) {
  constexpr const char* fn = "gpu::fp8_linear";
  detail::check_storage(fn, s);
  kernels::detail::check_fp8_format(fn, f);
  kernels::detail::check_count(fn, "m", m, 0);
  kernels::detail::check_count(fn, "n", n, 0);
  kernels::detail::check_count(fn, "k", k, 1);
  kernels::detail::check_count(fn, "block", block, 1);
  // fast/'s limit (OpenBLAS's 32-bit dimensions), kept so that both libraries take the same calls.
  for (const auto& [name, v] : {std::pair{"m", m}, {"n", n}, {"k", k}}) {
    kernels::detail::check_blas_dim(fn, name, v);
  }
  const bool any = m > 0 && n > 0;
  detail::check_ptrs(
      fn, any, {{"a", a}, {"a_scales", a_scales}, {"w", w}, {"w_scales", w_scales}, {"y", y}});
  if (!any) return;
  const int64_t k_blocks = (k + block - 1) / block, n_blocks = (n + block - 1) / block;
  detail::Call call(fn);
  const auto* da = static_cast<const uint8_t*>(call.upload(a, bytes_of_u8(m * k)));
  const auto* das = static_cast<const float*>(call.upload(a_scales, bytes_of_f32(m * k_blocks)));
  const auto* dw = static_cast<const uint8_t*>(call.upload(w, bytes_of_u8(n * k)));
  const auto* dws =
      static_cast<const float*>(call.upload(w_scales, bytes_of_f32(n_blocks * k_blocks)));
  void* dy = call.alloc(bytes_of(s, m * n));
  call.run([=] { return launch_fp8_linear(s, da, das, dw, dws, dy, m, n, k, block, f, nullptr); });
  call.download(y, dy, bytes_of(s, m * n));
  call.finish();
}

}  // namespace lmo::gpu
