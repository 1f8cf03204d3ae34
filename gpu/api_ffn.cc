// gpu/api_ffn.h's ffn and glu_ffn on top of gpu/launch_ffn.h: fast/ffn.cc's validation
// (kernels/api/validate_ffn.h), then copy in, launch, wait, copy out (gpu/host_call.h).
#include "gpu/api_ffn.h"

#include <cstddef>

#include "kernels/api/validate_ffn.h"
#include "gpu/api_checks.h"
#include "gpu/host_call.h"
#include "gpu/launch_ffn.h"

namespace lmo::gpu {
namespace {

using detail::bytes_of;

// Both forms, validated: up is w1 or w, v null for ffn, b1 and b2 null for glu_ffn.
void run_ffn(const char* fn, Activation act, Storage s, const void* x, const void* up,
             const void* v, const void* b1, const void* w2, const void* b2, void* y, int64_t tokens,
             int64_t d, int64_t d_ff) {
  if (tokens == 0) return;
  detail::Call call(fn);
  const void* dx = call.upload(x, bytes_of(s, tokens * d));
  const void* dup = call.upload(up, bytes_of(s, d * d_ff));
  const void* dv = v ? call.upload(v, bytes_of(s, d * d_ff)) : nullptr;
  const void* db1 = b1 ? call.upload(b1, bytes_of(s, d_ff)) : nullptr;
  const void* dw2 = call.upload(w2, bytes_of(s, d_ff * d));
  const void* db2 = b2 ? call.upload(b2, bytes_of(s, d)) : nullptr;
  auto* dh = static_cast<float*>(call.alloc(static_cast<size_t>(tokens * d_ff) * sizeof(float)));
  void* dy = call.alloc(bytes_of(s, tokens * d));
  call.run([=] {
    return launch_ffn(act, s, dx, dup, dv, db1, dw2, db2, dh, dy, tokens, d, d_ff, nullptr);
  });
  call.download(y, dy, bytes_of(s, tokens * d));
  call.finish();
}

}  // namespace

void ffn(Activation act, Storage s, const void* x, const void* w1, const void* b1, const void* w2,
         const void* b2, void* y, int64_t tokens, int64_t d, int64_t d_ff) {
  constexpr const char* fn = "gpu::ffn";
  detail::check_activation(fn, act);
  detail::check_storage(fn, s);
  kernels::detail::check_ffn_shape(fn, x, "w1", w1, w2, y, tokens, d, d_ff);
  run_ffn(fn, act, s, x, w1, nullptr, b1, w2, b2, y, tokens, d, d_ff);
}

void glu_ffn(Activation act, Storage s, const void* x, const void* w, const void* v, const void* w2,
             void* y, int64_t tokens, int64_t d, int64_t d_ff) {
  constexpr const char* fn = "gpu::glu_ffn";
  detail::check_activation(fn, act);
  detail::check_storage(fn, s);
  kernels::detail::check_ffn_shape(fn, x, "w", w, w2, y, tokens, d, d_ff);
  kernels::detail::check_ptr(fn, "v", v, tokens > 0);
  run_ffn(fn, act, s, x, w, v, nullptr, w2, nullptr, y, tokens, d, d_ff);
}

}  // namespace lmo::gpu
