// gpu/api.h on top of the launchers (gpu/launch.h): validate the arguments exactly as fast/
// does (kernels/api/validate*.h, before any CUDA call), copy the inputs to the device, launch, wait, copy
// the outputs back. Every CUDA call's result is checked; a failure throws std::runtime_error
// naming the function, the CUDA call and the error.
#include "gpu/api.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/api_checks.h"
#include "gpu/host_call.h"
#include "gpu/launch.h"
#include "gpu/softmax_math.h"  // row_parts: the row-split launches' scratch
#include "kernels/api/turns.h"
#include "kernels/api/validate.h"
#include "kernels/api/validate_positional.h"  // check_rope, check_rope_table

namespace lmo::gpu {
namespace {

using detail::bytes_of;
using detail::Call;
using detail::check_activation;
using detail::check_storage;
using kernels::detail::check_cap;
using kernels::detail::check_count;
using kernels::detail::check_eps;
using kernels::detail::check_lambda;
using kernels::detail::check_ptr;
using kernels::detail::check_targets;

// The scratch of a row-split launch (gpu/launch.h: softmax, logsumexp, cross_entropy).
float* row_parts_scratch(Call& call, int64_t rows, int64_t n) {
  return call.alloc_floats(3 * rows * softmax_math::row_parts(n));
}

}  // namespace

void rmsnorm(Storage s, const void* x, const void* gamma, void* y, int64_t rows, int64_t d,
             float eps, bool one_plus_gamma) {
  constexpr const char* fn = "gpu::rmsnorm";
  detail::check_rows(fn, s, rows, "d", d);
  check_eps(fn, eps);
  detail::check_ptrs(fn, rows > 0, {{"x", x}, {"gamma", gamma}, {"y", y}});
  if (rows == 0) return;
  Call call(fn);
  const void* dx = call.upload(x, bytes_of(s, rows * d));
  const void* dg = call.upload(gamma, bytes_of(s, d));
  void* dy = call.alloc(bytes_of(s, rows * d));
  call.run([=] { return launch_rmsnorm(s, dx, dg, dy, rows, d, eps, one_plus_gamma, nullptr); });
  call.download(y, dy, bytes_of(s, rows * d));
  call.finish();
}

void layernorm(Storage s, const void* x, const void* gamma, const void* beta, void* y, int64_t rows,
               int64_t d, float eps) {
  constexpr const char* fn = "gpu::layernorm";
  detail::check_rows(fn, s, rows, "d", d);
  check_eps(fn, eps);
  detail::check_ptrs(fn, rows > 0, {{"x", x}, {"gamma", gamma}, {"beta", beta}, {"y", y}});
  if (rows == 0) return;
  Call call(fn);
  const void* dx = call.upload(x, bytes_of(s, rows * d));
  const void* dg = call.upload(gamma, bytes_of(s, d));
  const void* db = call.upload(beta, bytes_of(s, d));
  void* dy = call.alloc(bytes_of(s, rows * d));
  call.run([=] { return launch_layernorm(s, dx, dg, db, dy, rows, d, eps, nullptr); });
  call.download(y, dy, bytes_of(s, rows * d));
  call.finish();
}

void fused_add_rmsnorm(Storage s, const void* x, const void* residual, const void* gamma,
                       void* residual_out, void* y, int64_t rows, int64_t d, float eps) {
  constexpr const char* fn = "gpu::fused_add_rmsnorm";
  detail::check_rows(fn, s, rows, "d", d);
  check_eps(fn, eps);
  detail::check_ptrs(fn, rows > 0,
                     {{"x", x},
                      {"residual", residual},
                      {"gamma", gamma},
                      {"residual_out", residual_out},
                      {"y", y}});
  if (rows == 0) return;
  Call call(fn);
  const void* dx = call.upload(x, bytes_of(s, rows * d));
  // The residual is updated in place on the device; residual_out receives it (it may be the
  // host's residual itself: the upload has read it by then).
  void* dr = call.upload(residual, bytes_of(s, rows * d));
  const void* dg = call.upload(gamma, bytes_of(s, d));
  void* dy = call.alloc(bytes_of(s, rows * d));
  call.run([=] { return launch_fused_add_rmsnorm(s, dx, dr, dg, dr, dy, rows, d, eps, nullptr); });
  call.download(residual_out, dr, bytes_of(s, rows * d));
  call.download(y, dy, bytes_of(s, rows * d));
  call.finish();
}

void softmax(Storage s, const void* z, void* p, int64_t rows, int64_t n) {
  constexpr const char* fn = "gpu::softmax";
  detail::check_rows(fn, s, rows, "n", n);
  detail::check_ptrs(fn, rows > 0, {{"z", z}, {"p", p}});
  if (rows == 0) return;
  Call call(fn);
  const void* dz = call.upload(z, bytes_of(s, rows * n));
  void* dp = call.alloc(bytes_of(s, rows * n));
  float* dparts = row_parts_scratch(call, rows, n);
  call.run([=] { return launch_softmax(s, dz, dp, rows, n, dparts, nullptr); });
  call.download(p, dp, bytes_of(s, rows * n));
  call.finish();
}

void logsumexp(Storage s, const void* z, float* logz, int64_t rows, int64_t n) {
  constexpr const char* fn = "gpu::logsumexp";
  detail::check_rows(fn, s, rows, "n", n);
  detail::check_ptrs(fn, rows > 0, {{"z", z}, {"logz", logz}});
  if (rows == 0) return;
  Call call(fn);
  const void* dz = call.upload(z, bytes_of(s, rows * n));
  auto* dl = static_cast<float*>(call.alloc(static_cast<size_t>(rows) * sizeof(float)));
  float* dparts = row_parts_scratch(call, rows, n);
  call.run([=] { return launch_logsumexp(s, dz, dl, rows, n, dparts, nullptr); });
  call.download(logz, dl, static_cast<size_t>(rows) * sizeof(float));
  call.finish();
}

void cross_entropy(Storage s, const void* z, const int64_t* target, int64_t rows, int64_t vocab,
                   float lambda, float cap, float* loss, float* logz, void* grad) {
  constexpr const char* fn = "gpu::cross_entropy";
  detail::check_rows(fn, s, rows, "vocab", vocab);
  detail::check_ptrs(fn, rows > 0, {{"z", z}, {"target", target}, {"loss", loss}, {"logz", logz}});
  if (cap != 0.0f) check_cap(fn, cap);
  check_lambda(fn, lambda);
  check_targets(fn, target, rows, vocab);
  if (rows == 0) return;
  const size_t row_floats = static_cast<size_t>(rows) * sizeof(float);
  Call call(fn);
  const void* dz = call.upload(z, bytes_of(s, rows * vocab));
  const auto* dt =
      static_cast<const int64_t*>(call.upload(target, static_cast<size_t>(rows) * sizeof(int64_t)));
  auto* dloss = static_cast<float*>(call.alloc(row_floats));
  auto* dlogz = static_cast<float*>(call.alloc(row_floats));
  void* dg = grad ? call.alloc(bytes_of(s, rows * vocab)) : nullptr;
  float* dparts = row_parts_scratch(call, rows, vocab);
  call.run([=] {
    return launch_cross_entropy(s, dz, dt, rows, vocab, lambda, cap, dloss, dlogz, dg, dparts,
                                nullptr);
  });
  call.download(loss, dloss, row_floats);
  call.download(logz, dlogz, row_floats);
  if (grad) call.download(grad, dg, bytes_of(s, rows * vocab));
  call.finish();
}

void softcap(Storage s, const void* z, void* y, int64_t n, float cap) {
  constexpr const char* fn = "gpu::softcap";
  detail::check_elements(fn, s, n);
  detail::check_ptrs(fn, n > 0, {{"z", z}, {"y", y}});
  check_cap(fn, cap);
  if (n == 0) return;
  Call call(fn);
  const void* dz = call.upload(z, bytes_of(s, n));
  void* dy = call.alloc(bytes_of(s, n));
  call.run([=] { return launch_softcap(s, dz, dy, n, cap, nullptr); });
  call.download(y, dy, bytes_of(s, n));
  call.finish();
}

void activation(Activation act, Storage s, const void* x, void* y, int64_t n) {
  constexpr const char* fn = "gpu::activation";
  check_activation(fn, act);
  detail::check_elements(fn, s, n);
  detail::check_ptrs(fn, n > 0, {{"x", x}, {"y", y}});
  if (n == 0) return;
  Call call(fn);
  const void* dx = call.upload(x, bytes_of(s, n));
  void* dy = call.alloc(bytes_of(s, n));
  call.run([=] { return launch_activation(act, s, dx, dy, n, nullptr); });
  call.download(y, dy, bytes_of(s, n));
  call.finish();
}

void glu_gate(Activation act, Storage s, const void* gate, const void* up, void* h, int64_t n) {
  constexpr const char* fn = "gpu::glu_gate";
  check_activation(fn, act);
  detail::check_elements(fn, s, n);
  detail::check_ptrs(fn, n > 0, {{"gate", gate}, {"up", up}, {"h", h}});
  if (n == 0) return;
  Call call(fn);
  const void* dg = call.upload(gate, bytes_of(s, n));
  const void* du = call.upload(up, bytes_of(s, n));
  void* dh = call.alloc(bytes_of(s, n));
  call.run([=] { return launch_glu_gate(act, s, dg, du, dh, n, nullptr); });
  call.download(h, dh, bytes_of(s, n));
  call.finish();
}

void rope(Storage s, const void* x, const int64_t* positions, void* y, const RopeShape& shape,
          const RopeFrequencies& freq) {
  constexpr const char* fn = "gpu::rope";
  kernels::detail::check_rope(fn, s, x, positions, y, shape);
  // Before the empty return, as in fast/: a bad frequency rule throws for zero tokens too.
  // The frequencies in turns, as fast/rope.cc forms them (gpu/rope_math.h).
  const kernels::Turns turns = kernels::turns_of(kernels::rope_inv_freq(shape.rotary_dims, freq));
  const auto cos_sin_factor = static_cast<double>(kernels::rope_cos_sin_factor(freq));
  if (shape.tokens == 0) return;
  const int64_t n = shape.tokens * shape.heads * shape.head_dim;
  const size_t turn_bytes = turns.hi.size() * sizeof(double);
  Call call(fn);
  const void* dx = call.upload(x, bytes_of(s, n));
  const auto* dp = static_cast<const int64_t*>(
      call.upload(positions, static_cast<size_t>(shape.tokens) * sizeof(int64_t)));
  const auto* dhi = static_cast<const double*>(call.upload(turns.hi.data(), turn_bytes));
  const auto* dlo = static_cast<const double*>(call.upload(turns.lo.data(), turn_bytes));
  void* dy = call.alloc(bytes_of(s, n));
  call.run([=] { return launch_rope(s, dx, dp, dhi, dlo, cos_sin_factor, dy, shape, nullptr); });
  call.download(y, dy, bytes_of(s, n));
  call.finish();
}

void rope_table(Storage s, const void* x, Storage table, const void* cos_sin, void* y,
                const RopeShape& shape) {
  constexpr const char* fn = "gpu::rope_table";
  kernels::detail::check_rope_table(fn, s, x, table, cos_sin, y, shape);
  if (shape.tokens == 0) return;
  const int64_t n = shape.tokens * shape.heads * shape.head_dim;
  Call call(fn);
  const void* dx = call.upload(x, bytes_of(s, n));
  const void* dt = call.upload(cos_sin, bytes_of(table, shape.tokens * shape.rotary_dims));
  void* dy = call.alloc(bytes_of(s, n));
  call.run([=] { return launch_rope_table(s, dx, table, dt, dy, shape, nullptr); });
  call.download(y, dy, bytes_of(s, n));
  call.finish();
}

}  // namespace lmo::gpu
