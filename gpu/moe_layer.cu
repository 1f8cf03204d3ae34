// Launcher of gpu/moe_layer.cuh for the three storage formats and four activations: the logits,
// the bias widened to f32 (launch_convert), the routing (launch_moe_router on the f32 logits),
// the hidden layer, the combine.
#include "gpu/launch_ffn.h"
#include "gpu/launch_moe.h"
#include "gpu/moe_layer.cuh"

namespace lmo::gpu {
namespace {

// Calls fn(F{}) with F the f32 functor of act (gpu/activation_f32.h).
template <class Fn>
cudaError_t with_activation_f32(Activation act, Fn fn) {
  switch (act) {
    case Activation::relu:
      return fn(f32::ReluFn<>{});
    case Activation::gelu:
      return fn(f32::GeluFn<>{});
    case Activation::gelu_tanh:
      return fn(f32::GeluTanhFn<>{});
    case Activation::silu:
      return fn(f32::SiluFn<>{});
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t launch_moe_layer(Activation act, Storage s, const MoeLayerBuffers& b,
                             const MoeLayerShape& sh, cudaStream_t stream) {
  if (sh.tokens == 0) return cudaSuccess;
  const int64_t n = sh.route.experts, k = sh.route.top_k;
  return with_storage(s, [&](auto tag) {
    using T = decltype(tag);
    moe_logits_kernel<T><<<element_grid(sh.tokens * n), kThreads, 0, stream>>>(
        static_cast<const T*>(b.x), static_cast<const T*>(b.router), b.logits, sh.tokens, sh.d, n);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    if (b.bias) {
      if (cudaError_t e = launch_convert(s, b.bias, Storage::f32, b.bias_f32, n, stream);
          e != cudaSuccess) {
        return e;
      }
    }
    if (cudaError_t e = launch_moe_router(Storage::f32, b.logits, b.bias ? b.bias_f32 : nullptr,
                                          sh.tokens, sh.route, b.experts, b.gates, nullptr, stream);
        e != cudaSuccess) {
      return e;
    }
    MoeLayerArgs<T> a;
    a.x = static_cast<const T*>(b.x);
    a.w = static_cast<const T*>(b.w);
    a.v = static_cast<const T*>(b.v);
    a.w2 = static_cast<const T*>(b.w2);
    a.ws = static_cast<const T*>(b.ws);
    a.vs = static_cast<const T*>(b.vs);
    a.w2s = static_cast<const T*>(b.w2s);
    a.experts = b.experts;
    a.gates = b.gates;
    a.tokens = sh.tokens;
    a.d = sh.d;
    a.d_ff = sh.d_ff;
    a.top_k = k;
    a.shared = sh.shared;
    a.residual = sh.residual;
    const int64_t hidden = sh.tokens * (sh.shared + k) * sh.d_ff;
    const cudaError_t he = with_activation_f32(act, [&](auto f) {
      moe_hidden_kernel<T, decltype(f)>
          <<<element_grid(hidden), kThreads, 0, stream>>>(a, f, b.hidden);
      return cudaGetLastError();
    });
    if (he != cudaSuccess) return he;
    moe_combine_kernel<T><<<element_grid(sh.tokens * sh.d), kThreads, 0, stream>>>(
        a, b.hidden, static_cast<T*>(b.y));
    return cudaGetLastError();
  });
}

}  // namespace lmo::gpu
